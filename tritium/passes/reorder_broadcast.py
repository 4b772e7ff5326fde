"""`reorder-broadcast`: compute on the small tensor, then broadcast.

    %a = tt.splat %x : f32 -> tensor<128xf32>
    %b = tt.splat %y : f32 -> tensor<128xf32>
    %c = arith.mulf %a, %b : tensor<128xf32>
  =>
    %m = arith.mulf %x, %y : f32
    %c = tt.splat %m : f32 -> tensor<128xf32>

    %a = tt.broadcast %u : tensor<1x64xi32> -> tensor<32x64xi32>
    %s = tt.splat %k : i32 -> tensor<32x64xi32>
    %c = arith.muli %a, %s : tensor<32x64xi32>
  =>
    %s1 = tt.splat %k : i32 -> tensor<1x64xi32>
    %m = arith.muli %u, %s1 : tensor<1x64xi32>
    %c = tt.broadcast %m : tensor<1x64xi32> -> tensor<32x64xi32>

An elementwise op whose operands are all splats (or splat constants) becomes the scalar
op and one splat; one whose operands are broadcasts from the same shape (or splats) runs
at that shape and is broadcast after. TTIR only (tensors without layouts).
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from tritium.ir import tt
from tritium.ir.arith import constant_value
from tritium.ir.types import element_type, encoding_of, is_tensor, shape_of, with_shape
from tritium.passes.canonicalize import replace_with
from tritium.passes.utils import is_elementwise, keep_locations, make_constant


def _rebuild(op: Operation, operands: list[SSAValue], result_type) -> Operation:
    """A copy of elementwise `op` on new operands with a new result type."""
    props = {k: v for k, v in op.properties.items()}
    return type(op).create(
        operands=operands,
        result_types=[result_type],
        properties=props,
        attributes=dict(op.attributes),
    )


def _candidate(op: Operation) -> bool:
    return (
        is_elementwise(op)
        and len(op.results) == 1
        and is_tensor(op.results[0].type)
        and encoding_of(op.results[0].type) is None
        and all(is_tensor(v.type) for v in op.operands)
    )


class MoveSplatAfterElementwise(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not _candidate(op) or not op.operands:
            return
        consts = [constant_value(v) for v in op.operands]
        if all(c is not None for c in consts):
            return  # canonicalize folds these
        new_ops: list[Operation] = []
        scalars: list[SSAValue] = []
        for v, c in zip(op.operands, consts):
            if isinstance(v.owner, tt.SplatOp):
                scalars.append(v.owner.src)
            elif c is not None:
                k = make_constant(c, element_type(v.type))
                new_ops.append(k)
                scalars.append(k.result)
            else:
                return
        rtype = op.results[0].type
        scalar_op = _rebuild(op, scalars, element_type(rtype))
        splat = tt.SplatOp(scalar_op.results[0], rtype)
        replace_with(rewriter, op, [*new_ops, scalar_op, splat])


class MoveBroadcastAfterElementwise(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not _candidate(op):
            return
        sources = [v.owner.src for v in op.operands if isinstance(v.owner, tt.BroadcastOp)]
        if not sources:
            return
        small = shape_of(sources[0].type)
        if any(shape_of(s.type) != small for s in sources):
            return
        new_ops: list[Operation] = []
        operands: list[SSAValue] = []
        for v in op.operands:
            if isinstance(v.owner, tt.BroadcastOp):
                operands.append(v.owner.src)
            elif isinstance(v.owner, tt.SplatOp):
                s = tt.SplatOp(v.owner.src, with_shape(v.type, small))
                new_ops.append(s)
                operands.append(s.result)
            elif (c := constant_value(v)) is not None:
                k = make_constant(c, with_shape(v.type, small))
                new_ops.append(k)
                operands.append(k.result)
            else:
                return
        rtype = op.results[0].type
        small_op = _rebuild(op, operands, with_shape(rtype, small))
        bcast = tt.BroadcastOp(small_op.results[0], rtype)
        replace_with(rewriter, op, [*new_ops, small_op, bcast])


def reorder_broadcast(module: Operation) -> None:
    applier = GreedyRewritePatternApplier(
        [MoveSplatAfterElementwise(), MoveBroadcastAfterElementwise()], dce_enabled=False
    )
    PatternRewriteWalker(applier, listener=keep_locations()).rewrite_region(module.regions[0])


class ReorderBroadcastPass(ModulePass):
    name = "reorder-broadcast"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        reorder_broadcast(op)
