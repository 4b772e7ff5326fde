"""`combine`: Triton-specific rewrites of op pairs (a subset of upstream's triton-combine).

    %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
    %d = tt.dot %a, %b, %z : tensor<32x16xf32> * tensor<16x32xf32> -> tensor<32x32xf32>
    %r = arith.addf %d, %acc : tensor<32x32xf32>
  =>
    %r = tt.dot %a, %b, %acc : tensor<32x16xf32> * tensor<16x32xf32> -> tensor<32x32xf32>

    %m = tt.splat %c : i1 -> tensor<8xi1>
    %v = tt.load %p, %m : tensor<8x!tt.ptr<f32>>
    %r = arith.select %c, %v, %o : tensor<8xf32>
  =>
    %r = tt.load %p, %m, %o : tensor<8x!tt.ptr<f32>>

* `dot(a, b, 0) + acc` -> `dot(a, b, acc)` (addf for floats, addi for ints; the dot must
  have no other use and no `maxNumImpreciseAcc`);
* `select(c, load(p, splat(c)), other)` -> `load(p, splat(c), other)` (the load has no
  `other` and no other use, and nothing between it and the select writes memory).
Upstream's `addptr(addptr(p, a), b) -> addptr(p, a + b)` is left out on purpose: with i32
offsets `a + b` can wrap where the two separate 64-bit pointer additions do not.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.transforms.common_subexpression_elimination import (
    has_other_side_effecting_op_in_between,
)

from tritium.ir import arith, tt
from tritium.ir.arith import constant_value
from tritium.passes.canonicalize import replace_with
from tritium.passes.dce import has_volatile_access
from tritium.passes.utils import keep_locations


class CombineDotAdd(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, arith.AddfOp | arith.AddiOp):
            return
        for dot_val, acc in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            dot = dot_val.owner
            if (
                isinstance(dot, tt.DotOp)
                and dot_val.has_one_use()
                and constant_value(dot.c) == 0
                and dot.maxNumImpreciseAcc is None
                and acc.type == dot.d.type
            ):
                new = tt.DotOp(dot.a, dot.b, acc)
                new.properties.update(dot.properties)
                new.attributes.update(dot.attributes)
                replace_with(rewriter, op, new)
                return


class CombineSelectMaskedLoad(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, arith.SelectOp):
            return
        load = op.lhs.owner
        if not (
            isinstance(load, tt.LoadOp)
            and op.lhs.has_one_use()
            and load.mask is not None
            and load.other is None
            and isinstance(load.mask.owner, tt.SplatOp)
            and load.mask.owner.src is op.cond
            and not has_volatile_access(load)
            and load.parent is op.parent
            and not has_other_side_effecting_op_in_between(load, op)
        ):
            return
        new = tt.LoadOp(load.ptr, load.mask, op.rhs)
        new.properties.update(
            {k: v for k, v in load.properties.items() if k != "operandSegmentSizes"}
        )
        new.attributes.update(load.attributes)
        replace_with(rewriter, op, new)
        rewriter.erase(load)


def combine(module: Operation) -> None:
    applier = GreedyRewritePatternApplier(
        [CombineDotAdd(), CombineSelectMaskedLoad()], dce_enabled=False
    )
    PatternRewriteWalker(applier, listener=keep_locations()).rewrite_region(module.regions[0])


class CombinePass(ModulePass):
    name = "combine"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        combine(op)
