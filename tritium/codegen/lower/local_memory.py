"""Shared-memory tiles: `ttg.local_alloc`, `memdesc_index`, `local_load`, `local_store`,
`local_dealloc`.

    %m = ttg.local_alloc {allocation.offset = 4096 : i32} : () -> !ttg.memdesc<3x64x32xf16, ...>
      -> the i32 byte offset 4096 (a memdesc value is one register: where its tile starts)
    %s = ttg.memdesc_index %m[%i]          -> 4096 + i * 4096
    %x = ttg.local_load %s : ... -> tensor<64x32xf16, #blocked>
      -> ld.shared.v4.b32 per 8 halves contiguous in the tile (ldmatrix for mma operands:
         ldmatrix.py)
    ttg.local_store %x, %s  /  ttg.local_alloc %x
      -> st.shared.v4.b32 ...

Addresses (`TileAddressing`): the element at coordinate c of a register is at
`tile.offset(c)`, which is linear over GF(2) in c's bits (`tritium.ir.shared_layout`).
A register's coordinate is its thread part (lanes and warps) XOR its register part, so
its offset is `thread_offset ^ register_offset`. The thread part is computed once in the
entry block (the swizzle formula on the thread's coordinate); the register part is a
constant whose bits that a thread offset may also set (`span`) are XORed in, the rest
added: `base + ((thread ^ x) + y)`, y ending up as the instruction's immediate.

Barriers are `gpu.barrier` ops the membar pass placed (tritium.analysis.membar): before a
tile access racing with an earlier one, and before a `local_alloc` without a source and
a `local_dealloc`. Async copies into tiles and their waits are in async_copy.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation

from tritium.analysis.shared_bytes import element_bytes
from tritium.codegen.lower.context import FunctionLowering, lowers, unsupported
from tritium.codegen.lower.shared import load_shared, store_shared
from tritium.codegen.lower.types import i32, llvm_type
from tritium.ir.layouts import LinearLayout
from tritium.ir.shared_layout import SharedTile, memdesc_tile
from tritium.ir.ttg_mma import MemDescType, memdesc_bytes
from tritium.ir.types import element_type, encoding_of

OFFSET_ATTR = "allocation.offset"


# --------------------------------------------------------------------------- addressing


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
        return ctx._cached(("tile-thread", self), lambda: self._emit_thread(ctx))

    def _emit_thread(self, ctx: FunctionLowering) -> ir.Value:
        b = ctx.entry_builder
        coords = ctx.thread_coords(self.layout)
        t = self.tile
        c, r = coords[t.order[0]], coords[t.order[1]]
        const = lambda v: ir.Constant(i32, v)  # noqa: E731
        zero = lambda v: isinstance(v, ir.Constant)  # noqa: E731  (thread_coords' 0)
        col = None if zero(c) else c
        if t.swizzled and not zero(r):
            phase = b.and_(b.lshr(r, const(_log2(t.per_phase))), const(t.max_phase - 1))
            moved = b.shl(phase, const(_log2(t.vec)))
            col = moved if col is None else b.xor(col, moved)
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


# --------------------------------------------------------------------------- ops


@lowers("ttg.local_alloc")
def local_alloc(ctx: FunctionLowering, op: Operation) -> None:
    attr = op.attributes.get(OFFSET_ATTR)
    if not isinstance(attr, IntegerAttr):
        raise unsupported(op, "no allocation.offset: run allocate-shared-memory first")
    base = ir.Constant(i32, attr.value.data)
    ctx.set(op.result, [base])
    if op.src is not None:
        store_tile(ctx, op.src, base, op.result.type)


@lowers("ttg.local_store")
def local_store(ctx: FunctionLowering, op: Operation) -> None:
    store_tile(ctx, op.src, ctx.get1(op.dst), op.dst.type)


@lowers("ttg.local_dealloc")
def local_dealloc(ctx: FunctionLowering, op: Operation) -> None:
    pass  # (the gpu.barrier before it ends the reads of the buffer: membar pass)


@lowers("ttg.memdesc_index")
def memdesc_index(ctx: FunctionLowering, op: Operation) -> None:
    b = ctx.builder
    stride = memdesc_bytes(op.result.type)
    idx = ctx.get1(op.index)
    if idx.type != i32:
        idx = b.trunc(idx, i32) if idx.type.width > 32 else b.sext(idx, i32)
    ctx.set(op.result, [b.add(ctx.get1(op.src), b.mul(idx, ir.Constant(i32, stride)))])


def store_tile(ctx: FunctionLowering, value, base: ir.Value, mem_type: MemDescType) -> None:
    """Store a distributed tensor into a tile (st.shared, vectorized)."""
    _check_tile(ctx, value.type, mem_type)
    acc = addressing(ctx, value.type, mem_type)
    regs = ctx.get(value)
    thread = acc.thread_offset(ctx)
    v = acc.vector_width()
    layout = acc.layout
    for g in range(0, len(regs), v):
        if g & layout.free_register_mask:
            continue  # a duplicate of a register stored already
        addr = acc.address(ctx, base, layout.register_coord(g), thread)
        store_shared(ctx, addr, regs[g : g + v], None)


@lowers("ttg.local_load")
def local_load(ctx: FunctionLowering, op: Operation) -> None:
    from tritium.codegen.lower.ldmatrix import try_ldmatrix

    _check_tile(ctx, op.result.type, op.src.type)
    base = ctx.get1(op.src)
    if read_by_mma(op):
        ctx.tiles[op.result] = (base, op.src.type)  # dot_mma.py reads it step by step
        return
    regs = try_ldmatrix(ctx, op, base)
    if regs is None:
        regs = load_tile(ctx, op.result.type, base, op.src.type)
    ctx.set(op.result, regs)


def read_by_mma(op: Operation) -> bool:
    """Whether every use of a local_load is an mma.sync dot in its block, which then reads
    the tile itself, K step by K step (fewer live registers, loads next to their mmas)."""
    from tritium.ir.ttg_mma import DotOperandEncodingAttr, NvidiaMmaEncodingAttr

    enc = encoding_of(op.result.type)
    if not isinstance(enc, DotOperandEncodingAttr) or not isinstance(
        enc.parent, NvidiaMmaEncodingAttr
    ):
        return False
    uses = list(op.result.uses)
    return bool(uses) and all(
        u.operation.name == "tt.dot"
        and u.index < 2
        and u.operation.parent_block() is op.parent_block()
        and isinstance(encoding_of(u.operation.results[0].type), NvidiaMmaEncodingAttr)
        for u in uses
    )


def load_tile(ctx: FunctionLowering, tensor_type, base: ir.Value, mem_type) -> list[ir.Value]:
    """Each register of `tensor_type`'s layout from the tile (ld.shared, vectorized)."""
    layout = ctx.layout(tensor_type)
    got = load_registers(ctx, tensor_type, base, mem_type, range(layout.num_registers))
    return [got[r] for r in range(layout.num_registers)]


