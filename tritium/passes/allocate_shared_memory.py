"""`allocate-shared-memory`: give every shared-memory scratch buffer an offset and record
the kernel's total, as upstream does. The last TTGIR pass.

    module attributes {"ttg.num-warps" = 4 : i32, ...} {
      %m = "tt.reduce"(%x) <{axis = 0 : i32}> ({...}) : (tensor<1024xf32, #blocked>) -> f32
      %s = "tt.reduce"(%e) <{axis = 0 : i32}> ({...}) : (tensor<1024xf32, #blocked>) -> f32
  =>
    module attributes {"ttg.num-warps" = 4 : i32, ttg.shared = 32 : i32, ...} {
      %m = "tt.reduce"(%x) <{axis = 0 : i32}> ({...}) {allocation.offset = 0 : i32} : ...
      %s = "tt.reduce"(%e) <{axis = 0 : i32}> ({...}) {allocation.offset = 16 : i32} : ...

Which ops need scratch and how much (`tritium.codegen.scratch`): a reduction whose axis
spans several warps (its per-warp partials), a `ttg.convert_layout` that moves elements
between threads (the tile). The placement policy lives in `tritium.codegen.allocation`
(small buffers side by side, so back-to-back reductions need no barrier between them;
large ones share one region). The backend writes `ttg.shared` into
`metadata["shared"]`, the dynamic shared memory each launch asks for.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32
from xdsl.passes import ModulePass

from tritium.codegen.allocation import OFFSET_ATTR, SHARED_ATTR, allocate


def allocate_shared_memory(module: ModuleOp) -> int:
    """Annotate `module` in place; returns the total bytes."""
    alloc = allocate(module)
    for op, offset in alloc.offsets.items():
        op.attributes[OFFSET_ATTR] = IntegerAttr(offset, i32)
    module.attributes[SHARED_ATTR] = IntegerAttr(alloc.total, i32)
    return alloc.total


class AllocateSharedMemoryPass(ModulePass):
    name = "allocate-shared-memory"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        allocate_shared_memory(op)
