"""remove-layout-conversions: propagation, slices, folding, rematerialization."""

from __future__ import annotations

import pytest
from filecheck import filecheck
from pass_helpers import DIV16, func, run, value, vector_add

from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir
from tritium.ir.ttg import BlockedEncodingAttr, SliceEncodingAttr
from tritium.ir.types import encoding_of
from tritium.passes.pipeline import run_ttgir_passes, run_ttir_passes
from tritium.passes.utils import walk_values

TO_TTGIR = ["convert-triton-to-tritongpu", "coalesce", "remove-layout-conversions"]
B4 = BlockedEncodingAttr([4], [32], [4], [0])


def layouts(module) -> set:
    return {encoding_of(v.type) for v in walk_values(module) if encoding_of(v.type) is not None}


def test_vector_add_has_one_layout_and_no_converts():
    m, text = run(vector_add(1024), TO_TTGIR, ttgir=True)
    assert "ttg.convert_layout" not in text
    assert layouts(m) == {B4}
    filecheck(
        text,
        """
        CHECK: #blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
        CHECK-NOT: #blocked1
        CHECK: %x = tt.load %xp, %mask : tensor<1024x!tt.ptr<f32>, #blocked>
        CHECK: tt.store %op, %z, %mask : tensor<1024x!tt.ptr<f32>, #blocked>
        """,
    )


SOFTMAX_2D = """
    %pid = tt.get_program_id x : i32
    %c8 = arith.constant 8 : i32
    %row0 = arith.muli %pid, %c8 : i32
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %rs = tt.splat %row0 : i32 -> tensor<8xi32>
    %rows = arith.addi %rs, %r : tensor<8xi32>
    %cols = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %r2 = tt.expand_dims %rows {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
    %st = tt.splat %stride : i32 -> tensor<8x1xi32>
    %ro = arith.muli %r2, %st : tensor<8x1xi32>
    %c2 = tt.expand_dims %cols {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
    %rob = tt.broadcast %ro : tensor<8x1xi32> -> tensor<8x128xi32>
    %cob = tt.broadcast %c2 : tensor<1x128xi32> -> tensor<8x128xi32>
    %off = arith.addi %rob, %cob : tensor<8x128xi32>
    %xp = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<8x128x!tt.ptr<f32>>
    %xpp = tt.addptr %xp, %off : tensor<8x128x!tt.ptr<f32>>, tensor<8x128xi32>
    %x = tt.load %xpp : tensor<8x128x!tt.ptr<f32>>
    %m = "tt.reduce"(%x) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %mx = arith.maxnumf %a, %b : f32
      tt.reduce.return %mx : f32
    }) : (tensor<8x128xf32>) -> tensor<8xf32>
    %m2 = tt.expand_dims %m {axis = 1 : i32} : tensor<8xf32> -> tensor<8x1xf32>
    %mb = tt.broadcast %m2 : tensor<8x1xf32> -> tensor<8x128xf32>
    %d = arith.subf %x, %mb : tensor<8x128xf32>
    %e = math.exp %d : tensor<8x128xf32>
    %s = "tt.reduce"(%e) <{axis = 1 : i32}> ({
    ^bb0(%a2: f32, %b2: f32):
      %sm = arith.addf %a2, %b2 : f32
      tt.reduce.return %sm : f32
    }) : (tensor<8x128xf32>) -> tensor<8xf32>
    %s2 = tt.expand_dims %s {axis = 1 : i32} : tensor<8xf32> -> tensor<8x1xf32>
    %sb = tt.broadcast %s2 : tensor<8x1xf32> -> tensor<8x128xf32>
    %o = arith.divf %e, %sb : tensor<8x128xf32>
    %yp = tt.splat %y_ptr : !tt.ptr<f32> -> tensor<8x128x!tt.ptr<f32>>
    %ypp = tt.addptr %yp, %off : tensor<8x128x!tt.ptr<f32>>, tensor<8x128xi32>
    tt.store %ypp, %o : tensor<8x128x!tt.ptr<f32>>
"""
SOFTMAX_2D_ARGS = (
    f"%x_ptr: !tt.ptr<f32> {DIV16}, %y_ptr: !tt.ptr<f32> {DIV16}, %stride: i32 {DIV16}"
)


