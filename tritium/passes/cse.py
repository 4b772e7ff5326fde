"""`cse`: common subexpression elimination.

    %a = tt.splat %n : i32 -> tensor<8xi32>
    %b = tt.splat %n : i32 -> tensor<8xi32>
    %m = arith.cmpi slt, %offs, %b : tensor<8xi32>
  =>
    %a = tt.splat %n : i32 -> tensor<8xi32>
    %m = arith.cmpi slt, %offs, %a : tensor<8xi32>

xDSL's `CSEDriver` does the work: side-effect-free ops are merged with an identical op
that dominates them (same name, operands, properties, attributes and result types; a
value computed outside a loop is reused inside it), and read-only ops such as `tt.load`
are merged only within a block with no write in between. xDSL falls short on volatile
loads (effects are per op class), so `_TritonCSE` leaves those alone.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import CSEDriver

from tritium.passes.dce import has_volatile_access


class _TritonCSE(CSEDriver):
    def _simplify_operation(self, op: Operation):
        if has_volatile_access(op):
            return
        super()._simplify_operation(op)


def cse(module: Operation) -> None:
    _TritonCSE().simplify(module)


class CommonSubexpressionEliminationPass(ModulePass):
    name = "cse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        cse(op)
