"""`tt.assert`: a thread whose condition is false anywhere calls `__assertfail`, as upstream.

    tt.assert %ok, "x must be positive" : tensor<1024xi1, #blocked>
    ->  %bad = or (not ok_0), (not ok_1), ...
        br %bad, label %assert.fail, label %assert.cont
      assert.fail:
        call void @__assertfail(ptr "x must be positive", ptr "kernel.py", i32 12, ptr "kernel", i64 1)

`__assertfail` is CUDA's device-side assert: the driver prints the message with the block
and thread ids and the launch fails with CUDA_ERROR_ASSERT (710), which the runtime turns
into `KernelAssertionError`. (A plain `trap` would also stop the kernel, but with no message
and an "illegal instruction" error.)
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.codegen.lower.context import FunctionLowering, lowers
from tritium.codegen.lower.types import i32, i64
from tritium.ir.locations import op_source_loc


@lowers("tt.assert")
def assert_(ctx: FunctionLowering, op: Operation) -> None:
    b = ctx.builder
    bad = None
    for c in dict.fromkeys(ctx.get(op.condition)):  # distinct registers only
        nc = b.not_(c)
        bad = nc if bad is None else b.or_(bad, nc)
    fail = ctx.fn.append_basic_block("assert.fail")
    cont = ctx.fn.append_basic_block("assert.cont")
    b.cbranch(bad, fail, cont)
    b.position_at_end(fail)
    generic = ir.PointerType()
    fn = ctx.intrinsic("__assertfail", ir.VoidType(), [generic, generic, i32, generic, i64])
    loc = op_source_loc(op)

    def string(text: str) -> ir.Value:
        return b.addrspacecast(ctx.global_string(text), generic)

    b.call(
        fn,
        [
            string(op.message.data),
            string(loc.file if loc else "<unknown>"),
            ir.Constant(i32, loc.line if loc else 0),
            string(ctx.fn.name),
            ir.Constant(i64, 1),
        ],
    )
    b.branch(cont)
    b.position_at_end(cont)
