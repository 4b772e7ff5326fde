"""Layout index maths: which thread holds which tensor element, in which register.

A distributed layout (`#ttg.blocked`, `#ttg.slice`) of a tensor of shape S is turned into
a *linear layout*, as upstream Triton does: three lists of basis vectors, one per hardware
index (`register`, `lane`, `warp`). Bit `i` of the register index moves the element's
coordinate by `register[i]`; bit `i` of the lane id by `lane[i]`; bit `i` of the warp id by
`warp[i]`. The coordinate held by (register r, lane l, warp w) is the XOR of the bases of
the set bits of r, l and w. For blocked and slice layouts every basis has one non-zero
entry, a power of two, and no two non-zero bases overlap, so XOR is the same as a sum.

    #blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32],
                             warpsPerCTA = [4], order = [0]}>          on tensor<1024xf32>
    register bases: [1] [2] [512]          (4 contiguous, then the tile repeats at 512)
    lane bases:     [4] [8] [16] [32] [64]
    warp bases:     [128] [256]
    thread 37 (lane 5, warp 1), register 6 (0b110) -> 2 ^ 512 ^ (4 ^ 16) ^ 128 = 662

A basis of zero means the bit does not move the coordinate: threads (or registers) that
differ only in such bits hold the same element (*replication*, when S is smaller than the
layout's tile). Stores must then be done by one owner only: the thread and register whose
free bits are all zero (`LinearLayout.is_owner`).

Register order follows upstream: registers iterate `sizePerThread` fastest along `order`,
then the repeats of the tile (again along `order`, fastest first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

from tritium.ir.ttg import BlockedEncodingAttr, SliceEncodingAttr
from tritium.ir.ttg_mma import DotOperandEncodingAttr, NvidiaMmaEncodingAttr
from tritium.ir.types import encoding_of

Basis = tuple[int, ...]


def _log2(n: int) -> int:
    if n < 1 or n & (n - 1):
        raise ValueError(f"layouts need powers of two, got {n}")
    return n.bit_length() - 1


def _xor(a: Basis, b: Basis) -> Basis:
    return tuple(x ^ y for x, y in zip(a, b))


def _combine(bases: Sequence[Basis], index: int, rank: int) -> Basis:
    """XOR of the bases selected by the set bits of `index`."""
    out = (0,) * rank
    for i, b in enumerate(bases):
        if index >> i & 1:
            out = _xor(out, b)
    return out


@dataclass(frozen=True)
class LinearLayout:
    """(register, lane, warp) -> coordinate in a tensor of `shape`, as XOR of bases."""

    shape: tuple[int, ...]
    register: tuple[Basis, ...]
    lane: tuple[Basis, ...]
    warp: tuple[Basis, ...]

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def num_registers(self) -> int:
        """Elements each thread holds (its registers), replicated ones included."""
        return 1 << len(self.register)

    @property
    def num_lanes(self) -> int:
        return 1 << len(self.lane)

    @property
    def num_warps(self) -> int:
        return 1 << len(self.warp)

    def coord(self, reg: int, lane: int, warp: int) -> Basis:
        r = self.rank
        return _xor(
            _xor(_combine(self.register, reg, r), _combine(self.lane, lane, r)),
            _combine(self.warp, warp, r),
        )

    def register_coord(self, reg: int) -> Basis:
        """The part of register `reg`'s coordinate that does not depend on the thread."""
        return _combine(self.register, reg, self.rank)

    def register_coords(self) -> list[Basis]:
        return [self.register_coord(r) for r in range(self.num_registers)]

    def thread_coord(self, lane: int, warp: int) -> Basis:
        r = self.rank
        return _xor(_combine(self.lane, lane, r), _combine(self.warp, warp, r))

    @staticmethod
    def _free(bases: Sequence[Basis]) -> int:
        return sum(1 << i for i, b in enumerate(bases) if not any(b))

    @property
    def free_register_mask(self) -> int:
        """Register-index bits that do not move the coordinate (duplicate registers)."""
        return self._free(self.register)

    @property
    def free_lane_mask(self) -> int:
        """Lane-id bits that do not move the coordinate (lanes holding the same data)."""
        return self._free(self.lane)

    @property
    def free_warp_mask(self) -> int:
        return self._free(self.warp)

    @property
    def is_replicated(self) -> bool:
        return bool(self.free_register_mask or self.free_lane_mask or self.free_warp_mask)

    def is_owner(self, reg: int, lane: int, warp: int) -> bool:
        """True for exactly one (reg, lane, warp) per element: the one with all free bits 0."""
        return not (
            reg & self.free_register_mask
            or lane & self.free_lane_mask
            or warp & self.free_warp_mask
        )

    def thread_divisibility(self, dim: int) -> int:
        """Largest power of two known to divide the thread-dependent part of `dim`'s coordinate."""
        vals = [b[dim] for b in self.lane + self.warp if b[dim]]
        if not vals:
            return 1 << 30
        return min(v & -v for v in vals)

    def contiguous_registers(self, dim: int) -> int:
        """How many consecutive registers (from any multiple of that count) hold consecutive
        elements along `dim`: the run of register bases 1, 2, 4, ... along `dim` only."""
        n = 0
        for b in self.register:
            if b[dim] == 1 << n and all(x == 0 for k, x in enumerate(b) if k != dim):
                n += 1
            else:
                break
        return 1 << n


