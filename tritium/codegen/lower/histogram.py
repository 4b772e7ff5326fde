"""`tt.histogram`: counters in shared memory, shared-memory atomics.

    %h = tt.histogram %x, %m : tensor<1024xi32, #blocked> -> tensor<16xi32, #blocked1>
      st.shared.b32 [counter(bin)], 0          each thread zeroes the bins it holds in %h
      bar.sync 0
      @p red.shared.add.u32 [counter(x)], 1    per element it owns, p = m && 0 <= x < 16
      bar.sync 0
      ld.shared.b32 h, [counter(bin)]          each result register reads its bin

The counters are the op's scratch (`tritium.analysis.scratch`: one i32 per bin). Each
element is counted once: where the operand's layout replicates it, only its owner (the
thread and register with every replicated bit 0) adds. Values outside `[0, bins)` and
masked-off elements are not counted (upstream's GPU lowering takes values modulo the bin
count; its interpreter drops them: tritium drops them on both).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.codegen.lower.context import FunctionLowering, lowers
from tritium.codegen.lower.shared import (
    barrier,
    load_shared,
    offset_value,
    scratch_offset,
    smem_pointer,
    store_shared,
    sync,
    thread_offset,
)
from tritium.codegen.lower.types import i1, i32


def _red_add(ctx: FunctionLowering, offset: ir.Value, pred: ir.Value) -> None:
    """`@pred red.shared.add.u32 [offset], 1;`"""
    b = ctx.builder
    addr = b.ptrtoint(smem_pointer(ctx, offset), i32)
    fty = ir.FunctionType(ir.VoidType(), [i32, i1])
    b.asm(fty, "@$1 red.shared.add.u32 [ $0 + 0 ], 1;", "r,b", [addr, pred], side_effect=True)


@lowers("tt.histogram")
def histogram(ctx: FunctionLowering, op: Operation) -> None:
    b = ctx.builder
    src, dst = ctx.layout(op.src.type), ctx.layout(op.result.type)
    bins = dst.shape[0]
    base = scratch_offset(op)

    def counter(bin_: ir.Value) -> ir.Value:
        return b.add(b.shl(bin_, ir.Constant(i32, 2)), ir.Constant(i32, base))

    sync(ctx, op)
    # zero the counters: every bin is held by some register of some thread of the result
    thread, _ = thread_offset(ctx, dst, (1,))
    zeroed: set[int] = set()
    for r in range(dst.num_registers):
        c = dst.register_coord(r)[0]
        if c not in zeroed:
            zeroed.add(c)
            store_shared(ctx, counter(offset_value(ctx, thread, c)), [ir.Constant(i32, 0)], None)
    barrier(ctx)
    # count: one red.shared per owned element, predicated on its mask and range
    values = ctx.get(op.src)
    masks = ctx.get(op.mask) if op.mask is not None else None
    owner = ctx.threads.owner_predicate(src)
    for r, x in enumerate(values):
        if r & src.free_register_mask:
            continue  # a duplicate register
        w = x.type.width
        x32 = b.trunc(x, i32) if w > 32 else (b.sext(x, i32) if w < 32 else x)
        ok = b.icmp_unsigned("<", x32, ir.Constant(i32, bins))  # negatives are huge
        if w > 32:  # a 64-bit value must fit before truncation
            ok = b.and_(ok, b.icmp_unsigned("<", x, ir.Constant(x.type, bins)))
        if masks is not None:
            ok = b.and_(ok, masks[r])
        if owner is not None:
            ok = b.and_(ok, owner)
        _red_add(ctx, counter(x32), ok)
    barrier(ctx)
    out: list[ir.Value] = []
    loaded: dict[int, ir.Value] = {}
    for r in range(dst.num_registers):
        c = dst.register_coord(r)[0]
        if c not in loaded:
            loaded[c] = load_shared(ctx, counter(offset_value(ctx, thread, c)), i32, 1)[0]
        out.append(loaded[c])
    ctx.set(op.result, out)
