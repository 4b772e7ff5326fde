"""The language rules shared with upstream Triton 3.6 (docs/language.md, "Rules shared with
upstream"), run in the interpreter and, marked `gpu`, on the GPU, both against numpy.

1. Python's `min` / `max` on tensors are `tl.minimum` / `tl.maximum`; `print` is `device_print`.
2. A plain assignment of a number makes a scalar tensor typed by `to_tensor`.
3. `tl` builtins are values (passed as constexprs, called there); `tl.dtype` methods fold.
4. Parameter annotations: `tl.const`, `n: tl.int64`, `s: tl.float32`, `tl.pi32_t`.
5. Loops with a negative constant step; a negative runtime step runs no iterations.
6. A callee that returns on one path and falls off the end on another.
7. `x is None` / `x is not None` on a tensor is a constant (False / True): fla's
   `unflatten_program_id(X, Y: tl.constexpr = None)` is called with run-time values.
"""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl

MODES = ["interp", pytest.param("gpu", marks=pytest.mark.gpu)]


@pytest.fixture(params=MODES)
def mode(request, monkeypatch):
    if request.param == "interp":
        monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    else:
        monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    return request.param


# ---------------------------------------------------------------------- 1. min, max, print


@tritium.jit
def min_max_kernel(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, min(x, y))
    tl.store(o_ptr + BLOCK + offs, max(x, 0.5))
    # the matmul tutorial's `group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)`
    m = min(n - 2, BLOCK)
    tl.store(o_ptr + 2 * BLOCK + offs, x * 0 + m)


def test_python_min_max_on_tensors(mode):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 16)).astype(np.float32)
    out = np.zeros(48, np.float32)
    min_max_kernel[(1,)](x, y, out, 7, BLOCK=16)
    np.testing.assert_array_equal(out[:16], np.minimum(x, y))
    np.testing.assert_array_equal(out[16:32], np.maximum(x, np.float32(0.5)))
    np.testing.assert_array_equal(out[32:], 5.0)


# ---------------------------------------------------------------------- 2. assigned numbers


