"""coalesce: the blocked layout each load/store gets from axis info."""

from __future__ import annotations

import pytest
from filecheck import filecheck
from pass_helpers import DIV16, func, run, vector_add

from tritium.analysis.axis_info import AxisInfoAnalysis
from tritium.ir.parser import parse_module
from tritium.ir.ttg import BlockedEncodingAttr
from tritium.ir.types import encoding_of
from tritium.passes.pipeline import run_passes


def memory_layouts(module) -> list[BlockedEncodingAttr]:
    return [encoding_of(op.ptr.type) for op in module.walk() if op.name in ("tt.load", "tt.store")]


@pytest.mark.parametrize(
    "block, warps, elem, hints, spt",
    [
        (1024, 4, "f32", True, 4),  # 16-byte aligned: ld.global.v4.b32
        (4096, 4, "f32", True, 4),  # capped at 128 bits, repeated
        (256, 4, "f32", True, 2),  # only 2 elements per thread exist
        (1024, 4, "f32", False, 1),  # no alignment known
        (1024, 4, "f16", True, 8),  # 8 halves = 128 bits
        (2048, 8, "f32", True, 4),
    ],
)
def test_vector_add_size_per_thread(block, warps, elem, hints, spt):
    m, _ = run(
        vector_add(block, elem, hints),
        ["convert-triton-to-tritongpu", "coalesce"],
        ttgir=True,
        num_warps=warps,
    )
    layouts = memory_layouts(m)
    assert len(layouts) == 3
    want = BlockedEncodingAttr([spt], [32], [warps], [0])
    assert all(lay == want for lay in layouts), layouts


def test_converts_go_around_the_memory_op():
    _, text = run(vector_add(1024), ["convert-triton-to-tritongpu", "coalesce"], ttgir=True)
    filecheck(
        text,
        """
        CHECK: #blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
        CHECK: #blocked1 = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
        CHECK: %xp = tt.addptr
        CHECK-NEXT: ttg.convert_layout %xp : tensor<1024x!tt.ptr<f32>, #blocked> -> tensor<1024x!tt.ptr<f32>, #blocked1>
        CHECK-NEXT: ttg.convert_layout %mask : tensor<1024xi1, #blocked> -> tensor<1024xi1, #blocked1>
        CHECK-NEXT: %x = tt.load {{.*}} : tensor<1024x!tt.ptr<f32>, #blocked1>
        CHECK-NEXT: ttg.convert_layout %x : tensor<1024xf32, #blocked1> -> tensor<1024xf32, #blocked>
        """,
    )


def test_unchanged_layout_adds_no_converts():
    _, text = run(
        vector_add(1024, hints=False), ["convert-triton-to-tritongpu", "coalesce"], ttgir=True
    )
    assert "ttg.convert_layout" not in text


def test_2d_tile_row_major():
    body = """
    %rows = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %cols = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
    %r2 = tt.expand_dims %rows {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %st = tt.splat %stride : i32 -> tensor<64x1xi32>
    %ro = arith.muli %r2, %st : tensor<64x1xi32>
    %c2 = tt.expand_dims %cols {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
    %rob = tt.broadcast %ro : tensor<64x1xi32> -> tensor<64x32xi32>
    %cob = tt.broadcast %c2 : tensor<1x32xi32> -> tensor<64x32xi32>
    %off = arith.addi %rob, %cob : tensor<64x32xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x32x!tt.ptr<f32>>
    %ptrs = tt.addptr %ps, %off : tensor<64x32x!tt.ptr<f32>>, tensor<64x32xi32>
    %x = tt.load %ptrs : tensor<64x32x!tt.ptr<f32>>
    tt.store %ptrs, %x : tensor<64x32x!tt.ptr<f32>>
    """
    args = f"%p: !tt.ptr<f32> {DIV16}, %stride: i32 {DIV16}"
    m, _ = run(func(body, args), ["convert-triton-to-tritongpu", "coalesce"], ttgir=True)
    want = BlockedEncodingAttr([1, 4], [4, 8], [4, 1], [1, 0])
    assert memory_layouts(m) == [want, want]


def test_column_major_access_orders_dim_0_first():
    body = """
    %rows = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %cols = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
    %r2 = tt.expand_dims %rows {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %c2 = tt.expand_dims %cols {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
    %st = tt.splat %stride : i32 -> tensor<1x32xi32>
    %co = arith.muli %c2, %st : tensor<1x32xi32>
    %rob = tt.broadcast %r2 : tensor<64x1xi32> -> tensor<64x32xi32>
    %cob = tt.broadcast %co : tensor<1x32xi32> -> tensor<64x32xi32>
    %off = arith.addi %rob, %cob : tensor<64x32xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x32x!tt.ptr<f32>>
    %ptrs = tt.addptr %ps, %off : tensor<64x32x!tt.ptr<f32>>, tensor<64x32xi32>
    %x = tt.load %ptrs : tensor<64x32x!tt.ptr<f32>>
    tt.store %ptrs, %x : tensor<64x32x!tt.ptr<f32>>
    """
    args = f"%p: !tt.ptr<f32> {DIV16}, %stride: i32 {DIV16}"
    m, _ = run(func(body, args), ["convert-triton-to-tritongpu", "coalesce"], ttgir=True)
    lay = memory_layouts(m)[0]
    assert lay.order == [0, 1]
    assert lay.sizePerThread == [4, 1]


def test_vector_width_caps_at_mask_constancy():
    """The layout stays [4]; the lowering narrows accesses when the mask may change
    every element (upstream's getMaskAlignment)."""
    text = vector_add(1024).replace(f"%n: i32 {DIV16}", "%n: i32")
    module = parse_module(text)
    run_passes(
        module, ["convert-triton-to-tritongpu", "coalesce", "remove-layout-conversions"], ttgir=True
    )
    analysis = AxisInfoAnalysis(module)
    ops = [op for op in module.walk() if op.name in ("tt.load", "tt.store")]
    assert all(encoding_of(op.ptr.type).sizePerThread == [4] for op in ops)
    assert [analysis.vector_width(op) for op in ops] == [1, 1, 1]
    module = parse_module(vector_add(1024))
    run_passes(
        module, ["convert-triton-to-tritongpu", "coalesce", "remove-layout-conversions"], ttgir=True
    )
    analysis = AxisInfoAnalysis(module)
    ops = [op for op in module.walk() if op.name in ("tt.load", "tt.store")]
    assert [analysis.vector_width(op) for op in ops] == [4, 4, 4]
