"""The interpreter's ops that do nothing on one CPU thread, and the one it cannot run.

gpu.barrier                   (tl.debug_barrier; the programs run one at a time)
llvm.intr.assume %c : i1      (tl.assume: a promise to the compiler, not checked)
tt.elementwise_inline_asm     (tl.inline_asm_elementwise: PTX; refused with the
                               kernel's line, as upstream's interpreter refuses it)
"""

from __future__ import annotations

from tritium.errors import NotSupportedError
from tritium.ir.locations import op_source_loc


def _nothing(op, fc):
    def run(env, st):
        return None

    return run


def _inline_asm(op, fc):
    raise NotSupportedError(
        "tl.inline_asm_elementwise runs PTX, which the interpreter cannot execute "
        "(as upstream's interpreter); run this kernel on the GPU",
        op_source_loc(op),
    )


HANDLERS = {
    "gpu.barrier": _nothing,
    "llvm.intr.assume": _nothing,
    "tt.elementwise_inline_asm": _inline_asm,
}

__all__ = ["HANDLERS"]
