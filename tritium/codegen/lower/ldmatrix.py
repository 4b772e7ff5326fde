"""`ttg.local_load` of an mma operand with `ldmatrix`: four 8x8 b16 matrices per instruction.

    %a = ttg.local_load %s : !ttg.memdesc<64x32xf16, #shared, ...>
                             -> tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
    -> ldmatrix.sync.aligned.m8n8.x4.shared.b16 {a0a1, a2a3, a4a5, a6a7}, [addr];   (K contiguous)
       ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {...}, [addr];             (M / N contiguous)

An operand register holds `kWidth` consecutive K elements in 32 bits (a *word*: 2 halves,
or one tf32). Matrix j of an ldmatrix is one word of every lane: lane 4g + t receives row
g, bytes 4t..4t+3 of it, which is exactly where the dot-operand layout puts word j when
its lane bases are (K: one word, two words; M or N: 1, 2, 4) -- they always are. So:

* non-transposed (the tile is contiguous along K): matrix row g is the 16 bytes at
  (M-or-N = base + g, K = base .. base + 4 words);
* transposed (`.trans`, 16-bit only; the tile is contiguous along M or N): row g is the
  8 elements at (K = base + g, M-or-N = base .. base + 8), and the instruction hands
  lane 4g + t the elements (K = 2t, 2t + 1) of column g.

Lane L supplies the address of row L % 8 of matrix L / 8. That address is itself a linear
layout over (lane, warp) -- lane bits 0-2 step the row, bits 3-4 pick the matrix, i.e.
the register bases of word-index bits 0 and 1 -- so it goes through the same
thread-offset / XOR / immediate split as every other tile access (local_memory.py).
Each instruction loads words 4i .. 4i+3 of the thread (x2 / x1 when fewer are left).
tf32 operands contiguous along M or N have no ldmatrix (it transposes 16-bit elements
only): they take the plain ld.shared path, as upstream's do.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.codegen.lower.context import FunctionLowering
from tritium.codegen.lower.local_memory import TileAddressing, addressing
from tritium.codegen.lower.types import i32, llvm_type
from tritium.ir.layouts import LinearLayout
from tritium.ir.ttg_mma import DotOperandEncodingAttr, NvidiaMmaEncodingAttr
from tritium.ir.types import bitwidth, encoding_of


def _unit(rank: int, dim: int, value: int) -> tuple[int, ...]:
    return tuple(value if d == dim else 0 for d in range(rank))


def ldmatrix_plan(acc: TileAddressing, enc: DotOperandEncodingAttr, bits: int):
    """(address layout, transposed, words per thread, words per instruction), or None
    when ldmatrix cannot produce this layout from this tile."""
    if not isinstance(enc.parent, NvidiaMmaEncodingAttr) or bits not in (16, 32):
        return None
    layout, tile = acc.layout, acc.tile
    rank = layout.rank
    k = enc.k_dim
    other = (rank - 2) if enc.opIdx == 0 else (rank - 1)
    per_word = 32 // bits
    if enc.kWidth != per_word or layout.num_registers % per_word:
        return None
    if any(layout.register[i] != _unit(rank, k, 1 << i) for i in range(per_word.bit_length() - 1)):
        return None
    want = [_unit(rank, k, per_word), _unit(rank, k, 2 * per_word)]
    want += [_unit(rank, other, 1), _unit(rank, other, 2), _unit(rank, other, 4)]
    if list(layout.lane) != want:
        return None
    transposed = tile.order[0] != k
    if transposed and bits != 16:
        return None
    if tile.contiguous * bits < 128:  # a matrix row is 16 contiguous bytes
        return None
    words = layout.num_registers // per_word
    x = 4 if words % 4 == 0 else 2 if words % 2 == 0 else 1
    step = _unit(rank, k if transposed else other, 1)
    lane = [tuple(s * m for s in step) for m in (1, 2, 4)]
    word_bit = per_word.bit_length() - 1
    for j in range(2):
        idx = word_bit + j
        use = (1 << j) < x and idx < len(layout.register)
        lane.append(layout.register[idx] if use else (0,) * rank)
    address_layout = LinearLayout(layout.shape, (), tuple(lane), layout.warp)
    return address_layout, transposed, words, x


def try_ldmatrix(ctx: FunctionLowering, op: Operation, base: ir.Value) -> list[ir.Value] | None:
    enc = encoding_of(op.result.type)
    if not isinstance(enc, DotOperandEncodingAttr):
        return None
    acc = addressing(ctx, op.result.type, op.src.type)
    bits = bitwidth(op.result.type)
    plan = ldmatrix_plan(acc, enc, bits)
    if plan is None:
        return None
    address_layout, transposed, words, x = plan
    layout = acc.layout
    addr_acc = TileAddressing(address_layout, acc.tile, acc.elem_bytes)
    thread = addr_acc.thread_offset(ctx)
    per_word = 32 // bits
    ty = llvm_type(op.result.type)
    name = f"llvm.nvvm.ldmatrix.sync.aligned.m8n8.x{x}{'.trans' if transposed else ''}.b16"
    ret = i32 if x == 1 else ir.LiteralStructType([i32] * x)
    fn = ctx.intrinsic(name, ret, [ir.PointerType(addrspace=3)])
    b = ctx.builder
    from tritium.codegen.lower.shared import smem_pointer

    out: list[ir.Value] = []
    for first in range(0, words, x):
        coord = layout.register_coord(first * per_word)
        addr = addr_acc.address(ctx, base, coord, thread)
        res = b.call(fn, [smem_pointer(ctx, addr)])
        got = [res] if x == 1 else [b.extract_value(res, j) for j in range(x)]
        for word in got:
            out += _unpack(b, word, ty, per_word)
    return out


def _unpack(b: ir.IRBuilder, word: ir.Value, ty: ir.Type, per_word: int) -> list[ir.Value]:
    if per_word == 1:
        return [b.bitcast(word, ty)]
    vec = b.bitcast(word, ir.VectorType(ty, per_word))
    return [b.extract_element(vec, ir.Constant(i32, j)) for j in range(per_word)]


__all__ = ["ldmatrix_plan", "try_ldmatrix"]
