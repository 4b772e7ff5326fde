"""Exact IEEE operations on f32 / f64 (`__nv_fmodf`, `__nv_remainder`, `__nv_ldexpf`,
`__nv_ilogb`, `__nv_logb`, `__nv_nextafter`, `__nv_fdim`, `__nv_norm3d`, ...).

    fmod(x, y)      |x| reduced by |y| 2^k (the largest not above it: the subtraction is
                    exact) in a loop, at most (exponent difference + 1) rounds, x's sign
    remainder(x, y) r = fmod(|x|, 2|y|), minus |y| if past |y|/2 (ties: to the even
                    quotient), x's sign
    ldexp(x, n)     x 2^n in three exact steps (n clamped to what can still matter)
    ilogb, logb     the unbiased exponent (subnormals scaled by 2^(p+1) first)
    nextafter(x, y) the bits plus or minus one
    norm(xs...)     2^e sqrt(sum of (x 2^-e)^2) with fma, e the largest exponent (hypot's
                    scaling); rnorm = 1 / norm
"""

from __future__ import annotations

import math

from llvmlite import ir

from tritium.codegen.lower.libm.core import Libm, i32


def ilogb_int(m: Libm, a) -> ir.Value:
    """The exponent of a finite nonzero |a| (ity)."""
    b = m.b
    tiny = m.cmp("<", a, m.c(2.0 ** (1 - m.bias)))
    up = m.mant + 1
    s = m.select(tiny, m.mul(a, m.c(2.0**up)), a)
    e = b.sub(b.and_(b.lshr(m.bits(s), m.ci(m.mant)), m.ci(2 * m.bias + 1)), m.ci(m.bias))
    return b.sub(e, b.select(tiny, m.ci(up), m.ci(0)))


def ldexp_int(m: Libm, x, n) -> ir.Value:
    """x 2^n for an integer n of `ity` (any value)."""
    b = m.b
    lim = 3 * (m.bias - 1)
    n = b.select(b.icmp_signed(">", n, m.ci(lim)), m.ci(lim), n)
    n = b.select(b.icmp_signed("<", n, m.ci(-lim)), m.ci(-lim), n)
    third = b.sdiv(n, m.ci(3))
    rest = b.sub(n, b.add(third, third))
    return m.mul(m.mul(m.mul(x, m.pow2(third)), m.pow2(third)), m.pow2(rest))


def ldexp(m: Libm, x, n) -> ir.Value:
    return ldexp_int(m, x, m.b.sext(n, m.ity) if m.is64 else n)


def ilogb(m: Libm, x) -> ir.Value:
    b = m.b
    a = m.abs(x)
    e = ilogb_int(m, a)
    e = b.trunc(e, i32) if m.is64 else e
    e = b.select(m.cmp("==", a, m.c(0.0)), ir.Constant(i32, -(2**31)), e)
    e = b.select(m.cmp("==", a, m.c(math.inf)), ir.Constant(i32, 2**31 - 1), e)
    return b.select(m.isnan(x), ir.Constant(i32, -(2**31)), e)


def logb(m: Libm, x) -> ir.Value:
    a = m.abs(x)
    v = m.to_float(ilogb_int(m, a))
    v = m.select(m.cmp("==", a, m.c(0.0)), m.c(-math.inf), v)
    v = m.select(m.cmp("==", a, m.c(math.inf)), m.c(math.inf), v)
    return m.fix_nan(v, x)


def fmod(m: Libm, x, y) -> ir.Value:
    b = m.b
    ax, ay = m.abs(x), m.abs(y)
    ey = ilogb_int(m, m.select(m.cmp("==", ay, m.c(0.0)), m.c(1.0), ay))
    entry = b.block
    fn = m.ctx.fn
    head = fn.append_basic_block("fmod.loop")
    body = fn.append_basic_block("fmod.step")
    done = fn.append_basic_block("fmod.done")
    finite = b.and_(m.cmp("<", ax, m.c(math.inf)), m.cmp("<", ay, m.c(math.inf)))
    work = b.and_(finite, m.cmp(">", ay, m.c(0.0)))
    start = m.select(work, ax, m.c(0.0))  # nothing to do for the special cases
    stop = m.select(work, ay, m.c(math.inf))
    b.branch(head)
    b.position_at_end(head)
    r = b.phi(m.ty)
    r.add_incoming(start, entry)
    b.cbranch(m.cmp(">=", r, stop), body, done)
    b.position_at_end(body)
    k = b.sub(ilogb_int(m, r), ey)
    d = ldexp_int(m, ay, k)
    d = m.select(m.cmp(">", d, r), ldexp_int(m, ay, b.sub(k, m.ci(1))), d)
    r.add_incoming(m.sub(r, d), body)  # exact: d <= r < 2d
    b.branch(head)
    b.position_at_end(done)
    v = m.copysign(r, x)
    v = m.select(b.or_(m.cmp("==", ay, m.c(0.0)), m.cmp("==", ax, m.c(math.inf))), m.c(math.nan), v)
    # fmod(x, inf) = x for finite x
    v = m.select(b.and_(m.cmp("<", ax, m.c(math.inf)), m.cmp("==", ay, m.c(math.inf))), x, v)
    return m.fix_nan(v, x, y)


