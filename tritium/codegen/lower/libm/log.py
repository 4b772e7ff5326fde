"""log, log2, log10, log1p for f64 (`__nv_log`, ...) and log(x) as a double-length
value for pow. (f32 log / log2 are log_sin_cos_f32.py's.)

    x = 2^e * m,  m in [sqrt(1/2), sqrt(2)),  f = m - 1 (exact)
    s = f / (2 + f),  z = s^2,  log(1 + f) = 2 atanh(s) = 2s + s z L(z)  (L: LOG_L, degree 8)
    and since 2s = f - s f:   log(1 + f) = f + c,  c = s (z L(z) - f)   (|c| <= 0.09 |f|)
    log(x)   = e ln2_hi + (f + (c + e ln2_lo))              (e ln2_hi exact)
    log2(x)  = e + (f log2e_hi + (f log2e_lo + c log2e))
    log10(x) = e log10(2)_hi + (f log10e_hi + (f log10e_lo + (c log10e + e log10(2)_lo)))
    log1p(x) = log(u) + (x - (u - 1)) / u for u = 1 + x rounded (the part of x that u lost),
               e ln2 + f two-summed
"""

from __future__ import annotations

import math
from fractions import Fraction

from llvmlite import ir

from tritium.codegen.lower.libm.coefficients import LOG_L_F64
from tritium.codegen.lower.libm.constants import LN2, LOG2E, LOG10_2, LOG10_E, split
from tritium.codegen.lower.libm.core import Libm

LN2_HI, LN2_LO = split(LN2, 42)  # e ln2_hi exact for |e| < 2^11
LG2_HI, LG2_LO = split(LOG10_2, 42)
LOG2E_HI, LOG2E_LO = split(LOG2E, 53)
LOG10E_HI, LOG10E_LO = split(LOG10_E, 53)
TWO_THIRDS_HI, TWO_THIRDS_LO = split(Fraction(2, 3), 53)


def _parts(m: Libm, x) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(e as a float, f, c): log(x) = e ln2 + f + c for finite x > 0."""
    e, mm = m.frexp(x)
    f = m.sub(mm, m.c(1.0))
    s = m.div(f, m.add(m.c(2.0), f))
    z = m.mul(s, s)
    c = m.mul(s, m.fma(z, m.horner(LOG_L_F64, z), m.neg(f)))
    return m.to_float(e), f, c


def _specials(m: Libm, x, r) -> ir.Value:
    """log of 0 is -inf, of a negative or NaN is NaN, of +inf is +inf."""
    inf = m.c(math.inf)
    valid = m.b.and_(m.cmp(">", x, m.c(0.0)), m.cmp("<", x, inf))
    special = m.select(
        m.cmp("==", x, m.c(0.0)),
        m.c(-math.inf),
        m.select(m.cmp("==", x, inf), inf, m.c(math.nan)),
    )
    return m.select(valid, r, special)


def log(m: Libm, x, base: str = "e") -> ir.Value:
    ef, f, c = _parts(m, x)
    if base == "e":
        r = m.add(m.mul(ef, m.c(LN2_HI)), m.add(f, m.fma(ef, m.c(LN2_LO), c)))
    elif base == "2":
        lo = m.fma(f, m.c(LOG2E_LO), m.mul(c, m.c(float(LOG2E))))
        r = m.add(ef, m.fma(f, m.c(LOG2E_HI), lo))
    else:
        lo = m.fma(c, m.c(float(LOG10_E)), m.mul(ef, m.c(LG2_LO)))
        lo = m.fma(f, m.c(LOG10E_LO), lo)
        r = m.add(m.mul(ef, m.c(LG2_HI)), m.fma(f, m.c(LOG10E_HI), lo))
    return _specials(m, x, r)


def log1p(m: Libm, x) -> ir.Value:
    b = m.b
    one = m.c(1.0)
    u = m.add(one, x)
    us = m.select(m.cmp(">", u, m.c(0.0)), u, one)  # keep the parts finite; fixed below
    ef, f, c = _parts(m, us)
    above = m.cmp(">=", u, m.c(2.0))  # then u - x is exact, else u - 1 is
    lost = m.select(above, m.sub(one, m.sub(u, x)), m.sub(x, m.sub(u, one)))
    lost = m.select(m.cmp("<", ef, m.c(54.0)), m.div(lost, u), m.c(0.0))
    head = m.mul(ef, m.c(LN2_HI))
    s = m.add(head, f)  # two-summed: e ln2 and f may cancel
    r = m.add(s, m.add(_two_sum_err(m, head, f, s), m.add(c, m.fma(ef, m.c(LN2_LO), lost))))
    r = m.select(m.cmp("==", x, m.c(0.0)), x, r)  # log1p(-0) = -0
    inf = m.c(math.inf)
    valid = b.and_(m.cmp(">", x, m.c(-1.0)), m.cmp("<", x, inf))
    special = m.select(
        m.cmp("==", x, m.c(-1.0)),
        m.c(-math.inf),
        m.select(m.cmp("==", x, inf), inf, m.c(math.nan)),
    )
    return m.select(valid, r, special)


def log_dd(m: Libm, x) -> tuple[ir.Value, ir.Value]:
    """log(x) = hi + lo to about 2^-63 relative, for finite x > 0 (pow): the same
    reduction with s = f / (2 + f) double-length and the s^3 term double-length."""
    e, mm = m.frexp(x)
    ef = m.to_float(e)
    f = m.sub(mm, m.c(1.0))
    two = m.c(2.0)
    d = m.add(two, f)
    d_lo = m.sub(f, m.sub(d, two))  # 2 + f = d + d_lo exactly
    s = m.div(f, d)
    s_lo = m.div(m.sub(m.fma(m.neg(s), d, f), m.mul(s, d_lo)), d)  # f / (2 + f) = s + s_lo
    # t = s^3 (2/3 + z L'(z)), the s^3 * 2/3 part double-length (it is 1% of the log)
    z, z_lo = m.two_prod(s, s)
    w, w_lo = m.two_prod(s, z)
    w_lo = m.fma(m.mul(z, m.c(3.0)), s_lo, m.fma(s, z_lo, w_lo))  # (s + s_lo)^3 = w + w_lo
    t1, t1_lo = m.two_prod(w, m.c(TWO_THIRDS_HI))
    t1_lo = m.fma(w, m.c(TWO_THIRDS_LO), m.fma(w_lo, m.c(TWO_THIRDS_HI), t1_lo))
    t2 = m.mul(m.mul(w, z), m.horner(LOG_L_F64[1:], z))
    t = m.add(t1, m.add(t1_lo, t2))
    s2 = m.add(s, s)
    hi = m.fma(ef, m.c(LN2_HI), s2)  # e ln2_hi exact; the sum is two-summed below
    err = _two_sum_err(m, m.mul(ef, m.c(LN2_HI)), s2, hi)
    lo = m.add(err, m.add(m.add(s_lo, s_lo), m.fma(ef, m.c(LN2_LO), t)))
    h2 = m.add(hi, lo)
    return h2, m.sub(lo, m.sub(h2, hi))


def _two_sum_err(m: Libm, a, x, s) -> ir.Value:
    """The rounding error of s = a + x (Knuth)."""
    v = m.sub(s, a)
    return m.add(m.sub(a, m.sub(s, v)), m.sub(x, v))


__all__ = ["log", "log1p", "log_dd"]
