"""atan, atan2, asin, acos for f64 (`__nv_atan`, ...).

    atan(x):  t = |x|, or 1/|x| above 1 (then pi/2 - atan(t)); above tan(pi/8),
              u = (t - 1) / (t + 1) and pi/4 + atan(u); atan(u) = u + u^3 A(u^2)
              (A: ATAN_A, degree 11, |u| <= tan(pi/8)); pi/2, pi/4 in two parts
    atan2(y, x): t = min(|x|,|y|) / max(|x|,|y|), then pi/2 - a, pi - a, the sign of y;
              zeros and infinities as C99 (atan2(+-0, -0) = +-pi, atan2(+-inf, +-inf) =
              +-pi/4 or +-3pi/4)
    asin(x):  |x| <= 1/2: x + x^3 B(x^2) (B: ASIN_B, degree 11);
              above: pi/2 - 2 asin(s), s = sqrt((1 - |x|) / 2) plus its square-root
              residual (1 - |x| is exact)
    acos(x):  pi/2 - asin(x) below 1/2; 2 asin(s) / pi - 2 asin(s) above
"""

from __future__ import annotations

import math

from llvmlite import ir

from tritium.codegen.lower.libm.coefficients import ASIN_B_F64, ATAN_A_F64
from tritium.codegen.lower.libm.constants import PI, split
from tritium.codegen.lower.libm.core import Libm

PI_HI, PI_LO = split(PI, 53)
PIO2_HI, PIO2_LO = split(PI / 2, 53)
PIO4_HI, PIO4_LO = split(PI / 4, 53)
TAN_PI_8 = 0.41421356237309503  # tan(pi/8) (any nearby value works)


def _atan01(m: Libm, t) -> ir.Value:
    """atan(t) for 0 <= t <= 1."""
    mid = m.cmp(">", t, m.c(TAN_PI_8))
    u = m.select(mid, m.div(m.sub(t, m.c(1.0)), m.add(t, m.c(1.0))), t)
    z = m.mul(u, u)
    p = m.mul(m.mul(u, z), m.horner(ATAN_A_F64, z))
    base_hi = m.select(mid, m.c(PIO4_HI), m.c(0.0))
    base_lo = m.select(mid, m.c(PIO4_LO), m.c(0.0))
    return m.add(base_hi, m.add(u, m.add(p, base_lo)))


def _from(m: Libm, hi: float, lo: float, a) -> ir.Value:
    """(hi + lo) - a."""
    return m.add(m.c(hi), m.sub(m.c(lo), a))


def atan(m: Libm, x) -> ir.Value:
    a = m.abs(x)
    big = m.cmp(">", a, m.c(1.0))
    v = _atan01(m, m.select(big, m.div(m.c(1.0), a), a))
    v = m.select(big, _from(m, PIO2_HI, PIO2_LO, v), v)
    return m.copysign(v, x)  # NaN stays NaN


def atan2(m: Libm, y, x) -> ir.Value:
    b = m.b
    ax, ay = m.abs(x), m.abs(y)
    swap = m.cmp(">", ay, ax)
    num = m.select(swap, ax, ay)
    den = m.select(swap, ay, ax)
    t = m.div(num, den)
    inf = m.c(math.inf)
    both_inf = b.and_(m.cmp("==", ax, inf), m.cmp("==", ay, inf))
    t = m.select(both_inf, m.c(1.0), m.select(m.cmp("==", num, m.c(0.0)), m.c(0.0), t))
    a = _atan01(m, t)
    x_neg = b.icmp_signed("<", m.bits(x), m.ci(0))  # -0 counts as negative
    # pi/2 -+ a when |y| > |x|, else pi - a for x < 0, else a
    a = m.select(b.xor(swap, x_neg), m.neg(a), a)
    base_hi = m.select(swap, m.c(PIO2_HI), m.select(x_neg, m.c(PI_HI), m.c(0.0)))
    base_lo = m.select(swap, m.c(PIO2_LO), m.select(x_neg, m.c(PI_LO), m.c(0.0)))
    a = m.add(base_hi, m.add(base_lo, a))
    return m.fix_nan(m.copysign(a, y), x, y)


def _asin_small(m: Libm, x) -> ir.Value:
    z = m.mul(x, x)
    return m.add(x, m.mul(m.mul(x, z), m.horner(ASIN_B_F64, z)))


def _two_asin_big(m: Libm, a) -> tuple[ir.Value, ir.Value]:
    """2 asin(s) = (hi, lo) for s = sqrt((1 - a) / 2), a in [1/2, 1]."""
    z = m.mul(m.sub(m.c(1.0), a), m.c(0.5))  # exact
    s = m.sqrt(z)
    c = m.div(m.fma(m.neg(s), s, z), m.add(s, s))  # sqrt(z) = s + c
    c = m.select(m.cmp("==", s, m.c(0.0)), m.c(0.0), c)
    p = m.mul(m.mul(s, z), m.horner(ASIN_B_F64, z))
    return m.add(s, s), m.mul(m.add(c, p), m.c(2.0))


def asin(m: Libm, x) -> ir.Value:
    a = m.abs(x)
    hi, lo = _two_asin_big(m, a)
    big = m.add(m.sub(m.c(PIO2_HI), hi), m.sub(m.c(PIO2_LO), lo))
    v = m.select(m.cmp("<=", a, m.c(0.5)), _asin_small(m, a), big)
    return m.copysign(v, x)  # |x| > 1: sqrt of a negative, NaN


def acos(m: Libm, x) -> ir.Value:
    a = m.abs(x)
    small = _from(m, PIO2_HI, PIO2_LO, _asin_small(m, x))
    hi, lo = _two_asin_big(m, a)
    pos = m.add(hi, lo)
    neg = m.add(m.sub(m.c(PI_HI), hi), m.sub(m.c(PI_LO), lo))
    big = m.select(m.cmp("<", x, m.c(0.0)), neg, pos)
    return m.fix_nan(m.select(m.cmp("<=", a, m.c(0.5)), small, big), x)


__all__ = ["acos", "asin", "atan", "atan2"]
