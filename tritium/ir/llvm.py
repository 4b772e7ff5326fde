"""The `llvm` dialect op TTIR uses: `llvm.intr.assume`, as upstream prints it.

    tl.assume(n > 0)  ->  %c = arith.cmpi sgt, %n, %c0_i32 : i32
                          llvm.intr.assume %c : i1

The condition is a promise to the compiler, not a check: the backend hands it to LLVM
as `llvm.assume`, which may use it to simplify the code around it and emits nothing
itself. The op has no result and unknown effects, so no pass erases or moves it.
"""

from __future__ import annotations

from xdsl.ir import Dialect, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def

from tritium.ir.tt_common import _check
from tritium.ir.types import i1


@irdl_op_definition
class AssumeOp(IRDLOperation):
    name = "llvm.intr.assume"
    cond = operand_def()
    assembly_format = "$cond attr-dict `:` type($cond)"

    def __init__(self, cond: SSAValue):
        super().__init__(operands=[cond])

    def verify_(self) -> None:
        _check(self.cond.type == i1, "llvm.intr.assume: the condition must be an i1 scalar")


LLVM = Dialect("llvm", [AssumeOp])

__all__ = ["LLVM", "AssumeOp"]
