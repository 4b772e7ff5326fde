"""tanh (f32 and f64), sinh, cosh, asinh, acosh, atanh (f64) from exp / expm1 / log /
log1p (`__nv_tanhf`, `__nv_tanh`, `__nv_sinh`, ...).

    tanh(x)  = x + x^3 T(x^2) (f32; T: TANH_T, degree 5) or em / (em + 2) (f64) below
               0.55, 1 - 2 / (em + 2) above, em = expm1(2|x|)
               (accurate relative to itself, so no cancellation); 1 above 9.1 (f32) /
               22 (f64); the sign of x (tanh(-0) = -0)
    sinh(x)  = (em + em / (em + 1)) / 2, em = expm1(|x|), below 22; (e/2) e with
               e = exp(|x|/2) above (no overflow before the result's)
    cosh(x)  = e/2 + 1/(2e), e = exp(|x|), below 22; (e/2) e above
    asinh(x) = log1p(a + a^2 / (1 + sqrt(1 + a^2))) (a <= 2), log(2a + 1/(sqrt(a^2+1) + a))
               (a <= 2^28), log(a) + ln2 above; the sign of x
    acosh(x) = log1p(t + sqrt(2t + t^2)), t = x - 1 (x <= 2), log(2x - 1/(x + sqrt(x^2-1)))
               (x <= 2^28), log(x) + ln2 above
    atanh(x) = log1p(2a + 2a^2 / (1 - a)) / 2 (a < 1/2), log1p(2a / (1 - a)) / 2 above
"""

from __future__ import annotations

import math

from llvmlite import ir

from tritium.codegen.lower.libm.coefficients import TANH_T_F32
from tritium.codegen.lower.libm.constants import LN2
from tritium.codegen.lower.libm.core import Libm
from tritium.codegen.lower.libm.exp import exp, expm1
from tritium.codegen.lower.libm.log import log, log1p


def tanh(m: Libm, x) -> ir.Value:
    a = m.abs(x)
    limit = 22.0 if m.is64 else 9.1
    two = m.c(2.0)
    em = expm1(m, m.mul(m.intrinsic("minnum", a, m.c(limit)), two))
    d = m.add(em, two)
    if m.is64:
        small = m.div(em, d)
    else:  # x + x^3 T(x^2)
        z = m.mul(a, a)
        small = m.fma(m.mul(a, z), m.horner(TANH_T_F32, z), a)
    t = m.select(m.cmp("<", a, m.c(0.55)), small, m.sub(m.c(1.0), m.div(two, d)))
    t = m.select(m.cmp(">", a, m.c(limit)), m.c(1.0), t)
    return m.fix_nan(m.copysign(t, x), x)


def _big_exp(m: Libm, a) -> ir.Value:
    e = exp(m, m.mul(a, m.c(0.5)))
    return m.mul(m.mul(e, m.c(0.5)), e)


def sinh(m: Libm, x) -> ir.Value:
    a = m.abs(x)
    em = expm1(m, m.intrinsic("minnum", a, m.c(22.0)))
    small = m.mul(m.c(0.5), m.add(em, m.div(em, m.add(em, m.c(1.0)))))
    v = m.select(m.cmp("<", a, m.c(22.0)), small, _big_exp(m, a))
    return m.fix_nan(m.copysign(v, x), x)


def cosh(m: Libm, x) -> ir.Value:
    a = m.abs(x)
    e = exp(m, m.intrinsic("minnum", a, m.c(22.0)))
    small = m.add(m.mul(e, m.c(0.5)), m.div(m.c(0.5), e))
    v = m.select(m.cmp("<", a, m.c(22.0)), small, _big_exp(m, a))
    return m.fix_nan(v, x)


def asinh(m: Libm, x) -> ir.Value:
    a = m.abs(x)
    one = m.c(1.0)
    a2 = m.mul(a, a)
    root = m.sqrt(m.add(one, a2))
    small = log1p(m, m.add(a, m.div(a2, m.add(one, root))))
    mid = log(m, m.add(m.add(a, a), m.div(one, m.add(root, a))))
    big = m.add(log(m, a), m.c(float(LN2)))
    v = m.select(m.cmp("<=", a, m.c(2.0)), small, m.select(m.cmp("<=", a, m.c(2.0**28)), mid, big))
    v = m.select(m.cmp("==", a, m.c(math.inf)), a, v)
    return m.fix_nan(m.copysign(v, x), x)


def acosh(m: Libm, x) -> ir.Value:
    one = m.c(1.0)
    t = m.sub(x, one)
    small = log1p(m, m.add(t, m.sqrt(m.fma(t, t, m.add(t, t)))))
    root = m.sqrt(m.fma(x, x, m.c(-1.0)))
    mid = log(m, m.sub(m.add(x, x), m.div(one, m.add(x, root))))
    big = m.add(log(m, x), m.c(float(LN2)))
    v = m.select(m.cmp("<=", x, m.c(2.0)), small, m.select(m.cmp("<=", x, m.c(2.0**28)), mid, big))
    v = m.select(m.cmp("==", x, m.c(math.inf)), x, v)
    return m.select(m.cmp(">=", x, one), v, m.c(math.nan))


def atanh(m: Libm, x) -> ir.Value:
    a = m.abs(x)
    one_minus = m.sub(m.c(1.0), a)
    two_a = m.add(a, a)
    small = m.add(two_a, m.div(m.mul(two_a, a), one_minus))
    v = log1p(m, m.select(m.cmp("<", a, m.c(0.5)), small, m.div(two_a, one_minus)))
    v = m.mul(v, m.c(0.5))
    v = m.select(m.cmp(">", a, m.c(1.0)), m.c(math.nan), v)
    return m.fix_nan(m.copysign(v, x), x)


__all__ = ["acosh", "asinh", "atanh", "cosh", "sinh", "tanh"]
