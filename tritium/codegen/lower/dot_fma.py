"""The FMA dot: `d[m, n] = c[m, n] + sum_k a[m, k] * b[k, n]`, one thread's registers at a time.

    %d = tt.dot %a, %b, %c : tensor<64x32xf32, #ttg.dot_op<{opIdx = 0, parent = #blocked}>>
                             * tensor<32x64xf32, #ttg.dot_op<{opIdx = 1, parent = #blocked}>>
                             -> tensor<64x64xf32, #blocked>
    #blocked with sizePerThread = [4, 4]: 16 accumulators, and per K step 4 A values (the
    thread's rows) and 4 B values (its columns): 16 fma.rn.f32.

In the dot-operand layouts a thread holds whole K rows of A for exactly the rows of its
accumulator registers (and whole K columns of B for its columns), so everything is
register-local: accumulator register (m, n) takes A register (m, k) and B register (k, n).
K is the outer loop (each step's FMAs are independent), in ascending order, as upstream
sums. A batched (3D) dot is the same with the batch index in front of every coordinate:
accumulator (b, m, n) takes A's (b, m, k) and B's (b, k, n). fp16 / bf16 operands are widened to the accumulator's type first (each once);
integers multiply-add in the accumulator's width; floats use `llvm.fmuladd` (fma.rn).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.codegen.lower.context import FunctionLowering, unsupported
from tritium.codegen.lower.local_memory import load_registers
from tritium.codegen.lower.registers import register_index
from tritium.codegen.lower.types import BFloatType, is_float_type, llvm_type
from tritium.ir.types import shape_of


def _widen(ctx: FunctionLowering, regs: list[ir.Value], ty: ir.Type, signed=True) -> list[ir.Value]:
    b = ctx.builder
    if not regs or regs[0].type == ty:
        return regs
    if is_float_type(ty):
        return ctx.zip_map([regs], lambda x: b.fpext(x, ty))
    return ctx.zip_map([regs], lambda x: b.sext(x, ty))


class _Operand:
    """An operand's registers, fetched when first needed: re-read from its shared tile
    K-chunk by K-chunk when it comes straight from a `ttg.local_load` (so a thread holds
    a few K steps of A and B at a time, not all of them), else the lowered registers."""

    def __init__(self, ctx: FunctionLowering, value, ty: ir.Type):
        self.ctx, self.ty = ctx, ty
        self.layout = ctx.layout(value.type)
        self.index = register_index(self.layout)
        self.regs = ctx.get(value)
        self.cache: dict[int, ir.Value] = {}
        load = value.owner
        self.tile = None
        if isinstance(load, Operation) and load.name == "ttg.local_load":
            self.tile = (value.type, ctx.get1(load.src), load.src.type)

    def fetch(self, coords) -> None:
        """Load (vectorized) the registers holding `coords` that are not loaded yet."""
        want = {self.index[c] for c in coords if c in self.index} - set(self.cache)
        if not want:
            return
        if self.tile is None:
            got = {r: self.regs[r] for r in want}
        else:
            got = load_registers(self.ctx, *self.tile, want)
        for r, x in got.items():
            self.cache[r] = x if x.type == self.ty else _widen(self.ctx, [x], self.ty)[0]

    def get(self, coord) -> ir.Value:
        r = self.index.get(coord)
        if r is None:
            raise KeyError(coord)
        self.fetch([coord])
        return self.cache[r]


K_CHUNK = 4


def lower_fma_dot(ctx: FunctionLowering, op: Operation) -> None:
    b = ctx.builder
    lc = ctx.layout(op.d.type)
    ty = llvm_type(op.d.type)
    a, bb = _Operand(ctx, op.a, ty), _Operand(ctx, op.b, ty)
    acc = list(ctx.get(op.c))
    K = shape_of(op.a.type)[-1]
    if is_float_type(ty):
        fma = ctx.intrinsic(f"llvm.fmuladd.{_suffix(ty)}", ty, [ty, ty, ty])

        def step(x, y, z):
            return b.call(fma, [x, y, z])

    else:

        def step(x, y, z):
            return b.add(b.mul(x, y), z)

    coords = [lc.register_coord(r) for r in range(lc.num_registers)]
    first = register_index(lc)
    # (batch..., m) of A's rows and (batch..., n) of B's columns this thread needs
    rows = sorted({c[:-1] for c in coords})
    cols = sorted({(*c[:-2], c[-1]) for c in coords})
    for k0 in range(0, K, K_CHUNK):
        ks = range(k0, min(K, k0 + K_CHUNK))
        a.fetch([(*row, k) for row in rows for k in ks])
        bb.fetch([(*col[:-1], k, col[-1]) for k in ks for col in cols])
        for k in ks:
            done: dict[int, ir.Value] = {}
            for r, c in enumerate(coords):
                lead = first[c]
                if lead != r:  # a duplicate register (replicated layout): same value
                    acc[r] = done[lead]
                    continue
                try:
                    x, y = a.get((*c[:-1], k)), bb.get((*c[:-2], k, c[-1]))
                except KeyError:
                    raise unsupported(op, f"no operand registers for {c} at k = {k}") from None
                acc[r] = done[r] = step(x, y, acc[r])
    ctx.set(op.d, acc)


def _suffix(ty: ir.Type) -> str:
    if isinstance(ty, ir.FloatType):
        return "f32"
    if isinstance(ty, ir.DoubleType):
        return "f64"
    if isinstance(ty, ir.HalfType):
        return "f16"
    if isinstance(ty, BFloatType):
        return "bf16"
    raise NotImplementedError(f"no fma for {ty}")


__all__ = ["lower_fma_dot"]
