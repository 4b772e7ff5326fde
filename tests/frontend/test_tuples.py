"""Tuples as upstream 3.6 has them (its test_tuple.py's kernels): tuple kernel arguments
(flattened into one leaf per element, each specialised as an argument: pointers,
ints, floats, None, constexprs, nested tuples, empty ones), `tl.tuple`, indexing with
constexprs, `len`, `==` and `+` on tuples, tuples passed to and returned from helpers —
in the interpreter and (marker `gpu`) on the GPU; the spec's leaves and the PTX."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import compiler
from tritium.jit.specialize import build_spec, launch_key
from tritium.options import Options

MODES = ["interp", pytest.param("gpu", marks=pytest.mark.gpu)]


@pytest.fixture(params=MODES)
def mode(request, monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1" if request.param == "interp" else "0")
    return request.param


@tritium.jit
def _tuple_increment(values):
    out = ()
    for i in tl.static_range(len(values)):
        out = out + (values[i] + 1,)
    return tl.tuple(out)


@tritium.jit
def _tuple_index_func(Ptrs, values):
    for i in tl.static_range(len(values)):
        tl.store(Ptrs[i], values[i])


@tritium.jit
def _tuple_index(_0, Ptrs, _1: tl.constexpr, values, _2, _3: tl.constexpr, _4):
    values = _tuple_increment(values)
    _tuple_index_func(Ptrs, values)


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4])
def test_index(mode, size):
    vals = tuple(float(i + 1) for i in range(size))
    rets = tuple(np.zeros((1,), np.float32) for _ in vals)
    _tuple_index[(1,)](0, rets, 0, vals, 0, 0, 0)
    assert vals == tuple(float(x[0]) - 1 for x in rets)


@tritium.jit
def _tuple_assign(XPtrs, YPtrs, values):
    X0, X1 = XPtrs
    x0, x1, _ = values
    tl.store(X0, x0)
    tl.store(X1, x1)
    Y0, Y1, Y2 = YPtrs
    Y = Y0, Y1, Y2
    y = x0, 10, x1
    tl.store(Y[0], y[0])
    tl.store(Y[1], y[1])
    tl.store(Y[2], y[2])


def test_assign(mode):
    vals = (2.0, 3.0, None)
    x = tuple(np.zeros((1,), np.float32) for _ in range(2))
    y = tuple(np.zeros((1,), np.float32) for _ in range(3))
    _tuple_assign[(1,)](x, y, vals)
    assert [x[0][0], x[1][0], y[0][0], y[1][0], y[2][0]] == [2.0, 3.0, 2.0, 10.0, 3.0]


@tritium.jit
def _tuple_fn0(Ptr, cst2: tl.constexpr, tuple1):
    tl.static_assert(tuple1[1] is None)
    tl.store(Ptr + 5, cst2)
    tl.store(Ptr + 6, tuple1[0])
    tl.store(Ptr + 7, tl.load(tuple1[2][0]))
    tl.store(Ptr + 8, tuple1[2][1][0])
    tl.store(Ptr + 9, tl.load(tuple1[2][1][2]))


@tritium.jit
def _tuple_serialize(Ptr, N1, tuple1, cst1: tl.constexpr, val1, tuple2):
    tl.static_assert(N1 is None)
    tl.static_assert(tuple1[1][1] is None)
    tl.static_assert(tuple1[1][3] == 4)
    tl.store(Ptr + 0, tl.load(tuple1[0]))
    tl.store(Ptr + 1, tuple1[1][0])
    tl.store(Ptr + 2, tl.load(tuple1[1][2]))
    tl.store(Ptr + 3, cst1 + val1)
    tl.store(Ptr + 4, tl.load(tuple2[0]))
    _tuple_fn0(Ptr, 15, (-1, None, tuple1))


def test_serialize(mode):
    x0 = np.array([8], np.int32)
    x1 = np.array([12], np.int32)
    y0 = np.array([10], np.int32)
    z = np.zeros((10,), np.int32)
    _tuple_serialize[(1,)](z, None, (x0, (1, None, x1, tl.constexpr(4))), 20, 1, (y0,))
    assert list(z) == [8, 1, 12, 21, 10, 15, -1, 8, 1, 12]


@tritium.jit
def m_to_the_n(X, shape: tl.constexpr, strides, m_n):
    Xs = X + tl.arange(0, shape[0])[:, None] * strides[0] + tl.arange(0, shape[1])[None, :] * strides[1]
    data = tl.load(Xs)
    for _ in tl.range(0, m_n[1]):
        data = m_n[0] * data
    tl.store(Xs, data)


@tritium.jit
def m_to_the_n_desc(X_base, shape, strides, m_n, BLOCK_DIM: tl.constexpr):
    X = tl.make_tensor_descriptor(X_base, shape=shape, strides=strides,
                                  block_shape=[BLOCK_DIM, BLOCK_DIM])  # fmt: skip
    tl.static_assert(isinstance(strides[1], tl.constexpr))  # a unit stride: the constant 1
    data = X.load([0, 0])
    for _ in tl.range(0, m_n[1]):
        data = m_n[0] * data
    X.store([0, 0], data)


def test_passing_tuples_with_constexprs(mode):
    x = np.arange(64, dtype=np.int64).reshape(8, 8)
    m_to_the_n[(1,)](x, x.shape, (8, 1), (2, 3))
    np.testing.assert_array_equal(x, 8 * np.arange(64).reshape(8, 8))
    x = np.arange(16, dtype=np.int64).reshape(4, 4)
    m_to_the_n_desc[(1,)](x, x.shape, (4, 1), (2, 3), 4)
    np.testing.assert_array_equal(x, 8 * np.arange(16).reshape(4, 4))


@tritium.jit
def _tuple_ops(ret_ptrs):
    tl.store(ret_ptrs + 0, (1, 2) == (1, 2))
    tl.store(ret_ptrs + 1, (1, 2) == (1, 1))
    tl.store(ret_ptrs + 2, tl.tuple((1, 2)) == (1, 2))
    tl.store(ret_ptrs + 3, tl.tuple((1, 2)) == (1, 3))
    tuple0 = ((0, 1)) + (2, 3)
    for i in tl.static_range(4):
        tl.store(ret_ptrs + 4 + i, tuple0[i])
    tuple1 = tl.tuple((4, 5)) + (6, 7)
    for i in tl.static_range(4):
        tl.store(ret_ptrs + 8 + i, tuple1[i])
    tl.static_assert(isinstance(tuple1, tl.tuple) and len(tuple1) == 4)
    tl.static_assert(((3, 4) or (5, 6)) == (3, 4))
    tl.static_assert(((3, 4) and ()) == ())


def test_eq_add_logic(mode):
    rets = np.zeros((12,), np.int32)
    _tuple_ops[(1,)](rets)
    assert list(rets) == [1, 0, 1, 0, 0, 1, 2, 3, 4, 5, 6, 7]


@tritium.jit
def tuples_fn(a, b):
    return a + b, a - b, a * b


@tritium.jit
def with_fn(X, Y, A, B, C):
    x = tl.load(X)
    y = tl.load(Y)
    a, b, c = tuples_fn(x, y)
    tl.store(A, a)
    tl.store(B, b)
    tl.store(C, c)


def test_tuple_returns(mode):
    x, y = np.array([1.3], np.float32), np.array([1.9], np.float32)
    a, b, c = (np.zeros(1, np.float32) for _ in range(3))
    with_fn[(1,)](x, y, a, b, c)
    assert (a, b, c) == (x + y, x - y, x * y)


@tritium.jit
def _leaf_kernel(_0, Ptrs, _1: tl.constexpr, values, _2, _3: tl.constexpr, _4):
    tl.static_assert(values[2] is None and values[3] == () and values[4][0] == 1)
    tl.store(Ptrs[0], values[0] + values[1])
    tl.store(Ptrs[1], values[4][1] + _0 + _2 + _4)


def test_leaves_in_the_spec_and_the_key(ptxas, tmp_path):
    p = np.zeros(16, np.float32)
    vals = [0, (p, p), 0, (1.5, 7, None, (), (1, 16)), 0, 0, 0]
    spec = build_spec(_leaf_kernel, vals)
    assert list(spec.types) == ["_0", "Ptrs.0", "Ptrs.1", "values.0", "values.1", "values.4.1",
                                "_2", "_4"]  # fmt: skip
    assert spec.types["values.0"].signature == "fp32" and "values.4.1" in spec.divisible_by_16
    assert spec.constants["values.2"].value is None and spec.constants["values.3"].value == ()
    assert spec.constants["values.4.0"].value == 1
    kinds, parts = launch_key(_leaf_kernel.kinds, vals, {}, False, lambda: 0)
    assert kinds[:4] == ("int", "tuple", "constexpr", "tuple")
    assert parts[4] == (("numpy", np.dtype("float32"), p.ctypes.data % 16 == 0),) * 2
    other = launch_key(_leaf_kernel.kinds, [*vals[:3], (1.5, 7, None, (), (1, 17)), 0, 0, 0],
                       {}, False, lambda: 0)  # fmt: skip
    assert other != (kinds, parts)  # 17 is not divisible by 16: another kernel
    ptx = compiler.compile_jit(_leaf_kernel, spec, Options.of({"arch": "sm_89"})).asm["ptx"]
    assert ptx.count(".param .u64 .ptr") == 2
    (tmp_path / "k.ptx").write_text(ptx)
    res = subprocess.run([ptxas, "-arch=sm_89", str(tmp_path / "k.ptx"), "-o",
                          str(tmp_path / "k.cubin")], capture_output=True, text=True)  # fmt: skip
    assert res.returncode == 0, res.stderr


@tritium.jit
def _tuple_in_runtime_control_flow(X, n, KIND: tl.constexpr):
    t = (tl.load(X), tl.load(X + 1))
    if KIND == 0:
        for _ in range(n):
            t = (t[1], t[0])
    else:
        if n > 0:
            t = (t[1], t[0])
    tl.store(X, t[0])


@pytest.mark.parametrize("kind, message", [
    (0, "`t` holds .* and cannot be re-assigned inside a runtime loop"),
    (1, "`t` cannot be assigned a tuple inside a runtime `if`"),
])  # fmt: skip
def test_tuples_through_runtime_control_flow_are_refused(kind, message):
    from tests.frontend.helpers import ttir

    with pytest.raises(tritium.CompilationError, match=message):
        ttir(_tuple_in_runtime_control_flow, "*i32,i32", {"KIND": kind})
