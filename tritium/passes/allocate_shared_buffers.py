"""`allocate-shared-buffers`: offsets for the `ttg.local_alloc` buffers (dot operand tiles,
the pipeliner's stages), after `allocate-shared-memory` has placed the ops' scratch.

    module attributes {ttg.shared = 16 : i32, ...} {         (a reduction's 16 bytes)
      %r = "tt.reduce"(%x) ... {allocation.offset = 0 : i32}
      %a = ttg.local_alloc : () -> !ttg.memdesc<3x128x32xf16, #shared, #smem, mutable>
      scf.for ... { ... }
      ttg.local_dealloc %a : ...
  =>
    module attributes {ttg.shared = 24576 : i32, ...} {
      %a = ttg.local_alloc {allocation.offset = 0 : i32} : () -> !ttg.memdesc<3x128x32xf16, ...>

A buffer lives from its `local_alloc` to its last use (a use inside a loop the alloc is
not in keeps it alive to the end of that loop; `local_dealloc` counts as a use, and so
does a `tt.dot` of a `local_load` of it: the FMA dot reads its operands late). Buffers
whose lives overlap get disjoint ranges (first fit, 128-byte aligned so the swizzle's
bank pattern holds). A buffer may share bytes with the scratch of other ops
(`allocation.offset` from allocate-shared-memory) only when no such op runs while it
lives and a `ttg.local_dealloc` ends its life: the lowering puts a `bar.sync` at its
`local_alloc` (or before its first store) and at its `local_dealloc`, so accesses before
and after it cannot race with its own. Otherwise it goes above the scratch. `ttg.shared` becomes the end of the highest range.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from tritium.ir.ttg_memory import LocalAllocOp
from tritium.ir.ttg_mma import memdesc_bytes

OFFSET_ATTR = "allocation.offset"
SHARED_ATTR = "ttg.shared"
ALIGN = 128


@dataclass
class _Buffer:
    op: LocalAllocOp
    size: int
    start: int
    end: int
    deallocated: bool  # a ttg.local_dealloc (a barrier) ends its life
    offset: int = 0


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def _users(v: SSAValue) -> list[Operation]:
    """Every op using the buffer, through `ttg.memdesc_index` views; a `tt.dot` using a
    `ttg.local_load` of it counts too (the FMA dot re-reads its operands' tiles)."""
    out: list[Operation] = []
    todo = [v]
    while todo:
        for use in todo.pop().uses:
            user = use.operation
            out.append(user)
            todo += [r for r in user.results if _is_view(r)]
            if user.name == "ttg.local_load":
                out += [u.operation for u in user.results[0].uses if u.operation.name == "tt.dot"]
    return out


def _is_view(v: SSAValue) -> bool:
    return v.owner.name == "ttg.memdesc_index" if isinstance(v.owner, Operation) else False


def buffer_intervals(module: Operation) -> list[_Buffer]:
    index: dict[int, int] = {}
    last: dict[int, int] = {}
    ops = list(module.walk())
    for i, op in enumerate(ops):
        index[id(op)] = i
    for op in reversed(ops):  # the last op nested in each op
        end = index[id(op)]
        for region in op.regions:
            for block in region.blocks:
                for sub in block.ops:
                    end = max(end, last[id(sub)])
        last[id(op)] = end
    out = []
    for op in ops:
        if not isinstance(op, LocalAllocOp):
            continue
        start = index[id(op)]
        end = start
        users = _users(op.result)
        for user in users:
            top = user
            while top.parent_op() is not None and not top.parent_op().is_ancestor(op):
                top = top.parent_op()
            end = max(end, last[id(top)])
        freed = any(u.name == "ttg.local_dealloc" for u in users)
        out.append(_Buffer(op, memdesc_bytes(op.result.type), start, end, freed))
    return out


def allocate_shared_buffers(module: ModuleOp) -> int:
    """Annotate `module` in place; returns the new `ttg.shared` total."""
    total_attr = module.attributes.get(SHARED_ATTR)
    scratch_end = total_attr.value.data if isinstance(total_attr, IntegerAttr) else 0
    ops = list(module.walk())
    scratch_at = [
        i
        for i, op in enumerate(ops)
        if OFFSET_ATTR in op.attributes and not isinstance(op, LocalAllocOp)
    ]
    placed: list[_Buffer] = []
    total = scratch_end
    for buf in sorted(buffer_intervals(module), key=lambda b: (-b.size, b.start)):
        floor = 0
        if not buf.deallocated or any(buf.start <= i <= buf.end for i in scratch_at):
            floor = _align(scratch_end)
        offset = floor
        for other in sorted(placed, key=lambda b: b.offset):
            live_together = other.start <= buf.end and buf.start <= other.end
            if (
                live_together
                and other.offset < offset + buf.size
                and offset < other.offset + other.size
            ):
                offset = _align(other.offset + other.size)
        buf.offset = offset
        placed.append(buf)
        buf.op.attributes[OFFSET_ATTR] = IntegerAttr(offset, i32)
        total = max(total, offset + buf.size)
    module.attributes[SHARED_ATTR] = IntegerAttr(total, i32)
    return total


class AllocateSharedBuffersPass(ModulePass):
    name = "allocate-shared-buffers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        allocate_shared_buffers(op)


__all__ = ["AllocateSharedBuffersPass", "allocate_shared_buffers", "buffer_intervals"]
