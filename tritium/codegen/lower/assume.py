"""`llvm.intr.assume` (`tl.assume`): the promise handed to LLVM.

    llvm.intr.assume %c : i1   ->  call void @llvm.assume(i1 %c)

LLVM may use it to simplify the code around it; it emits no PTX instruction.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.codegen.lower.context import FunctionLowering, lowers


@lowers("llvm.intr.assume")
def assume(ctx: FunctionLowering, op: Operation) -> None:
    fn = ctx.intrinsic("llvm.assume", ir.VoidType(), [ir.IntType(1)])
    ctx.builder.call(fn, [ctx.get1(op.cond)])


__all__ = ["assume"]
