"""`coalesce`: give every `tt.load` / `tt.store` a layout that makes its accesses coalesced
and vectorized, converting its operands and result around it.

    #blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
    %x = tt.load %ptrs, %mask : tensor<1024x!tt.ptr<f32>, #blocked>
  =>
    #blocked1 = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
    %p1 = ttg.convert_layout %ptrs : tensor<1024x!tt.ptr<f32>, #blocked> -> tensor<1024x!tt.ptr<f32>, #blocked1>
    %m1 = ttg.convert_layout %mask : tensor<1024xi1, #blocked> -> tensor<1024xi1, #blocked1>
    %x1 = tt.load %p1, %m1 : tensor<1024x!tt.ptr<f32>, #blocked1>
    %x = ttg.convert_layout %x1 : tensor<1024xf32, #blocked1> -> tensor<1024xf32, #blocked>

(when the pointers are 16-byte aligned and contiguous; remove-layout-conversions then
removes the converts). The layout, as upstream's coalesce builds it:

* order: the pointer's dims by decreasing contiguity (axis info);
* sizePerThread along the fastest dim: min(contiguity, divisibility in elements,
  128 bits / element bits), and at most the elements each thread has
  (numel / (warps * 32)); 1 along the other dims;
* threadsPerWarp / warpsPerCTA: filled from the fastest dim (`blocked_layout`).

A mask does not narrow the layout (upstream does the same): the lowering caps each access
at the mask's constancy (`AxisInfoAnalysis.vector_width`). Upstream also widens a load to
the best width of other accesses with the same order in its def-use slice; this pass looks
at each access alone.
"""

from __future__ import annotations

import math

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from tritium.analysis.axis_info import AxisInfoAnalysis, order_from_contiguity, pointee_bits
from tritium.ir import tt
from tritium.ir.ttg import (
    BlockedEncodingAttr,
    ConvertLayoutOp,
    blocked_layout,
    num_warps_of,
    threads_per_warp_of,
)
from tritium.ir.types import encoding_of, is_tensor, shape_of, with_encoding
from tritium.passes.utils import insert_after, insert_before, set_layout


def coalesced_layout(
    op: Operation, analysis: AxisInfoAnalysis, num_warps: int, threads_per_warp: int = 32
) -> BlockedEncodingAttr:
    """The blocked layout coalesce picks for the memory op `op`."""
    ptr = op.ptr
    shape = shape_of(ptr.type)
    info = analysis[ptr]
    order = order_from_contiguity(info.contiguity)
    fast = order[0]
    bits = max(pointee_bits(ptr.type), 1)
    elem_bytes = max(bits // 8, 1)
    max_multiple = max(info.divisibility[fast] // elem_bytes, 1)
    max_contig = min(info.contiguity[fast], shape[fast])
    per_thread = min(max_multiple, max_contig, max(128 // bits, 1))
    per_thread = min(per_thread, max(math.prod(shape) // (num_warps * threads_per_warp), 1))
    size = [1] * len(shape)
    size[fast] = per_thread
    return blocked_layout(shape, size, order, num_warps, threads_per_warp)


def coalesce(module: Operation) -> None:
    num_warps = num_warps_of(module)
    tpw = threads_per_warp_of(module)
    analysis = AxisInfoAnalysis(module)
    plan: list[tuple[Operation, BlockedEncodingAttr]] = []
    for op in module.walk():
        if isinstance(op, tt.LoadOp | tt.StoreOp) and is_tensor(op.ptr.type):
            layout = coalesced_layout(op, analysis, num_warps, tpw)
            if encoding_of(op.ptr.type) != layout:
                plan.append((op, layout))
    for op, layout in plan:
        _retarget(op, layout)


def _retarget(op: Operation, layout: BlockedEncodingAttr) -> None:
    """Put the memory op `op` in `layout`: converts before its tensor operands and after
    its result, back to what its neighbours expect."""
    for i, v in enumerate(op.operands):
        if is_tensor(v.type) and encoding_of(v.type) != layout:
            cvt = insert_before(op, ConvertLayoutOp(v, with_encoding(v.type, layout)))
            op.operands[i] = cvt.result
    for res in op.results:
        if not is_tensor(res.type):
            continue
        old_type = res.type
        new = set_layout(res, layout)
        back = insert_after(op, ConvertLayoutOp(new, old_type))
        new.replace_uses_with_if(back.result, lambda use, b=back: use.operation is not b)


class CoalescePass(ModulePass):
    name = "coalesce"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        coalesce(op)
