"""libdevice's special functions on numpy values, for the interpreter (runtime/libdevice.py's
table takes them): the log-gamma and gamma functions, the inverse error functions, the
normal distribution's CDF and its inverse, the scaled complementary error function and
Bessel functions of the first kind. On the GPU these are NVIDIA's own (TRITIUM_LIBDEVICE:
tritium has no routine of its own for them); here they are computed in float64 from Python's
`math` and `statistics` and rounded once to the symbol's type by the caller, a reference to
compare GPU results with, to about 1e-13 relative (the Bessel functions: absolutely, near
their zeros). Edge values follow CUDA's math API (poles of lgamma are +inf, of tgamma
signed infinities, erfinv(+-1) = +-inf, outside [-1, 1] NaN, ...).

The Bessel functions of the first kind use the integral J_n(x) = 1/pi int_0^pi cos(n t - x sin t) dt
(and I_n(x) = 1/pi int_0^pi e^(x cos t) cos(n t) dt), whose integrand is periodic and analytic:
the trapezoid rule over a period converges geometrically once it has more points than
|x| + n; small arguments (x^2 / 4 < n + 1) take the power series instead, which keeps the
relative accuracy of the tiny values there. The second kind (y0, y1, yn) has no such
integral: the interpreter refuses them (runtime/interpreter, a located error).
"""

from __future__ import annotations

import math
import statistics

import numpy as np

__all__ = ["SPECIAL"]

_SQRT_PI = math.sqrt(math.pi)
_NORMAL = statistics.NormalDist()


def _lgamma(x: float) -> float:
    if math.isnan(x):
        return x
    if math.isinf(x):
        return math.inf
    try:
        return math.lgamma(x)
    except ValueError:  # a pole: 0 and the negative integers
        return math.inf


def _tgamma(x: float) -> float:
    if math.isnan(x) or x == math.inf:
        return x
    if x == -math.inf:
        return math.nan
    if x == 0.0:
        return math.copysign(math.inf, x)
    try:
        return math.gamma(x)
    except ValueError:  # the negative integers
        return math.nan
    except OverflowError:
        if x > 0:
            return math.inf
        return 0.0 if math.floor(x) % 2 == 0 else -0.0  # below -171: underflows, signed


def _erfcinv(z: float) -> float:
    """y with erfc(y) = z, for z in [0, 2]: from the normal quantile, then Newton on erfc."""
    if math.isnan(z) or z < 0.0 or z > 2.0:
        return math.nan
    if z == 0.0:
        return math.inf
    if z == 2.0:
        return -math.inf
    if z > 1.0:
        return -_erfcinv(2.0 - z)  # (exact: Sterbenz)
    if z == 1.0:
        return 0.0
    y = -_NORMAL.inv_cdf(z / 2.0) / math.sqrt(2.0)
    for _ in range(3):
        d = 2.0 / _SQRT_PI * math.exp(-y * y)
        if d == 0.0:
            break
        y += (math.erfc(y) - z) / d
    return y


def _erfinv(x: float) -> float:
    if math.isnan(x) or abs(x) > 1.0:
        return math.nan
    if abs(x) >= 0.5:
        return math.copysign(_erfcinv(1.0 - abs(x)), x)  # (1 - |x| exact here)
    if x == 0.0:
        return x
    y = _NORMAL.inv_cdf((1.0 + x) / 2.0) / math.sqrt(2.0)
    for _ in range(3):  # Newton on erf: exact where x is tiny, unlike the quantile
        y -= (math.erf(y) - x) / (2.0 / _SQRT_PI * math.exp(-y * y))
    return y


def _normcdfinv(p: float) -> float:
    if math.isnan(p) or p < 0.0 or p > 1.0:
        return math.nan
    if p in (0.0, 1.0):
        return -math.inf if p == 0.0 else math.inf
    return -math.sqrt(2.0) * _erfcinv(2.0 * p) + 0.0  # (+0 at p = 0.5)


def _normcdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _erfcx(x: float) -> float:
    """exp(x^2) erfc(x); for x > 25 (erfc underflows) its asymptotic series."""
    if math.isnan(x):
        return x
    if x > 25.0:
        t = 1.0 / (2.0 * x * x)
        s = 1.0 - t * (1.0 - 3.0 * t * (1.0 - 5.0 * t * (1.0 - 7.0 * t * (1.0 - 9.0 * t))))
        return s / (x * _SQRT_PI)
    try:
        return math.exp(x * x) * math.erfc(x)
    except OverflowError:  # x below about -26.6
        return math.inf


def _bessel(n: int, x: float, modified: bool) -> float:
    """J_n(x), or I_n(x) when `modified` (module docstring)."""
    if math.isnan(x):
        return x
    if math.isinf(x):
        if modified:
            return math.inf if x > 0 or n % 2 == 0 else -math.inf
        return 0.0
    n = abs(n)  # J_-n = (-1)^n J_n, I_-n = I_n: the callers pass n >= 0 but for jn
    if x * x / 4.0 < n + 1:  # the power series, all terms decreasing
        term = (x / 2.0) ** n / math.factorial(n) if n < 170 else 0.0
        total, k = term, 0
        while term != 0.0 and abs(term) > 1e-18 * abs(total):
            k += 1
            term *= (x * x / 4.0) / (k * (n + k)) * (1.0 if modified else -1.0)
            total += term
        return total
    if modified and abs(x) > 720.0:
        return math.inf if x > 0 or n % 2 == 0 else -math.inf
    m = int(abs(x)) + n + 64
    t = np.arange(m) * (2.0 * math.pi / m)
    if modified:
        return float(np.mean(np.exp(x * np.cos(t)) * np.cos(n * t)))
    return float(np.mean(np.cos(n * t - x * np.sin(t))))


def _jn(n, x):
    n = int(n)
    v = _bessel(n, x, False)
    return -v if n < 0 and n % 2 else v


def _vectorize(fn, nargs: int = 1):
    """`fn` (float64 scalars) over arrays, float64 out."""
    u = np.frompyfunc(fn, nargs, 1)
    return lambda *xs: np.asarray(u(*[np.asarray(x, np.float64) for x in xs]), np.float64)


# libdevice base name -> fn(float64 array[, ...]) -> float64 array (jn takes n first)
SPECIAL = {
    "lgamma": _vectorize(_lgamma), "tgamma": _vectorize(_tgamma),
    "erfinv": _vectorize(_erfinv), "erfcinv": _vectorize(_erfcinv),
    "normcdf": _vectorize(_normcdf), "normcdfinv": _vectorize(_normcdfinv),
    "erfcx": _vectorize(_erfcx),
    "j0": _vectorize(lambda x: _bessel(0, x, False)),
    "j1": _vectorize(lambda x: (-1.0 if x < 0 else 1.0) * _bessel(1, abs(x), False)),
    "cyl_bessel_i0": _vectorize(lambda x: _bessel(0, abs(x), True)),
    "cyl_bessel_i1": _vectorize(lambda x: math.copysign(_bessel(1, abs(x), True), x)),
    "jn": _vectorize(_jn, 2),
}  # fmt: skip