def test_row_softmax_reductions_use_slices_of_the_coalesced_layout():
    m, text = run(func(SOFTMAX_2D, SOFTMAX_2D_ARGS), TO_TTGIR, ttgir=True)
    assert "ttg.convert_layout" not in text
    tile = BlockedEncodingAttr([1, 4], [1, 32], [4, 1], [1, 0])
    rows, cols = SliceEncodingAttr(1, tile), SliceEncodingAttr(0, tile)
    assert layouts(m) == {tile, rows, cols}
    for name in ("x", "e", "o", "mb", "r2", "ro"):
        assert encoding_of(value(m, name).type) == tile, name
    for name in ("m", "s", "rows", "r"):
        assert encoding_of(value(m, name).type) == rows, name


def test_loop_carried_tensor_takes_the_load_layout():
    body = """
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %z = arith.constant dense<0.000000e+00> : tensor<1024xf32>
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %pp = tt.addptr %ps, %r : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<1024xf32>) : i32 {
      %x = tt.load %pp : tensor<1024x!tt.ptr<f32>>
      %a2 = arith.addf %a, %x : tensor<1024xf32>
      scf.yield %a2 : tensor<1024xf32>
    }
    tt.store %pp, %acc : tensor<1024x!tt.ptr<f32>>
    """
    m, text = run(func(body, f"%p: !tt.ptr<f32> {DIV16}, %n: i32"), TO_TTGIR, ttgir=True)
    assert "ttg.convert_layout" not in text
    assert layouts(m) == {B4}
    assert encoding_of(value(m, "a").type) == B4


def test_a_one_element_load_does_not_lay_out_the_rows_it_is_broadcast_into():
    """inductor's reductions with XBLOCK = 1: a [1, 1] load (`tmp0 = tl.load(p + x0)`) comes
    first and is broadcast into the [1, 2048] row. Its layout (threads along the size-1
    dim) must not win over the row's load: each thread would hold the whole row."""
    body = """
    %sp = tt.splat %s : !tt.ptr<f32> -> tensor<1x1x!tt.ptr<f32>>
    %t0 = tt.load %sp : tensor<1x1x!tt.ptr<f32>>
    %r = tt.make_range {end = 2048 : i32, start = 0 : i32} : tensor<2048xi32>
    %r2 = tt.expand_dims %r {axis = 0 : i32} : tensor<2048xi32> -> tensor<1x2048xi32>
    %xp = tt.splat %x : !tt.ptr<f32> -> tensor<1x2048x!tt.ptr<f32>>
    %xpp = tt.addptr %xp, %r2 : tensor<1x2048x!tt.ptr<f32>>, tensor<1x2048xi32>
    %row = tt.load %xpp : tensor<1x2048x!tt.ptr<f32>>
    %tb = tt.broadcast %t0 : tensor<1x1xf32> -> tensor<1x2048xf32>
    %y = arith.mulf %row, %tb : tensor<1x2048xf32>
    tt.store %xpp, %y : tensor<1x2048x!tt.ptr<f32>>
    """
    m, _ = run(func(body, f"%s: !tt.ptr<f32> {DIV16}, %x: !tt.ptr<f32> {DIV16}"), TO_TTGIR,
               ttgir=True, num_warps=16)  # fmt: skip
    row = encoding_of(value(m, "y").type)
    assert row == encoding_of(value(m, "row").type)
    assert row.threadsPerWarp == [1, 32] and row.warpsPerCTA == [1, 16], row


def test_conflicting_anchors_keep_one_convert_and_remake_index_math():
    """An f16 load wants 8 per thread, the f32 store 4: the sum converts once; the shared
    offsets and mask are recomputed in each layout instead of being converted."""
    body = """
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %ns = tt.splat %n : i32 -> tensor<1024xi32>
    %mask = arith.cmpi slt, %r, %ns : tensor<1024xi32>
    %hs = tt.splat %h : !tt.ptr<f16> -> tensor<1024x!tt.ptr<f16>>
    %hp = tt.addptr %hs, %r : tensor<1024x!tt.ptr<f16>>, tensor<1024xi32>
    %x = tt.load %hp, %mask : tensor<1024x!tt.ptr<f16>>
    %xf = arith.extf %x : tensor<1024xf16> to tensor<1024xf32>
    %fs = tt.splat %f : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %fp = tt.addptr %fs, %r : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    tt.store %fp, %xf, %mask : tensor<1024x!tt.ptr<f32>>
    """
    args = f"%h: !tt.ptr<f16> {DIV16}, %f: !tt.ptr<f32> {DIV16}, %n: i32 {DIV16}"
    m, text = run(func(body, args), TO_TTGIR, ttgir=True)
    assert text.count("ttg.convert_layout") == 1
    assert text.count("tt.make_range") == 2
    b8 = BlockedEncodingAttr([8], [32], [4], [0])
    assert layouts(m) == {B4, b8}
    filecheck(
        text,
        "CHECK: %xf = arith.extf\nCHECK: ttg.convert_layout %xf : {{.*}}#blocked> -> {{.*}}#blocked1>",
    )
    assert encoding_of(value(m, "x").type) == b8


