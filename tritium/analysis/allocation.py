"""Shared-memory allocation: a byte range for every buffer of the kernel, and the total
(upstream's Allocation analysis, lib/Analysis/Allocation.cpp).

    %m = "tt.reduce"(%x) ...           scratch    16 B  live at op 3      -> offset 0
    %s = "tt.reduce"(%e) ...           scratch    16 B  live at op 7      -> offset 16
    %c = ttg.convert_layout %y ...     scratch  4352 B  live at op 9      -> offset 32
    %a = ttg.local_alloc : () -> ...   tile    24576 B  live at ops 12-40 -> offset 0
         (ended by ttg.local_dealloc, no scratch op runs while it lives)
    total = 24576

Buffers are an op's scratch (scratch.py: written and read inside the op, so live only
while it runs) and the tiles of `ttg.local_alloc`, live from the alloc to its last use: a
use inside a loop the alloc is not in keeps it alive to the end of that loop; uses through
`ttg.memdesc_index` / `ttg.memdesc_trans` views count, and so does a `tt.dot` of a `ttg.local_load` of it (the
dot re-reads its operands' tiles). Two buffers *interfere* (may not share bytes) when:

    scratch / scratch   one of them is small (<= SMALL bytes: reduction partials). Each
                        small buffer has its own range, so consecutive reductions need no
                        barrier between one's reads and the next one's writes; large
                        buffers (layout conversions) never run at once: they share one
                        region after the small ones
    tile / tile         their live ranges overlap
    tile / scratch      the tile is not ended by a `ttg.local_dealloc`, or some scratch op
                        runs while it lives. Otherwise the tile may reuse scratch bytes:
                        its `local_alloc` and `local_dealloc` are barriers (membar.py)

Placement is first fit in a fixed order: scratch first (small buffers in program order,
then large ones), then tiles, largest first (ties: the earliest first). Each buffer goes
to the lowest offset, aligned (16 bytes for scratch, 128 for tiles so that a swizzle's
bank pattern holds, 1024 for `#ttg.nvmma_shared` tiles, whose swizzle wgmma applies to
the address), past every interfering buffer placed before it that it would
overlap. Unlike upstream (every scratch buffer at offset 0, a barrier before each reuse),
small scratch buffers never share bytes.

The `allocate-shared-memory` pass records the result in the IR, as upstream does
(`allocation.offset = N : i32` on the op, `ttg.shared = total : i32` on the module);
`read_allocation`, `offset_of` and `shared_total` read it back (the membar pass, the
backend), so nothing downstream recomputes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue

from tritium.analysis.scratch import scratch_bytes
from tritium.analysis.shared_bytes import ALIGN, align
from tritium.ir.ttg_mma import NVMMASharedEncodingAttr, memdesc_bytes

# ops whose result is a view of their memdesc operand (the same bytes)
VIEW_OPS = ("ttg.memdesc_index", "ttg.memdesc_trans")

SMALL = 1024
TILE_ALIGN = 128
NVMMA_ALIGN = 1024
OFFSET_ATTR = "allocation.offset"
SHARED_ATTR = "ttg.shared"


@dataclass(eq=False)
class Buffer:
    """One buffer: `owner` is the op with scratch or the `ttg.local_alloc`; `start` and
    `end` its live range (indices of ops in the module's walk order, both included)."""

    owner: Operation
    size: int
    start: int
    end: int
    is_tile: bool
    apart_from_scratch: bool = False  # a tile that may not share bytes with any scratch
    offset: int = 0

    @property
    def alignment(self) -> int:
        if not self.is_tile:
            return ALIGN
        enc = getattr(self.owner.results[0].type, "encoding", None)
        # wgmma's descriptors swizzle address bits 4-9: an nvmma tile starts on 1024 bytes
        return NVMMA_ALIGN if isinstance(enc, NVMMASharedEncodingAttr) else TILE_ALIGN

    @property
    def small(self) -> bool:
        return not self.is_tile and self.size <= SMALL

    @property
    def stop(self) -> int:
        return self.offset + self.size

    def interferes(self, other: Buffer) -> bool:
        """Whether the two may not share bytes (the module docstring's table)."""
        if not self.is_tile and not other.is_tile:
            return self.small or other.small
        if self.is_tile and other.is_tile:
            return self.start <= other.end and other.start <= self.end
        tile = self if self.is_tile else other
        return tile.apart_from_scratch


@dataclass
class Allocation:
    offsets: dict[Operation, int] = field(default_factory=dict)
    sizes: dict[Operation, int] = field(default_factory=dict)
    total: int = 0

    def range_of(self, op: Operation) -> tuple[int, int] | None:
        """The bytes [first, end) of `op`'s buffer (its scratch, or the tile it allocates)."""
        if op not in self.offsets:
            return None
        return self.offsets[op], self.offsets[op] + self.sizes[op]


# --------------------------------------------------------------------------- liveness


def _is_view(v: SSAValue) -> bool:
    return isinstance(v.owner, Operation) and v.owner.name in VIEW_OPS


def _tile_users(v: SSAValue) -> list[Operation]:
    """Every op using a tile, through its views (`memdesc_index`, `memdesc_trans`); a `tt.dot` using a
    `ttg.local_load` of it counts too (the dot re-reads its operands' tiles)."""
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


def buffers(module: Operation) -> list[Buffer]:
    """The module's buffers, in program order, with their live ranges."""
    ops = list(module.walk())
    index = {id(op): i for i, op in enumerate(ops)}
    last: dict[int, int] = {}  # the last op nested in each op
    for op in reversed(ops):
        end = index[id(op)]
        for region in op.regions:
            for block in region.blocks:
                for sub in block.ops:
                    end = max(end, last[id(sub)])
        last[id(op)] = end
    out: list[Buffer] = []
    for i, op in enumerate(ops):
        if op.name != "ttg.local_alloc":
            size = scratch_bytes(op)
            if size:
                out.append(Buffer(op, size, i, i, is_tile=False))
            continue
        end = i
        users = _tile_users(op.results[0])
        for user in users:
            top = user  # the user, or the loop around it that the alloc is not in
            while top.parent_op() is not None and not top.parent_op().is_ancestor(op):
                top = top.parent_op()
            end = max(end, last[id(top)])
        tile = Buffer(op, memdesc_bytes(op.results[0].type), i, end, is_tile=True)
        tile.apart_from_scratch = not any(u.name == "ttg.local_dealloc" for u in users)
        out.append(tile)
    scratch_at = [b.start for b in out if not b.is_tile]
    for b in out:
        if b.is_tile and any(b.start <= i <= b.end for i in scratch_at):
            b.apart_from_scratch = True
    return out


# --------------------------------------------------------------------------- placement


def _place(buf: Buffer, placed: list[Buffer]) -> None:
    offset = 0
    for other in sorted(placed, key=lambda b: b.offset):
        if other.offset < offset + buf.size and offset < other.stop and buf.interferes(other):
            offset = align(other.stop, buf.alignment)
    buf.offset = offset
    placed.append(buf)


def allocate(module: Operation) -> Allocation:
    """Offsets for every buffer of `module` (see the module docstring)."""
    bufs = buffers(module)
    scratch = [b for b in bufs if not b.is_tile]
    tiles = [b for b in bufs if b.is_tile]
    order = [b for b in scratch if b.small] + [b for b in scratch if not b.small]
    order += sorted(tiles, key=lambda b: (-b.size, b.start))
    placed: list[Buffer] = []
    for b in order:
        _place(b, placed)
    alloc = Allocation()
    for b in bufs:
        alloc.offsets[b.owner] = b.offset
        alloc.sizes[b.owner] = b.size
        alloc.total = max(alloc.total, b.stop if b.is_tile else align(b.stop))
    return alloc


# --------------------------------------------------------------------------- reading it back


def offset_of(op: Operation) -> int | None:
    """The `allocation.offset` the allocate-shared-memory pass gave `op` (None: none)."""
    attr = op.attributes.get(OFFSET_ATTR)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def shared_total(module: Operation) -> int:
    """The kernel's shared-memory bytes (`ttg.shared`; 0 when the module has none)."""
    attr = module.attributes.get(SHARED_ATTR)
    return attr.value.data if isinstance(attr, IntegerAttr) else 0


def read_allocation(module: Operation) -> Allocation:
    """The allocation the pass recorded in `module`'s attributes; ValueError when a buffer
    has no offset or ends past `ttg.shared` (the pass did not run, or the IR changed)."""
    alloc = Allocation(total=shared_total(module))
    for op in module.walk():
        if op.name == "ttg.local_alloc":
            size = memdesc_bytes(op.results[0].type)
        else:
            size = scratch_bytes(op)
            if not size:
                continue
        offset = offset_of(op)
        if offset is None:
            raise ValueError(
                f"{op.name} needs {size} bytes of shared memory but has no {OFFSET_ATTR}: "
                "run allocate-shared-memory first"
            )
        if offset + size > alloc.total:
            raise ValueError(f"{op.name}: its shared memory ends past {SHARED_ATTR} = {alloc.total}")
        alloc.offsets[op] = offset
        alloc.sizes[op] = size
    return alloc


__all__ = [
    "OFFSET_ATTR",
    "SHARED_ATTR",
    "SMALL",
    "VIEW_OPS",
    "Allocation",
    "Buffer",
    "allocate",
    "buffers",
    "offset_of",
    "read_allocation",
    "shared_total",
]
