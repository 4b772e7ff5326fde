"""convert-triton-to-tritongpu: default layouts, slices, loops, module attributes."""

from __future__ import annotations

import pytest
from filecheck import filecheck
from pass_helpers import func, run, value

from tritium.ir.parser import parse_module
from tritium.ir.ttg import (
    BlockedEncodingAttr,
    SliceEncodingAttr,
    blocked_layout,
    default_blocked_layout,
)
from tritium.ir.types import encoding_of
from tritium.passes.convert_triton_to_tritongpu import convert_triton_to_tritongpu, dot_layout


def blocked(spt, tpw, wpc, order):
    return BlockedEncodingAttr(spt, tpw, wpc, order)


@pytest.mark.parametrize(
    "shape, warps, expected",
    [
        ([1024], 4, blocked([1], [32], [4], [0])),
        ([2048], 8, blocked([1], [32], [8], [0])),
        ([16], 4, blocked([1], [32], [4], [0])),  # smaller than the CTA: replicated
        ([64, 32], 4, blocked([1, 1], [1, 32], [4, 1], [1, 0])),
        ([32, 64], 4, blocked([1, 1], [1, 32], [2, 2], [1, 0])),
        ([64, 1], 4, blocked([1, 1], [32, 1], [4, 1], [1, 0])),
        ([8, 16], 4, blocked([1, 1], [2, 16], [4, 1], [1, 0])),
        ([2, 4, 8], 4, blocked([1, 1, 1], [1, 4, 8], [4, 1, 1], [2, 1, 0])),
    ],
)
def test_default_blocked_layout(shape, warps, expected):
    assert default_blocked_layout(shape, warps) == expected


def test_blocked_layout_with_vectors_and_other_orders():
    assert blocked_layout([1024], [4], [0], 4) == blocked([4], [32], [4], [0])
    assert blocked_layout([128, 32], [1, 8], [1, 0], 4) == blocked([1, 8], [8, 4], [4, 1], [1, 0])
    assert blocked_layout([64, 64], [4, 1], [0, 1], 4) == blocked([4, 1], [16, 2], [1, 4], [0, 1])
    assert dot_layout((64, 64), 4, 32) == blocked([4, 4], [2, 16], [4, 1], [1, 0])
    assert dot_layout((16, 16), 4, 32) == blocked([1, 1], [2, 16], [4, 1], [1, 0])


def test_slice_layout_helpers():
    parent = blocked([1, 4], [2, 16], [4, 1], [1, 0])
    s = SliceEncodingAttr(1, parent)
    assert (s.rank, s.order, s.sizePerThread) == (1, [0], [1])
    assert SliceEncodingAttr(0, parent).sizePerThread == [4]


def test_elementwise_kernel_and_module_attributes():
    body = """
    %offs = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %pp = tt.addptr %ps, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %z = arith.constant dense<0.000000e+00> : tensor<1024xf32>
    %x = tt.load %pp : tensor<1024x!tt.ptr<f32>>
    %y = arith.addf %x, %z : tensor<1024xf32>
    %s = "tt.reduce"(%y) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tt.reduce.return %c : f32
    }) : (tensor<1024xf32>) -> f32
    tt.store %pp, %y : tensor<1024x!tt.ptr<f32>>
    """
    _, text = run(
        func(body, "%p: !tt.ptr<f32>"), ["convert-triton-to-tritongpu"], ttgir=True, num_warps=8
    )
    filecheck(
        text,
        """
        CHECK: #blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}>
        CHECK-NEXT: module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "cuda:89", "ttg.threads-per-warp" = 32 : i32}
        CHECK: tt.make_range {{.*}} : tensor<1024xi32, #blocked>
        CHECK: arith.constant dense<0.000000e+00> : tensor<1024xf32, #blocked>
        CHECK: (tensor<1024xf32, #blocked>) -> f32
        CHECK-NOT: ttg.convert_layout
        CHECK: tt.store
        """,
    )


def test_reduce_gives_slice_and_expand_dims_takes_one():
    body = """
    %pt = tt.splat %p : !tt.ptr<f32> -> tensor<8x128x!tt.ptr<f32>>
    %x = tt.load %pt : tensor<8x128x!tt.ptr<f32>>
    %m = "tt.reduce"(%x) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.maxnumf %a, %b : f32
      tt.reduce.return %c : f32
    }) : (tensor<8x128xf32>) -> tensor<8xf32>
    %m2 = tt.expand_dims %m {axis = 1 : i32} : tensor<8xf32> -> tensor<8x1xf32>
    %mb = tt.broadcast %m2 : tensor<8x1xf32> -> tensor<8x128xf32>
    %d = arith.subf %x, %mb : tensor<8x128xf32>
    tt.store %pt, %d : tensor<8x128x!tt.ptr<f32>>
    """
    m, text = run(func(body, "%p: !tt.ptr<f32>"), ["convert-triton-to-tritongpu"], ttgir=True)
    big = default_blocked_layout([8, 128], 4)
    col = default_blocked_layout([8, 1], 4)
    assert encoding_of(value(m, "x").type) == big
    assert encoding_of(value(m, "m").type) == SliceEncodingAttr(1, big)
    assert encoding_of(value(m, "m2").type) == col
    assert encoding_of(value(m, "m2").owner.src.type) == SliceEncodingAttr(1, col)
    assert encoding_of(value(m, "mb").type) == big
    filecheck(
        text,
        """
        CHECK: "tt.reduce"
        CHECK: ttg.convert_layout %m : {{.*}}parent = #blocked}>> -> {{.*}}parent = #blocked1}>>
        CHECK-NEXT: %m2 = tt.expand_dims
        CHECK-NEXT: ttg.convert_layout %m2 : tensor<8x1xf32, #blocked1> -> tensor<8x1xf32, #blocked>
        CHECK-NEXT: %mb = tt.broadcast
        """,
    )


