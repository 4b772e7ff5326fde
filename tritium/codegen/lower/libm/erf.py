"""erf (f32 and f64) and erfc (f64) (`math.erf`, `__nv_erff`, `__nv_erf`, `__nv_erfc`).

    |x| < 0.84375:  erf(x) = x + x G(x^2)                (G: ERF_G, minimax)
    above:          erfc(a) = exp(-a^2) H(a)             (H: ERFC_H, piecewise: a few
                    polynomials in a - centre, and 1/a * Q(1/a) for the f64 tail)
                    exp(-a^2) with a^2 = hi + lo exactly (fma), the lo part folded into
                    the exponential's reduced argument
                    erf(x) = 1 - erfc(|x|) (with x's sign), 1 above 3.92 (f32) / 5.93 (f64)
    erfc(x):        1 - erf(x) below 1/4; 1/2 - ((x - 1/2) + x G) up to 0.84375 (x - 1/2
                    exact); exp(-x^2) H(x) above; 2 - erfc(-x) for x < 0
"""

from __future__ import annotations

from llvmlite import ir

from tritium.codegen.lower.libm.coefficients import (
    ERF_G_F32,
    ERF_G_F64,
    ERF_SPLIT,
    ERFC_H_F32,
    ERFC_H_F64,
)
from tritium.codegen.lower.libm.core import Libm
from tritium.codegen.lower.libm.exp import exp_dd


def _g(m: Libm, x) -> ir.Value:
    """x G(x^2): erf(x) = x + x G(x^2) for |x| < ERF_SPLIT."""
    z = m.mul(x, x)
    return m.mul(x, m.horner(ERF_G_F64 if m.is64 else ERF_G_F32, z))


def erfc_tail(m: Libm, a) -> ir.Value:
    """erfc(a) for ERF_SPLIT <= a <= the last piece's end."""
    pieces = ERFC_H_F64 if m.is64 else ERFC_H_F32
    degree = max(len(c) for _, _, _, c in pieces)
    # the piece of each a: coefficient k = select over the pieces (last piece first)
    coefs = []
    for k in range(degree):
        v = m.c(pieces[-1][3][k] if k < len(pieces[-1][3]) else 0.0)
        for _lo, hi, _, c in reversed(pieces[:-1]):
            v = m.select(m.cmp("<", a, m.c(hi)), m.c(c[k] if k < len(c) else 0.0), v)
        coefs.append(v)
    centre = m.c(pieces[-1][2] or 0.0)
    for _lo, hi, mid, _ in reversed(pieces[:-1]):
        centre = m.select(m.cmp("<", a, m.c(hi)), m.c(mid), centre)
    inv = pieces[-1][2] is None  # the last piece is in 1/a
    t = m.div(m.c(1.0), a) if inv else None
    in_last = m.cmp(">=", a, m.c(pieces[-1][0]))
    v = m.sub(a, centre)
    if inv:
        v = m.select(in_last, t, v)
    acc = coefs[-1]
    for c in reversed(coefs[:-1]):
        acc = m.fma(acc, v, c)
    if inv:
        acc = m.select(in_last, m.mul(acc, t), acc)
    sq, sq_lo = m.two_prod(a, a)
    return m.mul(exp_dd(m, m.neg(sq), m.neg(sq_lo)), acc)


def _tail_end(m: Libm) -> float:
    return (ERFC_H_F64 if m.is64 else ERFC_H_F32)[-1][1]


def erf(m: Libm, x) -> ir.Value:
    a = m.abs(x)
    small = m.add(a, _g(m, a))
    one_at = 5.93 if m.is64 else 3.92  # erf rounds to 1 from here on
    big = m.sub(m.c(1.0), erfc_tail(m, m.intrinsic("minnum", a, m.c(one_at))))
    big = m.select(m.cmp(">=", a, m.c(one_at)), m.c(1.0), big)
    v = m.select(m.cmp("<", a, m.c(ERF_SPLIT)), small, big)
    return m.fix_nan(m.copysign(v, x), x)


def erfc(m: Libm, x) -> ir.Value:
    a = m.abs(x)
    one, half = m.c(1.0), m.c(0.5)
    g = _g(m, x)
    near0 = m.sub(one, m.add(x, g))
    mid = m.sub(half, m.add(m.sub(x, half), g))
    small = m.select(m.b.or_(m.cmp("<", a, m.c(0.25)), m.cmp("<", x, m.c(0.0))), near0, mid)
    end = _tail_end(m)
    q = erfc_tail(m, m.intrinsic("maxnum", m.intrinsic("minnum", a, m.c(end)), m.c(ERF_SPLIT)))
    q = m.select(m.cmp(">=", a, m.c(end)), m.c(0.0), q)
    big = m.select(m.cmp("<", x, m.c(0.0)), m.sub(m.c(2.0), q), q)
    v = m.select(m.cmp("<", a, m.c(ERF_SPLIT)), small, big)
    return m.fix_nan(v, x)


__all__ = ["erf", "erfc", "erfc_tail"]
