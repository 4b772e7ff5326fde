"""Exhaustive checks of the mma / dot-operand layouts and the swizzled shared tiles.

Every (register, lane, warp) of small #ttg.nvidia_mma and #ttg.dot_op layouts is compared
with the fragment layouts PTX defines for mma.sync (m16n8k16 fp16 / bf16, m16n8k8 tf32:
"groupID = laneid / 4, threadID_in_group = laneid % 4"), repeated over warps (N first)
and over the tensor (mma: N first; operands: K first), as upstream orders registers.
"""

from __future__ import annotations

import itertools

import pytest

from tritium.ir.layouts import linear_layout
from tritium.ir.shared_layout import operand_shared_encoding, tile_of
from tritium.ir.ttg import BlockedEncodingAttr
from tritium.ir.ttg_mma import (
    DotOperandEncodingAttr,
    NvidiaMmaEncodingAttr,
    SwizzledSharedEncodingAttr,
)

WARPS = [[1, 1], [2, 1], [2, 2], [1, 4], [4, 2]]
SHAPES = [(16, 8), (32, 32), (64, 16), (16, 64), (128, 32)]


def mma_reference(wpc, shape, reg, lane, warp):
    """Accumulator c_i of the PTX fragment: row g (+8 for c2, c3), column 2t + (i & 1)."""
    g, t = lane // 4, lane % 4
    i, rep = reg % 4, reg // 4
    tile = (16 * wpc[0], 8 * wpc[1])
    reps_n = max(1, shape[1] // tile[1])
    rep_m, rep_n = rep // reps_n, rep % reps_n
    wm, wn = warp // wpc[1], warp % wpc[1]
    m = rep_m * tile[0] + wm * 16 + g + 8 * (i // 2)
    n = rep_n * tile[1] + wn * 8 + 2 * t + (i & 1)
    return (m % shape[0], n % shape[1])


def operand_reference(op_idx, kw, wpc, shape, reg, lane, warp):
    """Operand element of the PTX fragments (A: 4 words a0a1 | a2a3 | a4a5 | a6a7 for
    fp16, a0..a3 for tf32; B: 2 words), `kw` elements per 32-bit word."""
    g, t = lane // 4, lane % 4
    per = (4 if op_idx == 0 else 2) * kw  # registers per fragment
    i, rep = reg % per, reg // per
    word, e = i // kw, i % kw
    k_in = t * kw + e + 4 * kw * (word // 2 if op_idx == 0 else word)
    if op_idx == 0:
        m_in = g + 8 * (word % 2)
        reps_k = max(1, shape[1] // (8 * kw))
        rep_k, rep_m = rep % reps_k, rep // reps_k
        wm = warp // wpc[1]
        m = rep_m * 16 * wpc[0] + wm * 16 + m_in
        return (m % shape[0], (rep_k * 8 * kw + k_in) % shape[1])
    reps_k = max(1, shape[0] // (8 * kw))
    rep_k, rep_n = rep % reps_k, rep // reps_k
    wn = warp % wpc[1]
    n = rep_n * 8 * wpc[1] + wn * 8 + g
    return ((rep_k * 8 * kw + k_in) % shape[0], n % shape[1])


def _all(layout):
    return itertools.product(
        range(layout.num_registers), range(layout.num_lanes), range(layout.num_warps)
    )


def _covers(layout, shape):
    held = {layout.coord(r, ln, w) for r, ln, w in _all(layout)}
    assert held == set(itertools.product(range(shape[0]), range(shape[1])))


@pytest.mark.parametrize("wpc", WARPS, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_mma_accumulator_matches_the_ptx_fragments(wpc, shape):
    layout = linear_layout(NvidiaMmaEncodingAttr(wpc), shape)
    assert layout.num_lanes == 32 and layout.num_warps == wpc[0] * wpc[1]
    for r, ln, w in _all(layout):
        assert layout.coord(r, ln, w) == mma_reference(wpc, shape, r, ln, w), (r, ln, w)
    _covers(layout, shape)


@pytest.mark.parametrize("kw", [1, 2], ids=["tf32", "fp16"])
@pytest.mark.parametrize("op_idx", [0, 1], ids=["A", "B"])
@pytest.mark.parametrize("wpc", WARPS, ids=str)
@pytest.mark.parametrize("mnk", [(16, 8, 16), (32, 32, 32), (64, 16, 64)], ids=str)
def test_dot_operands_match_the_ptx_fragments(kw, op_idx, wpc, mnk):
    m, n, k = mnk
    shape = (m, k) if op_idx == 0 else (k, n)
    enc = DotOperandEncodingAttr(op_idx, NvidiaMmaEncodingAttr(wpc), kw)
    layout = linear_layout(enc, shape)
    for r, ln, w in _all(layout):
        want = operand_reference(op_idx, kw, wpc, shape, r, ln, w)
        assert layout.coord(r, ln, w) == want, (r, ln, w)
    _covers(layout, shape)
    # the warps along the other operand's dim hold the same data (broadcast)
    assert len(layout.warp) == (wpc[0] * wpc[1]).bit_length() - 1


@pytest.mark.parametrize("op_idx", [0, 1])
@pytest.mark.parametrize(
    "spt,tpw,wpc", [([4, 4], [2, 16], [4, 1]), ([2, 2], [8, 4], [2, 2]), ([1, 4], [4, 8], [1, 4])]
)
def test_fma_operands_hold_whole_k_for_their_accumulators(op_idx, spt, tpw, wpc):
    """dot_op<blocked>: thread holds A[m, :] for every row m of its accumulators (B: every
    column), and nothing else."""
    parent = BlockedEncodingAttr(spt, tpw, wpc, [1, 0])
    M, N, K = 64, 64, 16
    acc = linear_layout(parent, (M, N))
    shape = (M, K) if op_idx == 0 else (K, N)
    layout = linear_layout(DotOperandEncodingAttr(op_idx, parent), shape)
    for ln, w in itertools.product(range(32), range(layout.num_warps)):
        mine = {acc.coord(r, ln, w) for r in range(acc.num_registers)}
        held = {layout.coord(r, ln, w) for r in range(layout.num_registers)}
        if op_idx == 0:
            want = {(m, k) for m in {c[0] for c in mine} for k in range(K)}
        else:
            want = {(k, n) for n in {c[1] for c in mine} for k in range(K)}
        assert held == want


# --------------------------------------------------------------------------- shared tiles


@pytest.mark.parametrize(
    "vec,per_phase,max_phase", [(1, 1, 1), (4, 1, 8), (8, 2, 4), (8, 1, 8), (2, 4, 2)]
)
@pytest.mark.parametrize("order", [[1, 0], [0, 1]])
@pytest.mark.parametrize("shape", [(16, 32), (64, 16), (8, 64)], ids=str)
def test_swizzled_tile_is_a_linear_bijection(vec, per_phase, max_phase, order, shape):
    tile = tile_of(SwizzledSharedEncodingAttr(vec, per_phase, max_phase, order), shape)
    coords = list(itertools.product(range(shape[0]), range(shape[1])))
    offsets = [tile.offset(c) for c in coords]
    assert sorted(offsets) == list(range(shape[0] * shape[1]))
    for c in coords:
        assert tile.offset_of_bits(c) == tile.offset(c)
    # groups of `contiguous` elements along order[0] stay consecutive
    d = order[0]
    for c in coords:
        if c[d] % tile.contiguous == 0:
            for i in range(tile.contiguous):
                nxt = list(c)
                nxt[d] += i
                assert tile.offset(nxt) == tile.offset(c) + i


def test_upstream_swizzles_for_the_reference_matmul():
    mma = NvidiaMmaEncodingAttr([2, 2])
    a = operand_shared_encoding(DotOperandEncodingAttr(0, mma, 1), (64, 32), [1, 0], 32)
    b = operand_shared_encoding(DotOperandEncodingAttr(1, mma, 1), (32, 64), [1, 0], 32)
    assert (a.vec, a.perPhase, a.maxPhase) == (4, 1, 8)  # upstream's #shared
    assert (b.vec, b.perPhase, b.maxPhase) == (8, 1, 4)  # upstream's #shared1
    f16 = operand_shared_encoding(DotOperandEncodingAttr(0, mma, 2), (128, 32), [1, 0], 16)
    assert (f16.vec, f16.perPhase, f16.maxPhase) == (8, 2, 4)
