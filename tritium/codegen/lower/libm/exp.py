"""exp, exp2, exp10, expm1 for f32 and f64 (`__nv_expf`, `__nv_exp`, ...).

    x = k * ln2 + r,   k = rint(x / ln2),  |r| <= ln2 / 2
        r = fma(-k, ln2_hi, x) is exact (ln2_hi has as many trailing zero bits as k has
        bits; Sterbenz), r_lo carries what the second part's rounding lost
    e^r - 1 = r + r^2 P(r)                    (P: EXP_P, minimax; degree 6 f32, 10 f64)
    e^x = 2^k * (1 + (r + (r^2 P(r) + r_lo)))  (2^k in two exact steps: no overflow of k)
    exp2:  k = rint(x), r = (x - k) * ln2 as a double-length product
    exp10: k = rint(x * log2(10)), r = (x - k log10(2)) * ln10, both double-length
    expm1: as exp for |k| > p + 1; k = 0 gives r + r^2 P(r) (exact reduction);
           otherwise fma(2^k, e^r - 1, 2^k - 1) (2^k - 1 is exact there)

Inputs are clamped to a range that still overflows / underflows (then NaN is put back).
"""

from __future__ import annotations

from llvmlite import ir

from tritium.codegen.lower.libm.coefficients import EXP_P_F32, EXP_P_F64
from tritium.codegen.lower.libm.constants import LN2, LN10, LOG2_10, LOG2E, LOG10_2, split
from tritium.codegen.lower.libm.core import Libm


def _head_bits(m: Libm) -> int:
    return 42 if m.is64 else 16  # k < 2^11 (f64) / 2^8 (f32): k * head is exact


def reduce(m: Libm, x, inv: float, c) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(k, r, r_lo): x = k * c + r + r_lo, k = rint(x * inv), c a Fraction."""
    hi, lo = split(c, _head_bits(m))
    k = m.rint(m.mul(x, m.c(inv)))
    r_hi = m.fma(k, m.c(-hi), x)  # exact
    r = m.fma(k, m.c(-lo), r_hi)
    r_lo = m.fma(k, m.c(-lo), m.sub(r_hi, r))  # the rounding error of r
    return k, r, r_lo


def expm1_reduced(m: Libm, r, r_lo) -> ir.Value:
    """e^(r + r_lo) - 1 for |r| <= ln2 / 2 (r_lo tiny)."""
    return m.add(r, _tail(m, r, r_lo))


def _tail(m: Libm, r, r_lo) -> ir.Value:
    p = m.horner(EXP_P_F64 if m.is64 else EXP_P_F32, r)
    return m.fma(m.mul(r, r), p, r_lo)


def two_sum(m: Libm, a, x) -> tuple[ir.Value, ir.Value]:
    """a + x = s + err exactly (Knuth's two-sum)."""
    s = m.add(a, x)
    v = m.sub(s, a)
    return s, m.add(m.sub(a, m.sub(s, v)), m.sub(x, v))


def _limits(m: Libm, lo64, hi64, lo32, hi32):
    return (lo64, hi64) if m.is64 else (lo32, hi32)


def _clamp(m: Libm, x, lo: float, hi: float):
    x = m.intrinsic("maxnum", x, m.c(lo))
    return m.intrinsic("minnum", x, m.c(hi))


def exp_of(m: Libm, k, r, r_lo) -> ir.Value:
    """2^k * e^(r + r_lo) (k a float holding an integer, |r_lo| <= ulp(r))."""
    e = m.add(m.c(1.0), expm1_reduced(m, r, r_lo))
    return m.scale(e, m.to_int(k))


def exp_of_sum(m: Libm, k, r, c) -> ir.Value:
    """2^k * e^(r + c) for a correction c larger than r's ulp (pow's and erfc's low
    parts): r + c renormalized first (e^(r + c) is not e^r + c)."""
    r2 = m.add(r, c)
    return exp_of(m, k, r2, m.add(m.sub(r, r2), c))


def exp(m: Libm, x) -> ir.Value:
    xc = _clamp(m, x, *_limits(m, -760.0, 720.0, -110.0, 95.0))
    k, r, r_lo = reduce(m, xc, float(LOG2E), LN2)
    return m.fix_nan(exp_of(m, k, r, r_lo), x)


def exp_dd(m: Libm, x, x_lo) -> ir.Value:
    """e^(x + x_lo) for a small correction x_lo (pow, erfc)."""
    xc = _clamp(m, x, *_limits(m, -760.0, 720.0, -110.0, 95.0))
    k, r, r_lo = reduce(m, xc, float(LOG2E), LN2)
    return m.fix_nan(exp_of_sum(m, k, r, m.add(r_lo, x_lo)), x)


def exp2(m: Libm, x) -> ir.Value:
    xc = _clamp(m, x, *_limits(m, -1100.0, 1050.0, -160.0, 140.0))
    k = m.rint(xc)
    f = m.sub(xc, k)  # exact
    ln2_hi, ln2_lo = split(LN2, 53 if m.is64 else 24)
    r, r_lo = m.two_prod(f, m.c(ln2_hi))
    r_lo = m.fma(f, m.c(ln2_lo), r_lo)
    return m.fix_nan(exp_of(m, k, r, r_lo), x)


def exp10(m: Libm, x) -> ir.Value:
    xc = _clamp(m, x, *_limits(m, -330.0, 320.0, -50.0, 45.0))
    k, t, t_lo = reduce(m, xc, float(LOG2_10), LOG10_2)
    ln10_hi, ln10_lo = split(LN10, 53 if m.is64 else 24)
    r, r_lo = m.two_prod(t, m.c(ln10_hi))
    r_lo = m.fma(t, m.c(ln10_lo), m.fma(t_lo, m.c(ln10_hi), r_lo))
    return m.fix_nan(exp_of(m, k, r, r_lo), x)


def expm1(m: Libm, x) -> ir.Value:
    b = m.b
    xc = _clamp(m, x, *_limits(m, -45.0, 720.0, -20.0, 95.0))
    k, r, r_lo = reduce(m, xc, float(LOG2E), LN2)
    tail = _tail(m, r, r_lo)
    em = m.add(r, tail)
    em_lo = m.add(m.sub(r, em), tail)  # e^r - 1 = em + em_lo (|r| >= |tail|)
    ki = m.to_int(k)
    big = b.icmp_signed(">", ki, m.ci(m.mant + 2))
    t = m.pow2(b.select(big, m.ci(0), ki))
    # 2^k e^r - 1 = (t - 1) + t em + t em_lo, the first sum kept exactly (two-sum)
    s, s_err = two_sum(m, m.sub(t, m.c(1.0)), m.mul(t, em))
    mid = m.add(s, m.fma(t, em_lo, s_err))
    far = m.scale(m.add(m.c(1.0), em), ki)
    small = m.cmp("==", k, m.c(0.0))
    out = m.select(small, em, m.select(big, far, mid))
    out = m.select(m.cmp("==", x, m.c(0.0)), x, out)  # expm1(-0) = -0
    return m.fix_nan(out, x)


__all__ = ["exp", "exp2", "exp10", "expm1", "exp_dd", "exp_of", "exp_of_sum", "expm1_reduced", "reduce", "two_sum"]
