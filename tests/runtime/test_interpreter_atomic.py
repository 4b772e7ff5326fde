"""The interpreter's `tt.atomic_rmw` / `tt.atomic_cas` on hand-written TTIR in upstream's
syntax: row-major order, masks, scalar operands, and what it refuses."""

from __future__ import annotations

import numpy as np
import pytest

from tests.runtime.interpreter_helpers import parse_module
from tritium.errors import TritiumError
from tritium.runtime.interpreter import interpret

FADD = """
module {
  tt.func public @k(%p: !tt.ptr<f32>, %pv: !tt.ptr<f32>, %po: !tt.ptr<f32>) {
    %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %c4 = arith.constant dense<4> : tensor<128xi32>
    %c100 = arith.constant dense<100> : tensor<128xi32>
    %slot = arith.remsi %r, %c4 : tensor<128xi32>
    %mask = arith.cmpi slt, %r, %c100 : tensor<128xi32>
    %p1 = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    %2 = tt.addptr %p1, %slot : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %pv1 = tt.splat %pv : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    %pv2 = tt.addptr %pv1, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %3 = tt.load %pv2 : tensor<128x!tt.ptr<f32>>
    %5 = tt.atomic_rmw fadd, acq_rel, gpu, %2, %3, %mask : (tensor<128x!tt.ptr<f32>>, tensor<128xf32>, tensor<128xi1>) -> tensor<128xf32>
    %po1 = tt.splat %po : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    %po2 = tt.addptr %po1, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    tt.store %po2, %5 : tensor<128x!tt.ptr<f32>>
    tt.return
  }
}
"""


def test_upstream_fadd_text_runs_in_row_major_order():
    vals = np.arange(128, dtype=np.float32)  # small integers: every sum is exact
    mem, old = np.zeros(4, np.float32), np.full(128, -1, np.float32)
    interpret(parse_module(FADD), (1,), [mem, vals, old])
    act = np.arange(128) < 100
    np.testing.assert_array_equal(mem, [vals[j:100:4].sum() for j in range(4)])
    ref = [vals[i % 4 : i : 4].sum() for i in range(128)]  # earlier lanes of the same slot
    np.testing.assert_array_equal(old[act], np.array(ref, np.float32)[act])
    assert (old[~act] == 0).all()  # masked-off lanes give 0


XCHG_2D = """
module {
  tt.func public @k(%p: !tt.ptr<i64>, %po: !tt.ptr<i64>) {
    %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
    %v32 = tt.reshape %r : tensor<32xi32> -> tensor<4x8xi32>
    %v = arith.extsi %v32 : tensor<4x8xi32> to tensor<4x8xi64>
    %ps = tt.splat %p : !tt.ptr<i64> -> tensor<4x8x!tt.ptr<i64>>
    %old = tt.atomic_rmw exch, relaxed, cta, %ps, %v : (tensor<4x8x!tt.ptr<i64>>, tensor<4x8xi64>) -> tensor<4x8xi64>
    %o32 = tt.reshape %old : tensor<4x8xi64> -> tensor<32xi64>
    %po1 = tt.splat %po : !tt.ptr<i64> -> tensor<32x!tt.ptr<i64>>
    %po2 = tt.addptr %po1, %r : tensor<32x!tt.ptr<i64>>, tensor<32xi32>
    tt.store %po2, %o32 : tensor<32x!tt.ptr<i64>>
    tt.return
  }
}
"""


def test_one_address_2d_block_without_mask_is_row_major():
    mem, old = np.array([-5], np.int64), np.zeros(32, np.int64)
    interpret(parse_module(XCHG_2D), (1,), [mem, old])
    assert mem[0] == 31  # the last element in row-major order wins
    np.testing.assert_array_equal(old, np.concatenate([[-5], np.arange(31)]))


CAS_SCALAR = """
module {
  tt.func public @k(%arg1: !tt.ptr<i32>) {
    %c = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %6 = tt.atomic_cas acq_rel, gpu, %arg1, %c, %c1 : (!tt.ptr<i32>, i32, i32) -> i32
    %p = tt.addptr %arg1, %c1 : !tt.ptr<i32>, i32
    tt.store %p, %6 : !tt.ptr<i32>
    tt.return
  }
}
"""


def test_upstream_scalar_cas_text_spin_lock():
    mem = np.array([0, 7], np.int32)
    interpret(parse_module(CAS_SCALAR), (1,), [mem])
    np.testing.assert_array_equal(mem, [1, 0])  # took the lock; the old value was 0
    interpret(parse_module(CAS_SCALAR), (3,), [mem])
    np.testing.assert_array_equal(mem, [1, 1])  # held: every try sees 1 and writes nothing


@pytest.mark.parametrize(
    "rmw,ty", [("max", "f32"), ("and", "f64"), ("add", "f32"), ("fadd", "i32")]
)
def test_unsupported_kind_and_type_is_a_clear_error(rmw, ty):
    m = parse_module(f"""
module {{
  tt.func public @k(%p: !tt.ptr<{ty}>, %v: {ty}) {{
    %t = arith.constant true
    %o = tt.atomic_rmw {rmw}, acq_rel, gpu, %p, %v, %t : (!tt.ptr<{ty}>, {ty}, i1) -> {ty}
    tt.return
  }}
}}""")
    with pytest.raises(TritiumError, match=f"does not support tt.atomic_rmw {rmw} on {ty}"):
        interpret(
            m, (1,), [np.zeros(1, {"f32": np.float32, "f64": np.float64, "i32": np.int32}[ty]), 1]
        )
