"""`tt.gather`: warp shuffles when the gathered axis lives within each warp, shared memory
otherwise (the choice is `tritium.analysis.gather_plan.warp_local`'s).

    %g = tt.gather %src[%idx] {axis = 0 : i32} : (tensor<64xf32, #src>, tensor<128xi32, #b>) -> ...
    warp-local (#src: 2 registers x 32 lanes, whole in every warp), per result register:
        c    = idx                                  (the source coordinate along the axis)
        lane = (c >> 1) & 31, reg = c & 1           (bit picks of the source layout's bases)
        v    = select(reg == 1, shfl.idx(src[1], lane), shfl.idx(src[0], lane))
    shared memory: st.shared of every source register at its row-major slot, bar.sync,
        one ld.shared per result register at slot(c, the result's other coordinates)

A result register's source coordinate is its own coordinate with the axis replaced by
the index; its lane and register in the source layout are bit picks of that coordinate
(`gather_plan.source_bits`). Register bits that come from the result's own register part
are constants (`fixed`), so only the source registers that can match are shuffled, and
the select compares the run-time bits alone (`which`) against each candidate's:

    #src registers [(0,1), (4,0)], result register 1 at row 4 + warp (#dst registers [(4,0)])
        bit 1 (row 4) is fixed = 1, bit 0 (column & 1) is read:  which = idx & 1
        v = select(which == 1, shfl.idx(src[3], lane), shfl.idx(src[2], lane))

Indices are taken modulo the axis size (an index out of range is undefined behaviour, as
upstream; the interpreter reports it).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.analysis.gather_plan import source_bits, warp_local
from tritium.analysis.shared_bytes import element_bytes
from tritium.codegen.lower.context import FunctionLowering, lowers, unsupported
from tritium.codegen.lower.shared import (
    barrier,
    load_shared,
    offset_value,
    scratch_offset,
    shuffle_idx,
    store_shared,
    sync,
    thread_offset,
    vector_width,
)
from tritium.codegen.lower.types import i32, llvm_type
from tritium.ir.layouts import LinearLayout


def _index_i32(ctx: FunctionLowering, v: ir.Value, size: int) -> ir.Value:
    """The index as an i32 in [0, size) (size a power of two)."""
    b = ctx.builder
    w = v.type.width
    if w > 32:
        v = b.trunc(v, i32)
    elif w < 32:
        v = b.sext(v, i32)
    return b.and_(v, ir.Constant(i32, size - 1))


def _coords(ctx: FunctionLowering, layout: LinearLayout, r: int) -> list[ir.Value]:
    """Register `r`'s coordinate, one i32 per dim (thread part xor register part)."""
    b = ctx.builder
    out = []
    for t, c in zip(ctx.threads.thread_coords(layout), layout.register_coord(r)):
        if isinstance(t, ir.Constant) and not t.constant:
            out.append(ir.Constant(i32, c))
        else:
            out.append(b.xor(t, ir.Constant(i32, c)) if c else t)
    return out


def _thread_bits(layout: LinearLayout) -> list[int]:
    """Per dim, the coordinate bits some lane or warp basis moves."""
    bits = [0] * layout.rank
    for base in layout.lane + layout.warp:
        for d, x in enumerate(base):
            bits[d] |= x
    return bits


def _bit(ctx: FunctionLowering, c: ir.Value, shift: int, to: int) -> ir.Value:
    """Bit `shift` of `c`, moved to bit `to`."""
    b = ctx.builder
    x = b.and_(b.lshr(c, ir.Constant(i32, shift)) if shift else c, ir.Constant(i32, 1))
    return b.shl(x, ir.Constant(i32, to)) if to else x


