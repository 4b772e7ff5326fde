"""Accuracy of every libm routine, in ulps, on the host: the LLVM IR the backend emits
for one element, JIT-compiled for this CPU (tests/codegen/libm_host.py), against numpy in
float64 (f32 results) or mpmath at 120 bits (f64 results), over random inputs across each
function's domain plus edge values (zeros, infinities, NaN, subnormals, huge arguments).

The bounds are the measured maxima rounded up (codegen/ARCHITECTURE.md's "Math" table
states them); `python3 tests/codegen/test_libm_accuracy.py 200000` measures on more points
and prints that table's column.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from tests.codegen.libm_host import compile_host, f32, f64, i32, ulps
from tritium.codegen.lower import libm

mp = pytest.importorskip("mpmath") if __name__ != "__main__" else __import__("mpmath")
mp.mp.prec = 120
TWO = {"atan2", "pow", "hypot", "fmod", "remainder", "fdim", "nextafter"}


def _sym(rng, n, lo, hi):
    """|x| log-uniform in [2^lo, 2^hi], random signs."""
    return np.exp2(rng.uniform(lo, hi, n)) * rng.choice([-1.0, 1.0], n)


def _domain(name: str, rng, n: int, is64: bool):
    big = 1000.0 if is64 else 120.0
    exp_top = 709.0 if is64 else 88.0
    if name in ("exp", "expm1"):
        return np.concatenate([rng.uniform(-exp_top - 35, exp_top, n), _sym(rng, n, -60, 3)])
    if name == "exp2":
        return np.concatenate([rng.uniform(-big - 70, big, n), _sym(rng, n, -60, 3)])
    if name == "exp10":
        return np.concatenate([rng.uniform(-(big * 0.3 + 20), big * 0.3, n), _sym(rng, n, -60, 1)])
    if name in ("log", "log2", "log10"):
        return np.concatenate([np.exp2(rng.uniform(-1074 if is64 else -149, 1023 if is64 else 127, n)),
                               rng.uniform(0.5, 2.0, n)])  # fmt: skip
    if name == "log1p":
        return np.concatenate([_sym(rng, n, -60, 0) * 0.999, np.exp2(rng.uniform(-60, 100, n))])
    if name in ("sin", "cos", "tan"):
        return np.concatenate([rng.uniform(-10, 10, n), _sym(rng, n, -30, 1000 if is64 else 127)])
    if name in ("sinpi", "cospi"):
        return np.concatenate([rng.uniform(-4, 4, n), _sym(rng, n, -30, 60)])
    if name in ("asin", "acos", "atanh"):
        return np.concatenate([rng.uniform(-1, 1, n), _sym(rng, n, -60, 0) * 0.9999999])
    if name in ("atan", "asinh", "sinh", "cosh", "tanh", "erf", "cbrt"):
        top = {"sinh": 9.4, "cosh": 9.4}.get(name, 10.0 if is64 else 6.9)
        return np.concatenate([rng.uniform(-6, 6, n), _sym(rng, n, -60, top)])
    if name == "acosh":
        return np.concatenate([1 + np.exp2(rng.uniform(-50, 3, n)), np.exp2(rng.uniform(0, 100, n))])
    if name == "erfc":
        return np.concatenate([rng.uniform(-3, 27 if is64 else 10, n), _sym(rng, n, -60, 2)])
    if name == "atan2":
        return _sym(rng, 2 * n, -100, 100), _sym(rng, 2 * n, -100, 100)
    if name == "hypot":
        x = _sym(rng, 2 * n, -1000 if is64 else -140, 1000 if is64 else 120)
        with np.errstate(over="ignore"):
            return x, x * np.exp2(rng.uniform(-30, 30, 2 * n))
    if name == "pow":
        x = np.concatenate([np.exp2(rng.uniform(-30, 30, n)), -np.exp2(rng.uniform(-5, 5, n))])
        y = np.concatenate([rng.uniform(-30, 30, n), rng.integers(-60, 60, n).astype(float)])
        return x, y
    raise KeyError(name)


# f64 references: mpmath at 120 bits
MP = {
    "exp": mp.exp, "exp2": lambda x: mp.mpf(2) ** x, "exp10": lambda x: mp.mpf(10) ** x,
    "expm1": mp.expm1, "log": mp.log, "log2": lambda x: mp.log(x, 2), "log10": mp.log10,
    "log1p": mp.log1p, "sin": mp.sin, "cos": mp.cos, "tan": mp.tan, "asin": mp.asin,
    "acos": mp.acos, "atan": mp.atan, "sinh": mp.sinh, "cosh": mp.cosh, "tanh": mp.tanh,
    "asinh": mp.asinh, "acosh": mp.acosh, "atanh": mp.atanh, "erf": mp.erf, "erfc": mp.erfc,
    "cbrt": lambda x: mp.sign(x) * mp.cbrt(abs(x)), "sinpi": lambda x: mp.sinpi(x),
    "cospi": lambda x: mp.cospi(x), "atan2": mp.atan2, "hypot": lambda x, y: mp.sqrt(x * x + y * y),
    "pow": lambda x, y: mp.power(x, y) if x > 0 or y == int(y) else mp.nan,
}  # fmt: skip
# max ulp error, f32 and f64 (measured, rounded up)
BOUNDS = {
    "exp": (0.9, 1.0), "exp2": (0.9, 1.0), "exp10": (0.9, 1.0), "expm1": (1.1, 0.9),
    "log": (1.0, 0.8), "log2": (1.0, 1.1), "log10": (0.51, 0.9), "log1p": (0.51, 0.8),
    "sin": (1.6, 0.8), "cos": (1.5, 0.8), "tan": (0.51, 2.0), "sinpi": (0.51, 0.9),
    "cospi": (0.51, 0.9), "asin": (0.51, 1.6), "acos": (0.51, 1.2), "atan": (0.51, 1.5),
    "atan2": (0.51, 2.0), "sinh": (0.51, 2.5), "cosh": (0.51, 2.5), "tanh": (1.5, 2.0),
    "asinh": (0.51, 1.5), "acosh": (0.51, 2.0), "atanh": (0.51, 1.5), "erf": (1.0, 0.9),
    "erfc": (0.51, 3.5), "pow": (0.51, 0.9), "cbrt": (0.51, 0.51), "hypot": (0.51, 1.0),
}  # fmt: skip


def _sinpi(v):  # exact zeros at the integers, sin(pi r) for r = v mod 2 otherwise
    r = v - 2 * np.rint(v / 2)
    v0 = np.where(np.trunc(v) == v, np.copysign(0.0, v), np.sin(np.pi * r))
    return np.where(np.isinf(v), np.nan, v0)


def _cospi(v):
    r = v - 2 * np.rint(v / 2)
    v0 = np.where(np.abs(v - np.trunc(v)) == 0.5, 0.0, np.cos(np.pi * r))
    return np.where(np.isinf(v), np.nan, v0)


def _np_ref(name: str, *xs):
    x = xs[0]
    with np.errstate(all="ignore"):
        fn = {
            "exp10": lambda v: 10.0**v, "erf": np.vectorize(math.erf),
            "erfc": np.vectorize(math.erfc), "sinpi": _sinpi, "cospi": _cospi, "asin": np.arcsin,
            "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh,
            "atanh": np.arctanh, "atan2": np.arctan2, "pow": np.power,
        }.get(name, getattr(np, name, None))  # fmt: skip
        return fn(*xs) if len(xs) > 1 else fn(x)


def _mp_ref(name: str, *xs) -> tuple[np.ndarray, np.ndarray]:
    fn = MP[name]
    n = len(xs[0])
    hi, lo = np.empty(n), np.empty(n)
    for i in range(n):
        try:
            v = fn(*[mp.mpf(float(a[i])) for a in xs])
            v = mp.nan if isinstance(v, mp.mpc) else v
        except (ValueError, ZeroDivisionError):
            v = mp.nan
        except OverflowError:  # mpmath on huge arguments: numpy's value there
            v = mp.mpf(float(_np_ref(name, *[np.float64(a[i]) for a in xs])))
        h = float(v)
        hi[i], lo[i] = h, (float(v - h) if math.isfinite(h) else 0.0)
    return hi, lo


_RUNNERS: dict = {}


def runner(name: str, ty):
    key = (name, str(ty))
    if key not in _RUNNERS:
        n = 2 if name in TWO else 1
        _RUNNERS[key] = compile_host(lambda ctx, *xs: libm.emit(ctx, name, *xs), [ty] * n, ty)
    return _RUNNERS[key]


def measure(name: str, is64: bool, n: int, seed: int = 1) -> tuple[float, tuple]:
    rng = np.random.default_rng(seed)
    ty, dt = (f64, np.float64) if is64 else (f32, np.float32)
    xs = _domain(name, rng, n, is64)
    with np.errstate(all="ignore"):
        xs = tuple(np.asarray(a, dt) for a in (xs if isinstance(xs, tuple) else (xs,)))
        keep = np.all([np.isfinite(a) for a in xs], axis=0)
    xs = tuple(a[keep] for a in xs)
    got = runner(name, ty)(*xs)
    wide = [a.astype(np.float64) for a in xs]
    ref = _mp_ref(name, *wide) if is64 else _np_ref(name, *wide)
    err = ulps(got, ref, dt)
    err = np.where(np.isnan(ref[0] if is64 else ref) & np.isnan(got), 0.0, err)
    i = int(np.nanargmax(err))
    return float(np.nanmax(err)), tuple(float(a[i]) for a in xs)


NAMES = sorted(BOUNDS)


@pytest.mark.parametrize("name", NAMES)
def test_f32_accuracy(name):
    worst, at = measure(name, False, 20_000)
    assert worst <= BOUNDS[name][0], (name, worst, at)


@pytest.mark.parametrize("name", NAMES)
def test_f64_accuracy(name):
    worst, at = measure(name, True, 1_500)
    assert worst <= BOUNDS[name][1], (name, worst, at)


SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("ty", ["f32", "f64"])
@pytest.mark.parametrize("name", NAMES)
def test_special_values(name, ty):
    """NaN, infinities and signed zeros as C99 / numpy give them."""
    dt, lty = (np.float32, f32) if ty == "f32" else (np.float64, f64)
    tiny = float(np.finfo(dt).smallest_subnormal)
    vals = np.array(SPECIAL + [tiny, -tiny, float(np.finfo(dt).max)], dt)
    if name in TWO:
        xs = (np.repeat(vals, len(vals)), np.tile(vals, len(vals)))
    else:
        xs = (vals,)
    got = runner(name, lty)(*xs)
    with np.errstate(all="ignore"):
        want = np.asarray(_np_ref(name, *[a.astype(np.float64) for a in xs])).astype(dt)
    bad = []
    for k in range(len(got)):
        g, w = got[k], want[k]
        if np.isnan(w) or np.isnan(g):
            ok = np.isnan(w) and np.isnan(g)
        elif np.isinf(w) or w == 0:
            ok = g == w and np.signbit(g) == np.signbit(w)
        else:
            ok = abs(float(g) - float(w)) <= 4 * abs(float(w)) * float(np.finfo(dt).eps)
        if not ok:
            bad.append((tuple(float(a[k]) for a in xs), float(g), float(w)))
    assert not bad, bad


def test_ldexp_ilogb_nextafter_fdim():
    rng = np.random.default_rng(5)
    for ty, dt in ((f32, np.float32), (f64, np.float64)):
        x = np.concatenate([_sym(rng, 2000, -140, 120), [0.0, -0.0, np.inf]]).astype(dt)
        n = rng.integers(-300, 300, len(x)).astype(np.int32)
        ld = compile_host(lambda ctx, a, k: libm.emit(ctx, "ldexp", a, k), [ty, i32], ty)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(ld(x, n), np.ldexp(x, n))
        il = compile_host(lambda ctx, a: libm.emit(ctx, "ilogb", a), [ty], i32)
        finite = x[np.isfinite(x) & (x != 0)]
        np.testing.assert_array_equal(il(finite), np.frexp(finite)[1] - 1)
        nx = runner("nextafter", ty)
        y = rng.permutation(x)
        np.testing.assert_array_equal(nx(x, y), np.nextafter(x, y))
        fd = runner("fdim", ty)
        np.testing.assert_array_equal(fd(x, y), np.where(x > y, x - y, 0.0).astype(dt))


def test_fmod_and_remainder_are_exact():
    rng = np.random.default_rng(6)
    for ty, dt in ((f32, np.float32), (f64, np.float64)):
        x = np.concatenate([_sym(rng, 3000, -30, 100), [5.0, -5.0, 0.0, -0.0, 7.5]]).astype(dt)
        y = np.concatenate([_sym(rng, 3000, -30, 30), [np.inf, 2.0, 3.0, -3.0, 2.5]]).astype(dt)
        np.testing.assert_array_equal(runner("fmod", ty)(x, y), np.fmod(x, y))
        want = np.array([math.remainder(float(a), float(b)) for a, b in zip(x, y)], dt)
        got = runner("remainder", ty)(x, y)
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))


if __name__ == "__main__":  # the ARCHITECTURE.md column: python3 tests/codegen/... N
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    for name in NAMES:
        e32, _ = measure(name, False, n, seed=11)
        e64, _ = measure(name, True, max(n // 50, 2000), seed=11)
        print(f"{name:8s} f32 {e32:.3f}  f64 {e64:.3f}")
