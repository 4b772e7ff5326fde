"""The libdevice functions (`tt.extern_elementwise` symbols) on numpy values, for the
interpreter: the reference a kernel's GPU results are compared with.

Floats are computed in float64 (numpy, or Python's `math` for erf / erfc / remainder;
the special functions, lgamma ... Bessel's, in libdevice_special.py)
and rounded once to the symbol's type; f64 results are numpy's. The functions with a
rounding mode (`__nv_fadd_rz`, `__nv_double2float_rd`, `__nv_ll2float_ru`, ...) are
computed exactly with Python fractions and rounded as asked. Integer values arrive as
the signed representation of their width (unsigned symbols view them as unsigned).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from tritium.runtime.libdevice_special import SPECIAL

F32, F64, I32, I64 = np.float32, np.float64, np.int32, np.int64


def _wide(fn, n=1):
    """fn on float64, rounded back to the first argument's float type."""

    def run(*xs):
        dt = np.asarray(xs[0]).dtype
        with np.errstate(all="ignore"):
            out = fn(*[np.asarray(x, F64) for x in xs[:n]], *xs[n:])
        return np.asarray(out).astype(dt)[()]

    return run


def _py(fn):
    """A Python scalar float function, elementwise."""
    v = np.frompyfunc(fn, 1, 1)
    return lambda x: np.asarray(v(np.asarray(x, F64)), F64)


def _safe(fn):
    def run(x):
        try:
            return fn(x)
        except (ValueError, OverflowError):
            return math.nan

    return run


_erf, _erfc = _py(math.erf), _py(math.erfc)
_remainder = np.frompyfunc(lambda a, b: _safe(lambda _: math.remainder(a, b))(0), 2, 1)


def _round_away(x):
    t = np.trunc(x)
    return t + np.where(np.abs(x - t) >= 0.5, np.sign(x), 0.0)


def _sin_cos_pi(x, want_cos: bool):
    """sin(pi x) / cos(pi x) with exact reductions: r = x mod 2, j = rint(2r), and
    sin / cos of pi (r - j/2) by the quadrant j."""
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        r = x - 2.0 * np.rint(x * 0.5)
        j = np.rint(2.0 * r)
        t = np.pi * (r - 0.5 * j)
        q = (np.nan_to_num(j).astype(I64) + (1 if want_cos else 0)) % 4
        v = np.where(q % 2 == 1, np.cos(t), np.sin(t))
        v = np.where(q >= 2, -v, v)
    if want_cos:
        v = np.where(v == 0, 0.0, v)
    else:
        v = np.where(v == 0, np.copysign(0.0, x), v)
    return np.where(np.isfinite(x), v, np.nan)


def _sinpi(x):
    return _sin_cos_pi(x, False)


def _cospi(x):
    return _sin_cos_pi(x, True)


def _ilogb(x):
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        e = np.frexp(x)[1].astype(I64) - 1
    e = np.where(x == 0, -(2**31), e)
    e = np.where(np.isinf(x), 2**31 - 1, e)
    return np.where(np.isnan(x), -(2**31), e).astype(I32)[()]


def _logb(x):
    with np.errstate(all="ignore"):
        e = np.frexp(x)[1].astype(F64) - 1
    e = np.where(x == 0, -np.inf, e)
    return np.where(np.isinf(x), np.inf, np.where(np.isnan(x), np.nan, e))


def _fdim(x, y):
    return np.where(np.isnan(x) | np.isnan(y), np.nan, np.where(x > y, x - y, 0.0))


def _to_int(x, bits: int, signed: bool, rnd=np.rint):
    """float -> int rounded by `rnd`, saturating, NaN -> 0 (PTX cvt), as the signed
    representation of the width."""
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    with np.errstate(all="ignore"):
        r = rnd(np.asarray(x, F64))
    out = []
    for v in np.ravel(r):
        iv = 0 if math.isnan(v) else (lo if v < lo else hi if v > hi else int(v))
        out.append(iv - 2**bits if iv >= 2 ** (bits - 1) else iv)
    return np.array(out, I64 if bits == 64 else I32).reshape(np.shape(r))[()]


_RND = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}