def _shuffled(ctx, op, src, dst, regs, idx) -> list[ir.Value]:
    b = ctx.builder
    axis = op.axis.value.data
    reg_bits, lane_bits = source_bits(src.register), source_bits(src.lane)
    dst_thread = _thread_bits(dst)
    out: list[ir.Value] = []
    done: dict[tuple[int, ...], ir.Value] = {}  # register part -> value (replicas)
    for r in range(dst.num_registers):
        key = dst.register_coord(r)
        if key in done:
            out.append(done[key])
            continue
        coord = _coords(ctx, dst, r)
        coord[axis] = _index_i32(ctx, idx[r], src.shape[axis])
        lane = None
        for bit in lane_bits:
            x = _bit(ctx, coord[bit.dim], bit.shift, bit.bit)
            lane = x if lane is None else b.or_(lane, x)
        lane = lane if lane is not None else ir.Constant(i32, 0)
        # source registers that can hold the element: register bits fixed by the
        # result's register part are known now (`fixed`), the others are read at run
        # time (`which`: those bits of the register index alone)
        fixed, free = 0, []
        for bit in reg_bits:
            dynamic = bit.dim == axis or dst_thread[bit.dim] >> bit.shift & 1
            if dynamic:
                free.append(bit)
            elif dst.register_coord(r)[bit.dim] >> bit.shift & 1:
                fixed |= 1 << bit.bit
        which = None
        for bit in free:
            x = _bit(ctx, coord[bit.dim], bit.shift, bit.bit)
            which = x if which is None else b.or_(which, x)
        choices = sorted(sum(1 << f.bit for k, f in enumerate(free) if m >> k & 1)
                         for m in range(1 << len(free)))  # fmt: skip
        value = shuffle_idx(ctx, regs[fixed | choices[0]], lane)
        for j in choices[1:]:
            hit = b.icmp_unsigned("==", which, ir.Constant(i32, j))
            value = b.select(hit, shuffle_idx(ctx, regs[fixed | j], lane), value)
        out.append(value)
        done[key] = value
    return out


def _through_smem(ctx, op, src, dst, regs, idx) -> list[ir.Value]:
    b = ctx.builder
    axis = op.axis.value.data
    shape = src.shape
    strides, stride = [0] * len(shape), 1
    for d in reversed(range(len(shape))):
        strides[d], stride = stride, stride * shape[d]
    strides = tuple(strides)
    size = element_bytes(op.src.type)
    base = scratch_offset(op)
    ty = llvm_type(op.src.type)

    def address(slot: ir.Value) -> ir.Value:
        return b.add(b.mul(slot, ir.Constant(i32, size)), ir.Constant(i32, base))

    sync(ctx, op)
    thread, div = thread_offset(ctx, src, strides)
    slots = [sum(c * s for c, s in zip(src.register_coord(r), strides)) for r in range(len(regs))]
    v = vector_width(slots, div, max(1, 16 // size))
    for g in range(0, len(regs), v):
        if not g & src.free_register_mask:
            store_shared(ctx, address(offset_value(ctx, thread, slots[g])), regs[g : g + v], None)
    barrier(ctx)
    out: list[ir.Value] = []
    done: dict[tuple[int, ...], ir.Value] = {}  # register part -> value (replicas)
    for r in range(dst.num_registers):
        key = dst.register_coord(r)
        if key not in done:
            coord = _coords(ctx, dst, r)
            coord[axis] = _index_i32(ctx, idx[r], shape[axis])
            slot = None
            for c, s in zip(coord, strides):
                term = c if s == 1 else b.mul(c, ir.Constant(i32, s))
                slot = term if slot is None else b.add(slot, term)
            done[key] = load_shared(ctx, address(slot), ty, 1)[0]
        out.append(done[key])
    return out


@lowers("tt.gather")
def gather(ctx: FunctionLowering, op: Operation) -> None:
    src, dst = ctx.layout(op.src.type), ctx.layout(op.result.type)
    if ctx.layout(op.indices.type) != dst:
        raise unsupported(op, "the indices must be in the result's layout")
    regs, idx = ctx.get(op.src), ctx.get(op.indices)
    if warp_local(op):
        out = _shuffled(ctx, op, src, dst, regs, idx)
    else:
        out = _through_smem(ctx, op, src, dst, regs, idx)
    ctx.set(op.result, out)
