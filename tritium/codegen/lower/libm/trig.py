"""sin, cos, tan for f64 (`__nv_sin`, `__nv_cos`, `__nv_tan`).

    j = rint(x * 2/pi) (by adding 1.5 * 2^52: j's low bits, no float -> int conversion)
    r = x - j pi/2 with pi/2 in three 53-bit parts and fma: x - j P1 is exact, the other
        two steps' rounding errors are kept, so r = r_hi + r_lo to ~2^-100 (|x| < 2^26)
    |x| >= 2^26 (a branch): Payne-Hanek. x = M 2^E; 192 bits of 2/pi starting where
        M * bits stops mattering mod 4 (a table of 64-bit words, loaded by E) times the
        53-bit M in i128 pieces; the top 2 bits are the quadrant, the next 128 the
        fraction, times pi/2 as a double-length product
    sin(r) = r + (r^3 S(r^2) + r_lo)             (S: SIN_S, degree 6)
    cos(r) = 1 - r^2/2 + (r^4 C(r^2) - r r_lo)   (C: COS_C, degree 6), the 1 - r^2/2 split
    quadrant j & 3 picks +-sin / +-cos; tan = sin(r) / cos(r) or -cos(r) / sin(r)
"""

from __future__ import annotations

import math
from fractions import Fraction

from llvmlite import ir

from tritium.codegen.lower.libm import core
from tritium.codegen.lower.libm.coefficients import COS_C_F64, SIN_S_F64
from tritium.codegen.lower.libm.constants import PI, round_bits, two_over_pi_bits
from tritium.codegen.lower.libm.core import Libm, i32, i64

i128 = ir.IntType(128)
PIO2 = PI / 2
P1 = round_bits(PIO2, 53)
P2 = round_bits(PIO2 - Fraction(P1), 53)
P3 = round_bits(PIO2 - Fraction(P1) - Fraction(P2), 53)
SLOW = 2.0**26
# Bits of 2/pi after the binary point, 64 per word, after one zero word (bits -63 .. 0);
# enough for the largest double (window start 1033, 4 words).
TABLE_WORDS = 20
_BITS = two_over_pi_bits(64 * (TABLE_WORDS - 1))
TWO_OVER_PI_WORDS64 = [0] + [
    (_BITS >> (64 * (TABLE_WORDS - 2 - k))) & (2**64 - 1) for k in range(TABLE_WORDS - 1)
]


def _table(m: Libm) -> ir.GlobalVariable:
    name = "tritium.two_over_pi.64"
    g = m.ctx.module.globals.get(name)
    if g is None:
        ty = ir.ArrayType(i64, TABLE_WORDS)
        g = ir.GlobalVariable(m.ctx.module, ty, name, addrspace=core.TABLE_ADDRSPACE)
        g.global_constant = True
        g.linkage = "internal"
        g.initializer = ir.Constant(
            ty, [w - (1 << 64) if w >> 63 else w for w in TWO_OVER_PI_WORDS64]
        )
        g.align = 8
        g.type = ir.PointerType(addrspace=core.TABLE_ADDRSPACE)
    return g


