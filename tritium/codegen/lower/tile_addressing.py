"""Where a distributed layout's elements lie inside a shared-memory tile, per thread.

    TileAddressing(layout of tensor<64x32xf16, #blocked>, tile of #swizzled_shared, 2 bytes)
      register r of this thread  ->  base + ((thread ^ x_r) + y_r)    (an i32 byte offset)

The element at coordinate c of a register is at `tile.offset(c)`, which is linear over
GF(2) in c's bits (`tritium.ir.shared_layout`). A register's coordinate is its thread part
(lanes and warps) XOR its register part, so its offset is `thread_offset ^ register_offset`.
The thread part is computed once in the entry block (the swizzle formula on the thread's
coordinate); the register part is a constant whose bits that a thread offset may also set
(`span`) are XORed in, the rest added: `base + ((thread ^ x) + y)`, y ending up as the
instruction's immediate. Used by tile loads and stores (local_memory.py), ldmatrix
(ldmatrix.py) and async copies (async_copy.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from tritium.analysis.shared_bytes import element_bytes
from tritium.codegen.lower.context import FunctionLowering
from tritium.codegen.lower.types import i32
from tritium.ir.layouts import LinearLayout
from tritium.ir.shared_layout import SharedTile, memdesc_tile
from tritium.ir.ttg_mma import MemDescType


def _log2(n: int) -> int:
    return n.bit_length() - 1


@dataclass(frozen=True)
class TileAddressing:
    """Byte offsets, inside one tile, of the elements a distributed layout's threads hold."""

    layout: LinearLayout
    tile: SharedTile
    elem_bytes: int

    @property
    def span(self) -> int:
        """Bits (of byte offsets) that the thread part of an offset may set."""
        out = 0
        for b in self.layout.lane + self.layout.warp:
            out |= self.tile.offset(b) * self.elem_bytes
        return out

    def register_parts(self, coord) -> tuple[int, int]:
        """(xor part, add part) in bytes of a register coordinate's offset."""
        off = self.tile.offset(coord) * self.elem_bytes
        span = self.span
        return off & span, off & ~span

    def thread_offset(self, ctx: FunctionLowering) -> ir.Value | None:
        """This thread's part of every offset, in bytes (entry block; None when 0)."""
        if not self.span:
            return None
        return ctx.threads.entry_value(("tile-thread", self), lambda: self._emit_thread(ctx))

    def _emit_thread(self, ctx: FunctionLowering) -> ir.Value:
        b = ctx.threads.entry_builder
        coords = ctx.threads.thread_coords(self.layout)
        t = self.tile
        c, r = coords[t.order[0]], coords[t.order[1]]
        const = lambda v: ir.Constant(i32, v)  # noqa: E731
        zero = lambda v: isinstance(v, ir.Constant)  # noqa: E731  (thread_coords' 0)
        col = None if zero(c) else c
        if t.swizzled and not zero(r):
            phase = b.and_(b.lshr(r, const(_log2(t.per_phase))), const(t.max_phase - 1))
            moved = b.shl(phase, const(_log2(t.vec)))
            col = moved if col is None else b.xor(col, moved)
        if t.slab and not zero(c) and t.slab < t.shape[t.order[0]]:
            # nvmma slabs: column bits above the slab's width select the slab
            slab = b.and_(c, const(~(t.slab - 1) & 0xFFFFFFFF))
            col = b.add(b.xor(col, slab), b.mul(slab, const(t.shape[t.order[1]])))
        off = None if zero(r) else b.mul(r, const(t.row_length))
        if col is not None:
            off = col if off is None else b.add(off, col)
        return b.shl(off, const(_log2(self.elem_bytes))) if self.elem_bytes > 1 else off

    def vector_width(self, max_bytes: int = 16) -> int:
        """Registers per access: consecutive along the tile's contiguous dim, aligned, in
        one swizzle group, and not split by the thread's own coordinate."""
        d = self.tile.order[0]
        v = min(max(1, max_bytes // self.elem_bytes), self.tile.contiguous)
        v = min(v, self.layout.contiguous_registers(d), self.layout.thread_divisibility(d))
        return max(1, 1 << _log2(max(1, v)))

    def address(
        self, ctx: FunctionLowering, base: ir.Value, coord, thread: ir.Value | None
    ) -> ir.Value:
        """`base + ((thread ^ x) + y)` as an i32 byte offset in the shared window."""
        b = ctx.builder
        x, y = self.register_parts(coord)
        off = thread
        if x:
            off = ir.Constant(i32, x) if off is None else b.xor(off, ir.Constant(i32, x))
        if y:
            off = ir.Constant(i32, y) if off is None else b.add(off, ir.Constant(i32, y))
        return base if off is None else b.add(base, off)


def addressing(ctx: FunctionLowering, tensor_type, mem_type: MemDescType) -> TileAddressing:
    layout = ctx.layout(tensor_type)
    return TileAddressing(layout, memdesc_tile(mem_type), element_bytes(tensor_type))


__all__ = ["TileAddressing", "addressing"]