# ------------------------------------------------------------------ exact rounding
def _round_exact(q, dt, mode: str) -> float:
    """The Fraction / int `q` rounded to numpy float type `dt` by `mode`."""
    info = np.finfo(dt)
    big = Fraction(float(info.max))
    if abs(q) > big:
        pos = q > 0
        to_inf = mode == "rn" or (mode == "ru" and pos) or (mode == "rd" and not pos)
        if mode == "rn":  # overflow threshold: max + half an ulp
            half = Fraction(float(info.max) - float(np.nextafter(info.max, dt(0)))) / 2
            to_inf = abs(q) >= big + half
        v = math.inf if to_inf else float(info.max)
        return dt(v if pos else -v)
    r = dt(float(q))
    if Fraction(float(r)) == q:
        return r
    if Fraction(float(r)) > q:
        hi, lo = r, np.nextafter(r, dt(-np.inf))
    else:
        lo, hi = r, np.nextafter(r, dt(np.inf))
    if mode == "rz":
        return lo if q > 0 else hi
    if mode == "rd":
        return lo
    if mode == "ru":
        return hi
    d_lo, d_hi = q - Fraction(float(lo)), Fraction(float(hi)) - q
    if d_lo != d_hi:
        return lo if d_lo < d_hi else hi
    bits = np.array(lo, dt).view(np.dtype(f"uint{np.dtype(dt).itemsize * 8}"))
    return lo if int(bits) % 2 == 0 else hi


def _exact(op: str, mode: str):
    """add / sub / mul / div / rcp / sqrt / fma of floats, rounded by `mode`."""

    def scalar(dt, *xs):
        xs = [dt(x) for x in xs]
        with np.errstate(all="ignore"):
            rn = {
                "add": lambda a, b: a + b, "sub": lambda a, b: a - b,
                "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
                "rcp": lambda a: dt(1) / a, "sqrt": np.sqrt,
                "fma": lambda a, b, c: dt(F64(a) * F64(b) + F64(c)) if dt is F32 else a * b + c,
            }[op](*xs)  # fmt: skip
        if not all(np.isfinite(x) for x in xs) or (op in ("div", "rcp") and xs[-1] == 0):
            return rn
        if op == "sqrt":
            if xs[0] <= 0 or mode == "rn":
                return rn
            q = Fraction(float(xs[0]))
            r = Fraction(float(rn))
            if r * r == q:  # exact (compared exactly: rn * rn in floating point rounds)
                return rn
            # sqrt is irrational here: between rn and its neighbour on the side of q
            lo, hi = (rn, np.nextafter(rn, dt(np.inf))) if r * r < q else (np.nextafter(rn, dt(0)), rn)
            return lo if mode in ("rz", "rd") else hi
        f = [Fraction(float(x)) for x in xs]
        q = {
            "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
            "div": lambda a, b: a / b, "rcp": lambda a: 1 / a, "fma": lambda a, b, c: a * b + c,
        }[op](*f)  # fmt: skip
        if q == 0:
            if op in ("add", "sub", "fma"):
                return dt(-0.0) if mode == "rd" else dt(0.0)
            return rn
        return _round_exact(q, dt, mode)

    n = {"rcp": 1, "sqrt": 1, "fma": 3}.get(op, 2)
    vecs = {t: np.frompyfunc(lambda *xs, t=t: scalar(t, *xs), n, 1) for t in (F32, F64)}

    def run(*xs):
        dt = np.asarray(xs[0]).dtype
        arrs = [np.asarray(x, dt) for x in xs]
        return np.asarray(vecs[dt.type](*arrs), dt)[()]

    return run


def _convert(src_signed, src_bits, dst, mode):
    """int (representation) -> float `dst`, rounded by `mode`."""

    def scalar(v):
        iv = int(v)
        if not src_signed and iv < 0:
            iv += 2**src_bits
        return _round_exact(Fraction(iv), dst, mode)

    vec = np.frompyfunc(scalar, 1, 1)
    return lambda x: np.asarray(vec(np.asarray(x)), dst)[()]