def _reduce_slow(m: Libm, x) -> tuple[ir.Value, ir.Value, ir.Value]:
    """Payne-Hanek: (quadrant as i32, r_hi, r_lo) for a finite |x| >= 2^26."""
    b = m.b
    k64 = lambda v: ir.Constant(i64, v)  # noqa: E731
    k128 = lambda v: ir.Constant(i128, v)  # noqa: E731
    bits = m.bits(x)
    expo = b.and_(b.lshr(bits, k64(52)), k64(0x7FF))
    mant = b.or_(b.and_(bits, k64((1 << 52) - 1)), k64(1 << 52))
    g0 = b.add(expo, k64(-1075 - 1 + 63))  # table bit of 2/pi's bit i0 = E - 1
    word = b.lshr(g0, k64(6))
    sh = b.zext(b.and_(g0, k64(63)), i128)
    table = _table(m)
    w = [
        b.zext(b.load(b.gep(table, [b.add(word, k64(n))], source_etype=i64), typ=i64), i128)
        for n in range(4)
    ]

    def window(n: int) -> ir.Value:  # 64 bits of 2/pi from bit g0 + 64 n
        pair = b.or_(b.shl(w[n], k128(64)), w[n + 1])
        return b.lshr(b.shl(pair, sh), k128(64))

    m128 = b.zext(mant, i128)
    mask64 = k128((1 << 64) - 1)
    p0 = b.mul(m128, window(2))
    p1 = b.add(b.mul(m128, window(1)), b.lshr(p0, k128(64)))
    p2 = b.add(b.mul(m128, window(0)), b.lshr(p1, k128(64)))
    # x * 2/pi mod 4 = [p2 : p1 : p0] (low 64 bits of each) * 2^-190
    top = b.or_(b.shl(b.and_(p2, mask64), k128(64)), b.and_(p1, mask64))
    frac = b.shl(top, k128(2))  # signed: fractions >= 1/2 become negative ...
    quad = b.trunc(b.lshr(top, k128(126)), i32)
    quad = b.add(quad, b.trunc(b.lshr(frac, k128(127)), i32))  # ... and round j up
    f_hi = b.trunc(b.ashr(frac, k128(64)), i64)  # the fraction * 2^64, top bits
    f_top = b.shl(b.ashr(f_hi, k64(11)), k64(11))  # 53 significant bits: exact as f64
    lo_d = m.add(
        b.sitofp(b.sub(f_hi, f_top), m.ty),
        m.mul(b.uitofp(b.trunc(frac, i64), m.ty), m.c(2.0**-64)),
    )
    fh, fl = m.mul(b.sitofp(f_top, m.ty), m.c(2.0**-64)), m.mul(lo_d, m.c(2.0**-64))
    p2_ = round_bits(PIO2 - Fraction(P1), 53)
    rh, rl = m.two_prod(fh, m.c(P1))
    rl = m.add(rl, m.fma(fh, m.c(p2_), m.mul(fl, m.c(P1))))
    r = m.add(rh, rl)
    r_lo = m.sub(rl, m.sub(r, rh))
    neg = b.icmp_signed("<", bits, k64(0))
    quad = b.select(neg, b.sub(ir.Constant(i32, 0), quad), quad)
    return quad, m.select(neg, m.neg(r), r), m.select(neg, m.neg(r_lo), r_lo)


