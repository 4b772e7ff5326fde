"""`dce`: erase operations whose results are unused and that have no side effect.

    %a = arith.addi %x, %y : tensor<8xi32>        // unused
    %v = tt.load %p : tensor<8x!tt.ptr<f32>>       // unused: a plain load may go
    tt.store %q, %w : tensor<8x!tt.ptr<f32>>       // stays: writes memory
  =>
    tt.store %q, %w : tensor<8x!tt.ptr<f32>>

Built on xDSL's `is_trivially_dead` (which reads the ops' memory-effect traits: `tt.store`
and `tt.assert` write, `tt.load` only reads, `scf.for` is as effectful as its body).
xDSL falls short on one point: effects are per op class, so a *volatile* `tt.load`
(`isVolatile = true`) would read as removable; `is_dead` keeps those.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from tritium.ir import tt


def has_volatile_access(op: Operation) -> bool:
    """True if `op` (or an op nested in it) is a volatile load."""
    for sub in op.walk():
        if isinstance(sub, tt.LoadOp) and sub.isVolatile is not None and sub.isVolatile.value.data:
            return True
    return False


def is_dead(op: Operation) -> bool:
    """`op` can be erased: its results are unused and it has no observable effect."""
    return op.parent is not None and is_trivially_dead(op) and not has_volatile_access(op)


class RemoveDeadOps(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if is_dead(op):
            rewriter.erase(op)


def dce(module: Operation) -> None:
    PatternRewriteWalker(RemoveDeadOps(), apply_recursively=True, walk_reverse=True).rewrite_region(
        module.regions[0]
    )


class DeadCodeEliminationPass(ModulePass):
    name = "dce"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        dce(op)
