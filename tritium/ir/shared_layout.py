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

    @property
    def row_length(self) -> int:
        return self.shape[self.order[0]]

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
        phase = (r // self.per_phase) % self.max_phase
        return r * self.row_length + ((c // self.vec) ^ phase) * self.vec + c % self.vec

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


@cache
def memdesc_tile(t: MemDescType) -> SharedTile:
    if not isinstance(t.encoding, SwizzledSharedEncodingAttr):
        raise NotImplementedError(f"no index maths for shared encoding {t.encoding}")
    return tile_of(t.encoding, t.get_shape())


# --------------------------------------------------------------------------- choosing


def operand_shared_encoding(
    dot_enc: Attribute, shape: Sequence[int], order: Sequence[int], elem_bits: int
) -> SwizzledSharedEncodingAttr:
    """The swizzled layout a dot operand of `shape` is staged in, rows contiguous along
    `order[0]` (the order it comes from global memory in).

    mma parents: upstream's choice for mma v2 operands. For A with K contiguous, 16 bytes
    (`vec`) per ldmatrix row and 8 phases of 128 / row-bytes rows each (`perPhase`).
    FMA parents: 16-byte groups, one phase per row, up to 8 phases, so that the rows the
    lanes of a warp read at once fall in different banks."""
    order = list(order)
    rank = len(shape)
    inner = order[0]
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


__all__ = ["SharedTile", "memdesc_tile", "operand_shared_encoding", "tile_of"]