def _reduce(m: Libm, x) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(quadrant j as i32, r_hi, r_lo): x = j pi/2 + r_hi + r_lo."""
    b = m.b
    shifter = 1.5 * 2.0**52
    shifted = m.add(m.mul(x, m.c(float(2 / PI))), m.c(shifter))
    j = m.sub(shifted, m.c(shifter))
    q = b.trunc(m.bits(shifted), i32)
    r1 = m.fma(j, m.c(-P1), x)  # exact
    r2 = m.fma(j, m.c(-P2), r1)
    e2 = m.fma(j, m.c(-P2), m.sub(r1, r2))  # r1 - j P2 = r2 + e2
    t = m.fma(j, m.c(-P3), e2)
    r = m.add(r2, t)
    r_lo = m.sub(t, m.sub(r, r2))
    slow = b.and_(m.cmp(">=", m.abs(x), m.c(SLOW)), m.cmp("<", m.abs(x), m.c(math.inf)))
    fast_bb = b.block
    slow_bb = m.ctx.fn.append_basic_block("trig64.slow")
    join_bb = m.ctx.fn.append_basic_block("trig64.join")
    b.cbranch(slow, slow_bb, join_bb)
    b.position_at_end(slow_bb)
    q_s, r_s, rl_s = _reduce_slow(m, x)
    slow_end = b.block
    b.branch(join_bb)
    b.position_at_end(join_bb)
    out = []
    for fast_v, slow_v, ty in ((q, q_s, i32), (r, r_s, m.ty), (r_lo, rl_s, m.ty)):
        phi = b.phi(ty)
        phi.add_incoming(fast_v, fast_bb)
        phi.add_incoming(slow_v, slow_end)
        out.append(phi)
    return out[0], out[1], out[2]


def _sin_cos_r(m: Libm, r, r_lo) -> tuple[ir.Value, ir.Value]:
    z = m.mul(r, r)
    sin_r = m.add(r, m.fma(m.mul(z, r), m.horner(SIN_S_F64, z), r_lo))
    hz = m.mul(z, m.c(0.5))
    w = m.sub(m.c(1.0), hz)
    tail = m.fma(m.mul(z, z), m.horner(COS_C_F64, z), m.neg(m.mul(r, r_lo)))
    cos_r = m.add(w, m.add(m.sub(m.sub(m.c(1.0), w), hz), tail))
    return sin_r, cos_r


def sin_cos(m: Libm, x, want_cos: bool) -> ir.Value:
    b = m.b
    q, r, r_lo = _reduce(m, x)
    sin_r, cos_r = _sin_cos_r(m, r, r_lo)
    if want_cos:
        q = b.add(q, ir.Constant(i32, 1))  # cos(x) = sin(x + pi/2)
    use_cos = b.trunc(q, ir.IntType(1))
    negate = b.trunc(b.lshr(q, ir.Constant(i32, 1)), ir.IntType(1))
    v = m.select(use_cos, cos_r, sin_r)
    v = m.select(negate, m.neg(v), v)
    if not want_cos:  # sin(-0) = -0
        v = m.select(m.cmp("==", x, m.c(0.0)), x, v)
    return v


def tan(m: Libm, x) -> ir.Value:
    q, r, r_lo = _reduce(m, x)
    sin_r, cos_r = _sin_cos_r(m, r, r_lo)
    odd = m.b.trunc(q, ir.IntType(1))
    v = m.select(odd, m.neg(m.div(cos_r, sin_r)), m.div(sin_r, cos_r))
    return m.select(m.cmp("==", x, m.c(0.0)), x, v)  # tan(-0) = -0


def sin_cos_pi(m: Libm, x, want_cos: bool) -> ir.Value:
    """sin(pi x) / cos(pi x): x - 2 rint(x/2) and then the quarter j = rint(2r) are exact,
    t = r - j/2 in [-1/4, 1/4], pi t double-length."""
    b = m.b
    r = m.sub(x, m.mul(m.rint(m.mul(x, m.c(0.5))), m.c(2.0)))
    j = m.rint(m.add(r, r))
    t = m.sub(r, m.mul(j, m.c(0.5)))
    pi_hi, pi_lo = float(PI), float(PI - Fraction(float(PI)))
    a, a_lo = m.two_prod(t, m.c(pi_hi))
    a_lo = m.fma(t, m.c(pi_lo), a_lo)
    sin_r, cos_r = _sin_cos_r(m, a, a_lo)
    q = b.trunc(b.fptosi(m.select(m.isnan(j), m.c(0.0), j), m.ity), i32)
    if want_cos:
        q = b.add(q, ir.Constant(i32, 1))
    use_cos = b.trunc(q, ir.IntType(1))
    negate = b.trunc(b.lshr(q, ir.Constant(i32, 1)), ir.IntType(1))
    v = m.select(use_cos, cos_r, sin_r)
    v = m.select(negate, m.neg(v), v)
    if want_cos:  # cospi(n + 1/2) = +0
        v = m.select(m.cmp("==", v, m.c(0.0)), m.c(0.0), v)
    else:  # sinpi(n) = +-0 with x's sign
        v = m.select(m.cmp("==", v, m.c(0.0)), m.copysign(m.c(0.0), x), v)
    v = m.select(m.cmp("==", m.abs(x), m.c(math.inf)), m.c(math.nan), v)
    return m.fix_nan(v, x)


__all__ = ["sin_cos", "sin_cos_pi", "tan"]
