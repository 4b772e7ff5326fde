"""Where a conversion through shared memory puts each element (tritium.analysis.convert_plan),
judged by the banks one warp instruction touches: 32 banks of 4 bytes, and an access
of 16 bytes per lane served a quarter-warp (128 bytes) at a time."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import Float16Type, Float32Type, TensorType

from tritium.analysis.convert_plan import convert_plan
from tritium.analysis.shared_bytes import element_bytes
from tritium.ir.layouts import layout_of
from tritium.ir.ttg import BlockedEncodingAttr, blocked_layout
from tritium.ir.ttg_mma import NvidiaMmaEncodingAttr

STORE = BlockedEncodingAttr([1, 8], [1, 32], [8, 1], [1, 0])  # the epilogue's 16-byte rows


def worst_conflict(layout, strides, elem: int, reg: int, warp: int, width: int) -> int:
    """The most 4-byte words of distinct addresses that one bank serves in one wavefront
    when every lane of `warp` accesses `width` elements from register `reg` on (1: no
    conflict)."""
    per_lane = width * elem
    group = min(32, 128 // per_lane)  # lanes served together (a half-warp for 8 bytes)
    worst = 1
    for first in range(0, 32, group):
        words: dict[int, set[int]] = {}
        for lane in range(first, first + group):
            slot = sum(c * s for c, s in zip(layout.coord(reg, lane, warp), strides))
            for w in range(per_lane // 4):
                word = slot * elem // 4 + w
                words.setdefault(word % 32, set()).add(word)
        worst = max(worst, max(len(v) for v in words.values()))
    return worst


@pytest.mark.parametrize("elem_type", [Float16Type(), Float32Type()])
@pytest.mark.parametrize("n", [64, 128, 256])
def test_a_wgmma_accumulator_reaches_the_store_layout_without_bank_conflicts(elem_type, n):
    """The GEMM epilogue on sm_90a: each lane stores its pair of accumulator columns (4 or
    8 bytes; 8 rows x 4 lanes per warp), then reads 16 bytes of one row. Unpadded rows of
    128 bytes or more put the 8 rows' stores in the same banks (upstream goes through a
    swizzled buffer instead); padding each row by the 8 columns a row's 4 lanes store puts the
    rows side by side."""
    mma = NvidiaMmaEncodingAttr([8, 1], [16, n, 16], version_major=3)
    src_t = TensorType(elem_type, [128, n], mma)
    elem = element_bytes(src_t)
    store = blocked_layout([128, n], [1, 16 // elem], [1, 0], 8)  # coalesce's 16-byte stores
    dst_t = TensorType(elem_type, [128, n], store)
    plan = convert_plan(src_t, dst_t)
    assert plan is not None and plan.strides[0] == n + 8  # the 8 columns of a row's 4 lanes
    src, dst = layout_of(src_t), layout_of(dst_t)
    for warp in (0, 5):
        # a store moves the 2 consecutive columns a lane holds (registers 2k, 2k + 1)
        for reg in range(0, src.num_registers, 2):
            assert worst_conflict(src, plan.strides, elem, reg, warp, 2) == 1
        for reg in range(0, dst.num_registers, 16 // elem):
            assert worst_conflict(dst, plan.strides, elem, reg, warp, 16 // elem) == 1


def test_mma_sync_accumulators_keep_unpadded_rows():
    """The mma.sync (v2) epilogue's buffer is as before (sm_89 PTX unchanged); a transpose
    still pads by one element."""
    mma = NvidiaMmaEncodingAttr([4, 2])
    f16 = Float16Type()
    plan = convert_plan(TensorType(f16, [128, 128], mma), TensorType(f16, [128, 128], STORE))
    assert plan is not None and plan.strides == (128, 1)
    cols = BlockedEncodingAttr([8, 1], [32, 1], [1, 8], [0, 1])
    plan = convert_plan(TensorType(f16, [128, 128], cols), TensorType(f16, [128, 128], STORE))
    assert plan is not None and plan.strides == (129, 1)
