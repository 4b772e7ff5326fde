"""`optimize-dot-operands`: dot operands reach their layout through a swizzled shared-memory
tile, so the backend can read mma fragments with `ldmatrix` (and FMA operands with
vector loads), as upstream does when it decomposes these conversions.

    %a1 = ttg.convert_layout %a : tensor<128x32xf16, #blocked>
                                  -> tensor<128x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
  =>
    #shared = #ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
    %m = ttg.local_alloc %a : (tensor<128x32xf16, #blocked>) -> !ttg.memdesc<128x32xf16, #shared, #smem, mutable>
    %a1 = ttg.local_load %m : !ttg.memdesc<128x32xf16, #shared, #smem, mutable>
                              -> tensor<128x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>

The tile keeps the source's order (a row-major load writes row-major rows) with the
swizzle `operand_shared_encoding` picks. Runs after the software pipeliner, which turns
the converts of loads inside K loops into async copies itself; this handles the rest.

An mma accumulator of 16-bit elements converted to the A operand of a dot with the same
#mma (attention's P feeding P @ V) stays a `ttg.convert_layout`: it moves no data between
threads (upstream's mma -> dot operand shortcut), so the backend permutes registers:

    %p = arith.truncf %s : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
    %a = ttg.convert_layout %p : tensor<128x64xf16, #mma>
                                 -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
      (unchanged)
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tritium.ir.shared_layout import operand_shared_encoding
from tritium.ir.ttg import ConvertLayoutOp, layout_order
from tritium.ir.ttg_memory import LocalAllocOp, LocalLoadOp
from tritium.ir.ttg_mma import DotOperandEncodingAttr, MemDescType, is_mma_to_dot_shortcut
from tritium.ir.types import bitwidth, element_type, encoding_of, shape_of
from tritium.passes.utils import insert_before


def operand_buffer_type(src_type, dot_enc: DotOperandEncodingAttr) -> MemDescType:
    """The shared tile a dot operand of `src_type` (a distributed tensor) is staged in."""
    shape = shape_of(src_type)
    order = layout_order(encoding_of(src_type))
    elem = element_type(src_type)
    shared = operand_shared_encoding(dot_enc, shape, order, bitwidth(elem))
    return MemDescType(shape, elem, shared)


def optimize_dot_operands(module: ModuleOp) -> None:
    for op in [o for o in module.walk() if isinstance(o, ConvertLayoutOp)]:
        dst = encoding_of(op.result.type)
        if not isinstance(dst, DotOperandEncodingAttr) or len(shape_of(op.src.type)) != 2:
            continue
        src = encoding_of(op.src.type)
        if is_mma_to_dot_shortcut(src, dst, bitwidth(element_type(op.src.type))):
            continue
        alloc = insert_before(op, LocalAllocOp(operand_buffer_type(op.src.type, dst), op.src))
        load = insert_before(op, LocalLoadOp(alloc.result, op.result.type))
        op.result.replace_all_uses_with(load.result)
        op.detach()
        op.erase()


class OptimizeDotOperandsPass(ModulePass):
    name = "optimize-dot-operands"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        optimize_dot_operands(op)


__all__ = ["OptimizeDotOperandsPass", "operand_buffer_type", "optimize_dot_operands"]
