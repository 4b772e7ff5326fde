"""The `gpu` dialect ops TTGIR uses: `gpu.barrier`, as upstream prints it.

    gpu.barrier          -> bar.sync 0 (every thread of the CTA waits here; shared-memory
                            accesses before it are visible to every thread after it)

The `membar` pass (tritium.passes.membar) places these before shared-memory accesses that
would race with earlier ones and after each `ttg.async_wait`; the backend lowers each to
`bar.sync 0`. A barrier has memory effects (read and write), so no pass moves or merges
loads and stores across it.
"""

from __future__ import annotations

from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, traits_def
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect


@irdl_op_definition
class BarrierOp(IRDLOperation):
    name = "gpu.barrier"
    assembly_format = "attr-dict"
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self):
        super().__init__()


GPU = Dialect("gpu", [BarrierOp])

__all__ = ["GPU", "BarrierOp"]
