"""pow, cbrt, hypot for f64 (`__nv_pow`, `__nv_powi`, `__nv_cbrt`, `__nv_hypot`).

    pow(x, y)  = exp(y log|x|): log|x| double-length (log.log_dd), y times it as a
                 double-length product, its low part folded into exp's reduced argument;
                 the error grows with |y log x| (about 2^-60 relative of it);
                 the sign for odd integer y and x < 0, and C99's special cases: pow(x, 0)
                 = pow(1, y) = 1 (even NaN), pow(-1, +-inf) = 1, x < 0 finite with a
                 non-integer y: NaN, zeros and infinities by the sign and oddness of y
    cbrt(x)    = an initial 2^(e/3) guess from the exponent bits, 4 Newton steps, and a
                 last step on the exact residual x - y^3 (fma); 0, inf, NaN pass through
    hypot(x,y) = 2^e sqrt(fma(X, X, Y Y)) with X, Y scaled by 2^-e (exact) so nothing
                 overflows; inf if either is inf (even with a NaN)
"""

from __future__ import annotations

import math

from llvmlite import ir

from tritium.codegen.lower.libm.constants import LN2, LOG2E
from tritium.codegen.lower.libm.core import Libm
from tritium.codegen.lower.libm.exp import _clamp, exp_of_sum, reduce
from tritium.codegen.lower.libm.log import log_dd


def pow_(m: Libm, x, y) -> ir.Value:
    b = m.b
    inf = m.c(math.inf)
    ax = m.abs(x)
    finite_pos = b.and_(m.cmp(">", ax, m.c(0.0)), m.cmp("<", ax, inf))
    lh, ll = log_dd(m, m.select(finite_pos, ax, m.c(1.0)))
    lh = m.select(m.cmp("==", ax, m.c(0.0)), m.c(-math.inf), m.select(m.cmp("==", ax, inf), inf, lh))
    ll = m.select(finite_pos, ll, m.c(0.0))
    ph, pl = m.two_prod(y, lh)
    pl = m.fma(y, ll, pl)
    pl = m.select(m.cmp("<", m.abs(ph), m.c(800.0)), pl, m.c(0.0))  # NaN / inf parts
    k, r, r_lo = reduce(m, _clamp(m, ph, -800.0, 800.0), float(LOG2E), LN2)
    v = exp_of_sum(m, k, r, m.add(r_lo, pl))
    # signs and special cases
    y_int = m.cmp("==", m.trunc(y), y)
    half = m.mul(y, m.c(0.5))
    y_odd = b.and_(y_int, m.cmp("!=", m.trunc(half), half))
    x_neg = m.cmp("<", x, m.c(0.0))
    v = m.select(b.and_(x_neg, y_odd), m.neg(v), v)
    v = m.select(m.cmp("==", x, m.c(-0.0)), m.select(y_odd, m.copysign(v, x), v), v)
    bad = b.and_(b.and_(x_neg, m.cmp(">", x, m.c(-math.inf))), b.and_(b.not_(y_int), m.cmp("<", m.abs(y), inf)))
    v = m.select(bad, m.c(math.nan), v)
    v = m.select(b.or_(m.isnan(x), m.isnan(y)), m.c(math.nan), v)
    minus_one_inf = b.and_(m.cmp("==", x, m.c(-1.0)), m.cmp("==", m.abs(y), inf))
    one = b.or_(b.or_(m.cmp("==", y, m.c(0.0)), m.cmp("==", x, m.c(1.0))), minus_one_inf)
    return m.select(one, m.c(1.0), v)


def cbrt(m: Libm, x) -> ir.Value:
    b = m.b
    a = m.abs(x)
    tiny = m.cmp("<", a, m.c(2.0**-1022))
    s = m.select(tiny, m.mul(a, m.c(2.0**54)), a)
    guess = b.add(b.udiv(m.bits(s), m.ci(3)), m.ci(682 << 52))  # 2^(e/3), about 6% off
    y = m.from_bits(guess)
    third = m.c(1.0 / 3.0)
    for _ in range(4):  # y <- y + (s / y^2 - y) / 3
        y = m.fma(m.sub(m.div(s, m.mul(y, y)), y), third, y)
    yy, yy_lo = m.two_prod(y, y)
    resid = m.sub(m.fma(m.neg(yy), y, s), m.mul(yy_lo, y))  # s - y^3, nearly exact
    y = m.add(y, m.div(resid, m.mul(m.c(3.0), yy)))
    y = m.select(tiny, m.mul(y, m.c(2.0**-18)), y)
    passthrough = b.or_(m.cmp("==", a, m.c(0.0)), m.cmp("==", a, m.c(math.inf)))
    v = m.copysign(y, x)
    return m.fix_nan(m.select(passthrough, x, v), x)


def hypot(m: Libm, x, y) -> ir.Value:
    b = m.b
    ax, ay = m.abs(x), m.abs(y)
    big = m.intrinsic("maxnum", ax, ay)
    small = m.intrinsic("minnum", ax, ay)
    e = b.sub(b.lshr(m.bits(big), m.ci(52)), m.ci(1023))
    e = b.select(b.icmp_signed(">", e, m.ci(1000)), m.ci(1000), e)
    e = b.select(b.icmp_signed("<", e, m.ci(-1000)), m.ci(-1000), e)
    down = m.pow2(b.sub(m.ci(0), e))
    bs, ss = m.mul(big, down), m.mul(small, down)
    h = m.mul(m.sqrt(m.fma(bs, bs, m.mul(ss, ss))), m.pow2(e))
    inf = m.c(math.inf)
    h = m.fix_nan(h, x, y)
    return m.select(b.or_(m.cmp("==", ax, inf), m.cmp("==", ay, inf)), inf, h)


__all__ = ["cbrt", "hypot", "pow_"]
