"""The TTIR interpreter against numpy float64 references, and its bounds checks.

Upstream's seed kernels (TTIR and TTGIR) run on odd sizes with poisoned outputs;
hand-written snippets pin down reductions, control flow, memory and errors
(elementwise semantics: test_interpreter_arith.py; memory: test_interpreter_memory.py).
"""

from __future__ import annotations

import math
import pathlib

import numpy as np
import pytest

from tests.runtime.interpreter_helpers import (
    bf16_bits,
    i32,
    ir_copy,
    parse_module,
    run_scalar,
    tf32,
)
from tritium.errors import ArgumentError, KernelAssertionError, TritiumError
from tritium.ir.parser import parse_module as parse_upstream
from tritium.runtime.interpreter import interpret

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "upstream"
RNG = np.random.default_rng(0)


def load_upstream(name: str):
    return parse_upstream((DATA / name).read_text(), name)


def softmax_ref(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ------------------------------------------------------------------ upstream kernels


@pytest.mark.parametrize("ext", ["ttir", "ttgir"])
def test_add_kernel(ext):
    n = 2500  # not a multiple of BLOCK = 1024
    x, y = RNG.standard_normal((2, n), dtype=np.float32)
    out = np.full(n + 7, np.nan, np.float32)
    interpret(load_upstream(f"add_kernel.{ext}"), (math.ceil(n / 1024),), [x, y, out, n])
    np.testing.assert_array_equal(out[:n], x + y)
    assert np.isnan(out[n:]).all()  # masked lanes never stored


@pytest.mark.parametrize("ext", ["ttir", "ttgir"])
def test_softmax_kernel(ext):
    rows, cols = 7, 1000
    x = RNG.standard_normal((rows, cols), dtype=np.float32) * 3
    out = np.full_like(x, np.nan)
    interpret(load_upstream(f"softmax_kernel.{ext}"), (rows,), [x, out, rows, cols])
    np.testing.assert_allclose(out, softmax_ref(x), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("ext", ["ttir", "ttgir"])
def test_softmax_causal_early_return_and_strided_rows(ext):
    rows, cols, seq_len = 6, 900, 4
    big = RNG.standard_normal((rows, 1024), dtype=np.float32)
    x = big[:, 50 : 50 + cols]  # a view: rows 1024 floats apart, starting mid-buffer
    out = np.full((rows, cols + 3), np.nan, np.float32)
    grid = (rows + 5,)  # programs past n_rows return early: no out-of-bounds access
    args = [x, out, rows, cols, seq_len, big.shape[1], out.shape[1]]
    interpret(load_upstream(f"softmax_causal_simple_kernel.{ext}"), grid, args)
    ref = np.empty((rows, cols))
    for r in range(rows):
        row = x[r].astype(np.float64).copy()
        row[np.arange(cols) > r % seq_len] = -np.inf
        ref[r] = softmax_ref(row)
    np.testing.assert_allclose(out[:, :cols], ref, rtol=1e-5, atol=1e-7)
    assert np.isnan(out[:, cols:]).all()


@pytest.mark.parametrize("ext", ["ttir", "ttgir"])
def test_rms_norm(ext):
    rows, cols, eps = 5, 1500, 1e-5
    x = RNG.standard_normal((rows, cols + 11), dtype=np.float32)
    w = RNG.standard_normal(cols, dtype=np.float32)
    y = np.full((rows, cols + 2), np.nan, np.float32)
    args = [x, w, y, x.shape[1], y.shape[1], cols, eps]
    interpret(load_upstream(f"rms_norm_simple_kernel.{ext}"), (rows,), args)
    x64 = x[:, :cols].astype(np.float64)
    ref = x64 / np.sqrt((x64 * x64).mean(axis=1, keepdims=True) + eps) * w
    np.testing.assert_allclose(y[:, :cols], ref, rtol=1e-5, atol=1e-6)
    assert np.isnan(y[:, cols:]).all()


@pytest.mark.parametrize("ext", ["ttir", "ttgir"])
def test_online_softmax_loops(ext):
    rows, cols = 3, 2500  # three trips of the 1024-wide loop, the last one masked
    x = RNG.standard_normal((rows, cols), dtype=np.float32) * 4
    out = np.full_like(x, np.nan)
    interpret(load_upstream(f"online_softmax_kernel.{ext}"), (rows,), [x, out, cols, cols, cols])
    np.testing.assert_allclose(out, softmax_ref(x), rtol=1e-5, atol=1e-8)


def test_matmul_tiledtf32():
    m, n, k = 70, 90, 100  # none a multiple of the 64x64x32 tiles
    a = RNG.standard_normal((m, k), dtype=np.float32)
    b = RNG.standard_normal((k, n), dtype=np.float32)
    c = np.full((m, n), np.nan, np.float32)
    interpret(load_upstream("matmul_tiled_kernel.ttir"), (2, 2), [a, b, c, m, n, k])
    exact = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    assert np.all(np.abs(c - exact) <= 5e-3 * scale)
    # The inputs were rounded to tf32 (not used at full precision).
    rounded = tf32(a).astype(np.float64) @ tf32(b).astype(np.float64)
    assert np.all(np.abs(c - rounded) <= 1e-5 * scale)
    assert np.abs(c - exact).max() > np.abs(c - rounded).max()


# ------------------------------------------------------------------ reductions


ARGMAX = """
module {
  tt.func public @argmax(%px: !tt.ptr<f32>, %pv: !tt.ptr<f32>, %pi: !tt.ptr<i32>) {
    %r = tt.make_range {end = 37 : i32, start = 0 : i32} : tensor<37xi32>
    %p1 = tt.splat %px : !tt.ptr<f32> -> tensor<37x!tt.ptr<f32>>
    %p2 = tt.addptr %p1, %r : tensor<37x!tt.ptr<f32>>, tensor<37xi32>
    %x = tt.load %p2 : tensor<37x!tt.ptr<f32>>
    %m:2 = "tt.reduce"(%x, %r) <{axis = 0 : i32}> ({
    ^bb0(%v1: f32, %i1: i32, %v2: f32, %i2: i32):
      %gt = arith.cmpf ogt, %v1, %v2 : f32
      %eq = arith.cmpf oeq, %v1, %v2 : f32
      %lt = arith.cmpi slt, %i1, %i2 : i32
      %tie = arith.andi %eq, %lt : i1
      %pick = arith.ori %gt, %tie : i1
      %v = arith.select %pick, %v1, %v2 : f32
      %i = arith.select %pick, %i1, %i2 : i32
      tt.reduce.return %v, %i : f32, i32
    }) : (tensor<37xf32>, tensor<37xi32>) -> (f32, i32)
    tt.store %pv, %m#0 : !tt.ptr<f32>
    tt.store %pi, %m#1 : !tt.ptr<i32>
    tt.return
  }
}
"""


def test_argmax_two_operand_reduce_keeps_lowest_index_on_ties():
    x = RNG.standard_normal(37).astype(np.float32)
    x[[5, 20, 36]] = 9.0  # three-way tie, the last one in the odd leftover lane
    v, i = np.zeros(1, np.float32), np.zeros(1, np.int32)
    interpret(parse_module(ARGMAX), (1,), [x, v, i])
    assert (v[0], i[0]) == (9.0, 5)


def test_reduce_pairs_neighbours_left_is_lower_index():
    # combine((a0, a1), (b0, b1)) = (a0, b1) is associative but not commutative:
    # the result is (first, last) only if every pairing keeps the lower index on the left.
    for n in (1, 2, 7, 37, 64):
        text = f"""
module {{
  tt.func public @k(%out: !tt.ptr<i32>) {{
    %r = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32>
    %m:2 = "tt.reduce"(%r, %r) <{{axis = 0 : i32}}> ({{
    ^bb0(%a0: i32, %a1: i32, %b0: i32, %b1: i32):
      tt.reduce.return %a0, %b1 : i32, i32
    }}) : (tensor<{n}xi32>, tensor<{n}xi32>) -> (i32, i32)
    %o1 = tt.addptr %out, %m#1 : !tt.ptr<i32>, i32
    %c1 = arith.constant 1 : i32
    %o2 = tt.addptr %out, %c1 : !tt.ptr<i32>, i32
    tt.store %out, %m#0 : !tt.ptr<i32>
    tt.store %o2, %m#1 : !tt.ptr<i32>
    tt.return
  }}
}}"""
        out = np.full(n + 1, -1, np.int32)
        interpret(parse_module(text), (1,), [out])
        assert out[0] == 0 and out[1] == n - 1


def ir_2d_reduce(axis: int, combine: str, rows: int, cols: int):
    shape, rshape = f"{rows}x{cols}", str(cols if axis == 0 else rows)
    return parse_module(f"""
module {{
  tt.func public @k(%px: !tt.ptr<f32>, %pout: !tt.ptr<f32>, %stride: i32) {{
    %ri = tt.make_range {{end = {rows} : i32, start = 0 : i32}} : tensor<{rows}xi32>
    %rj = tt.make_range {{end = {cols} : i32, start = 0 : i32}} : tensor<{cols}xi32>
    %i2 = tt.expand_dims %ri {{axis = 1 : i32}} : tensor<{rows}xi32> -> tensor<{rows}x1xi32>
    %j2 = tt.expand_dims %rj {{axis = 0 : i32}} : tensor<{cols}xi32> -> tensor<1x{cols}xi32>
    %s = tt.splat %stride : i32 -> tensor<{rows}x1xi32>
    %is = arith.muli %i2, %s : tensor<{rows}x1xi32>
    %ib = tt.broadcast %is : tensor<{rows}x1xi32> -> tensor<{shape}xi32>
    %jb = tt.broadcast %j2 : tensor<1x{cols}xi32> -> tensor<{shape}xi32>
    %off = arith.addi %ib, %jb : tensor<{shape}xi32>
    %p1 = tt.splat %px : !tt.ptr<f32> -> tensor<{shape}x!tt.ptr<f32>>
    %p2 = tt.addptr %p1, %off : tensor<{shape}x!tt.ptr<f32>>, tensor<{shape}xi32>
    %x = tt.load %p2 : tensor<{shape}x!tt.ptr<f32>>
    %red = "tt.reduce"(%x) <{{axis = {axis} : i32}}> ({{
    ^bb0(%a: f32, %b: f32):
      %c = {combine} %a, %b : f32
      tt.reduce.return %c : f32
    }}) : (tensor<{shape}xf32>) -> tensor<{rshape}xf32>
    %ro = tt.make_range {{end = {rshape} : i32, start = 0 : i32}} : tensor<{rshape}xi32>
    %o1 = tt.splat %pout : !tt.ptr<f32> -> tensor<{rshape}x!tt.ptr<f32>>
    %o2 = tt.addptr %o1, %ro : tensor<{rshape}x!tt.ptr<f32>>, tensor<{rshape}xi32>
    tt.store %o2, %red : tensor<{rshape}x!tt.ptr<f32>>
    tt.return
  }}
}}""")


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("combine", ["arith.addf", "arith.maxnumf"])
def test_reduce_2d_along_each_axis(axis, combine):
    rows, cols = 8, 5
    x = RNG.standard_normal((rows, cols + 3)).astype(np.float32)  # rows padded: stride 8
    out = np.full(cols if axis == 0 else rows, np.nan, np.float32)
    interpret(ir_2d_reduce(axis, combine, rows, cols), (1,), [x, out, cols + 3])
    xs = x[:, :cols]
    if combine == "arith.addf":
        ref, err = xs.astype(np.float64).sum(axis), 1e-6 * np.abs(xs).sum(axis)
    else:
        ref, err = xs.max(axis), 0
    assert np.all(np.abs(out - ref) <= err)


# ------------------------------------------------------------------ control flow


def test_scf_while_and_if_with_results():
    # per program: count the doublings of 1 until it reaches pid+1 (scf.while), then
    # add 100 on odd programs (scf.if yielding a value).
    body = """
    %c1 = arith.constant 1 : i32
    %c0 = arith.constant 0 : i32
    %c2 = arith.constant 2 : i32
    %c100 = arith.constant 100 : i32
    %lim = arith.addi %x, %c1 : i32
    %w:2 = scf.while (%v = %c1, %n = %c0) : (i32, i32) -> (i32, i32) {
      %go = arith.cmpi slt, %v, %lim : i32
      scf.condition(%go) %v, %n : i32, i32
    } do {
    ^bb0(%v1: i32, %n1: i32):
      %v2 = arith.muli %v1, %c2 : i32
      %n2 = arith.addi %n1, %c1 : i32
      scf.yield %v2, %n2 : i32, i32
    }
    %odd = arith.remsi %x, %c2 : i32
    %isodd = arith.cmpi ne, %odd, %c0 : i32
    %y = scf.if %isodd -> (i32) {
      %t = arith.addi %w#1, %c100 : i32
      scf.yield %t : i32
    } else {
      scf.yield %w#1 : i32
    }"""
    x = np.arange(20, dtype=np.int32)
    got = run_scalar(body, x, "i32", "i32", np.int32)
    want = [math.ceil(math.log2(v + 1)) + (100 if v % 2 else 0) for v in range(20)]
    np.testing.assert_array_equal(got, want)


CF_KERNEL = """
module {
  tt.func public @k(%pin: !tt.ptr<i32>, %pout: !tt.ptr<i32>) {
    %pid = tt.get_program_id x : i32
    %p = tt.addptr %pin, %pid : !tt.ptr<i32>, i32
    %x = tt.load %p : !tt.ptr<i32>
    %c0 = arith.constant 0 : i32
    %neg = arith.cmpi slt, %x, %c0 : i32
    cf.cond_br %neg, ^bb1, ^bb2(%x : i32)
  ^bb1:
    %big = arith.constant 1000 : i32
    %c5 = arith.constant 5 : i32
    %is5 = arith.cmpi eq, %x, %c5 : i32
    %y1 = arith.subi %big, %x : i32
    cf.br ^bb3(%y1 : i32)
  ^bb2(%v: i32):
    %c7 = arith.constant 7 : i32
    %is7 = arith.cmpi eq, %v, %c7 : i32
    cf.cond_br %is7, ^bb4, ^bb3(%v : i32)
  ^bb3(%r: i32):
    %q = tt.addptr %pout, %pid : !tt.ptr<i32>, i32
    tt.store %q, %r : !tt.ptr<i32>
    tt.return
  ^bb4:
    tt.return
  }
}
"""


def test_cf_branches_block_arguments_and_early_return():
    x = i32([-3, 4, 7, -1, 0])
    out = np.full(5, -42, np.int32)
    interpret(parse_module(CF_KERNEL), (5,), [x, out])
    np.testing.assert_array_equal(out, [1003, 4, -42, 1001, 0])  # pid 2 returned early


def test_tt_call_and_scf_for_with_iter_args():
    text = """
module {
  tt.func private @square_plus(%a: i32, %b: i32) -> i32 {
    %s = arith.muli %a, %a : i32
    %r = arith.addi %s, %b : i32
    tt.return %r : i32
  }
  tt.func public @k(%pout: !tt.ptr<i64>, %n: i64) {
    %pid = tt.get_program_id x : i32
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %acc = scf.for %i = %c0 to %n step %c1 iter_args(%s = %c0) -> (i64) : i64 {
      %t = arith.addi %s, %i : i64
      scf.yield %t : i64
    }
    %sq = tt.call @square_plus(%pid, %pid) : (i32, i32) -> i32
    %sq64 = arith.extsi %sq : i32 to i64
    %tot = arith.addi %acc, %sq64 : i64
    %q = tt.addptr %pout, %pid : !tt.ptr<i64>, i32
    tt.store %q, %tot : !tt.ptr<i64>
    tt.return
  }
}"""
    out = np.zeros(4, np.int64)
    interpret(parse_module(text), (4,), [out, 10])
    np.testing.assert_array_equal(out, [45 + p * p + p for p in range(4)])


def test_3d_grid_program_ids_and_num_programs():
    text = """
module {
  tt.func public @k(%pout: !tt.ptr<i32>) {
    %x = tt.get_program_id x : i32
    %y = tt.get_program_id y : i32
    %z = tt.get_program_id z : i32
    %nx = tt.get_num_programs x : i32
    %ny = tt.get_num_programs y : i32
    %nz = tt.get_num_programs z : i32
    %yx = arith.muli %y, %nx : i32
    %zxy0 = arith.muli %nx, %ny : i32
    %zxy = arith.muli %z, %zxy0 : i32
    %l0 = arith.addi %x, %yx : i32
    %lin = arith.addi %l0, %zxy : i32
    %c1000 = arith.constant 1000 : i32
    %c100 = arith.constant 100 : i32
    %c10 = arith.constant 10 : i32
    %v0 = arith.muli %nz, %c1000 : i32
    %v1 = arith.muli %z, %c100 : i32
    %v2 = arith.muli %y, %c10 : i32
    %v3 = arith.addi %v0, %v1 : i32
    %v4 = arith.addi %v3, %v2 : i32
    %v = arith.addi %v4, %x : i32
    %q = tt.addptr %pout, %lin : !tt.ptr<i32>, i32
    tt.store %q, %v : !tt.ptr<i32>
    tt.return
  }
}"""
    out = np.full(3 * 2 * 4, -1, np.int32)
    interpret(parse_module(text), (3, 2, 4), [out])
    want = [4000 + z * 100 + y * 10 + x for z in range(4) for y in range(2) for x in range(3)]
    np.testing.assert_array_equal(out, want)


# ------------------------------------------------------------------ assert


ASSERT_KERNEL = """
module {
  tt.func public @k(%px: !tt.ptr<i32>) {
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %p1 = tt.splat %px : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %p2 = tt.addptr %p1, %r : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    %x = tt.load %p2 : tensor<8x!tt.ptr<i32>>
    %c10 = arith.constant dense<10> : tensor<8xi32>
    %ok = arith.cmpi slt, %x, %c10 : tensor<8xi32>
    tt.assert %ok, "x must be below 10" : tensor<8xi1> loc("k.py":7:5)
    tt.return
  }
}
"""


def test_tt_assert():
    interpret(parse_module(ASSERT_KERNEL), (1,), [np.arange(8, dtype=np.int32)])
    x = np.arange(8, dtype=np.int32)
    x[3] = 12
    with pytest.raises(KernelAssertionError) as e:
        interpret(parse_module(ASSERT_KERNEL), (1,), [x])
    assert "x must be below 10" in str(e.value) and "(3,)" in str(e.value)
    assert str(e.value.loc) == "k.py:7:5"


# ------------------------------------------------------------------ dot, shapes


@pytest.mark.parametrize("ty,precision", [("f16", "tf32"), ("bf16", "tf32"), ("f32", "ieee")])
def test_dot_exact_inputs(ty, precision):
    m, k, n = 16, 32, 8
    text = f"""
module {{
  tt.func public @k(%pa: !tt.ptr<{ty}>, %pb: !tt.ptr<{ty}>, %pc: !tt.ptr<f32>) {{
    %ra = tt.make_range {{end = {m * k} : i32, start = 0 : i32}} : tensor<{m * k}xi32>
    %rb = tt.make_range {{end = {k * n} : i32, start = 0 : i32}} : tensor<{k * n}xi32>
    %rc = tt.make_range {{end = {m * n} : i32, start = 0 : i32}} : tensor<{m * n}xi32>
    %a0 = tt.splat %pa : !tt.ptr<{ty}> -> tensor<{m * k}x!tt.ptr<{ty}>>
    %a1 = tt.addptr %a0, %ra : tensor<{m * k}x!tt.ptr<{ty}>>, tensor<{m * k}xi32>
    %b0 = tt.splat %pb : !tt.ptr<{ty}> -> tensor<{k * n}x!tt.ptr<{ty}>>
    %b1 = tt.addptr %b0, %rb : tensor<{k * n}x!tt.ptr<{ty}>>, tensor<{k * n}xi32>
    %c0 = tt.splat %pc : !tt.ptr<f32> -> tensor<{m * n}x!tt.ptr<f32>>
    %c1 = tt.addptr %c0, %rc : tensor<{m * n}x!tt.ptr<f32>>, tensor<{m * n}xi32>
    %a = tt.load %a1 : tensor<{m * k}x!tt.ptr<{ty}>>
    %b = tt.load %b1 : tensor<{k * n}x!tt.ptr<{ty}>>
    %c = tt.load %c1 : tensor<{m * n}x!tt.ptr<f32>>
    %a2 = tt.reshape %a : tensor<{m * k}x{ty}> -> tensor<{m}x{k}x{ty}>
    %bt = tt.reshape %b : tensor<{k * n}x{ty}> -> tensor<{n}x{k}x{ty}>
    %b2 = tt.trans %bt {{order = array<i32: 1, 0>}} : tensor<{n}x{k}x{ty}> -> tensor<{k}x{n}x{ty}>
    %c2 = tt.reshape %c : tensor<{m * n}xf32> -> tensor<{m}x{n}xf32>
    %d = tt.dot %a2, %b2, %c2, inputPrecision = {precision} : tensor<{m}x{k}x{ty}> * tensor<{k}x{n}x{ty}> -> tensor<{m}x{n}xf32>
    %d1 = tt.reshape %d : tensor<{m}x{n}xf32> -> tensor<{m * n}xf32>
    tt.store %c1, %d1 : tensor<{m * n}x!tt.ptr<f32>>
    tt.return
  }}
}}"""
    a = RNG.standard_normal((m, k)).astype(np.float32)
    bt = RNG.standard_normal((n, k)).astype(np.float32)  # stored as B transposed
    c = RNG.standard_normal((m, n)).astype(np.float32)
    if ty == "f16":
        a, bt = a.astype(np.float16), bt.astype(np.float16)
        sa, sb = a, bt
    elif ty == "bf16":
        sa, sb = bf16_bits(a).reshape(a.shape), bf16_bits(bt).reshape(bt.shape)
        a = (sa.astype(np.uint32) << 16).view(np.float32)
        bt = (sb.astype(np.uint32) << 16).view(np.float32)
    else:
        sa, sb = a, bt
    out = c.copy()
    interpret(parse_module(text), (1,), [sa, sb, out])
    ref = a.astype(np.float64) @ bt.astype(np.float64).T + c
    scale = np.abs(a).astype(np.float64) @ np.abs(bt).astype(np.float64).T + np.abs(c)
    assert np.all(np.abs(out - ref) <= 1e-6 * scale)


# ------------------------------------------------------------------ errors


def test_unsupported_op_is_an_error():
    body = "%y = math.ipowi %x, %x : i32"
    with pytest.raises(TritiumError, match="math.ipowi"):
        run_scalar(body, i32([2]), "i32", "i32", np.int32)


def test_argument_errors():
    module = ir_copy(16, masked=True)
    x = np.zeros(16, np.float32)
    with pytest.raises(ArgumentError, match="takes 4 arguments"):
        interpret(module, (1,), [x, x, 16])
    with pytest.raises(ArgumentError, match="'x_ptr'.*numpy array"):
        interpret(module, (1,), [[0.0] * 16, x, 16, 0])
    with pytest.raises(ArgumentError, match="does not fit"):
        interpret(module, (1,), [x, x, 2**40, 0])
    with pytest.raises(ArgumentError, match="no tt.func named"):
        interpret(module, (1,), [x, x, 16, 0], kernel="nope")


def test_empty_grid_runs_nothing():
    out = np.full(16, np.nan, np.float32)
    interpret(ir_copy(16, masked=True), (0,), [np.zeros(16, np.float32), out, 16, 0])
    assert np.isnan(out).all()