def _f2f(mode):
    def scalar(v):
        if not np.isfinite(v):
            return F32(v)
        return _round_exact(Fraction(float(v)), F32, mode) if v != 0 else F32(v)

    vec = np.frompyfunc(scalar, 1, 1)
    return lambda x: np.asarray(vec(np.asarray(x, F64)), F32)[()]


# ------------------------------------------------------------------ bits and integers
def _i32(x):
    return np.asarray(x).astype(I32)[()]


def _u(x, bits):
    return np.asarray(x).view(np.dtype(f"uint{bits}"))


def _mulhi(bits, signed):
    def run(a, b):
        out = []
        for x, y in zip(np.ravel(a), np.ravel(b)):
            x, y = int(x), int(y)
            if not signed:
                x, y = x % 2**bits, y % 2**bits
            h = ((x * y) >> bits) % 2**bits
            out.append(h - 2**bits if h >= 2 ** (bits - 1) else h)
        dt = I64 if bits == 64 else I32
        return np.array(out, dt).reshape(np.shape(a))[()]

    return run


def _wrap32(v):
    v = np.asarray(v, I64) % 2**32
    return np.where(v >= 2**31, v - 2**32, v).astype(I32)[()]


def _mul24(signed):
    def run(a, b):
        a, b = np.asarray(a, I64), np.asarray(b, I64)
        if signed:
            a, b = ((a & 0xFFFFFF) ^ 0x800000) - 0x800000, ((b & 0xFFFFFF) ^ 0x800000) - 0x800000
        else:
            a, b = a & 0xFFFFFF, b & 0xFFFFFF
        return _wrap32(a * b)

    return run


def _halving(signed, rounded):
    def run(a, b):
        a, b = np.asarray(a, I64), np.asarray(b, I64)
        if not signed:
            a, b = a % 2**32, b % 2**32
        return _wrap32((a + b + (1 if rounded else 0)) >> 1)

    return run


def _sad(signed):
    def run(a, b, c):
        a, b, c = np.asarray(a, I64), np.asarray(b, I64), np.asarray(c, I64)
        if not signed:
            a, b = a % 2**32, b % 2**32
        return _wrap32(np.abs(a - b) + c % 2**32)

    return run


def _clz(bits):
    def run(x):
        u = [int(v) % 2**bits for v in np.ravel(x)]
        return np.array([bits - v.bit_length() for v in u], I32).reshape(np.shape(x))[()]

    return run


def _popc(bits):
    return lambda x: np.array(
        [bin(int(v) % 2**bits).count("1") for v in np.ravel(x)], I32
    ).reshape(np.shape(x))[()]


def _brev(bits):
    def run(x):
        out = []
        for v in np.ravel(x):
            r = int(f"{int(v) % 2**bits:0{bits}b}"[::-1], 2)
            out.append(r - 2**bits if r >= 2 ** (bits - 1) else r)
        return np.array(out, I64 if bits == 64 else I32).reshape(np.shape(x))[()]

    return run


def _ffs(bits):
    def run(x):
        out = []
        for v in np.ravel(x):
            u = int(v) % 2**bits
            out.append((u & -u).bit_length())
        return np.array(out, I32).reshape(np.shape(x))[()]

    return run


def _byte_perm(x, y, s):
    out = []
    for a, b, c in zip(np.ravel(x), np.ravel(y), np.ravel(s)):
        src = (int(a) % 2**32) | ((int(b) % 2**32) << 32)
        r = 0
        for k in range(4):
            sel = (int(c) >> (4 * k)) & 7
            r |= ((src >> (8 * sel)) & 0xFF) << (8 * k)
        out.append(r - 2**32 if r >= 2**31 else r)
    return np.array(out, I32).reshape(np.shape(x))[()]


def _bitcast(dt):
    return lambda x: np.asarray(x).view(dt)[()]


def _hilo(hi, lo):
    h, lw = np.asarray(hi, I64) % 2**32, np.asarray(lo, I64) % 2**32
    return (((h << 32) | lw).astype(np.uint64).view(F64))[()]