def load_registers(
    ctx: FunctionLowering, tensor_type, base: ir.Value, mem_type, wanted
) -> dict[int, ir.Value]:
    """Registers `wanted` of `tensor_type`'s layout from the tile, in vector loads of
    aligned register groups (a group is loaded when any of its registers is wanted)."""
    acc = addressing(ctx, tensor_type, mem_type)
    thread = acc.thread_offset(ctx)
    v = acc.vector_width()
    layout = acc.layout
    ty = llvm_type(tensor_type)
    out: dict[int, ir.Value] = {}
    loaded: dict[tuple, list[ir.Value]] = {}
    for g in sorted({r - r % v for r in wanted}):
        coord = layout.register_coord(g)
        if coord not in loaded:
            loaded[coord] = load_shared(ctx, acc.address(ctx, base, coord, thread), ty, v)
        for i, x in enumerate(loaded[coord]):
            out[g + i] = x
    return out


def _check_tile(ctx: FunctionLowering, tensor_type, mem_type) -> None:
    if len(mem_type.get_shape()) != 2:
        raise NotImplementedError("shared-memory tiles of rank 2 only (index a buffer first)")
    if element_type(tensor_type) != mem_type.element_type:
        raise NotImplementedError("local_load / local_store do not convert element types")


__all__ = [
    "TileAddressing",
    "addressing",
    "load_registers",
    "load_tile",
    "read_by_mma",
    "store_tile",
]
