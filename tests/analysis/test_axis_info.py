"""Axis info (contiguity / divisibility / constancy) on small TTIR snippets."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "passes"))

from pass_helpers import func, value  # noqa: E402

from tritium.analysis.axis_info import (  # noqa: E402
    MAX_DIVISOR,
    AxisInfo,
    AxisInfoAnalysis,
    join,
    order_from_contiguity,
    pow2_divisor,
)
from tritium.ir.layouts import layout_of  # noqa: E402
from tritium.ir.parser import parse_module  # noqa: E402

VECTOR_ADD_ARGS = "%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}, %q: !tt.ptr<f32>, %m: i32"
VECTOR_ADD = """
    %c1024 = arith.constant 1024 : i32
    %pid = tt.get_program_id x : i32
    %start = arith.muli %pid, %c1024 : i32
    %offs = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %s = tt.splat %start : i32 -> tensor<1024xi32>
    %o = arith.addi %s, %offs : tensor<1024xi32>
    %ns = tt.splat %n : i32 -> tensor<1024xi32>
    %mask = arith.cmpi slt, %o, %ns : tensor<1024xi32>
    %ms = tt.splat %m : i32 -> tensor<1024xi32>
    %mask_m = arith.cmpi slt, %o, %ms : tensor<1024xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %ptrs = tt.addptr %ps, %o : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %qs = tt.splat %q : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %qptrs = tt.addptr %qs, %o : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %x = tt.load %ptrs, %mask : tensor<1024x!tt.ptr<f32>>
