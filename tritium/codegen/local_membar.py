"""Where `bar.sync` goes for shared-memory tiles (`ttg.local_*`, async copies), the same
dataflow as membar.py (which places the barriers of ops' scratch) over these accesses:

    local_load  m      read  r(m)       a barrier first if a plain write to m's bytes is
                                        pending (RAW)
    local_store x, m   write w(m)       ... if a read or a write is pending (WAR, WAW)
    local_alloc x      write w(m)
    async_copy  p, m   async aw(m)      ... if a read or a plain write is pending (WAR)
    tt.dot (FMA)       read  r(m)       of each operand tile it re-reads (dot_fma.py)
    async_wait, local_alloc (no source), local_dealloc: they emit bar.sync themselves

`m` stands for the bytes of the whole allocation the access goes through (a
`memdesc_index` view does not narrow it: stage indices are dynamic). An async write
never makes a later read wait: the data of a cp.async is only visible after
`async_wait`, whose barrier is the synchronisation. So the pipeliner's order --
wait + bar.sync, copies into the stage read one trip ago, reads of this trip's stage --
needs no other barrier, while upstream's order (reads, then copies into the stage just
read) gets one before the copies, as upstream's membar gives it.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from tritium.codegen.allocation import Allocation
from tritium.codegen.membar import Membar, State
from tritium.ir.ttg_mma import MemDescType, memdesc_bytes

OFFSET_ATTR = "allocation.offset"
BARRIER = ("bar", 0, 0)
_CONFLICTS = {"r": {"w"}, "w": {"r", "w", "aw"}, "aw": {"r", "w"}}


def allocation_range(v: SSAValue) -> tuple[int, int]:
    """Bytes of the allocation a memdesc value is (a view of)."""
    while isinstance(v.owner, Operation) and v.owner.name == "ttg.memdesc_index":
        v = v.owner.operands[0]
    alloc = v.owner
    if not isinstance(alloc, Operation) or alloc.name != "ttg.local_alloc":
        raise NotImplementedError(f"a shared-memory descriptor not from ttg.local_alloc: {v}")
    attr = alloc.attributes.get(OFFSET_ATTR)
    if attr is None:
        raise NotImplementedError("ttg.local_alloc without allocation.offset")
    lo = attr.value.data
    return lo, lo + memdesc_bytes(alloc.results[0].type)


def tile_source(v: SSAValue) -> SSAValue | None:
    """The memdesc a tensor was loaded from, when it is a `ttg.local_load` result."""
    op = v.owner
    if isinstance(op, Operation) and op.name == "ttg.local_load":
        return op.operands[0]
    return None


def local_accesses(op: Operation) -> list[tuple[str, int, int]]:
    name = op.name
    if name == "ttg.local_load":
        return [("r", *allocation_range(op.operands[0]))]
    if name == "ttg.local_store":
        return [("w", *allocation_range(op.operands[1]))]
    if name == "ttg.local_alloc":
        return [("w", *allocation_range(op.results[0]))] if op.operands else [BARRIER]
    if name == "ttg.async_copy_global_to_local":
        return [("aw", *allocation_range(op.operands[1]))]
    if name in ("ttg.async_wait", "ttg.local_dealloc"):
        return [BARRIER]
    if name == "tt.dot":
        srcs = [tile_source(v) for v in op.operands[:2]]
        return [("r", *allocation_range(s)) for s in srcs if s is not None]
    return []


def _conflicts(state: State, access) -> bool:
    kind, lo, hi = access
    bad = _CONFLICTS[kind]
    return any(k in bad and lo < h and l < hi for k, l, h in state)  # noqa: E741


class LocalMembar(Membar):
    def op(self, op: Operation, state: State) -> State:
        if any(isinstance(r.type, MemDescType) for r in op.results) or op.name in (
            "ttg.local_load",
            "ttg.local_store",
            "ttg.async_copy_global_to_local",
            "ttg.async_wait",
            "ttg.local_dealloc",
            "tt.dot",
        ):
            for k, access in enumerate(local_accesses(op)):
                if access is BARRIER:
                    state = State()
                    continue
                if _conflicts(state, access):
                    self.needs.add((id(op), k))
                    state = State()
                state = state | {access}
        return super().op(op, state)


def local_barrier_points(func: Operation) -> set[tuple[int, int]]:
    """(id(op), access index) of the tile accesses that need a bar.sync first."""
    m = LocalMembar(Allocation())
    m.region(func.regions[0], State())
    return m.needs


__all__ = ["allocation_range", "local_accesses", "local_barrier_points", "tile_source"]
