"""`ttg.convert_layout`: in registers when it can be, through shared memory otherwise.

    %c = ttg.convert_layout %x : tensor<64xf32, #ttg.slice<{dim = 0, parent = #b2d}>>
                                 -> tensor<64xf32, #blocked>
    registers: each result register is a register of the same thread (a permutation:
               no instruction at all)
    smem:      st.shared(.v4) of the source registers, each at its element's slot
               (sm_90+, 16-bit mma accumulators: stmatrix.x4, four 8x8 matrices at a
               time, where the buffer's rows are conflict-free for it: stmatrix.py)
               bar.sync 0
               ld.shared(.v4) of the destination registers

The smem slot of an element is `sum(coord[d] * strides[d])` (`tritium.analysis.convert_plan`:
row-major in the destination's order, one element of padding per row when the source's
fastest dim differs). Registers go 16 bytes per instruction where consecutive registers
have consecutive, aligned slots. Duplicate registers of the source (a zero register
basis) are not stored twice; duplicate threads store the same value to the same slot.
A barrier always separates the store from the load; one before the store is the
`gpu.barrier` the membar pass put before the op when an earlier access may still be in
flight.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.analysis.convert_plan import convert_plan, register_map
from tritium.analysis.shared_bytes import element_bytes
from tritium.codegen.lower.context import FunctionLowering, lowers
from tritium.codegen.lower.shared import (
    barrier,
    load_shared,
    offset_value,
    scratch_offset,
    store_shared,
    sync,
    thread_offset,
    vector_width,
)
from tritium.codegen.lower.types import i32, llvm_type
from tritium.ir.layouts import LinearLayout
from tritium.ir.ttg import compute_capability


def _slots(layout: LinearLayout, strides: tuple[int, ...]) -> list[int]:
    return [
        sum(c * s for c, s in zip(layout.register_coord(r), strides))
        for r in range(layout.num_registers)
    ]


@lowers("ttg.convert_layout")
def convert_layout(ctx: FunctionLowering, op: Operation) -> None:
    src_t, dst_t = op.operands[0].type, op.results[0].type
    src, dst = ctx.layout(src_t), ctx.layout(dst_t)
    regs = ctx.get(op.operands[0])
    plan = convert_plan(src_t, dst_t)
    if plan is None:
        mapping = register_map(src, dst, lambda c: c)
        ctx.set(op.results[0], [regs[i] for i in mapping])
        return
    b = ctx.builder
    base = scratch_offset(op)
    size = element_bytes(src_t)
    ty = llvm_type(src_t)
    max_v = max(1, 16 // size)

    def address(thread: ir.Value | None, const: int) -> ir.Value:
        slot = offset_value(ctx, thread, const)
        return b.add(b.mul(slot, ir.Constant(i32, size)), ir.Constant(i32, base))

    sync(ctx, op)  # the gpu.barrier before the op, if any
    matrices = None
    if size == 2 and compute_capability(op) >= 90:  # (imported here: a rare lowering)
        from tritium.codegen.lower.stmatrix import stmatrix_plan, store_matrices

        matrices = stmatrix_plan(src, plan.strides, size, base)
    if matrices is not None:
        store_matrices(ctx, matrices, regs, base)
    else:
        thread, div = thread_offset(ctx, src, plan.strides)
        slots = _slots(src, plan.strides)
        v = vector_width(slots, div, max_v)
        for g in range(0, len(regs), v):
            if g & src.free_register_mask:
                continue  # a duplicate of a register stored already
            store_shared(ctx, address(thread, slots[g]), regs[g : g + v], None)

    barrier(ctx)
    thread, div = thread_offset(ctx, dst, plan.strides)
    slots = _slots(dst, plan.strides)
    v = vector_width(slots, div, max_v)
    loaded: dict[int, list[ir.Value]] = {}
    out: list[ir.Value] = []
    for g in range(0, len(slots), v):
        if slots[g] not in loaded:
            loaded[slots[g]] = load_shared(ctx, address(thread, slots[g]), ty, v)
        out += loaded[slots[g]]
    ctx.set(op.results[0], out)