FOLD_INPUT = """
#a = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#b = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#c = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:89", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%p: !tt.ptr<f32>, %n: i32) attributes {noinline = false} {
    %r = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #a>
    %s = tt.splat %n : i32 -> tensor<512xi32, #a>
    %k = arith.constant dense<7> : tensor<512xi32, #a>
    %r1 = ttg.convert_layout %r : tensor<512xi32, #a> -> tensor<512xi32, #b>
    %s1 = ttg.convert_layout %s : tensor<512xi32, #a> -> tensor<512xi32, #b>
    %k1 = ttg.convert_layout %k : tensor<512xi32, #a> -> tensor<512xi32, #b>
    %t = arith.addi %r1, %s1 : tensor<512xi32, #b>
    %t2 = arith.addi %t, %k1 : tensor<512xi32, #b>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #b>
    %pp = tt.addptr %ps, %t2 : tensor<512x!tt.ptr<f32>, #b>, tensor<512xi32, #b>
    %x = tt.load %pp : tensor<512x!tt.ptr<f32>, #b>
    %x1 = ttg.convert_layout %x : tensor<512xf32, #b> -> tensor<512xf32, #c>
    %x2 = ttg.convert_layout %x1 : tensor<512xf32, #c> -> tensor<512xf32, #b>
    %x3 = ttg.convert_layout %x2 : tensor<512xf32, #b> -> tensor<512xf32, #b>
    tt.store %pp, %x3 : tensor<512x!tt.ptr<f32>, #b>
    tt.return
  }
}
"""


def test_folds_convert_chains_and_remakes_cheap_producers():
    m, text = run(FOLD_INPUT, ["remove-layout-conversions"], ttgir=True)
    assert "ttg.convert_layout" not in text
    assert layouts(m) == {B4}
    filecheck(
        text,
        """
        CHECK: tt.make_range {{.*}} : tensor<512xi32, #blocked>
        CHECK: tt.load
        CHECK-NEXT: tt.store %pp, %x : tensor<512x!tt.ptr<f32>, #blocked>
        """,
    )


def test_convert_between_two_anchors_remains():
    text = FOLD_INPUT.replace(
        "tt.store %pp, %x3 : tensor<512x!tt.ptr<f32>, #b>",
        "%q = tt.splat %p : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #c>\n"
        "    tt.store %q, %x1 : tensor<512x!tt.ptr<f32>, #c>",
    )
    _, out = run(text, ["remove-layout-conversions"], ttgir=True)
    filecheck(out, "CHECK: %x = tt.load\nCHECK: ttg.convert_layout %x\nCHECK: tt.store")
    assert out.count("ttg.convert_layout") == 1


