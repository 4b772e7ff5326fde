"""Program ids: which block of the grid this is.

%pid = tt.get_program_id x : i32      ->  call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
%n = tt.get_num_programs y : i32      ->  call i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()
"""

from __future__ import annotations

from xdsl.ir import Operation

from tritium.codegen.lower.context import FunctionLowering, lowers

AXES = "xyz"


@lowers("tt.get_program_id")
def get_program_id(ctx: FunctionLowering, op: Operation) -> None:
    ctx.set(op.result, [ctx.threads.sreg(f"ctaid.{AXES[op.axis_value]}", ctx.builder)])


@lowers("tt.get_num_programs")
def get_num_programs(ctx: FunctionLowering, op: Operation) -> None:
    ctx.set(op.result, [ctx.threads.sreg(f"nctaid.{AXES[op.axis_value]}", ctx.builder)])