# --------------------------------------------------------------------------- builders


def _blocked(enc: BlockedEncodingAttr, shape: tuple[int, ...]) -> LinearLayout:
    rank = len(shape)
    if enc.rank != rank:
        raise ValueError(f"layout of rank {enc.rank} on a tensor of rank {rank}")
    spt, tpw, wpc, order = enc.sizePerThread, enc.threadsPerWarp, enc.warpsPerCTA, enc.order
    for s in shape:
        _log2(s)

    def unit(dim: int, value: int) -> Basis:
        return tuple(value if d == dim else 0 for d in range(rank))

    def bases(sizes: Sequence[int], step: Sequence[int]) -> list[Basis]:
        out: list[Basis] = []
        for d in order:  # fastest-varying dim first
            out += [unit(d, step[d] << i) for i in range(_log2(sizes[d]))]
        return out

    tile = [spt[d] * tpw[d] * wpc[d] for d in range(rank)]
    register = bases(spt, [1] * rank)
    lane = bases(tpw, spt)
    warp = bases(wpc, [spt[d] * tpw[d] for d in range(rank)])
    # Larger than the tile: the tile repeats in more registers (fastest dim first).
    register += bases([max(1, shape[d] // tile[d]) for d in range(rank)], tile)
    # Smaller than the tile: coordinates past the shape wrap (the basis becomes 0).
    clip = lambda bs: tuple(  # noqa: E731
        tuple(v if v < shape[d] else 0 for d, v in enumerate(b)) for b in bs
    )
    return LinearLayout(tuple(shape), clip(register), clip(lane), clip(warp))


def _slice(enc: SliceEncodingAttr, shape: tuple[int, ...]) -> LinearLayout:
    dim = enc.dim
    parent_shape = shape[:dim] + (1,) + shape[dim:]
    p = linear_layout(enc.parent, parent_shape)
    drop = lambda bs: tuple(b[:dim] + b[dim + 1 :] for b in bs)  # noqa: E731
    # As upstream: duplicate registers introduced by slicing are removed.
    register = tuple(b for b in drop(p.register) if any(b))
    return LinearLayout(tuple(shape), register, drop(p.lane), drop(p.warp))


def _unit(rank: int, dim: int, value: int) -> Basis:
    return tuple(value if d == dim else 0 for d in range(rank))


def _clip(bases: Sequence[Basis], shape: tuple[int, ...]) -> tuple[Basis, ...]:
    """Bases that move past the shape become 0 (replication), as for blocked layouts."""
    return tuple(tuple(v if v < shape[d] else 0 for d, v in enumerate(b)) for b in bases)


def _repeats(shape, tile, order) -> list[Basis]:
    """Register bases repeating a CTA tile over a larger shape, `order[0]` fastest."""
    rank = len(shape)
    out: list[Basis] = []
    for d in order:
        out += [_unit(rank, d, tile[d] << i) for i in range(_log2(max(1, shape[d] // tile[d])))]
    return out


def _mma(enc: NvidiaMmaEncodingAttr, shape: tuple[int, ...]) -> LinearLayout:
    """mma.sync's accumulator (m16n8 per warp): c0, c1 at (g, 2t), (g, 2t+1) and c2, c3
    eight rows below, for lane = 4g + t; warps N-first; the CTA tile repeats N-first.
    wgmma's (version 3, m64nN per warpgroup): the same 16 x 8 piece N / 8 times along N
    per warp, warps M-first (four consecutive warps: 64 rows), tile repeats N-first."""
    rank = len(shape)
    if enc.rank != rank:
        raise ValueError(f"layout of rank {enc.rank} on a tensor of rank {rank}")
    for s in shape:
        _log2(s)
    m, n = rank - 2, rank - 1
    im, in_ = enc.instrShape[:2]
    order = list(range(rank - 1, -1, -1))
    wpc = enc.warpsPerCTA
    register = [_unit(rank, n, 1), _unit(rank, m, 8)]
    # wgmma (version 3): a warp's 16 x N slice of the instruction is N / 8 mma.sync-like
    # 16 x 8 pieces side by side (registers d[4j..4j+3] at columns 8j..8j+7)
    register += [_unit(rank, n, 8 << i) for i in range(_log2(in_ // 8))] if enc.versionMajor == 3 else []
    lane = [_unit(rank, n, 2), _unit(rank, n, 4), _unit(rank, m, 1), _unit(rank, m, 2)]
    lane.append(_unit(rank, m, 4))
    instr = [1] * rank
    instr[m], instr[n] = im, in_
    warp_order = [m, n] if enc.versionMajor == 3 else order  # a warpgroup spans 64 rows
    warp = [_unit(rank, d, instr[d] << i) for d in warp_order for i in range(_log2(wpc[d]))]
    tile = [instr[d] * wpc[d] for d in range(rank)]
    register += _repeats(shape, tile, order)
    return LinearLayout(shape, _clip(register, shape), _clip(lane, shape), _clip(warp, shape))


def _dot_operand_mma(enc: DotOperandEncodingAttr, shape: tuple[int, ...]) -> LinearLayout:
    """An mma.sync operand fragment per warp, `kw` = kWidth consecutive K elements per
    32-bit register: A (16 x 8kw): registers kw along K, then M+8, then K+4kw; lanes
    2 bits along K (steps of kw), 3 along M. B (8kw x 8): kw along K, then K+4kw; lanes
    2 along K, 3 along N. Warps as the parent's, with the ones along the other operand's
    dim broadcast (zero); the CTA tile repeats K-first."""
    rank = len(shape)
    mma = enc.parent
    if mma.rank != rank:
        raise ValueError(f"layout of rank {mma.rank} on a tensor of rank {rank}")
    for s in shape:
        _log2(s)
    kw = enc.kWidth
    k = enc.k_dim
    o = rank - 2 if enc.opIdx == 0 else rank - 1  # M for A, N for B
    instr = [1] * rank
    instr[k], instr[o] = 8 * kw, (16 if enc.opIdx == 0 else 8)
    register = [_unit(rank, k, 1 << i) for i in range(_log2(kw))]
    lane = [_unit(rank, k, kw), _unit(rank, k, 2 * kw)]
    lane += [_unit(rank, o, 1), _unit(rank, o, 2), _unit(rank, o, 4)]
    if enc.opIdx == 0:
        register.append(_unit(rank, o, 8))
    register.append(_unit(rank, k, 4 * kw))
    wpc = mma.warpsPerCTA
    warp = []
    for d in range(rank - 1, -1, -1):
        step = 0 if d == k else instr[d]
        warp += [_unit(rank, d, step << i) for i in range(_log2(wpc[d]))]
    tile = [instr[d] * (1 if d == k else wpc[d]) for d in range(rank)]
    rep_order = [k] + [d for d in range(rank - 1, -1, -1) if d != k]
    register += _repeats(shape, tile, rep_order)
    return LinearLayout(shape, _clip(register, shape), _clip(lane, shape), _clip(warp, shape))


def _dot_operand_blocked(enc: DotOperandEncodingAttr, shape: tuple[int, ...]) -> LinearLayout:
    """The FMA dot's operand: the parent blocked layout with sizePerThread = the whole K
    along K, so each thread holds full K rows of A (columns of B) for the accumulator
    elements it owns; lanes and warps along K land past the shape and broadcast."""
    p = enc.parent
    spt = list(p.sizePerThread)
    spt[enc.k_dim] = shape[enc.k_dim]
    whole_k = BlockedEncodingAttr(spt, p.threadsPerWarp, p.warpsPerCTA, p.order)
    return _blocked(whole_k, tuple(shape))


@cache
def linear_layout(encoding: Attribute, shape: tuple[int, ...]) -> LinearLayout:
    """The linear layout of `encoding` on a tensor of `shape`."""
    shape = tuple(shape)
    if isinstance(encoding, BlockedEncodingAttr):
        return _blocked(encoding, shape)
    if isinstance(encoding, SliceEncodingAttr):
        return _slice(encoding, shape)
    if isinstance(encoding, NvidiaMmaEncodingAttr):
        return _mma(encoding, shape)
    if isinstance(encoding, DotOperandEncodingAttr):
        if isinstance(encoding.parent, NvidiaMmaEncodingAttr):
            return _dot_operand_mma(encoding, shape)
        if isinstance(encoding.parent, BlockedEncodingAttr):
            return _dot_operand_blocked(encoding, shape)
    raise NotImplementedError(f"no index maths for layout {encoding}")


def layout_of(t: Attribute) -> LinearLayout | None:
    """The linear layout of a tensor type; None for scalars."""
    if not isinstance(t, TensorType):
        return None
    enc = encoding_of(t)
    if enc is None:
        raise ValueError(
            f"tensor type {t} has no layout encoding (run convert-triton-to-tritongpu)"
        )
    return linear_layout(enc, tuple(t.get_shape()))


def elements_per_thread(t: Attribute) -> int:
    """How many scalar registers a thread holds for a value of type `t` (1 for scalars)."""
    layout = layout_of(t)
    return 1 if layout is None else layout.num_registers


__all__ = ["LinearLayout", "elements_per_thread", "layout_of", "linear_layout"]
