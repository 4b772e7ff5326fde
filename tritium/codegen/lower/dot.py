"""`tt.dot`: on the tensor cores when the accumulator is in #mma (dot_mma.py), with FMAs
when it is blocked (dot_fma.py).

    %d = tt.dot %a, %b, %c : tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
                             * tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, ...}>> -> tensor<64x64xf32, #mma>
      -> 8 x 2 mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 per thread (4 warps)
    %d = tt.dot %a, %b, %c : ... #ttg.dot_op<{opIdx = 0, parent = #blocked}> ... -> #blocked
      -> for each K step, one fma.rn.f32 per accumulator register

This file only checks the layouts and dispatches. Both lowerings find operands by
coordinate: each accumulator register's coordinate (register part; the thread part is
common to A's rows, B's columns and the accumulator by construction of the dot-operand
layouts) names the A registers of its row and the B registers of its column
(registers.py).
"""

from __future__ import annotations

from xdsl.ir import Operation

from tritium.codegen.lower.context import FunctionLowering, lowers, unsupported
from tritium.codegen.lower.dot_fma import lower_fma_dot
from tritium.codegen.lower.dot_mma import lower_mma_dot
from tritium.ir.ttg import BlockedEncodingAttr
from tritium.ir.ttg_mma import DotOperandEncodingAttr, NvidiaMmaEncodingAttr
from tritium.ir.types import encoding_of


@lowers("tt.dot")
def dot(ctx: FunctionLowering, op: Operation) -> None:
    parent = encoding_of(op.d.type)
    a_enc, b_enc = encoding_of(op.a.type), encoding_of(op.b.type)
    for i, enc in enumerate((a_enc, b_enc)):
        if not (isinstance(enc, DotOperandEncodingAttr) and enc.parent == parent):
            raise unsupported(
                op,
                f"operand {i} must be in #ttg.dot_op<{{opIdx = {i}, parent = <the result's "
                "layout>}> (run accelerate-matmul)",
            )
    if encoding_of(op.c.type) != parent:
        raise unsupported(op, "the accumulator must be in the result's layout")
    if isinstance(parent, NvidiaMmaEncodingAttr) and parent.versionMajor == 3:
        raise unsupported(op, "a dot on wgmma's layout is a ttng.warp_group_dot (run wgmma-pipeline)")
    if isinstance(parent, NvidiaMmaEncodingAttr):
        lower_mma_dot(ctx, op)
    elif isinstance(parent, BlockedEncodingAttr):
        lower_fma_dot(ctx, op)
    else:
        raise unsupported(op, f"no dot lowering for result layout {parent}")