D = DIV16
ODD_KERNELS = {
    "if": (
        """
    %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %pp = tt.addptr %ps, %r : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %x = tt.load %pp : tensor<256x!tt.ptr<f32>>
    %c0 = arith.constant 0 : i32
    %c = arith.cmpi sgt, %n, %c0 : i32
    %y = scf.if %c -> (tensor<256xf32>) {
      %e = math.exp %x : tensor<256xf32>
      scf.yield %e : tensor<256xf32>
    } else {
      scf.yield %x : tensor<256xf32>
    }
    tt.store %pp, %y : tensor<256x!tt.ptr<f32>>
""",
        f"%p: !tt.ptr<f32> {D}, %n: i32",
    ),
    "while": (
        """
    %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %pp = tt.addptr %ps, %r : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %x = tt.load %pp : tensor<256x!tt.ptr<f32>>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %w:2 = scf.while (%i = %c0, %v = %x) : (i32, tensor<256xf32>) -> (i32, tensor<256xf32>) {
      %cond = arith.cmpi slt, %i, %n : i32
      scf.condition(%cond) %i, %v : i32, tensor<256xf32>
    } do {
    ^bb0(%i2: i32, %v2: tensor<256xf32>):
      %i3 = arith.addi %i2, %c1 : i32
      %v3 = math.exp %v2 : tensor<256xf32>
      scf.yield %i3, %v3 : i32, tensor<256xf32>
    }
    tt.store %pp, %w#1 : tensor<256x!tt.ptr<f32>>
""",
        f"%p: !tt.ptr<f32> {D}, %n: i32",
    ),
    "trans_reshape_3d": (
        """
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x32x!tt.ptr<f32>>
    %x = tt.load %ps : tensor<16x32x!tt.ptr<f32>>
    %t = tt.trans %x {order = array<i32: 1, 0>} : tensor<16x32xf32> -> tensor<32x16xf32>
    %rs = tt.reshape %t : tensor<32x16xf32> -> tensor<512xf32>
    %r3 = tt.reshape %rs : tensor<512xf32> -> tensor<2x16x16xf32>
    %s = "tt.reduce"(%r3) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tt.reduce.return %c : f32
    }) : (tensor<2x16x16xf32>) -> tensor<2x16xf32>
    %q = tt.splat %p : !tt.ptr<f32> -> tensor<2x16x!tt.ptr<f32>>
    tt.store %q, %s : tensor<2x16x!tt.ptr<f32>>
    %m = arith.cmpf ogt, %rs, %rs : tensor<512xf32>
    tt.assert %m, "x" : tensor<512xi1>
""",
        f"%p: !tt.ptr<f32> {D}",
    ),
    "i64_offsets_i8": (
        """
    %r = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32>
    %r64 = arith.extsi %r : tensor<512xi32> to tensor<512xi64>
    %ps = tt.splat %p : !tt.ptr<i8> -> tensor<512x!tt.ptr<i8>>
    %pp = tt.addptr %ps, %r64 : tensor<512x!tt.ptr<i8>>, tensor<512xi64>
    %x = tt.load %pp : tensor<512x!tt.ptr<i8>>
    %bs = tt.splat %b : !tt.ptr<i1> -> tensor<512x!tt.ptr<i1>>
    %bp = tt.addptr %bs, %r : tensor<512x!tt.ptr<i1>>, tensor<512xi32>
    %z = arith.constant dense<0> : tensor<512xi8>
    %m = arith.cmpi sgt, %x, %z : tensor<512xi8>
    tt.store %bp, %m : tensor<512x!tt.ptr<i1>>
""",
        f"%p: !tt.ptr<i8> {D}, %b: !tt.ptr<i1> {D}",
    ),
    "reduce_axis0_2d": (
        """
    %rows = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %cols = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
    %r2 = tt.expand_dims %rows {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %c32 = arith.constant dense<32> : tensor<64x1xi32>
    %ro = arith.muli %r2, %c32 : tensor<64x1xi32>
    %c2 = tt.expand_dims %cols {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
    %rob = tt.broadcast %ro : tensor<64x1xi32> -> tensor<64x32xi32>
    %cob = tt.broadcast %c2 : tensor<1x32xi32> -> tensor<64x32xi32>
    %off = arith.addi %rob, %cob : tensor<64x32xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x32x!tt.ptr<f32>>
    %ptrs = tt.addptr %ps, %off : tensor<64x32x!tt.ptr<f32>>, tensor<64x32xi32>
    %x = tt.load %ptrs : tensor<64x32x!tt.ptr<f32>>
    %s = "tt.reduce"(%x) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tt.reduce.return %c : f32
    }) : (tensor<64x32xf32>) -> tensor<32xf32>
    %qs = tt.splat %q : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
    %qp = tt.addptr %qs, %cols : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
    tt.store %qp, %s : tensor<32x!tt.ptr<f32>>
""",
        f"%p: !tt.ptr<f32> {D}, %q: !tt.ptr<f32> {D}",
    ),
}
# name -> converts expected to remain (each one is a genuine disagreement)
ODD_CONVERTS = {
    "if": 0,
    "while": 0,
    "trans_reshape_3d": 2,  # the trans operand (its data moves between threads: through smem)
    # and the reduce result convert; reshape/trans themselves keep their layouts
    "i64_offsets_i8": 0,
    "reduce_axis0_2d": 1,  # a column sum (slice layout) stored through a 1D layout
}


@pytest.mark.parametrize("name", sorted(ODD_KERNELS))
def test_full_pipeline_on_control_flow_and_shape_ops(name):
    body, args = ODD_KERNELS[name]
    module = parse_module(func(body, args))
    run_ttir_passes(module, verify=True)
    run_ttgir_passes(module, verify=True)
    assert print_ir(module).count("ttg.convert_layout") == ODD_CONVERTS[name]
