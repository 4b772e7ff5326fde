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
thread-offset / XOR / immediate split as every other tile access (tile_addressing.py).
Each instruction loads words 4i .. 4i+3 of the thread (x2 / x1 when fewer are left).
tf32 operands contiguous along M or N have no ldmatrix (it transposes 16-bit elements
only): they take the plain ld.shared path, as upstream's do. 8-bit operands (int8, fp8:
kWidth 4, a word is 4 K elements) contiguous along K use the same non-transposed
instruction (a matrix row is 16 K elements); contiguous along M or N, likewise the plain
path (upstream's "cannot transpose a non-16-bit matrix"), so an int8 / fp8 GEMM wants B
stored K-major (N x K, as torch._int_mm / torch._scaled_mm take it).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.codegen.lower.context import FunctionLowering
from tritium.codegen.lower.shared import smem_pointer
from tritium.codegen.lower.tile_addressing import TileAddressing, addressing
from tritium.codegen.lower.types import i32, llvm_type
from tritium.ir.layouts import LinearLayout
from tritium.ir.ttg_mma import DotOperandEncodingAttr, NvidiaMmaEncodingAttr
from tritium.ir.types import bitwidth, encoding_of


def _unit(rank: int, dim: int, value: int) -> tuple[int, ...]:
    return tuple(value if d == dim else 0 for d in range(rank))


def ldmatrix_plan(acc: TileAddressing, enc: DotOperandEncodingAttr, bits: int):
    """(address layout, transposed, words per thread, words per instruction), or None
    when ldmatrix cannot produce this layout from this tile."""
    if not isinstance(enc.parent, NvidiaMmaEncodingAttr) or bits not in (8, 16, 32):
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
    if list(layout.lane) != fragment_lanes(rank, k, other, per_word):
        return None
    transposed = tile.order[0] != k
    if transposed and bits != 16:
        return None
    if tile.contiguous * bits < 128:  # a matrix row is 16 contiguous bytes
        return None
    words = layout.num_registers // per_word
    x = 4 if words % 4 == 0 else 2 if words % 2 == 0 else 1
    row = k if transposed else other
    address_layout = row_addresses(layout, row, per_word.bit_length() - 1, x)
    return address_layout, transposed, words, x


def fragment_lanes(rank: int, word_dim: int, row_dim: int, per_word: int) -> list[tuple[int, ...]]:
    """The lane bases of an m8n8 b16 fragment (what ldmatrix hands out and stmatrix takes):
    lane 4g + t holds word t of row g, a word being `per_word` elements along `word_dim`."""
    lanes = [_unit(rank, word_dim, per_word), _unit(rank, word_dim, 2 * per_word)]
    return lanes + [_unit(rank, row_dim, 1), _unit(rank, row_dim, 2), _unit(rank, row_dim, 4)]


def row_addresses(layout: LinearLayout, row_dim: int, word_bit: int, x: int) -> LinearLayout:
    """Which row each lane addresses in an ldmatrix / stmatrix `.x{x}` of `layout`'s words:
    lane L row L % 8 (stepping `row_dim`) of matrix L / 8, matrix j being the thread's word
    j, i.e. word-index bits 0 and 1 (the register bases from `word_bit` on); warps as
    `layout`'s."""
    rank = layout.rank
    lane = [_unit(rank, row_dim, m) for m in (1, 2, 4)]
    for j in range(2):
        idx = word_bit + j
        use = (1 << j) < x and idx < len(layout.register)
        lane.append(layout.register[idx] if use else (0,) * rank)
    return LinearLayout(layout.shape, (), tuple(lane), layout.warp)


class LdmatrixReader:
    """The registers of an mma operand's `local_load`, read from its tile with ldmatrix
    one instruction (x4: four words) at a time, when first asked for: the dot reads
    each K step's fragments just before its mma.sync instructions (dot_mma.py)."""

    def __init__(self, ctx: FunctionLowering, result_type, base: ir.Value, mem_type, plan):
        address_layout, self.transposed, self.words, self.x = plan
        acc = addressing(ctx, result_type, mem_type)
        self.ctx, self.base = ctx, base
        self.layout = acc.layout
        self.addr_acc = TileAddressing(address_layout, acc.tile, acc.elem_bytes)
        self.per_word = 32 // bitwidth(result_type)
        self.ty = llvm_type(result_type)
        self.regs: dict[int, ir.Value] = {}

    @classmethod
    def of(cls, ctx: FunctionLowering, result_type, base: ir.Value, mem_type):
        """A reader, or None when ldmatrix cannot produce this layout from this tile."""
        enc = encoding_of(result_type)
        if not isinstance(enc, DotOperandEncodingAttr):
            return None
        acc = addressing(ctx, result_type, mem_type)
        plan = ldmatrix_plan(acc, enc, bitwidth(result_type))
        return None if plan is None else cls(ctx, result_type, base, mem_type, plan)

    def fetch(self, registers) -> None:
        """Emit the instructions holding `registers` that were not emitted yet."""
        firsts = sorted({(r // self.per_word) // self.x * self.x for r in registers})
        for first in firsts:
            if first * self.per_word not in self.regs:
                self._load(first)

    def get(self, r: int) -> ir.Value:
        self.fetch([r])
        return self.regs[r]

    def all(self) -> list[ir.Value]:
        self.fetch(range(self.layout.num_registers))
        return [self.regs[r] for r in range(self.layout.num_registers)]

    def _load(self, first: int) -> None:
        ctx, x = self.ctx, self.x
        name = f"llvm.nvvm.ldmatrix.sync.aligned.m8n8.x{x}{'.trans' if self.transposed else ''}.b16"
        ret = i32 if x == 1 else ir.LiteralStructType([i32] * x)
        fn = ctx.intrinsic(name, ret, [ir.PointerType(addrspace=3)])
        b = ctx.builder
        coord = self.layout.register_coord(first * self.per_word)
        thread = self.addr_acc.thread_offset(ctx)
        addr = self.addr_acc.address(ctx, self.base, coord, thread)
        res = b.call(fn, [smem_pointer(ctx, addr)])
        got = [res] if x == 1 else [b.extract_value(res, j) for j in range(x)]
        r = first * self.per_word
        for word in got:
            for v in _unpack(b, word, self.ty, self.per_word):
                self.regs[r] = v
                r += 1


def try_ldmatrix(ctx: FunctionLowering, op: Operation, base: ir.Value) -> list[ir.Value] | None:
    reader = LdmatrixReader.of(ctx, op.result.type, base, op.src.type)
    return None if reader is None else reader.all()


def _unpack(b: ir.IRBuilder, word: ir.Value, ty: ir.Type, per_word: int) -> list[ir.Value]:
    if per_word == 1:
        return [b.bitcast(word, ty)]
    vec = b.bitcast(word, ir.VectorType(ty, per_word))
    return [b.extract_element(vec, ir.Constant(i32, j)) for j in range(per_word)]


__all__ = ["LdmatrixReader", "fragment_lanes", "ldmatrix_plan", "row_addresses", "try_ldmatrix"]
