"""Exhaustive checks of the layout index maths on small shapes.

Every (register, lane, warp) of every small blocked / slice layout is enumerated and
compared with a direct, independent formula (the one in design.md "Layouts"); coverage,
unique ownership and upstream's register order are checked along the way.
"""

from __future__ import annotations

import itertools
import math

import pytest

from tritium.ir.layouts import elements_per_thread, layout_of, linear_layout
from tritium.ir.ttg import BlockedEncodingAttr, SliceEncodingAttr
from tritium.ir.types import f32, tensor


def _multi(index: int, sizes, order):
    """Split `index` into a multi-index over `sizes`, `order[0]` fastest."""
    out = [0] * len(sizes)
    for d in order:
        out[d] = index % sizes[d]
        index //= sizes[d]
    return out


def blocked_reference(spt, tpw, wpc, order, shape, reg, lane, warp):
    """The coordinate of (reg, lane, warp) written directly from the layout's definition."""
    rank = len(shape)
    tile = [spt[d] * tpw[d] * wpc[d] for d in range(rank)]
    reps = [max(1, shape[d] // tile[d]) for d in range(rank)]
    elem = _multi(reg % math.prod(spt), spt, order)
    rep = _multi(reg // math.prod(spt), reps, order)
    ln = _multi(lane, tpw, order)
    wp = _multi(warp, wpc, order)
    return tuple(
        (rep[d] * tile[d] + wp[d] * spt[d] * tpw[d] + ln[d] * spt[d] + elem[d]) % shape[d]
        for d in range(rank)
    )


def _pow2_splits(total: int, rank: int):
    """All ways to write `total` (a power of two) as a product of `rank` powers of two."""
    k = total.bit_length() - 1
    for parts in itertools.product(range(k + 1), repeat=rank):
        if sum(parts) == k:
            yield [1 << p for p in parts]


def _check_cover_and_owners(layout, shape):
    owners: dict[tuple, int] = {}
    held: set[tuple] = set()
    for w in range(layout.num_warps):
        for ln in range(layout.num_lanes):
            for r in range(layout.num_registers):
                c = layout.coord(r, ln, w)
                assert all(0 <= c[d] < shape[d] for d in range(len(shape))), c
                held.add(c)
                if layout.is_owner(r, ln, w):
                    owners[c] = owners.get(c, 0) + 1
    every = set(itertools.product(*(range(s) for s in shape)))
    assert held == every, "some element is held by no thread"
    assert set(owners) == every and all(n == 1 for n in owners.values()), (
        "each element must have exactly one owner"
    )


# 1D: small shapes around the tile size, with 2 warps of 4-lane "warps" and 32-lane warps.
CASES_1D = [
    (spt, tpw, wpc, shape)
    for spt in (1, 2, 4)
    for tpw in (4, 32)
    for wpc in (1, 2)
    for shape in (1, 2, 8, 16, 64, 512)
]


@pytest.mark.parametrize("spt,tpw,wpc,shape", CASES_1D)
def test_blocked_1d_matches_definition(spt, tpw, wpc, shape):
    enc = BlockedEncodingAttr([spt], [tpw], [wpc], [0])
    layout = linear_layout(enc, (shape,))
    assert layout.num_registers == spt * max(1, shape // (spt * tpw * wpc))
    for w, ln, r in itertools.product(range(wpc), range(tpw), range(layout.num_registers)):
        want = blocked_reference([spt], [tpw], [wpc], [0], (shape,), r, ln, w)
        assert layout.coord(r, ln, w) == want
    _check_cover_and_owners(layout, (shape,))


def _cases_2d():
    for spt, tpw, wpc in itertools.product(
        _pow2_splits(4, 2), _pow2_splits(8, 2), _pow2_splits(2, 2)
    ):
        for order in ([1, 0], [0, 1]):
            for shape in ((1, 8), (4, 4), (8, 32), (16, 2), (2, 1)):
                yield spt, tpw, wpc, order, shape


@pytest.mark.parametrize("spt,tpw,wpc,order,shape", list(_cases_2d()))
def test_blocked_2d_matches_definition(spt, tpw, wpc, order, shape):
    enc = BlockedEncodingAttr(spt, tpw, wpc, order)
    layout = linear_layout(enc, shape)
    nwarps, nlanes = math.prod(wpc), math.prod(tpw)
    assert layout.num_lanes == nlanes and layout.num_warps == nwarps
    for w, ln, r in itertools.product(range(nwarps), range(nlanes), range(layout.num_registers)):
        want = blocked_reference(spt, tpw, wpc, order, shape, r, ln, w)
        assert layout.coord(r, ln, w) == want, (r, ln, w)
    _check_cover_and_owners(layout, shape)


@pytest.mark.parametrize("spt,tpw,wpc,order,shape", list(_cases_2d())[::7])
@pytest.mark.parametrize("dim", [0, 1])
def test_slice_matches_parent(spt, tpw, wpc, order, shape, dim):
    parent = BlockedEncodingAttr(spt, tpw, wpc, order)
    sliced_shape = (shape[1 - dim],)
    layout = linear_layout(SliceEncodingAttr(dim, parent), sliced_shape)
    # Reference: the parent on a shape with size 1 at `dim`, that dim dropped, and
    # registers holding an already-seen element removed (in order of first appearance).
    pshape = list(shape)
    pshape[dim] = 1
    nwarps, nlanes = math.prod(wpc), math.prod(tpw)
    nreg_parent = math.prod(spt) * math.prod(
        max(1, pshape[d] // (spt[d] * tpw[d] * wpc[d])) for d in range(2)
    )
    drop = lambda c: (c[1 - dim],)  # noqa: E731
    regs = []
    for r in range(nreg_parent):
        c = drop(blocked_reference(spt, tpw, wpc, order, pshape, r, 0, 0))
        if c not in regs:
            regs.append(c)
    assert layout.num_registers == len(regs)
    for w, ln in itertools.product(range(nwarps), range(nlanes)):
        base = drop(blocked_reference(spt, tpw, wpc, order, pshape, 0, ln, w))
        for r, rc in enumerate(regs):
            want = ((base[0] + rc[0]) % sliced_shape[0],)
            assert layout.coord(r, ln, w) == want
    _check_cover_and_owners(layout, sliced_shape)


def test_upstream_add_kernel_layout():
    """Upstream's add_kernel.ll: register i holds element (tid & 127) + 128 * i."""
    enc = BlockedEncodingAttr([1], [32], [4], [0])
    layout = linear_layout(enc, (1024,))
    assert layout.num_registers == 8
    for tid in range(128):
        for i in range(8):
            assert layout.coord(i, tid % 32, tid // 32) == ((tid & 127) + 128 * i,)
    assert not layout.is_replicated


def test_vectorized_register_order_and_contiguity():
    enc = BlockedEncodingAttr([4], [32], [4], [0])
    layout = linear_layout(enc, (1024,))
    assert layout.register_coords() == [(0,), (1,), (2,), (3,), (512,), (513,), (514,), (515,)]
    assert layout.coord(6, 5, 1) == (662,)  # the docstring's example
    assert layout.contiguous_registers(0) == 4
    assert layout.thread_divisibility(0) == 4


def test_2d_register_order_follows_order_then_repeats():
    # order [1, 0]: registers walk dim 1 first (within sizePerThread), then repeats of
    # the tile along dim 1, then along dim 0.
    enc = BlockedEncodingAttr([2, 2], [1, 32], [1, 1], [1, 0])
    layout = linear_layout(enc, (4, 128))
    assert layout.register_coords() == [
        (0, 0), (0, 1), (1, 0), (1, 1),
        (0, 64), (0, 65), (1, 64), (1, 65),
        (2, 0), (2, 1), (3, 0), (3, 1),
        (2, 64), (2, 65), (3, 64), (3, 65),
    ]  # fmt: skip


def test_replication_when_shape_smaller_than_tile():
    enc = BlockedEncodingAttr([1], [32], [4], [0])
    layout = linear_layout(enc, (64,))
    assert layout.num_registers == 1
    assert layout.free_warp_mask == 0b10 and layout.free_lane_mask == 0
    assert layout.coord(0, 3, 2) == layout.coord(0, 3, 0) == (3,)
    assert layout.is_owner(0, 3, 0) and not layout.is_owner(0, 3, 2)
    # sizePerThread larger than the shape: duplicate registers, as upstream keeps them.
    small = linear_layout(BlockedEncodingAttr([4], [32], [1], [0]), (2,))
    assert small.num_registers == 4 and small.free_register_mask == 0b10
    assert [small.coord(r, 0, 0) for r in range(4)] == [(0,), (1,), (0,), (1,)]


def test_type_helpers():
    enc = BlockedEncodingAttr([4], [32], [4], [0])
    assert elements_per_thread(tensor([1024], f32, enc)) == 8
    assert elements_per_thread(f32) == 1
    assert layout_of(f32) is None
    with pytest.raises(ValueError):
        layout_of(tensor([8], f32))
