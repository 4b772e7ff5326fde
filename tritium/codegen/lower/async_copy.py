"""Asynchronous copies global -> shared: `ttg.async_copy_global_to_local`,
`ttg.async_commit_group`, `ttg.async_wait` (sm_80+ cp.async).

    %t = ttg.async_copy_global_to_local %ptrs, %s mask %m : tensor<128x32x!tt.ptr<f16>, #blocked> -> <128x32xf16, #shared, ...>
      -> per 8 halves (16 bytes, contiguous in global memory and in the tile):
         cp.async.cg.shared.global [ $0 + 0 ], [ $1 + 0 ], 0x10, $2;    ($2 = m ? 16 : 0)
    %g = ttg.async_commit_group          -> cp.async.commit_group;
    %w = ttg.async_wait {num = 2 : i32}  -> cp.async.wait_group 2;   (then gpu.barrier: bar.sync 0)

A masked-off element is zero-filled (source size 0, nothing read), which is why the
pipeliner only moves loads whose `other` is absent or zero. 16-byte copies use `.cg`
(through L2 only), smaller ones `.ca`, as upstream. The vector width is the smaller of
what global memory allows (the axis info's `vector_width`, as for `tt.load`: the one the
software pipeliner decided with) and what the tile allows (tile_addressing.py); cp.async moves
4, 8 or 16 bytes, so narrower groups (one fp16) fall back to a predicated load and a
shared store (correct, not asynchronous).

Tokens carry no data: each is the constant 0. `cp.async.wait_group N` only covers the
calling thread's copies, so the membar pass puts a `gpu.barrier` right after each wait:
after it every thread's copies of the waited-for groups are visible, and every read issued
before it is done. A copy into a stage that was read since the last barrier gets one
first (tritium.analysis.membar).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.analysis.shared_bytes import element_bytes
from tritium.codegen.lower.context import FunctionLowering, lowers, unsupported
from tritium.codegen.lower.shared import smem_pointer, store_shared
from tritium.codegen.lower.tile_addressing import TileAddressing
from tritium.codegen.lower.types import i32, memory_type
from tritium.ir.arith import constant_value
from tritium.ir.shared_layout import memdesc_tile

TOKEN = ir.Constant(i32, 0)


def _asm(ctx: FunctionLowering, text: str, constraint: str, args: list[ir.Value]) -> None:
    fty = ir.FunctionType(ir.VoidType(), [a.type for a in args])
    ctx.builder.asm(fty, text, constraint, args, side_effect=True)


@lowers("ttg.async_copy_global_to_local")
def async_copy(ctx: FunctionLowering, op: Operation) -> None:
    if op.other is not None and constant_value(op.other) not in (0, 0.0):
        raise unsupported(op, "async copies zero-fill masked elements: `other` must be 0")
    b = ctx.builder
    # the pointers' layout, the buffer's element size (not a pointer's 8 bytes)
    mem = op.result_buf.type
    acc = TileAddressing(
        ctx.layout(op.src.type), memdesc_tile(mem), element_bytes(mem.element_type)
    )
    layout = acc.layout
    ptrs = ctx.get(op.src)
    masks = ctx.get(op.mask) if op.mask is not None else None
    eb = acc.elem_bytes
    v = min(acc.vector_width(), ctx.axis.vector_width(op))  # tile, global memory
    base = ctx.get1(op.result_buf)
    thread = acc.thread_offset(ctx)
    nbytes = v * eb
    if nbytes < 4:
        _sync_copy(ctx, op, acc, base, thread, ptrs, masks, v)
        ctx.set(op.token, [TOKEN])
        return
    cache = "cg" if nbytes == 16 else "ca"
    text = f"cp.async.{cache}.shared.global [ $0 + 0 ], [ $1 + 0 ], {hex(nbytes)}, $2;"
    sizes: dict[int, ir.Value] = {}
    for g in range(0, len(ptrs), v):
        if g & layout.free_register_mask:
            continue  # a duplicate register: the same element, copied once
        addr = acc.address(ctx, base, layout.register_coord(g), thread)
        dst = b.ptrtoint(smem_pointer(ctx, addr), i32)
        if masks is None:
            size = ir.Constant(i32, nbytes)
        else:
            m = masks[g]
            if id(m) not in sizes:
                sizes[id(m)] = b.select(m, ir.Constant(i32, nbytes), ir.Constant(i32, 0))
            size = sizes[id(m)]
        _asm(ctx, text, "r,l,r,~{memory}", [dst, ptrs[g], size])
    ctx.set(op.token, [TOKEN])


def _sync_copy(ctx, op, acc, base, thread, ptrs, masks, v) -> None:
    """Elements narrower than 4 bytes: a predicated global load, then a shared store."""
    from tritium.codegen.lower.memory import Words, _emit_load

    layout = acc.layout
    elem = memory_type(op.result_buf.type.element_type)
    words = Words(elem, v)
    zeros = [ir.Constant(elem, 0)] * v if masks is not None else None
    for g in range(0, len(ptrs), v):
        if g & layout.free_register_mask:
            continue
        pred = masks[g] if masks is not None else None
        vals = _emit_load(ctx, words, "ld.global" + words.suffix, ptrs[g], pred, zeros)
        addr = acc.address(ctx, base, layout.register_coord(g), thread)
        store_shared(ctx, addr, vals, None)


@lowers("ttg.async_commit_group")
def async_commit_group(ctx: FunctionLowering, op: Operation) -> None:
    _asm(ctx, "cp.async.commit_group;", "~{memory}", [])
    ctx.set(op.result, [TOKEN])


@lowers("ttg.async_wait")
def async_wait(ctx: FunctionLowering, op: Operation) -> None:
    _asm(ctx, f"cp.async.wait_group {op.num};", "~{memory}", [])
    ctx.set(op.result, [TOKEN])


__all__ = ["async_commit_group", "async_copy", "async_wait"]