def _half(high):
    def run(x):
        u = np.asarray(x, F64).view(np.uint64)
        return (u >> np.uint64(32) if high else u & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(I32)[()]

    return run


def _int32_of(pred):
    return lambda x: pred(np.asarray(x)).astype(I32)[()]


def _norm(*xs):
    acc = np.zeros(np.shape(xs[0]))
    for x in xs:
        acc = np.hypot(acc, np.asarray(x, F64))
    return acc


def _fma64(a, b, c):
    return _exact("fma", "rn")(np.asarray(a, F64), np.asarray(b, F64), np.asarray(c, F64))


def _table() -> dict:
    t: dict = {}
    unary = {
        "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10.0, x), "expm1": np.expm1,
        "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
        "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
        "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
        "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "erf": _erf,
        "erfc": _erfc, "cbrt": np.cbrt, "rcbrt": lambda x: 1.0 / np.cbrt(x),
        "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x), "floor": np.floor,
        "ceil": np.ceil, "trunc": np.trunc, "round": _round_away, "rint": np.rint,
        "nearbyint": np.rint, "fabs": np.abs, "sinpi": _sinpi, "cospi": _cospi, "logb": _logb,
    }  # fmt: skip
    binary = {
        "pow": np.power, "atan2": np.arctan2, "hypot": np.hypot,
        "rhypot": lambda x, y: 1.0 / np.hypot(x, y), "fmod": np.fmod,
        "remainder": lambda x, y: np.asarray(_remainder(x, y), F64), "copysign": np.copysign,
        "fmin": np.fmin, "fmax": np.fmax, "fdim": _fdim, "nextafter": None,
    }  # fmt: skip
    for name, fn in unary.items():
        t[f"__nv_{name}f"] = t[f"__nv_{name}"] = _wide(fn)
    for name, fn in binary.items():
        t[f"__nv_{name}f"] = t[f"__nv_{name}"] = _wide(fn, 2)
    t["__nv_nextafterf"] = t["__nv_nextafter"] = np.nextafter
    for name, fn in SPECIAL.items():  # (libdevice_special.py: no GPU routine of tritium's)
        if name != "jn":
            t[f"__nv_{name}f"] = t[f"__nv_{name}"] = _wide(fn)
    t["__nv_jnf"] = t["__nv_jn"] = lambda n, x: _wide(lambda x: SPECIAL["jn"](n, x))(x)
    t["__nv_fmaf"] = t["__nv_fmaf_rn"] = _exact("fma", "rn")
    t["__nv_fma"] = t["__nv_fma_rn"] = _fma64
    t["__nv_frsqrt_rn"] = _wide(lambda x: 1.0 / np.sqrt(x))
    t["__nv_powif"] = t["__nv_powi"] = lambda x, n: _wide(np.power, 2)(x, np.asarray(n, F64))
    t["__nv_ldexpf"] = t["__nv_ldexp"] = t["__nv_scalbnf"] = t["__nv_scalbn"] = (
        lambda x, n: np.ldexp(x, np.clip(np.asarray(n, I64), -2000, 2000).astype(I32))
    )
    t["__nv_ilogbf"] = t["__nv_ilogb"] = _ilogb
    for k in (3, 4):
        t[f"__nv_norm{k}df"] = t[f"__nv_norm{k}d"] = _wide(_norm, k)
        t[f"__nv_rnorm{k}df"] = t[f"__nv_rnorm{k}d"] = _wide(lambda *xs: 1.0 / _norm(*xs), k)
    t["__nv_isnanf"] = t["__nv_isnand"] = _int32_of(np.isnan)
    t["__nv_isinff"] = t["__nv_isinfd"] = _int32_of(np.isinf)
    t["__nv_finitef"] = t["__nv_isfinited"] = _int32_of(np.isfinite)
    t["__nv_signbitf"] = t["__nv_signbitd"] = _int32_of(np.signbit)
    t["__nv_llrintf"] = t["__nv_llrint"] = lambda x: _to_int(x, 64, True, np.rint)
    t["__nv_llroundf"] = t["__nv_llround"] = lambda x: _to_int(x, 64, True, _round_away)
    t["__nv_saturatef"] = lambda x: np.where(np.isnan(x), F32(0), np.clip(x, 0, 1)).astype(F32)[()]
    # fast_* compute the accurate values (the GPU's approximate ones are within tolerance)
    fast = {"sinf": np.sin, "cosf": np.cos, "log2f": np.log2, "logf": np.log, "expf": np.exp,
            "tanf": np.tan, "exp10f": lambda x: np.power(10.0, x), "log10f": np.log10}  # fmt: skip
    for name, fn in fast.items():
        t[f"__nv_fast_{name}"] = _wide(fn)
    t["__nv_fast_powf"] = _wide(np.power, 2)
    t["__nv_fast_fdividef"] = _wide(np.divide, 2)
    for mode, rnd in _RND.items():
        for op, f, d in (("add", "fadd", "dadd"), ("sub", "fsub", "dsub"), ("mul", "fmul", "dmul"),
                         ("div", "fdiv", "ddiv"), ("rcp", "frcp", "drcp"), ("sqrt", "fsqrt", "dsqrt")):  # fmt: skip
            t[f"__nv_{f}_{mode}"] = t[f"__nv_{d}_{mode}"] = _exact(op, mode)
        if mode != "rn":
            t[f"__nv_fmaf_{mode}"] = t[f"__nv_fma_{mode}"] = _exact("fma", mode)
        t[f"__nv_double2float_{mode}"] = _f2f(mode)
        for src in ("float", "double"):
            t[f"__nv_{src}2int_{mode}"] = lambda x, r=rnd: _to_int(x, 32, True, r)
            t[f"__nv_{src}2uint_{mode}"] = lambda x, r=rnd: _to_int(x, 32, False, r)
            t[f"__nv_{src}2ll_{mode}"] = lambda x, r=rnd: _to_int(x, 64, True, r)
            t[f"__nv_{src}2ull_{mode}"] = lambda x, r=rnd: _to_int(x, 64, False, r)
        t[f"__nv_int2float_{mode}"] = _convert(True, 32, F32, mode)
        t[f"__nv_uint2float_{mode}"] = _convert(False, 32, F32, mode)
        t[f"__nv_ll2float_{mode}"] = _convert(True, 64, F32, mode)
        t[f"__nv_ull2float_{mode}"] = _convert(False, 64, F32, mode)
        t[f"__nv_ll2double_{mode}"] = _convert(True, 64, F64, mode)
        t[f"__nv_ull2double_{mode}"] = _convert(False, 64, F64, mode)
    t["__nv_int2double_rn"] = lambda x: np.asarray(x, F64)[()]
    t["__nv_uint2double_rn"] = lambda x: _u(x, 32).astype(F64)[()]
    t["__nv_int_as_float"] = t["__nv_uint_as_float"] = _bitcast(F32)
    t["__nv_float_as_int"] = t["__nv_float_as_uint"] = _bitcast(I32)
    t["__nv_longlong_as_double"] = _bitcast(F64)
    t["__nv_double_as_longlong"] = _bitcast(I64)
    t["__nv_hiloint2double"] = _hilo
    t["__nv_double2loint"], t["__nv_double2hiint"] = _half(False), _half(True)
    t["__nv_clz"], t["__nv_clzll"] = _clz(32), _clz(64)
    t["__nv_popc"], t["__nv_popcll"] = _popc(32), _popc(64)
    t["__nv_brev"], t["__nv_brevll"] = _brev(32), _brev(64)
    t["__nv_ffs"], t["__nv_ffsll"] = _ffs(32), _ffs(64)
    t["__nv_abs"] = t["__nv_llabs"] = np.abs
    t["__nv_mulhi"], t["__nv_umulhi"] = _mulhi(32, True), _mulhi(32, False)
    t["__nv_mul64hi"], t["__nv_umul64hi"] = _mulhi(64, True), _mulhi(64, False)
    t["__nv_mul24"], t["__nv_umul24"] = _mul24(True), _mul24(False)
    t["__nv_hadd"], t["__nv_uhadd"] = _halving(True, False), _halving(False, False)
    t["__nv_rhadd"], t["__nv_urhadd"] = _halving(True, True), _halving(False, True)
    t["__nv_sad"], t["__nv_usad"] = _sad(True), _sad(False)
    t["__nv_byte_perm"] = _byte_perm
    return t


SYMBOLS = _table()

__all__ = ["SYMBOLS"]
