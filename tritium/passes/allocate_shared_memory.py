"""`allocate-shared-memory`: give every shared-memory buffer an offset and record the
kernel's total, as upstream does: the scratch of ops that move data between threads and
the tiles of `ttg.local_alloc`, placed by one liveness-based allocator
(`tritium.analysis.allocation`).

    module attributes {"ttg.num-warps" = 4 : i32, ...} {
      %m = "tt.reduce"(%x) <{axis = 0 : i32}> ({...}) : (tensor<1024xf32, #blocked>) -> f32
      %s = "tt.reduce"(%e) <{axis = 0 : i32}> ({...}) : (tensor<1024xf32, #blocked>) -> f32
      %a = ttg.local_alloc : () -> !ttg.memdesc<3x128x32xf16, #shared, #smem, mutable>
      scf.for ... { ... }
      ttg.local_dealloc %a : !ttg.memdesc<3x128x32xf16, #shared, #smem, mutable>
  =>
    module attributes {"ttg.num-warps" = 4 : i32, ttg.shared = 24576 : i32, ...} {
      %m = "tt.reduce"(%x) <{axis = 0 : i32}> ({...}) {allocation.offset = 0 : i32} : ...
      %s = "tt.reduce"(%e) <{axis = 0 : i32}> ({...}) {allocation.offset = 16 : i32} : ...
      %a = ttg.local_alloc {allocation.offset = 0 : i32} : () -> !ttg.memdesc<3x128x32xf16, ...>

Which ops need scratch and how much: `tritium.analysis.scratch`; the placement policy
(small scratch side by side, so back-to-back reductions need no barrier between them;
large scratch sharing one region; tiles by liveness, sharing bytes with scratch only when
no scratch op runs while they live and a `local_dealloc` ends them): the allocation
analysis. The backend reads `allocation.offset` for addresses and writes `ttg.shared`
into `metadata["shared"]`, the dynamic shared memory each launch asks for.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32
from xdsl.passes import ModulePass

from tritium.analysis.allocation import OFFSET_ATTR, SHARED_ATTR, allocate


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


__all__ = ["AllocateSharedMemoryPass", "allocate_shared_memory"]
