"""The interpreter's `tt.scan` on hand-written upstream-syntax TTIR: the scan order (the
running values on the left), `reverse`, several operands, 2D axes, per-step rounding."""

from __future__ import annotations

import numpy as np
import pytest

from tests.runtime.interpreter_helpers import bf16_bits, parse_module
from tritium.runtime.interpreter import interpret


def ir_scan(n: int, ty: str, body: str, reverse: bool = False, axis: int = 0, rows: int = 0):
    """out = scan(x) of an n-block (or rows x n if rows) with the region `body` over
    %a (running) and %b (new) that defines %c."""
    rev = "true" if reverse else "false"
    if not rows:
        t, pt = f"tensor<{n}x{ty}>", f"tensor<{n}x!tt.ptr<{ty}>>"
        offs = f"%o = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32>"
        oty = f"tensor<{n}xi32>"
    else:
        t, pt = f"tensor<{rows}x{n}x{ty}>", f"tensor<{rows}x{n}x!tt.ptr<{ty}>>"
        oty = f"tensor<{rows}x{n}xi32>"
        offs = f"""%r = tt.make_range {{end = {rows} : i32, start = 0 : i32}} : tensor<{rows}xi32>
    %c0 = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32>
    %r1 = tt.expand_dims %r {{axis = 1 : i32}} : tensor<{rows}xi32> -> tensor<{rows}x1xi32>
    %w = arith.constant dense<{n}> : tensor<{rows}x1xi32>
    %r2 = arith.muli %r1, %w : tensor<{rows}x1xi32>
    %r3 = tt.broadcast %r2 : tensor<{rows}x1xi32> -> {oty}
    %c1 = tt.expand_dims %c0 {{axis = 0 : i32}} : tensor<{n}xi32> -> tensor<1x{n}xi32>
    %c2 = tt.broadcast %c1 : tensor<1x{n}xi32> -> {oty}
    %o = arith.addi %r3, %c2 : {oty}"""
    return parse_module(f"""
module {{
  tt.func public @k(%px: !tt.ptr<{ty}>, %py: !tt.ptr<{ty}>) {{
    {offs}
    %p1 = tt.splat %px : !tt.ptr<{ty}> -> {pt}
    %p2 = tt.addptr %p1, %o : {pt}, {oty}
    %x = tt.load %p2 : {pt}
    %y = "tt.scan"(%x) <{{axis = {axis} : i32, reverse = {rev}}}> ({{
    ^bb0(%a: {ty}, %b: {ty}):
      {body}
      tt.scan.return %c : {ty}
    }}) : ({t}) -> {t}
    %q1 = tt.splat %py : !tt.ptr<{ty}> -> {pt}
    %q2 = tt.addptr %q1, %o : {pt}, {oty}
    tt.store %q2, %y : {pt}
    tt.return
  }}
}}""")


def test_upstream_cumsum_snippet():
    x = np.random.default_rng(0).integers(-(2**31), 2**31, 128).astype(np.int32)
    y = np.zeros(128, np.int32)
    interpret(ir_scan(128, "i32", "%c = arith.addi %a, %b : i32"), (1,), [x, y])
    np.testing.assert_array_equal(y, np.cumsum(x.astype(np.int64)).astype(np.int32))  # wraps


@pytest.mark.parametrize("reverse", [False, True])
def test_running_value_is_the_left_operand(reverse):
    # c = 2*a - b is neither commutative nor associative: only the sequential order
    # out[i] = 2*out[i-1] - x[i] (from the far end if reverse) gives the reference
    x = np.random.default_rng(1).integers(-5, 6, 13).astype(np.int64)
    y = np.zeros(13, np.int64)
    body = "%two = arith.constant 2 : i64\n      %d = arith.muli %a, %two : i64\n      %c = arith.subi %d, %b : i64"
    interpret(ir_scan(13, "i64", body, reverse), (1,), [x, y])
    seq = x[::-1] if reverse else x
    ref, acc = [], None
    for v in seq.tolist():
        acc = v if acc is None else 2 * acc - v
        ref.append(acc)
    np.testing.assert_array_equal(y, ref[::-1] if reverse else ref)


def test_constant_region_result_broadcasts():
    x = np.arange(1, 10, dtype=np.float32)
    y = np.zeros(9, np.float32)
    interpret(ir_scan(9, "f32", "%c = arith.constant 7.0 : f32"), (1,), [x, y])
    np.testing.assert_array_equal(y, [1] + [7] * 8)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
def test_2d_axes(axis, reverse):
    x = np.random.default_rng(2 + axis).standard_normal((4, 8))
    y = np.zeros((4, 8))
    interpret(
        ir_scan(8, "f64", "%c = arith.addf %a, %b : f64", reverse, axis, rows=4), (1,), [x, y]
    )
    xs = np.flip(x, axis) if reverse else x
    ref = np.cumsum(xs, axis=axis)
    ref = np.flip(ref, axis) if reverse else ref
    np.testing.assert_allclose(y, ref, rtol=0, atol=8 * 2**-52 * np.abs(x).sum())


def test_bf16_region_rounds_every_step():
    ones = bf16_bits(np.ones(300))
    y = np.zeros(300, np.uint16)
    interpret(ir_scan(300, "bf16", "%c = arith.addf %a, %b : bf16"), (1,), [ones, y])
    # 256 + 1 is not a bf16: a sequential bf16 sum stops at 256
    np.testing.assert_array_equal(y, bf16_bits(np.minimum(np.arange(1, 301), 256)))


TWO = """
module {
  tt.func public @k(%pa: !tt.ptr<i32>, %pb: !tt.ptr<i32>) {
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %m:2 = "tt.scan"(%r, %r) <{axis = 0 : i32, reverse = REV}> ({
    ^bb0(%a0: i32, %a1: i32, %b0: i32, %b1: i32):
      tt.scan.return %a0, %b1 : i32, i32
    }) : (tensor<16xi32>, tensor<16xi32>) -> (tensor<16xi32>, tensor<16xi32>)
    %pa1 = tt.splat %pa : !tt.ptr<i32> -> tensor<16x!tt.ptr<i32>>
    %pa2 = tt.addptr %pa1, %r : tensor<16x!tt.ptr<i32>>, tensor<16xi32>
    %pb1 = tt.splat %pb : !tt.ptr<i32> -> tensor<16x!tt.ptr<i32>>
    %pb2 = tt.addptr %pb1, %r : tensor<16x!tt.ptr<i32>>, tensor<16xi32>
    tt.store %pa2, %m#0 : tensor<16x!tt.ptr<i32>>
    tt.store %pb2, %m#1 : tensor<16x!tt.ptr<i32>>
    tt.return
  }
}
"""


@pytest.mark.parametrize("reverse", [False, True])
def test_two_operands_first_and_current(reverse):
    # (a0, a1) + (b0, b1) = (a0, b1): the first scanned element and the current one
    a, b = np.full(16, -1, np.int32), np.full(16, -1, np.int32)
    interpret(parse_module(TWO.replace("REV", "true" if reverse else "false")), (1,), [a, b])
    np.testing.assert_array_equal(a, np.full(16, 15 if reverse else 0))
    np.testing.assert_array_equal(b, np.arange(16))