def test_loops_and_ifs_carry_default_layouts():
    body = """
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %z = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %pt = tt.splat %p : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<64x64xf32>) : i32 {
      %a = tt.load %pt : tensor<64x64x!tt.ptr<f32>>
      %d = tt.dot %a, %a, %acc, inputPrecision = ieee : tensor<64x64xf32> * tensor<64x64xf32> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    %c = arith.cmpi sgt, %n, %c0 : i32
    %q = scf.if %c -> (tensor<64x64xf32>) {
      scf.yield %r : tensor<64x64xf32>
    } else {
      scf.yield %z : tensor<64x64xf32>
    }
    tt.store %pt, %q : tensor<64x64x!tt.ptr<f32>>
    """
    m, _ = run(func(body, "%p: !tt.ptr<f32>, %n: i32"), ["convert-triton-to-tritongpu"], ttgir=True)
    default = default_blocked_layout([64, 64], 4)
    assert encoding_of(value(m, "acc").type) == default
    assert encoding_of(value(m, "r").type) == default
    assert encoding_of(value(m, "q").type) == default
    dot = next(op for op in m.walk() if op.name == "tt.dot")
    assert encoding_of(dot.d.type) == dot_layout((64, 64), 4, 32)
    assert encoding_of(dot.a.type) == default
    assert dot.c.owner.name == "ttg.convert_layout"


def test_refuses_ttgir_and_several_ctas():
    text = func("", "%p: !tt.ptr<f32>")
    module = parse_module(text)
    convert_triton_to_tritongpu(module)
    with pytest.raises(ValueError):
        convert_triton_to_tritongpu(module)
    with pytest.raises(NotImplementedError):
        convert_triton_to_tritongpu(parse_module(text), num_ctas=2)


CALL = """
module {
  tt.func private @helper(%x: tensor<1024xf32>) -> tensor<1024xf32> attributes {noinline = true} {
    %e = math.exp %x : tensor<1024xf32>
    tt.return %e : tensor<1024xf32>
  }
  tt.func public @k(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %pp = tt.addptr %ps, %r : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %x = tt.load %pp : tensor<1024x!tt.ptr<f32>>
    %y = tt.call @helper(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
    tt.store %pp, %y : tensor<1024x!tt.ptr<f32>>
    tt.return
  }
}
"""


def test_function_signatures_get_layouts_and_calls_keep_them():
    passes = ["convert-triton-to-tritongpu", "coalesce", "remove-layout-conversions"]
    _, text = run(CALL, passes, ttgir=True)
    filecheck(
        text,
        """
        CHECK: #blocked = #ttg.blocked<{sizePerThread = [1]
        CHECK: #blocked1 = #ttg.blocked<{sizePerThread = [4]
        CHECK: tt.func private @helper(%x: tensor<1024xf32, #blocked>) -> tensor<1024xf32, #blocked>
        CHECK: %x = tt.load {{.*}}#blocked1>
        CHECK-NEXT: ttg.convert_layout %x : tensor<1024xf32, #blocked1> -> tensor<1024xf32, #blocked>
        CHECK-NEXT: tt.call @helper
        CHECK-NEXT: ttg.convert_layout %y : tensor<1024xf32, #blocked> -> tensor<1024xf32, #blocked1>
        """,
    )


def test_trans_operand_gets_the_result_layout_permuted_back():
    from tritium.passes.convert_triton_to_tritongpu import transposed_operand_layout

    # result dim i is operand dim order[i]: every per-dim list is permuted back, and the
    # operand's fastest dim is the one that becomes the result's fastest
    res = blocked([1, 4], [4, 8], [2, 2], [1, 0])
    assert transposed_operand_layout(res, [1, 0]) == blocked([4, 1], [8, 4], [2, 2], [0, 1])
    res3 = blocked([1, 1, 2], [1, 4, 8], [4, 1, 1], [2, 1, 0])
    want3 = blocked([1, 2, 1], [4, 8, 1], [1, 1, 4], [1, 0, 2])  # order (2, 0, 1)
    assert transposed_operand_layout(res3, [2, 0, 1]) == want3
    assert transposed_operand_layout(SliceEncodingAttr(0, res), [1, 0]) is None
    m = parse_module(
        """module {
  tt.func public @k(%x: tensor<32x64xf32>) -> tensor<64x32xf32> {
    %t = tt.trans %x {order = array<i32: 1, 0>} : tensor<32x64xf32> -> tensor<64x32xf32>
    tt.return %t : tensor<64x32xf32>
  }
}"""
    )
    convert_triton_to_tritongpu(m, num_warps=4)
    trans = next(op for op in m.walk() if op.name == "tt.trans")
    assert trans.operands[0].owner.name == "ttg.convert_layout"  # the data moves there
    want = transposed_operand_layout(encoding_of(trans.result.type), [1, 0])
    assert encoding_of(trans.operands[0].type) == want
