"""`membar`: barriers as IR ops, placed where shared-memory accesses would race
(the analysis: `tritium.analysis.membar`), after `allocate-shared-memory`.

    %w = ttg.async_wait {num = 1 : i32}
    %c = ttg.async_copy_global_to_local %p, %stage_next ...
    %x = ttg.local_load %stage_this ...
    %r = "tt.reduce"(%y) <{axis = 1 : i32}> ({...}) {allocation.offset = 0 : i32} ...
    scf.yield ...
  =>
    %w = ttg.async_wait {num = 1 : i32}
    gpu.barrier                                   (every thread's copies have landed)
    %c = ttg.async_copy_global_to_local %p, %stage_next ...
    %x = ttg.local_load %stage_this ...
    gpu.barrier                                   (the last trip's reads of the partials)
    %r = "tt.reduce"(%y) <{axis = 1 : i32}> ({...}) {allocation.offset = 0 : i32} ...
    scf.yield ...

A `gpu.barrier` (with the location of the op it is for) goes right before each op the analysis says needs one, and right after
each `ttg.async_wait`, unless a barrier is there already (with nothing but ops that emit
no code in between: constants, `local_alloc` without a source, `local_dealloc`), so the
pass may run again on its own output. The barrier between an op's own scratch write and
read is part of that op (its lowering emits it), as upstream. The backend lowers each
`gpu.barrier` to `bar.sync 0`.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from tritium.analysis.allocation import read_allocation
from tritium.analysis.membar import barriers
from tritium.ir.gpu import BarrierOp
from tritium.passes.utils import insert_after, insert_before


def _emits_no_code(op: Operation) -> bool:
    return op.name in ("arith.constant", "ttg.local_dealloc") or (
        op.name == "ttg.local_alloc" and not op.operands
    )


def _barrier_before(op: Operation) -> bool:
    prev = op.prev_op
    while prev is not None and _emits_no_code(prev):
        prev = prev.prev_op
    return isinstance(prev, BarrierOp)


def membar(module: ModuleOp) -> int:
    """Insert the barriers into `module` in place; returns how many were added."""
    alloc = read_allocation(module)
    added = 0
    for func in [op for op in module.ops if op.name == "tt.func"]:
        found = barriers(func, alloc)
        for op in list(func.walk()):
            if op in found.before and not _barrier_before(op):
                insert_before(op, BarrierOp())
                added += 1
            if op in found.after and not isinstance(op.next_op, BarrierOp):
                insert_after(op, BarrierOp())
                added += 1
    return added


class MembarPass(ModulePass):
    name = "membar"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        membar(op)


__all__ = ["MembarPass", "membar"]
