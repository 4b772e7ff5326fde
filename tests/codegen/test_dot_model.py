"""The tensor-core path on a model of the hardware, no GPU needed.

`mma.sync` and `ldmatrix` are modelled from their PTX ISA definitions (fragment layouts:
"groupID = laneid >> 2, threadID_in_group = laneid % 4"; ldmatrix: lanes 8j..8j+7 give
the row addresses of matrix j, lane l receives row l / 4, bytes 4 (l % 4) .. +4 of each
matrix, `.trans` the transposed 8x8 of 16-bit elements). The lowering's plans -- which
registers form each mma's fragments (`mma_steps`), which address each lane gives
ldmatrix (`ldmatrix_plan` + `TileAddressing`), where each register of a plain shared
access lives -- are run through the model, and every thread's registers must end up
holding exactly what the layouts say.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tritium.codegen.lower.dot_mma import mma_steps, promoted_halves
from tritium.codegen.lower.ldmatrix import ldmatrix_plan
from tritium.codegen.lower.tile_addressing import TileAddressing
from tritium.ir.layouts import linear_layout
from tritium.ir.shared_layout import operand_shared_encoding, tile_of
from tritium.ir.ttg import BlockedEncodingAttr, blocked_layout
from tritium.ir.ttg_mma import DotOperandEncodingAttr, NvidiaMmaEncodingAttr
from tritium.passes.accelerate_matmul import warps_per_tile


def distribute(layout, x):
    """regs[warp][lane][reg] = x[coord] (what each thread holds)."""
    return [
        [[x[layout.coord(r, ln, w)] for r in range(layout.num_registers)] for ln in range(32)]
        for w in range(layout.num_warps)
    ]


def mma_model(kind, a_frag, b_frag, c_frag):
    """One warp's mma.sync: fragments per lane (A words, B words, C floats) -> D per lane."""
    kw = 1 if kind == "tf32" else 2
    K = 8 * kw
    A, B, C = np.zeros((16, K)), np.zeros((K, 8)), np.zeros((16, 8))
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for i, word in enumerate(a_frag[lane]):  # a0..a3 words
            for e, v in enumerate(word):
                A[g + 8 * (i % 2), t * kw + e + 4 * kw * (i // 2)] = v
        for i, word in enumerate(b_frag[lane]):
            for e, v in enumerate(word):
                B[t * kw + e + 4 * kw * i, g] = v
        for i, v in enumerate(c_frag[lane]):
            C[g + 8 * (i // 2), 2 * t + (i & 1)] = v
    D = A @ B + C
    return [
        [D[ln // 4 + 8 * (i // 2), 2 * (ln % 4) + (i & 1)] for i in range(4)] for ln in range(32)
    ]


CASES = [
    # (kind, M, N, K, num_warps)
    ("fp16", 16, 16, 16, 1),
    ("fp16", 64, 64, 32, 4),
    ("fp16", 128, 64, 32, 8),
    ("fp16", 16, 128, 16, 4),  # warps along N only
    ("fp16", 32, 16, 64, 8),  # more warps than tiles: replicated
    ("tf32", 64, 64, 32, 4),
    ("tf32", 32, 128, 8, 4),
]


@pytest.mark.parametrize("kind,M,N,K,num_warps", CASES)
def test_mma_steps_compute_the_matmul(kind, M, N, K, num_warps):
    kw = 1 if kind == "tf32" else 2
    mma = NvidiaMmaEncodingAttr(warps_per_tile(None, (M, N), num_warps))
    la = linear_layout(DotOperandEncodingAttr(0, mma, kw), (M, K))
    lb = linear_layout(DotOperandEncodingAttr(1, mma, kw), (K, N))
    lc = linear_layout(mma, (M, N))
    rng = np.random.default_rng(0)
    A = rng.integers(-3, 4, (M, K)).astype(float)
    B = rng.integers(-3, 4, (K, N)).astype(float)
    C = rng.integers(-3, 4, (M, N)).astype(float)
    ra, rb, rc = distribute(la, A), distribute(lb, B), distribute(lc, C)
    steps = mma_steps(la, lb, lc, K, 8 * kw, kw)
    blocks = len({lc.register_coord(r) for r in range(lc.num_registers)}) // 4
    assert len(steps) == blocks * K // (8 * kw)
    for w in range(lc.num_warps):
        for st in steps:
            a = [[[ra[w][ln][r + e] for e in range(kw)] for r in st.a] for ln in range(32)]
            b = [[[rb[w][ln][r + e] for e in range(kw)] for r in st.b] for ln in range(32)]
            c = [[rc[w][ln][r] for r in st.c] for ln in range(32)]
            d = mma_model(kind, a, b, c)
            for ln in range(32):
                for j, r in enumerate(st.c):
                    rc[w][ln][r] = d[ln][j]
    _assert_accumulator(rc, lc, A @ B + C)


@pytest.mark.parametrize(
    "M,N,K,num_warps", [(16, 8, 32, 1), (64, 64, 64, 4), (128, 128, 128, 4), (32, 128, 32, 8)]
)
def test_promoted_fp8_steps_compute_the_matmul(M, N, K, num_warps):
    """sm_90+: an fp8 dot (kWidth 4 fragments, m16n8k32 steps) runs as two f16 m16n8k16
    mmas per step on the fp8 words' halves (`promoted_halves`); the K permutation they
    imply must be the same for A and B, so the model's f16 mma computes A @ B."""
    mma = NvidiaMmaEncodingAttr(warps_per_tile(None, (M, N), num_warps))
    la = linear_layout(DotOperandEncodingAttr(0, mma, 4), (M, K))
    lb = linear_layout(DotOperandEncodingAttr(1, mma, 4), (K, N))
    lc = linear_layout(mma, (M, N))
    rng = np.random.default_rng(1)
    A = rng.integers(-3, 4, (M, K)).astype(float)
    B = rng.integers(-3, 4, (K, N)).astype(float)
    C = rng.integers(-3, 4, (M, N)).astype(float)
    ra, rb, rc = distribute(la, A), distribute(lb, B), distribute(lc, C)
    steps = mma_steps(la, lb, lc, K, 32, 4)

    def word(regs, r, h):
        return [regs[r + 2 * h], regs[r + 2 * h + 1]]

    for w in range(lc.num_warps):
        for st in steps:
            for words in promoted_halves(st):
                a = [[word(ra[w][ln], r, h) for r, h in words[:4]] for ln in range(32)]
                b = [[word(rb[w][ln], r, h) for r, h in words[4:]] for ln in range(32)]
                c = [[rc[w][ln][r] for r in st.c] for ln in range(32)]
                d = mma_model("fp16", a, b, c)
                for ln in range(32):
                    for j, r in enumerate(st.c):
                        rc[w][ln][r] = d[ln][j]
    _assert_accumulator(rc, lc, A @ B + C)


# --------------------------------------------------------------------------- ldmatrix


def fill_tile(tile, base, shape):
    """Shared memory as {element offset: coordinate}: what each address holds."""
    return {base + tile.offset(c): c for c in itertools.product(range(shape[0]), range(shape[1]))}


def thread_offset_value(acc: TileAddressing, lane: int, warp: int) -> int:
    """What TileAddressing.thread_offset computes on the GPU, in bytes (the same
    formula on the thread's coordinate)."""
    return acc.tile.offset(acc.layout.thread_coord(lane, warp)) * acc.elem_bytes


def lane_address(acc: TileAddressing, coord, lane: int, warp: int, base: int = 0) -> int:
    x, y = acc.register_parts(coord)
    return base + ((thread_offset_value(acc, lane, warp) ^ x) + y)


LDMATRIX = [
    # (op_idx, kw, shape, tile order, num_warps, expect ldmatrix)
    (0, 2, (64, 32), [1, 0], 4, True),  # fp16 A row-major
    (0, 2, (64, 32), [0, 1], 4, True),  # fp16 A column-major: .trans
    (1, 2, (32, 64), [1, 0], 4, True),  # fp16 B row-major: .trans
    (1, 2, (32, 64), [0, 1], 4, True),  # fp16 B column-major
    (0, 2, (128, 64), [1, 0], 8, True),
    (1, 2, (16, 16), [1, 0], 1, True),  # x2 per n block
    (0, 1, (64, 32), [1, 0], 4, True),  # tf32 A row-major (b16 view)
    (1, 1, (32, 64), [0, 1], 4, True),  # tf32 B column-major
    (1, 1, (32, 64), [1, 0], 4, False),  # tf32 B row-major: no 32-bit transpose
]


@pytest.mark.parametrize("op_idx,kw,shape,order,num_warps,expect", LDMATRIX)
def test_ldmatrix_loads_every_register(op_idx, kw, shape, order, num_warps, expect):
    mn = (shape[0], 64) if op_idx == 0 else (64, shape[1])
    mma = NvidiaMmaEncodingAttr(warps_per_tile(None, mn, num_warps))
    enc = DotOperandEncodingAttr(op_idx, mma, kw)
    layout = linear_layout(enc, shape)
    bits = 32 // kw
    shared = operand_shared_encoding(enc, shape, order, bits)
    tile = tile_of(shared, shape)
    acc = TileAddressing(layout, tile, bits // 8)
    plan = ldmatrix_plan(acc, enc, bits)
    assert (plan is not None) == expect
    if plan is None:
        return
    address_layout, transposed, words, x = plan
    assert transposed == (order[0] != enc.k_dim)
    addr = TileAddressing(address_layout, tile, acc.elem_bytes)
    base = 4096
    mem = fill_tile(tile, base // acc.elem_bytes, shape)
    eb = acc.elem_bytes
    for w in range(layout.num_warps):
        got = [[] for _ in range(32)]
        for first in range(0, words, x):
            coord = layout.register_coord(first * kw)
            rows = [lane_address(addr, coord, ln, w, base) for ln in range(32)]
            assert all(r % 16 == 0 for r in rows[: 8 * x])  # ldmatrix rows are 16-byte aligned
            for j in range(x):
                for ln in range(32):
                    g, t = ln // 4, ln % 4
                    if not transposed:  # row g of matrix j, bytes 4t .. 4t + 3
                        start = rows[8 * j + g] // eb + t * kw
                        got[ln] += [mem[start + e] for e in range(kw)]
                    else:  # rows 2t, 2t + 1 of matrix j, column g
                        got[ln] += [mem[rows[8 * j + 2 * t + e] // eb + g] for e in range(2)]
        for ln in range(32):
            want = [layout.coord(r, ln, w) for r in range(layout.num_registers)]
            assert got[ln] == want, (w, ln)


@pytest.mark.parametrize("op_idx", [0, 1])
@pytest.mark.parametrize("shape", [(64, 64), (64, 128), (32, 64)])
def test_ldmatrix_through_a_transposed_view(op_idx, shape):
    """A tile written in its own orientation (a cp.async ring stage: attention backward's
    Q, rows x D, D contiguous) and read as the transposed operand of another dot through
    `ttg.memdesc_trans`: the view's type addresses every element at the bytes the tile put
    it, and ldmatrix from the view hands each lane the transposed tile's registers."""
    from tritium.ir.ttg_memory import transposed_memdesc
    from tritium.ir.ttg_mma import MemDescType
    from tritium.ir.types import f16

    num_warps, kw = 4, 2
    mma = NvidiaMmaEncodingAttr(warps_per_tile(None, (64, 64), num_warps))
    view_shape = shape[::-1]
    enc = DotOperandEncodingAttr(op_idx, mma, kw)
    # the tile as the direct read of the other dot chose it (rows contiguous along dim 1)
    tile_t = MemDescType(shape, f16, operand_shared_encoding(enc, shape, [1, 0], 16))
    view_t = transposed_memdesc(tile_t, [1, 0])
    tile, view = tile_of(tile_t.encoding, shape), tile_of(view_t.encoding, view_shape)
    for c in itertools.product(range(shape[0]), range(shape[1])):
        assert view.offset(c[::-1]) == tile.offset(c)
    layout = linear_layout(enc, view_shape)
    acc = TileAddressing(layout, view, 2)
    plan = ldmatrix_plan(acc, enc, 16)
    assert plan is not None
    address_layout, transposed, words, x = plan
    assert transposed == (view.order[0] != enc.k_dim)
    addr = TileAddressing(address_layout, view, 2)
    mem = {tile.offset(c): c[::-1] for c in itertools.product(range(shape[0]), range(shape[1]))}
    for w in range(layout.num_warps):
        got = [[] for _ in range(32)]
        for first in range(0, words, x):
            coord = layout.register_coord(first * kw)
            rows = [lane_address(addr, coord, ln, w) for ln in range(32)]
            for j in range(x):
                for ln in range(32):
                    g, t = ln // 4, ln % 4
                    if not transposed:
                        start = rows[8 * j + g] // 2 + t * kw
                        got[ln] += [mem[start + e] for e in range(kw)]
                    else:
                        got[ln] += [mem[rows[8 * j + 2 * t + e] // 2 + g] for e in range(2)]
        for ln in range(32):
            assert got[ln] == [layout.coord(r, ln, w) for r in range(layout.num_registers)]


# --------------------------------------------------------------------------- plain accesses


@pytest.mark.parametrize(
    "layout_args,shape,shared",
    [
        (([1, 4], [4, 8], [4, 1]), (64, 32), (4, 1, 8, [1, 0])),
        (([1, 8], [8, 4], [2, 2]), (32, 64), (8, 1, 4, [1, 0])),
        (([4, 1], [8, 4], [1, 4]), (32, 64), (4, 1, 8, [0, 1])),
        (([1, 1], [1, 32], [4, 1]), (16, 64), (1, 1, 1, [1, 0])),
    ],
)
def test_plain_shared_accesses_hit_the_tile(layout_args, shape, shared):
    from tritium.ir.ttg_mma import SwizzledSharedEncodingAttr

    layout = linear_layout(BlockedEncodingAttr(*layout_args, [1, 0]), shape)
    tile = tile_of(SwizzledSharedEncodingAttr(*shared), shape)
    acc = TileAddressing(layout, tile, 4)
    v = acc.vector_width()
    for w, ln in itertools.product(range(layout.num_warps), range(32)):
        for g in range(0, layout.num_registers, v):
            at = lane_address(acc, layout.register_coord(g), ln, w)
            assert at % (4 * v) == 0  # aligned vector access
            for i in range(v):
                assert at + 4 * i == tile.offset(layout.coord(g + i, ln, w)) * 4


def test_vector_widths():
    layout = linear_layout(blocked_layout((64, 32), [1, 4], [1, 0], 4), (64, 32))
    from tritium.ir.ttg_mma import SwizzledSharedEncodingAttr

    wide = TileAddressing(layout, tile_of(SwizzledSharedEncodingAttr(4, 1, 8, [1, 0]), (64, 32)), 4)
    assert wide.vector_width() == 4
    narrow = TileAddressing(
        layout, tile_of(SwizzledSharedEncodingAttr(2, 1, 8, [1, 0]), (64, 32)), 4
    )
    assert narrow.vector_width() == 2
    across = TileAddressing(
        layout, tile_of(SwizzledSharedEncodingAttr(4, 1, 8, [0, 1]), (64, 32)), 4
    )
    assert across.vector_width() == 1


def _assert_accumulator(rc, lc, want) -> None:
    """Every register of the accumulator layout `lc` holds `want` at its coordinate (a
    replicated coordinate is read from its first register, the one the mma wrote)."""
    first = {}
    for r in range(lc.num_registers):
        first.setdefault(lc.register_coord(r), r)
    for w, ln in itertools.product(range(lc.num_warps), range(32)):
        for r in range(lc.num_registers):
            assert rc[w][ln][first[lc.register_coord(r)]] == want[lc.coord(r, ln, w)], (w, ln, r)

