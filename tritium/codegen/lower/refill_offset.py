"""The 64-bit offset of a pipelined refill's addresses, in loops that chain mma.sync dots.

    %off = arith.muli %next, %stride_ks : i32                       (uniform: one per program)
    %p = tt.addptr %k_ptrs, (tt.splat %off) : tensor<64x64x!tt.ptr<f16>, #blocked>, ...
    ttg.async_copy_global_to_local %p, ...
      before:  p_k = gep half, base_k, (sext off)           -> mul.wide.s32 %rd, %off, 2;
                                                               add.s64 %p_k, %base_k, %rd;
      after:   w = asm "cvt.s64.s32 $0, $1;" (off)           -> cvt.s64.s32 %rdw, %off;
               p_k = gep half, base_k, w                       shl.b64 %rd, %rdw, 1;
                                                               add.s64 %p_k, %base_k, %rd;

Same addresses. What changes is what ptxas makes of them. The offset is uniform, and in
attention's loop ptxas keeps it in a uniform register; `mul.wide` + `add.s64` fuse into one
`IMAD.WIDE` per address, whose multiplicand must be a vector register, so each of the
eight refill addresses (K and V, four 16-byte copies each) costs a `MOV R, UR` first,
scheduled into the loop's tail among P @ V's last HMMAs. With the sign extension opaque
to LLVM's `mul.wide` combine (an inline `cvt`: the NVPTX backend folds `shl (sext x)` back
into `mul.wide`), the 64-bit offset is formed in the uniform datapath (`USHF`) and each
address is an `IADD3` + `IADD3.X` taking it as an operand: no moves. D = 64 forward, sm_90,
ptxas 13.0 and 12.8 alike, static stall cycles per trip of the unmasked loop (and an
issue model with scoreboard latencies): 64x64/4w 740 -> 733 (812 -> 792 cycles; upstream's
PTX 723 / 793), causal 749 -> 734, 128x64/8w 734 -> 726 (848 -> 806).

Only where that was measured: offsets splat from one scalar, pointers feeding
`ttg.async_copy_global_to_local` (the software pipeliner's refills), inside an `scf.for`
whose body chains mma.sync dots (`register_budget.loop_chains_mma_dots`); every other
`tt.addptr` keeps the plain `sext` (GEMM loops included: their PTX is unchanged).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.codegen.lower.context import FunctionLowering
from tritium.codegen.lower.types import i64
from tritium.codegen.register_budget import loop_chains_mma_dots


def _enclosing_loop(op: Operation) -> Operation | None:
    parent = op.parent_op()
    while parent is not None and parent.name != "scf.for":
        parent = parent.parent_op()
    return parent


NARROW = 64
_VIEWS = ("tt.trans", "tt.reshape")  # K^T's refill reads its pointers through a tt.trans


def _uniform(value) -> bool:
    """`value` is a splat of one scalar, seen through views."""
    op = value.owner
    while isinstance(op, Operation) and op.name in _VIEWS:
        op = op.operands[0].owner
    return isinstance(op, Operation) and op.name == "tt.splat"


def _feeds_unmasked_refill(op: Operation) -> bool:
    """`op`'s pointers reach an async copy whose mask, if any, is one scalar for all."""
    todo = [op]
    while todo:
        for use in todo.pop().results[0].uses:
            user = use.operation
            if user.name == "ttg.async_copy_global_to_local" and use.index == 0:
                return user.mask is None or _uniform(user.mask)
            if user.name in _VIEWS:
                todo.append(user)
    return False


def _i32_splat(value) -> bool:
    op = value.owner
    if not isinstance(op, Operation) or op.name != "tt.splat":
        return False
    width = getattr(op.operands[0].type, "width", None)
    return width is not None and width.data == 32


def applies(op: Operation) -> bool:
    """`op` (a tt.addptr) is a refill address of a loop that chains mma.sync dots."""
    if not _i32_splat(op.offset):
        return False
    if not _feeds_unmasked_refill(op):
        return False
    loop = _enclosing_loop(op)
    return loop is not None and _narrow_dots(loop) and loop_chains_mma_dots(loop)


def _narrow_dots(loop: Operation) -> bool:
    """Every dot of the loop body is at most NARROW columns wide (D = 128 loses: below)."""
    widths = [o.results[0].type.get_shape()[-1] for o in loop.walk() if o.name == "tt.dot"]
    return bool(widths) and max(widths) <= NARROW


def wide_offset(ctx: FunctionLowering, op: Operation) -> ir.Value:
    """The splat scalar, sign-extended to 64 bits by an inline `cvt` (see the docstring)."""
    scalar = ctx.get1(op.offset.owner.operands[0])
    fty = ir.FunctionType(i64, [scalar.type])
    return ctx.builder.asm(fty, "cvt.s64.s32 $0, $1;", "=l,r", [scalar], side_effect=False)
