"""Checks on TTGIR that xDSL's op verifiers cannot make on their own: every tensor carries a
distributed layout of its rank, and ops agree on layouts.

    %z = arith.addf %x, %y : tensor<8xf32, #blocked>      // ok if %x, %y are #blocked too
    %e = tt.expand_dims %s {axis = 1 : i32} : tensor<8xf32, #ttg.slice<{dim = 1, parent = #b}>>
                                                -> tensor<8x1xf32, #b>   // operand = slice of result
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from tritium.ir import tt
from tritium.ir.ttg import SliceEncodingAttr, is_distributed, layout_rank
from tritium.ir.types import encoding_of, is_tensor, shape_of
from tritium.passes.utils import same_layout_values, walk_values


def verify_ttgir_layouts(module: Operation) -> None:
    """Raise `VerifyException` naming the first op whose layouts do not fit."""
    for v in walk_values(module):
        if not is_tensor(v.type):
            continue
        layout = encoding_of(v.type)
        where = v.owner.name if isinstance(v.owner, Operation) else "block argument"
        if not is_distributed(layout):
            raise VerifyException(f"{where}: tensor without a layout in TTGIR: {v.type}")
        if layout_rank(layout) != len(shape_of(v.type)):
            raise VerifyException(f"{where}: layout rank differs from tensor rank: {v.type}")
    for op in module.walk():
        group = same_layout_values(op)
        if len({encoding_of(v.type) for v in group}) > 1:
            raise VerifyException(f"{op.name}: operands and results must share one layout")
        if isinstance(op, tt.ExpandDimsOp):
            want = SliceEncodingAttr(op.axis.value.data, encoding_of(op.result.type))
            if encoding_of(op.src.type) != want:
                raise VerifyException(
                    "tt.expand_dims: operand layout must be a slice of the result's"
                )
        if isinstance(op, tt.ReduceOp) and len(shape_of(op.srcs[0].type)) >= 2:
            want = SliceEncodingAttr(op.axis.value.data, encoding_of(op.srcs[0].type))
            if any(encoding_of(r.type) != want for r in op.results):
                raise VerifyException("tt.reduce: result layout must be a slice of the operand's")