@tritium.jit
def assigned_numbers_kernel(o_ptr, n):
    y = 5
    z = y.to(tl.float32)  # `y` is an int32 tensor, so it has `.to`
    big = 2**40
    tiny = 1e-300  # outside fp32's range: fp64, as upstream's to_tensor
    acc = 0  # loop-carried: an int32 from the start
    for i in range(0, n):
        acc += i
    if n > 3:
        w = 7
    else:
        w = tl.load(o_ptr + 9).to(tl.int32)  # a number in one branch, a tensor in the other
    tl.store(o_ptr + 0, z + 0.5)
    tl.store(o_ptr + 1, (big // 2**39).to(tl.float32))
    tl.store(o_ptr + 2, (tiny * 1e300).to(tl.float32))
    tl.store(o_ptr + 3, acc.to(tl.float32))
    tl.store(o_ptr + 4, w.to(tl.float32))
    tl.store(o_ptr + 5, y.dtype.primitive_bitwidth + big.dtype.primitive_bitwidth)
    tl.store(o_ptr + 6, tiny.dtype.is_fp64() + 0)


def test_assigned_numbers_are_tensors(mode):
    out = np.zeros(10, np.float32)
    out[9] = 42
    assigned_numbers_kernel[(1,)](out, 5)
    np.testing.assert_allclose(out[:7], [5.5, 2.0, 1.0, 10.0, 7.0, 96.0, 1.0])
    assigned_numbers_kernel[(1,)](out, 2)
    assert out[3] == 1.0 and out[4] == 42.0


# ---------------------------------------------------------------------- 3. builtins as values


@tritium.jit
def apply(op, a, b):
    return op(a, b)


@tritium.jit
def _lowest(dtype: tl.constexpr):
    # a generic helper branching on the dtype's methods, folded at compile time
    if dtype.is_floating():
        return tl.full((), float("-inf"), dtype)
    elif dtype.is_int_signed():
        return tl.full((), -(2 ** (dtype.primitive_bitwidth - 1)), dtype)
    else:
        return tl.full((), 0, dtype)


@tritium.jit
def builtin_values_kernel(x_ptr, o_ptr, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, OP(x, 1.0))
    tl.store(o_ptr + BLOCK + offs, apply(tl.minimum, x, 0.0))  # a tl builtin given to a callee
    lo = _lowest(x.dtype)
    flags = (
        x.dtype.is_floating() * 1
        + x.dtype.is_fp32() * 2
        + x.dtype.is_int() * 4
        + x.dtype.is_bf16() * 8
        + (x.dtype.fp_mantissa_width == 23) * 16
        + (x.dtype.scalar == tl.float32) * 32
    )
    tl.store(o_ptr + 2 * BLOCK, flags)
    tl.store(o_ptr + 2 * BLOCK + 1, lo)


def test_builtins_as_values_and_dtype_methods(mode):
    x = np.linspace(-2, 2, 16).astype(np.float32)
    for op, ref in ((tl.maximum, np.maximum), (tl.minimum, np.minimum)):
        out = np.zeros(34, np.float32)
        builtin_values_kernel[(1,)](x, out, OP=op, BLOCK=16)
        np.testing.assert_array_equal(out[:16], ref(x, np.float32(1.0)))
        np.testing.assert_array_equal(out[16:32], np.minimum(x, np.float32(0.0)))
        assert out[32] == 1 + 2 + 16 + 32
        assert out[33] == -np.inf


# ---------------------------------------------------------------------- 4. annotations


@tritium.jit
def annotated_kernel(x_ptr: tl.const, o_ptr, n: tl.int64, s: tl.float32, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, x * s)
    tl.store(o_ptr + BLOCK, (n * 2**33 // 2**33).to(tl.float32))  # i64: no wrap
    tl.store(o_ptr + BLOCK + 1, n.dtype.primitive_bitwidth + s.dtype.is_fp32())


def test_annotated_parameters(mode):
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(10, np.float32)
    annotated_kernel[(1,)](x, out, 3, 2, BLOCK=8)  # `s` given an int: converted to fp32
    np.testing.assert_array_equal(out[:8], x * 2)
    assert out[8] == 3 and out[9] == 65
    annotated_kernel[(1,)](x, out, 1, 0.5, BLOCK=8)  # 1 is not specialised away: still i64
    np.testing.assert_array_equal(out[:8], x * 0.5)
    assert out[8] == 1 and out[9] == 65
    with pytest.raises(tritium.errors.ArgumentError, match="`n` is annotated int64"):
        annotated_kernel[(1,)](x, out, 2.5, 1.0, BLOCK=8)


# ---------------------------------------------------------------------- 5. loops


@tritium.jit
def loops_kernel(o_ptr, T, S):
    prev = -1
    for i in range(T - 1, -1, -1):  # T-1, ..., 0: each stores the index seen before it
        tl.store(o_ptr + i, prev)
        prev = i
    for j in tl.range(7, 0, -2):  # 7, 5, 3, 1
        tl.store(o_ptr + 8 + j, j)
    n = 0
    for _k in range(T, 0, S):  # a runtime step: counts up while k < 0 (none when S < 0)
        n += 1
    tl.store(o_ptr + 16, n)


def test_negative_steps(mode):
    out = np.zeros(17, np.int32)
    loops_kernel[(1,)](out, 4, -1)
    np.testing.assert_array_equal(out[:5], [1, 2, 3, -1, 0])
    np.testing.assert_array_equal(out[8:16], [0, 1, 0, 3, 0, 5, 0, 7])
    assert out[16] == 0  # upstream's scf.for with a negative runtime step: no iteration


# ---------------------------------------------------------------------- 6. return paths


@tritium.jit
def _pick(x, a, b):
    if a > 0:
        if b > 0:
            return x + 1.0
        return x + 2.0
    return x + 3.0


@tritium.jit
def _maybe_double(x, a):
    if a > 0:
        return x * 2.0
    # falls off the end: upstream returns poison here (tritium: zeros)


@tritium.jit
def return_paths_kernel(x_ptr, o_ptr, a, b, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, _pick(x, a, b))
    y = _maybe_double(x, a)
    if a > 0:
        tl.store(o_ptr + BLOCK + offs, y)


@pytest.mark.parametrize("a, b, add", [(1, 1, 1.0), (1, -1, 2.0), (-1, 1, 3.0)])
def test_callee_return_paths(mode, a, b, add):
    x = np.arange(4, dtype=np.float32)
    out = np.full(8, -7, np.float32)
    return_paths_kernel[(1,)](x, out, a, b, BLOCK=4)
    np.testing.assert_array_equal(out[:4], x + add)
    np.testing.assert_array_equal(out[4:], x * 2 if a > 0 else -7)


# ---------------------------------------------------------------------- 7. `is None` on a tensor


@tritium.jit
def _unflatten(X: tl.constexpr, Y: tl.constexpr = None):
    pid = tl.program_id(0).to(tl.int64)
    if Y is None:
        return pid % X, pid // X
    else:
        return pid % X, (pid // X) % Y, pid // (X * Y)


@tritium.jit
def unflatten_kernel(o_ptr, n, m):
    a, b, c = _unflatten(tl.cdiv(n, 2), tl.cdiv(m, 2))  # run-time values: tensors
    d, e = _unflatten(4)
    pid = tl.program_id(0)
    is_not = 1 if a is not None else 0
    tl.store(o_ptr + pid * 6 + tl.arange(0, 1), (a * 10000 + b * 100 + c).to(tl.int32))
    tl.store(o_ptr + pid * 6 + 1 + tl.arange(0, 1), (d * 100 + e).to(tl.int32))
    tl.store(o_ptr + pid * 6 + 2 + tl.arange(0, 1), tl.full([1], is_not, tl.int32))


def test_is_none_on_a_tensor_is_a_constant(mode):
    n, m, grid = 6, 4, 12
    out = np.zeros(grid * 6, np.int32)
    unflatten_kernel[(grid,)](out, n, m)
    out = out.reshape(grid, 6)
    x, y = (n + 1) // 2, (m + 1) // 2
    for pid in range(grid):
        assert out[pid, 0] == (pid % x) * 10000 + (pid // x) % y * 100 + pid // (x * y)
        assert out[pid, 1] == (pid % 4) * 100 + pid // 4
        assert out[pid, 2] == 1


def test_is_between_two_tensors_stays_an_error():
    @tritium.jit
    def k(o_ptr, n):
        a = tl.program_id(0) + n
        tl.store(o_ptr, 1 if a is a else 0)

    from tritium.errors import CompilationError

    with pytest.raises(CompilationError, match="`is` cannot compare tensors"):
        tritium.compile(k, "*i32,i32", stop="ttir")
