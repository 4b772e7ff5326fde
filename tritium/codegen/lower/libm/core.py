"""`Libm`: typed helpers over the current builder for the libm routines (f32 or f64).

Every routine is built from exact IEEE operations only: `fadd/fsub/fmul/fdiv` without
fast-math flags (NVPTX `add.rn`, `mul.rn`, `div.rn`: no contraction), `llvm.fma`,
`llvm.sqrt` (`sqrt.rn`), `llvm.rint/trunc/floor`, integer operations on the bits, and
selects. No approximate instruction appears in an accurate path.
"""

from __future__ import annotations

from llvmlite import ir

from tritium.codegen.lower.context import FunctionLowering
from tritium.codegen.lower.types import f32, f64, i1, i32, i64

TABLE_ADDRSPACE = 1  # global memory (tests JIT these functions on the host with 0)


class Libm:
    """Helpers for one float type: constants, fma, polynomials, bits, scaling by 2^k."""

    def __init__(self, ctx: FunctionLowering, ty: ir.Type):
        self.ctx, self.b, self.ty = ctx, ctx.builder, ty
        self.is64 = isinstance(ty, ir.DoubleType)
        self.ity = i64 if self.is64 else i32
        self.mant = 52 if self.is64 else 23  # fraction bits
        self.bias = 1023 if self.is64 else 127
        self.sfx = "f64" if self.is64 else "f32"

    # ---------------------------------------------------------------- constants, arithmetic
    def c(self, v: float) -> ir.Constant:
        return ir.Constant(self.ty, v)

    def ci(self, v: int) -> ir.Constant:
        return ir.Constant(self.ity, v)

    def intrinsic(self, name: str, *args: ir.Value) -> ir.Value:
        fn = self.ctx.intrinsic(f"llvm.{name}.{self.sfx}", self.ty, [a.type for a in args])
        return self.b.call(fn, list(args))

    def fma(self, a, x, y):
        return self.intrinsic("fma", a, x, y)

    def add(self, a, x):
        return self.b.fadd(a, x)

    def sub(self, a, x):
        return self.b.fsub(a, x)

    def mul(self, a, x):
        return self.b.fmul(a, x)

    def div(self, a, x):
        return self.b.fdiv(a, x)

    def neg(self, a):
        return self.b.fneg(a)

    def abs(self, a):
        return self.intrinsic("fabs", a)

    def sqrt(self, a):
        return self.intrinsic("sqrt", a)

    def copysign(self, mag, sign):
        return self.intrinsic("copysign", mag, sign)

    def rint(self, a):
        return self.intrinsic("rint", a)

    def trunc(self, a):
        return self.intrinsic("trunc", a)

    def horner(self, coefs: list[float], x: ir.Value) -> ir.Value:
        acc = self.c(coefs[-1])
        for k in reversed(coefs[:-1]):
            acc = self.fma(acc, x, self.c(k))
        return acc

    def two_prod(self, a, x) -> tuple[ir.Value, ir.Value]:
        """a * x = hi + lo exactly (fma)."""
        hi = self.mul(a, x)
        return hi, self.fma(a, x, self.neg(hi))

    # ---------------------------------------------------------------- compares, selects
    def cmp(self, op: str, a, x) -> ir.Value:
        return self.b.fcmp_ordered(op, a, x)

    def isnan(self, a) -> ir.Value:
        return self.b.fcmp_unordered("uno", a, a)

    def select(self, cond, a, x):
        return self.b.select(cond, a, x)

    def fix_nan(self, result, *inputs):
        """NaN if any input is NaN (the routines' clamps would otherwise hide it)."""
        for x in inputs:
            result = self.select(self.isnan(x), x, result)
        return result

    # ---------------------------------------------------------------- bits, powers of two
    def bits(self, a) -> ir.Value:
        return self.b.bitcast(a, self.ity)

    def from_bits(self, n) -> ir.Value:
        return self.b.bitcast(n, self.ty)

    def pow2(self, k) -> ir.Value:
        """2^k for an integer k (ity) within the normal range."""
        biased = self.b.add(k, self.ci(self.bias))
        return self.from_bits(self.b.shl(biased, self.ci(self.mant)))

    def scale(self, x, k) -> ir.Value:
        """x * 2^k in two exact steps, so |k| up to twice the exponent range works
        (results overflow to inf or round once into the subnormals)."""
        half = self.b.ashr(k, self.ci(1))
        return self.mul(self.mul(x, self.pow2(half)), self.pow2(self.b.sub(k, half)))

    def to_int(self, a) -> ir.Value:
        return self.b.fptosi(a, self.ity)

    def to_float(self, n) -> ir.Value:
        return self.b.sitofp(n, self.ty)

    def frexp(self, x) -> tuple[ir.Value, ir.Value]:
        """(e, m): x = 2^e * m with m in [sqrt(1/2), sqrt(2)) for a finite x > 0
        (subnormals scaled first). e as an integer of `ity`."""
        b = self.b
        tiny = self.cmp("<", x, self.c(2.0 ** (1 - self.bias)))
        up = self.mant + 1
        xs = self.select(tiny, self.mul(x, self.c(2.0**up)), x)
        bits = self.bits(xs)
        sqrt_half = 0x3FE6A09E667F3BCD if self.is64 else 0x3F3504F3
        e = b.ashr(b.sub(bits, self.ci(sqrt_half)), self.ci(self.mant))
        m = self.from_bits(b.sub(bits, b.shl(e, self.ci(self.mant))))
        e = b.sub(e, self.select(tiny, self.ci(up), self.ci(0)))
        return e, m


def widen(ctx: FunctionLowering, fn64):
    """An f32 routine computed by the f64 one and rounded once (error <= 0.5 ulp + the f64
    routine's error scaled by 2^-29): for the functions that are rarely hot."""
    b = ctx.builder

    def fn(*xs: ir.Value) -> ir.Value:
        wide = [b.fpext(x, f64) if x.type == f32 else x for x in xs]
        return b.fptrunc(fn64(*wide), f32)

    return fn


__all__ = ["TABLE_ADDRSPACE", "Libm", "widen", "f32", "f64", "i1", "i32", "i64"]
