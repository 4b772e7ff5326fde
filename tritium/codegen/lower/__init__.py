"""TTGIR -> per-thread LLVM IR, one file per op family (see codegen/ARCHITECTURE.md).

Importing this package registers every op's lowering in `context.LOWERINGS`.
"""

from tritium.codegen.lower import (  # noqa: F401  (registration by import)
    assert_op,
    assume,
    async_copy,
    atomic,
    control_flow,
    convert_layout,
    dot,
    dot_wgmma,
    elementwise,
    gather,
    histogram,
    inline_asm,
    libdevice,
    local_memory,
    math_ops,
    memory,
    print_op,
    reduce,
    scan,
    shape,
    shared,
    spmd,
)
from tritium.codegen.lower.context import LOWERINGS, FunctionLowering

__all__ = ["LOWERINGS", "FunctionLowering"]
