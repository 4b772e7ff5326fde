"""TTGIR -> per-thread LLVM IR, one file per op family (see codegen/ARCHITECTURE.md).

Importing this package registers the lowerings of the ops every kernel has in
`context.LOWERINGS`; the rarer families' modules (dots, shared tiles, math calls and
libm, atomics, scans, ...: `context.LAZY_LOWERINGS`) register theirs on the first such op.
"""

from tritium.codegen.lower import (  # noqa: F401  (registration by import)
    assume,
    control_flow,
    convert_layout,
    elementwise,
    memory,
    reduce,
    shape,
    shared,
    spmd,
)
from tritium.codegen.lower.context import LOWERINGS, FunctionLowering

__all__ = ["LOWERINGS", "FunctionLowering"]