def remainder(m: Libm, x, y) -> ir.Value:
    b = m.b
    ax, ay = m.abs(x), m.abs(y)
    big = m.cmp(">", ay, m.c(2.0 ** (m.bias - 1)))  # 2|y| would overflow; |x| < 2|y|
    r = fmod(m, ax, m.select(big, m.c(math.inf), m.add(ay, ay)))
    odd = m.cmp(">=", r, ay)  # the quotient by |y| is odd
    r = m.select(odd, m.sub(r, ay), r)
    twice = m.add(r, r)
    up = b.or_(m.cmp(">", twice, ay), b.and_(m.cmp("==", twice, ay), odd))
    r = m.select(b.and_(up, m.b.not_(big)), m.sub(r, ay), r)
    r = m.select(b.and_(big, m.cmp(">", m.add(r, r), ay)), m.sub(r, ay), r)
    v = m.select(m.cmp("<", x, m.c(0.0)), m.neg(r), r)
    v = m.select(m.cmp("==", r, m.c(0.0)), m.copysign(m.c(0.0), x), v)
    bad = b.or_(m.cmp("==", ay, m.c(0.0)), m.cmp("==", ax, m.c(math.inf)))
    v = m.select(bad, m.c(math.nan), v)
    v = m.select(b.and_(m.cmp("<", ax, m.c(math.inf)), m.cmp("==", ay, m.c(math.inf))), x, v)
    return m.fix_nan(v, x, y)


def nextafter(m: Libm, x, y) -> ir.Value:
    b = m.b
    bits = m.bits(x)
    toward_up = b.icmp_signed("<", bits, m.ci(0))  # negative x: magnitude grows = bits + 1
    grow = b.xor(m.cmp("<", x, y), toward_up)  # |x| grows
    n = b.select(grow, b.add(bits, m.ci(1)), b.sub(bits, m.ci(1)))
    v = m.from_bits(n)
    tiny = m.copysign(m.from_bits(m.ci(1)), y)
    v = m.select(m.cmp("==", x, m.c(0.0)), tiny, v)
    v = m.select(m.cmp("==", x, y), y, v)
    return m.fix_nan(v, x, y)


def fdim(m: Libm, x, y) -> ir.Value:
    v = m.select(m.cmp(">", x, y), m.sub(x, y), m.c(0.0))
    return m.fix_nan(v, x, y)


def norm(m: Libm, *xs) -> ir.Value:
    b = m.b
    absx = [m.abs(x) for x in xs]
    big = absx[0]
    for a in absx[1:]:
        big = m.intrinsic("maxnum", big, a)
    e = b.sub(b.lshr(m.bits(big), m.ci(m.mant)), m.ci(m.bias))
    lim = m.bias - 23
    e = b.select(b.icmp_signed(">", e, m.ci(lim)), m.ci(lim), e)
    e = b.select(b.icmp_signed("<", e, m.ci(-lim)), m.ci(-lim), e)
    down = m.pow2(b.sub(m.ci(0), e))
    scaled = [m.mul(a, down) for a in absx]
    acc = m.mul(scaled[-1], scaled[-1])
    for s in reversed(scaled[:-1]):
        acc = m.fma(s, s, acc)
    v = m.mul(m.sqrt(acc), m.pow2(e))
    v = m.fix_nan(v, *xs)
    inf = m.c(math.inf)
    any_inf = m.cmp("==", absx[0], inf)
    for a in absx[1:]:
        any_inf = b.or_(any_inf, m.cmp("==", a, inf))
    return m.select(any_inf, inf, v)


__all__ = ["fdim", "fmod", "ilogb", "ldexp", "logb", "nextafter", "norm", "remainder"]