"""


def analyse(body: str, args: str = ""):
    m = parse_module(func(body, args))
    return m, AxisInfoAnalysis(m)


def info(m, a, name: str) -> AxisInfo:
    return a[value(m, name)]


def test_helpers():
    assert pow2_divisor(0) == MAX_DIVISOR
    assert pow2_divisor(24) == 8
    assert pow2_divisor(-16) == 16
    assert order_from_contiguity((1, 64)) == [1, 0]
    assert order_from_contiguity((64, 1)) == [0, 1]
    assert order_from_contiguity((1, 1)) == [1, 0]
    a = AxisInfo((4,), (16,), (1,))
    b = AxisInfo((4,), (8,), (2,))
    assert join(a, b) == AxisInfo((4,), (8,), (1,))
    # contiguity differs: divisibility is limited by it too
    assert join(AxisInfo((4,), (16,), (1,)), AxisInfo((2,), (16,), (1,))).divisibility == (2,)


def test_vector_add_offsets_and_pointers():
    m, a = analyse(VECTOR_ADD, VECTOR_ADD_ARGS)
    assert info(m, a, "p") == AxisInfo((1,), (16,), (1,))
    assert info(m, a, "c1024") == AxisInfo((1,), (1024,), (1,), 1024)
    assert info(m, a, "pid") == AxisInfo.unknown(1)
    assert info(m, a, "start").divisibility == (1024,)
    assert info(m, a, "offs") == AxisInfo((1024,), (MAX_DIVISOR,), (1,))
    assert info(m, a, "s") == AxisInfo((1,), (1024,), (1024,))
    assert info(m, a, "o") == AxisInfo((1024,), (1024,), (1,))
    # pointers: divisibility in bytes; contiguity in elements
    assert info(m, a, "ps") == AxisInfo((1,), (16,), (1024,))
    assert info(m, a, "ptrs") == AxisInfo((1024,), (16,), (1,))
    assert info(m, a, "qptrs") == AxisInfo((1024,), (1,), (1,))
    # the load result knows nothing but constancy
    assert info(m, a, "x") == AxisInfo((1,), (1,), (1,))


def test_mask_constancy_from_bound_divisibility():
    m, a = analyse(VECTOR_ADD, VECTOR_ADD_ARGS)
    assert info(m, a, "mask").constancy == (16,)  # offs < n, n % 16 == 0
    assert info(m, a, "mask_m").constancy == (1,)  # nothing known about m
    assert a.mask_alignment(value(m, "mask")) == 16
    assert a.ptr_alignment(value(m, "ptrs")) == 4  # 16 bytes / 4-byte floats
    assert a.ptr_alignment(value(m, "qptrs")) == 1


def test_f16_pointer_divisibility_scales_by_element_size():
    body = """
    %offs = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %c8 = arith.constant dense<8> : tensor<256xi32>
    %o = arith.muli %offs, %c8 : tensor<256xi32>
    %ps = tt.splat %p : !tt.ptr<f16> -> tensor<256x!tt.ptr<f16>>
    %ptrs = tt.addptr %ps, %offs : tensor<256x!tt.ptr<f16>>, tensor<256xi32>
    %strided = tt.addptr %ps, %o : tensor<256x!tt.ptr<f16>>, tensor<256xi32>
    """
    m, a = analyse(body, "%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}")
    assert info(m, a, "c8") == AxisInfo((1,), (8,), (256,), 8)
    assert info(m, a, "ptrs") == AxisInfo((256,), (16,), (1,))
    assert a.ptr_alignment(value(m, "ptrs")) == 8
    # offs * 8: not contiguous any more, divisible by 8 elements = 16 bytes
    assert info(m, a, "o") == AxisInfo((1,), (8,), (1,))
    assert info(m, a, "strided") == AxisInfo((1,), (16,), (1,))


def test_sub_div_rem():
    body = """
    %offs = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %c4 = arith.constant dense<4> : tensor<128xi32>
    %c1 = arith.constant dense<1> : tensor<128xi32>
    %d = arith.divsi %offs, %c4 : tensor<128xi32>
    %r = arith.remsi %offs, %c4 : tensor<128xi32>
    %r1 = arith.remsi %offs, %c1 : tensor<128xi32>
    %s = arith.subi %offs, %c4 : tensor<128xi32>
    %s2 = arith.subi %c4, %offs : tensor<128xi32>
    %k = arith.addi %c4, %c4 : tensor<128xi32>
    """
    m, a = analyse(body)
    assert info(m, a, "d").constancy == (4,)  # [0,0,0,0,1,1,1,1,...]
    assert info(m, a, "d").contiguity == (1,)
    assert info(m, a, "r").contiguity == (4,)  # [0,1,2,3,0,1,2,3,...]
    assert info(m, a, "r1") == AxisInfo((1,), (1,), (128,), 0)
    assert info(m, a, "s").contiguity == (128,)
    assert info(m, a, "s").divisibility == (4,)
    assert info(m, a, "s2").contiguity == (1,)  # decreasing: not contiguous
    assert info(m, a, "k").constant == 8


def test_2d_broadcast_expand_dims():
    body = """
    %rows = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %cols = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %r2 = tt.expand_dims %rows {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
    %st = tt.splat %stride : i32 -> tensor<16x1xi32>
    %ro = arith.muli %r2, %st : tensor<16x1xi32>
    %c2 = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %rob = tt.broadcast %ro : tensor<16x1xi32> -> tensor<16x64xi32>
    %cob = tt.broadcast %c2 : tensor<1x64xi32> -> tensor<16x64xi32>
    %off = arith.addi %rob, %cob : tensor<16x64xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x64x!tt.ptr<f32>>
    %ptrs = tt.addptr %ps, %off : tensor<16x64x!tt.ptr<f32>>, tensor<16x64xi32>
    """
    args = (
        "%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %stride: i32 {tt.divisibility = 16 : i32}"
    )
    m, a = analyse(body, args)
    assert info(m, a, "r2").contiguity == (16, 1)
    assert info(m, a, "c2").contiguity == (1, 64)
    assert info(m, a, "ro").divisibility == (16, 16)
    assert info(m, a, "rob").constancy == (1, 64)
    assert info(m, a, "cob").constancy == (16, 1)
    ptrs = info(m, a, "ptrs")
    assert ptrs.contiguity == (1, 64)
    # along dim 1 each row starts 16-byte aligned; along dim 0 a column starts anywhere
    assert ptrs.divisibility == (4, 16)
    assert order_from_contiguity(ptrs.contiguity) == [1, 0]


def test_select_and_compare_with_constants():
    body = """
    %offs = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %c32 = arith.constant dense<32> : tensor<64xi32>
    %lt = arith.cmpi slt, %offs, %c32 : tensor<64xi32>
    %gt = arith.cmpi sgt, %c32, %offs : tensor<64xi32>
    %sel = arith.select %lt, %offs, %offs : tensor<64xi1>, tensor<64xi32>
    %t = arith.constant true
    %sel2 = arith.select %t, %offs, %c32 : tensor<64xi32>
    """
    m, a = analyse(body)
    assert info(m, a, "lt").constancy == (32,)
    assert info(m, a, "gt").constancy == (32,)
    assert info(m, a, "sel").contiguity == (32,)  # limited by the condition's constancy
    assert info(m, a, "sel2") == info(m, a, "offs")


def test_for_induction_variable_and_loop_carried_pointer():
    body = """
    %c0 = arith.constant 0 : i32
    %c128 = arith.constant 128 : i32
    %c3 = arith.constant dense<3> : tensor<128xi32>
    %step = arith.constant dense<128> : tensor<128xi32>
    %offs = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    %ptrs = tt.addptr %ps, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %r:2 = scf.for %i = %c0 to %n step %c128 iter_args(%a = %ptrs, %b = %ptrs) -> (tensor<128x!tt.ptr<f32>>, tensor<128x!tt.ptr<f32>>) : i32 {
      %iv = tt.splat %i : i32 -> tensor<128xi32>
      %a2 = tt.addptr %a, %step : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
      %b2 = tt.addptr %b, %c3 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
      scf.yield %a2, %b2 : tensor<128x!tt.ptr<f32>>, tensor<128x!tt.ptr<f32>>
    }
    """
    args = "%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32"
    m, a = analyse(body, args)
    assert info(m, a, "i") == AxisInfo((1,), (128,), (1,))
    assert info(m, a, "iv").divisibility == (128,)
    # advancing by 128 floats keeps 16-byte alignment; by 3 floats only 4 bytes
    assert info(m, a, "a") == AxisInfo((128,), (16,), (1,))
    assert info(m, a, "b").divisibility == (4,)
    assert info(m, a, "b").contiguity == (128,)
    results = [v for v in m.walk() if v.name == "scf.for"][0].results
    assert a[results[0]] == AxisInfo((128,), (16,), (1,))
    assert a[results[1]].divisibility == (4,)


def test_op_hints_override_and_unknown_values():
    body = """
    %x = arith.addi %n, %n {tt.divisibility = 8 : i32} : i32
    %f = arith.constant 1.5 : f32
    %cst = arith.constant dense<[0, 1, 2, 3]> : tensor<4xi32>
    """
    m, a = analyse(body, "%n: i32")
    assert info(m, a, "x").divisibility == (8,)
    assert info(m, a, "f") == AxisInfo.unknown(1)
    assert info(m, a, "cst") == AxisInfo.unknown(1)  # non-splat dense: not modelled


def test_multi_block_function():
    text = """
module {
  tt.func public @k(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32) attributes {noinline = false} {
    %pid = tt.get_program_id x : i32
    %c = arith.cmpi sge, %pid, %n : i32
    cf.cond_br %c, ^bb1, ^bb2
  ^bb1:
    tt.return
  ^bb2:
    %offs = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %ptrs = tt.addptr %ps, %offs : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    tt.return
  }
}
"""
    m = parse_module(text)
    a = AxisInfoAnalysis(m)
    assert a[value(m, "ptrs")] == AxisInfo((64,), (16,), (1,))


# --------------------------------------------------------------------------- register queries


def _blocked(spt: int, warps: int = 4) -> str:
    return (
        f"#ttg.blocked<{{sizePerThread = [{spt}], threadsPerWarp = [32], "
        f"warpsPerCTA = [{warps}], order = [0]}}>"
    )


def ttgir(body: str, args: str, layout: str) -> str:
    """A TTGIR module (#b = `layout`, 4 warps) with one kernel."""
    return (
        f"#b = {layout}\n"
        'module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {\n'
        f"  tt.func public @k({args}) attributes {{noinline = false}} {{\n{body}\n"
        "    tt.return\n  }\n}\n"
    )


MASKED_COPY = """
    %offs = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #b>
    %ns = tt.splat %n : i32 -> tensor<1024xi32, #b>
    %mask = arith.cmpi slt, %offs, %ns : tensor<1024xi32, #b>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #b>
    %ptrs = tt.addptr %ps, %offs : tensor<1024x!tt.ptr<f32>, #b>, tensor<1024xi32, #b>
    %x = tt.load %ptrs, %mask : tensor<1024x!tt.ptr<f32>, #b>
    %c3 = arith.constant dense<3> : tensor<1024xi32, #b>
    %o3 = arith.muli %offs, %c3 : tensor<1024xi32, #b>
    %q = tt.addptr %ps, %o3 : tensor<1024x!tt.ptr<f32>, #b>, tensor<1024xi32, #b>
    tt.store %q, %x : tensor<1024x!tt.ptr<f32>, #b>
"""


def _ops(m, name):
    return [op for op in m.walk() if op.name == name]


def test_vector_width_of_loads_and_stores():
    args = "%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}"
    m = parse_module(ttgir(MASKED_COPY, args, _blocked(8, 4)))
    a = AxisInfoAnalysis(m)
    (load,), (store,) = _ops(m, "tt.load"), _ops(m, "tt.store")
    assert a.vector_width(load) == 4  # 8 per thread, but 16 bytes per access
    assert a.vector_width(store) == 1  # offs * 3: not contiguous
    # n without a divisibility hint: the mask may change at every element
    m = parse_module(
        ttgir(
            MASKED_COPY,
            args.replace("%n: i32 {tt.divisibility = 16 : i32}", "%n: i32"),
            _blocked(8, 4),
        )
    )
    assert AxisInfoAnalysis(m).vector_width(_ops(m, "tt.load")[0]) == 1
    # 2 elements per thread: 2-wide, whatever the alignment allows
    m = parse_module(
        ttgir(MASKED_COPY, args, _blocked(2, 16)).replace(
            '"ttg.num-warps" = 4', '"ttg.num-warps" = 16'
        )
    )
    assert AxisInfoAnalysis(m).vector_width(_ops(m, "tt.load")[0]) == 2


def test_equal_registers_follow_mask_constancy():
    args = "%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}"
    m = parse_module(ttgir(MASKED_COPY, args, _blocked(8, 4)))
    a = AxisInfoAnalysis(m)
    mask = value(m, "mask")
    assert a[mask].constancy == (16,)
    # 8 registers per thread, contiguous: one compare per thread (its 8 offsets lie in one
    # block of 16: the thread's own part is a multiple of 8)
    assert a.equal_registers(mask) == [0] * 8
    assert a.equal_registers(value(m, "offs")) == list(range(8))  # all different
    m = parse_module(
        ttgir(MASKED_COPY, args.replace(" {tt.divisibility = 16 : i32}", ""), _blocked(8, 4))
    )
    assert AxisInfoAnalysis(m).equal_registers(value(m, "mask")) == list(range(8))


K_MASK = """
    %offs = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 1, parent = #b}>>
    %rows = tt.expand_dims %offs {axis = 1 : i32} : tensor<32xi32, #ttg.slice<{dim = 1, parent = #b}>> -> tensor<32x1xi32, #b>
    %ns = tt.splat %n : i32 -> tensor<32x1xi32, #b>
    %cmp = arith.cmpi slt, %rows, %ns : tensor<32x1xi32, #b>
    %mask = tt.broadcast %cmp : tensor<32x1xi1, #b> -> tensor<32x256xi1, #b>
"""


def test_equal_registers_across_warps_inside_a_block():
    """A GEMM's B-tile K mask (`offs_k < k_left`, k_left % 16 == 0) with the warps along K:
    a thread's rows w, w + 4, w + 8, w + 12 lie in one block of 16 whatever the warp w (a
    coordinate is the XOR of the register's part and the thread's), so they are one
    compare, as upstream's maybeDeduplicate makes them; without the hint every row is its
    own. Checked against every thread's coordinates."""
    b = (
        "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], "
        "warpsPerCTA = [4, 1], order = [1, 0]}>"
    )
    args = "%n: i32 {tt.divisibility = 16 : i32}"
    m = parse_module(ttgir(K_MASK, args, b))
    a = AxisInfoAnalysis(m)
    mask = value(m, "mask")
    assert a[mask].constancy == (16, 256)
    leaders = a.equal_registers(mask)
    assert sorted(set(leaders)) == [0, 32]  # 8 rows per thread, in 2 blocks of 16
    layout = layout_of(mask.type)
    for lane in range(layout.num_lanes):
        for warp in range(layout.num_warps):
            row = [layout.coord(r, lane, warp)[0] for r in range(layout.num_registers)]
            assert all(row[r] // 16 == row[lead] // 16 for r, lead in enumerate(leaders))
    m = parse_module(ttgir(K_MASK, args.replace(" {tt.divisibility = 16 : i32}", ""), b))
    assert len(set(AxisInfoAnalysis(m).equal_registers(value(m, "mask")))) == 8  # a row each


def test_int_to_ptr_of_scaled_offsets_is_an_addptr():
    body = """
    %offs = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %o64 = arith.extsi %offs : tensor<1024xi32> to tensor<1024xi64>
    %four = arith.constant dense<4> : tensor<1024xi64>
    %bytes = arith.muli %o64, %four : tensor<1024xi64>
    %base = tt.ptr_to_int %p : !tt.ptr<f32> -> i64
    %bases = tt.splat %base : i64 -> tensor<1024xi64>
    %addrs = arith.addi %bases, %bytes : tensor<1024xi64>
    %xp = tt.int_to_ptr %addrs : tensor<1024xi64> -> tensor<1024x!tt.ptr<f32>>
    %hp = tt.int_to_ptr %addrs : tensor<1024xi64> -> tensor<1024x!tt.ptr<f16>>
    """
    m, a = analyse(body, "%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}")
    assert info(m, a, "addrs").contiguity == (1,)  # the integers step by 4
    assert info(m, a, "xp") == AxisInfo((1024,), (16,), (1,))  # the floats by one
    assert info(m, a, "hp").contiguity == (1,)  # 4 bytes apart is not contiguous for f16


def test_a_load_is_constant_where_its_pointer_mask_and_other_are():
    body = """
    %offs = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %ps = tt.splat %p : !tt.ptr<i32> -> tensor<64x!tt.ptr<i32>>
    %c32 = arith.constant dense<32> : tensor<64xi32>
    %m = arith.cmpi slt, %offs, %c32 : tensor<64xi32>
    %zero = arith.constant dense<0> : tensor<64xi32>
    %x = tt.load %ps, %m, %zero : tensor<64x!tt.ptr<i32>>
    %y = tt.load %ps, %m, %offs : tensor<64x!tt.ptr<i32>>
    """
    m, a = analyse(body, "%p: !tt.ptr<i32>")
    assert info(m, a, "x").constancy == (32,)
    assert info(m, a, "y").constancy == (1,)  # masked-off elements are `other`'s: all differ
