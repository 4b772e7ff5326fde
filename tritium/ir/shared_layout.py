"""Shared-memory index maths: where element (r, c) of a swizzled tile lives.

    #shared = #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>
    on !ttg.memdesc<64x32xf32, #shared, ...>: rows along dim 0 (order[1]), 32 floats each
      row r, column c  ->  r * 32 + ((c / 4) ^ ((r / 1) % 8)) * 4 + c % 4

Groups of `vec` contiguous elements keep their order; row r moves group g to
`g ^ phase(r)`, so the 8 rows one `ldmatrix` (or one warp's column read) touches sit in
different banks. With powers of two everywhere the map is linear over GF(2) on the bits of
the coordinate: `offset(a ^ b) == offset(a) ^ offset(b)` (`SharedTile.offset_of_bits`).
The backend uses that to split an address into a per-thread part, computed once, and a
per-register constant: the constant's bits the thread part may also set are XORed in,
the others added (and folded into the instruction's immediate offset).

A memdesc of rank 3 (`3x64x32`: num_stages buffers) is a stack of such tiles; the
leading index is a whole-tile offset (`ttg.memdesc_index`).

`#ttg.nvmma_shared` (wgmma's operands) is the same swizzle on rows of exactly the
swizzle's width, with a longer contiguous dim cut into slabs of that width, each slab all
rows of it (`SharedTile.slab`):

    #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
    on !ttg.memdesc<64x128xf16, ...>: slabs of 64 halves (128 bytes), 64 rows each
      row r, column c  ->  (c / 64) * 64 * 64 + r * 64 + (((c % 64) / 8) ^ (r % 8)) * 8 + c % 8

(128-byte swizzle: 8 phases of one row; 64: 4 of two rows; 32: 2 of four rows; the tile
1024-byte aligned, so these are the address bits the hardware swizzles).

`operand_shared_encoding` chooses upstream's swizzle for a dot operand
(`SwizzledSharedEncodingAttr::get` for mma v2 operands), and a bank-spreading one for the
FMA dot's operands.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from xdsl.ir import Attribute

from tritium.ir.ttg_mma import (
    DotOperandEncodingAttr,
    MemDescType,
    NvidiaMmaEncodingAttr,
    NVMMASharedEncodingAttr,
    SwizzledSharedEncodingAttr,
)


def _log2(n: int) -> int:
    if n < 1 or n & (n - 1):
        raise ValueError(f"shared layouts need powers of two, got {n}")
    return n.bit_length() - 1


@dataclass(frozen=True)
class SharedTile:
    """One 2D tile of a `!ttg.memdesc`: element offsets (not bytes) of coordinates."""

    shape: tuple[int, int]
    order: tuple[int, int]  # (contiguous dim, row dim)
    vec: int
    per_phase: int
    max_phase: int  # effective: at most row / vec, so the swizzle stays inside a row
    slab: int = 0  # nvmma_shared: elements per swizzled row of a slab (0: the whole row)

    @property
    def row_length(self) -> int:
        """Elements from one row to the next (a slab's width when cut into slabs)."""
        return self.slab or self.shape[self.order[0]]

    @property
    def slab_size(self) -> int:
        """Elements from one slab to the next (all rows of one slab)."""
        return self.row_length * self.shape[self.order[1]]

    @property
    def size(self) -> int:
        return self.shape[0] * self.shape[1]

    @property
    def swizzled(self) -> bool:
        return self.max_phase > 1

    @property
    def contiguous(self) -> int:
        """Elements that stay consecutive in memory along the contiguous dim, from any
        multiple of that count (a whole row when nothing is swizzled)."""
        return self.vec if self.swizzled else self.row_length

    def offset(self, coord: Sequence[int]) -> int:
        r, c = coord[self.order[1]], coord[self.order[0]]
        slab, c = divmod(c, self.row_length)
        phase = (r // self.per_phase) % self.max_phase
        return (
            slab * self.slab_size
            + r * self.row_length
            + ((c // self.vec) ^ phase) * self.vec
            + c % self.vec
        )

    def offset_of_bits(self, coord: Sequence[int]) -> int:
        """The same offset computed as the XOR of the offsets of each set coordinate bit
        (equal to `offset` for every in-range coordinate: the map is GF(2)-linear)."""
        out = 0
        for d, x in enumerate(coord):
            bit = 1
            while bit <= x:
                if x & bit:
                    unit = [0, 0]
                    unit[d] = bit
                    out ^= self.offset(unit)
                bit <<= 1
        return out


def tile_of(encoding: SwizzledSharedEncodingAttr, shape: Sequence[int]) -> SharedTile:
    """The tile of the last two dims of a memdesc of `shape` with `encoding`."""
    shape2 = tuple(shape[-2:])
    order = tuple(d - (len(encoding.order) - 2) for d in encoding.order[:2])
    if sorted(order) != [0, 1]:
        raise NotImplementedError(f"shared order {encoding.order}: the last two dims go first")
    row = shape2[order[0]]
    for s in shape2:
        _log2(s)
    vec = min(encoding.vec, row)
    max_phase = max(1, min(encoding.maxPhase, row // vec))
    return SharedTile(shape2, order, vec, encoding.perPhase, max_phase)


def nvmma_tile(encoding: NVMMASharedEncodingAttr, shape: Sequence[int]) -> SharedTile:
    """The tile of the last two dims of a memdesc of `shape` with an nvmma encoding."""
    shape2 = tuple(shape[-2:])
    order = tuple(encoding.order)
    for s in shape2:
        _log2(s)
    width = encoding.swizzlingByteWidth * 8 // encoding.elementBitWidth  # elements
    if shape2[order[0]] < width or shape2[order[1]] % 8:
        raise NotImplementedError(
            f"#ttg.nvmma_shared: a {shape2[0]}x{shape2[1]} tile is narrower than its "
            f"{encoding.swizzlingByteWidth}-byte swizzle or not a multiple of 8 rows"
        )
    vec = 128 // encoding.elementBitWidth  # 16-byte chunks
    max_phase = encoding.swizzlingByteWidth // 16
    return SharedTile(shape2, order, vec, 8 // max_phase, max_phase, width)


@cache
def memdesc_tile(t: MemDescType) -> SharedTile:
    if isinstance(t.encoding, NVMMASharedEncodingAttr):
        return nvmma_tile(t.encoding, t.get_shape())
    if not isinstance(t.encoding, SwizzledSharedEncodingAttr):
        raise NotImplementedError(f"no index maths for shared encoding {t.encoding}")
    return tile_of(t.encoding, t.get_shape())


# --------------------------------------------------------------------------- choosing


def nvmma_swizzle(row_bytes: int) -> int:
    """The widest swizzle (128, 64 or 32 bytes) a contiguous row of `row_bytes` fills, or 0."""
    return next((w for w in (128, 64, 32) if row_bytes >= w), 0)


def operand_shared_encoding(
    dot_enc: Attribute, shape: Sequence[int], order: Sequence[int], elem_bits: int
) -> Attribute:
    """The swizzled layout a dot operand of `shape` is staged in, rows contiguous along
    `order[0]` (the order it comes from global memory in).

    mma parents: upstream's choice for mma v2 operands. For A with K contiguous, 16 bytes
    (`vec`) per ldmatrix row and 8 phases of 128 / row-bytes rows each (`perPhase`).
    wgmma parents (`#ttg.nvidia_mma` version 3): `#ttg.nvmma_shared`, the widest swizzle
    the contiguous row fills, `transposed` when the first dim is the contiguous one.
    FMA parents: 16-byte groups, one phase per row, up to 8 phases, so that the rows the
    lanes of a warp read at once fall in different banks."""
    order = list(order)
    rank = len(shape)
    inner = order[0]
    if (
        isinstance(dot_enc, DotOperandEncodingAttr)
        and isinstance(dot_enc.parent, NvidiaMmaEncodingAttr)
        and dot_enc.parent.versionMajor == 3
    ):
        swizzle = nvmma_swizzle(shape[inner] * elem_bits // 8)
        return NVMMASharedEncodingAttr(swizzle, inner == rank - 2, elem_bits)
    if isinstance(dot_enc, DotOperandEncodingAttr) and isinstance(
        dot_enc.parent, NvidiaMmaEncodingAttr
    ):
        kw = dot_enc.kWidth
        per_phase = max(1, 128 // (shape[inner] * 4 // kw))
        mat = (8, 8, 4 * kw)  # m, n, k of one ldmatrix-sized piece
        vec_width = 32 // elem_bits
        if vec_width != kw and inner == rank - 1:
            per_phase = max(per_phase, 2 * vec_width)
        if dot_enc.opIdx == 0:
            m, k = mat[0], mat[2]
            vec = k if inner == rank - 1 else m
            stride = m if inner == rank - 1 else k
        else:
            n, k = mat[1], mat[2]
            vec = n if inner == rank - 1 else k
            stride = k if inner == rank - 1 else n
        return SwizzledSharedEncodingAttr(vec, per_phase, max(stride // per_phase, 1), order)
    vec = max(1, 128 // elem_bits)
    row = shape[inner]
    return SwizzledSharedEncodingAttr(min(vec, row), 1, max(1, min(8, row // vec)), order)


__all__ = [
    "SharedTile",
    "memdesc_tile",
    "nvmma_swizzle",
    "nvmma_tile",
    "operand_shared_encoding",
    "tile_of",
]
