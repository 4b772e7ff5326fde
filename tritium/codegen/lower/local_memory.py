"""Shared-memory tiles: `ttg.local_alloc`, `memdesc_index`, `memdesc_trans`, `local_load`,
`local_store`, `local_dealloc`.

    %m = ttg.local_alloc {allocation.offset = 4096 : i32} : () -> !ttg.memdesc<3x64x32xf16, ...>
      -> the i32 byte offset 4096 (a memdesc value is one register: where its tile starts)
    %s = ttg.memdesc_index %m[%i]          -> 4096 + i * 4096
    %t = ttg.memdesc_trans %s              -> the same offset (its type's permuted shared
                                              order addresses the same bytes)
    %x = ttg.local_load %s : ... -> tensor<64x32xf16, #blocked>
      -> ld.shared.v4.b32 per 8 halves contiguous in the tile (ldmatrix for mma operands:
         ldmatrix.py)
    ttg.local_store %x, %s  /  ttg.local_alloc %x
      -> st.shared.v4.b32 ...

Addresses inside a tile: `TileAddressing` (tile_addressing.py).

Barriers are `gpu.barrier` ops the membar pass placed (tritium.analysis.membar): before a
tile access racing with an earlier one, and before a `local_alloc` without a source and
a `local_dealloc`. Async copies into tiles and their waits are in async_copy.py.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects.builtin import IntegerAttr, TensorType
from xdsl.ir import Operation

from tritium.codegen.lower.context import FunctionLowering, lowers, unsupported
from tritium.codegen.lower.ldmatrix import try_ldmatrix
from tritium.codegen.lower.shared import load_shared, store_shared
from tritium.codegen.lower.tile_addressing import addressing
from tritium.codegen.lower.types import i32, llvm_type
from tritium.ir.layouts import elements_per_thread
from tritium.ir.ttg_mma import (
    DotOperandEncodingAttr,
    MemDescType,
    NvidiaMmaEncodingAttr,
    memdesc_bytes,
)
from tritium.ir.types import bitwidth, element_type, encoding_of

OFFSET_ATTR = "allocation.offset"


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


@lowers("ttg.memdesc_trans")
def memdesc_trans(ctx: FunctionLowering, op: Operation) -> None:
    ctx.set(op.result, [ctx.get1(op.src)])


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
    _check_tile(ctx, op.result.type, op.src.type)
    if read_by_mma(op):
        return  # dot_mma.py reads the tile itself, step by step
    base = ctx.get1(op.src)
    regs = try_ldmatrix(ctx, op, base)
    if regs is None:
        regs = load_tile(ctx, op.result.type, base, op.src.type)
    ctx.set(op.result, regs)


def read_by_mma(op: Operation) -> bool:
    """Whether every use of a local_load is an mma.sync dot, which then reads the tile
    itself, K step by K step (fewer live registers, loads next to their mmas). The dots
    are in the load's block, or anywhere when the tile is written once, by its
    `local_alloc`: attention's Q, loaded before the loop, is re-read by each iteration's
    dot with ldmatrix as upstream does, not held in registers across the loop. A load
    that `_read_early` picks is read where it stands instead, as upstream reads them all."""
    enc = encoding_of(op.result.type)
    if not isinstance(enc, DotOperandEncodingAttr) or not isinstance(
        enc.parent, NvidiaMmaEncodingAttr
    ):
        return False
    uses = list(op.result.uses)
    fixed = _written_once(op.operands[0])
    return (
        bool(uses)
        and all(
            u.operation.name == "tt.dot"
            and u.index < 2
            and (fixed or u.operation.parent_block() is op.parent_block())
            and isinstance(encoding_of(u.operation.results[0].type), NvidiaMmaEncodingAttr)
            for u in uses
        )
        and not _read_early(op)
    )


# 32-bit registers per thread (see _read_early); the attention forward's V at D = 64 needs
# 132 (64 for V, 36 carried, 32 for the scores), the backward's far operands 160
EARLY_READ_REGISTERS = 144


def _read_early(op: Operation) -> bool:
    """Whether a local_load read by a later dot of its block, with another dot between
    them, is read with ldmatrix where it stands (upstream's place) rather than step by step
    inside its dot. Early, its registers stay live across the dot between; that pays when
    few other registers are live there: the operand, the loop's carried tensors and the
    results of the dots between fit in `EARLY_READ_REGISTERS`. ptxas then schedules the
    attention forward's loop (V read before Q K^T, used by P V) in 146 registers instead
    of 182 (64x64 tiles, 4 warps, D = 64: three programs per SM instead of two); for the
    backward's operands, with two accumulators carried, the early read spills."""
    block = op.parent_block()
    users = [u.operation for u in op.result.uses]
    if block is None or any(u.parent_block() is not block for u in users):
        return False
    first = min(block.get_operation_index(u) for u in users)
    between = [
        o for o in block.ops if o.name == "tt.dot" and o not in users
        and block.get_operation_index(o) < first
        and block.get_operation_index(o) > block.get_operation_index(op)
    ]  # fmt: skip
    if not between:
        return False
    loop = block.parent_op()
    carried = list(block.args[1:]) if loop is not None and loop.name == "scf.for" else []
    live = [op.result] + carried + [o.results[0] for o in between]
    return sum(_registers32(v.type) for v in live) <= EARLY_READ_REGISTERS


def _registers32(t) -> int:
    """32-bit registers per thread a value of type `t` takes (0 for non-tensors)."""
    if not isinstance(t, TensorType):
        return 0
    return -(-elements_per_thread(t) * bitwidth(element_type(t)) // 32)


def _written_once(mem) -> bool:
    """A tile that its `local_alloc` fills and nothing writes afterwards."""
    alloc = mem.owner
    return (
        isinstance(alloc, Operation)
        and alloc.name == "ttg.local_alloc"
        and bool(alloc.operands)
        and all(u.operation.name == "ttg.local_load" for u in alloc.results[0].uses)
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
    "load_registers",
    "load_tile",
    "read_by_mma",
    "store_tile",
]
