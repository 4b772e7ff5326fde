"""The rest of triton.language's surface: compiler hints beyond multiple_of & co.
(`tl.assume` -> llvm.intr.assume, `tl.debug_barrier` -> gpu.barrier: counted by the membar
pass, bar.sync on the GPU), `tl.range`'s keyword hints (`num_stages`, `loop_unroll_factor`,
`flatten`, `disallow_acc_multi_buffer`, `warp_specialize`), and upstream's leniencies
(a callee's constexpr annotation given a runtime value; `x.type`, `.element_ty`) — each
in TTIR, in PTX that ptxas assembles, in the interpreter and (marker `gpu`) on the GPU
against numpy."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tests.frontend.helpers import op_names, ttir, ttir_text
from tritium.frontend import standard

MODES = ["interp", pytest.param("gpu", marks=pytest.mark.gpu)]


@pytest.fixture(params=MODES)
def mode(request, monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1" if request.param == "interp" else "0")
    return request.param


@tritium.jit
def reverse_kernel(X, Y, N, BLOCK: tl.constexpr):
    """Each program reverses its block through a second read after a barrier."""
    tl.assume(N > 0)
    tl.assume(BLOCK % 2 == 0)  # a constexpr that holds: nothing to emit
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(X + offs, mask=m, other=0.0)
    tl.store(Y + offs, x * 2, mask=m)
    tl.debug_barrier()
    back = tl.program_id(0) * BLOCK + (BLOCK - 1 - tl.arange(0, BLOCK))
    y = tl.load(Y + back, mask=back < N, other=-1.0)
    tl.debug_barrier()
    tl.store(Y + offs, y, mask=m)


def test_ttir():
    text = ttir_text(reverse_kernel, "*fp32,*fp32,i32", {"BLOCK": 64})
    assert "%1 = arith.cmpi sgt, %N, %0 : i32" in text
    assert "llvm.intr.assume %1 : i1" in text
    names = op_names(ttir(reverse_kernel, "*fp32,*fp32,i32", {"BLOCK": 64}))
    assert names.count("llvm.intr.assume") == 1 and names.count("gpu.barrier") == 2


def test_ptx_assembles(ptxas, tmp_path):
    c = tritium.compile(reverse_kernel, "*fp32:16,*fp32:16,i32", {"BLOCK": 128}, stop="ptx")
    ttgir = c.asm["ttgir"]
    assert ttgir.count("gpu.barrier") == 2  # the user's; membar adds none beside them
    ptx = c.asm["ptx"]
    assert ptx.count("bar.sync") == 2 and "llvm.assume" not in ptx
    (tmp_path / "k.ptx").write_text(ptx)
    res = subprocess.run([ptxas, "-arch=sm_89", str(tmp_path / "k.ptx"), "-o",
                          str(tmp_path / "k.cubin")], capture_output=True, text=True)  # fmt: skip
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("n", [1, 100, 256])
def test_against_numpy(mode, n):
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(n + 3, np.float32)
    block = 64
    reverse_kernel[(tritium.cdiv(n, block),)](x, y, n, BLOCK=block)
    want = np.empty(n, np.float32)
    for p in range(0, n, block):
        idx = p + block - 1 - np.arange(min(block, n - p))
        want[p : p + block] = np.where(idx < n, 2 * x[np.minimum(idx, n - 1)], -1.0)
    np.testing.assert_array_equal(y[:n], want)
    assert (y[n:] == 0).all()


def test_assume_errors():
    @tritium.jit
    def bad(X, KIND: tl.constexpr):
        x = tl.load(X + tl.arange(0, 8))
        if KIND == 0:
            tl.assume(x > 0)
        else:
            tl.assume("yes")

    with pytest.raises(tritium.CompilationError, match="boolean scalar condition, got <"):
        ttir(bad, "*i32", {"KIND": 0})
    with pytest.raises(tritium.CompilationError, match="needs a boolean condition"):
        ttir(bad, "*i32", {"KIND": 1})


@tritium.jit
def range_hints_kernel(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in tl.range(0, N, BLOCK, num_stages=2, loop_unroll_factor=2, flatten=True,
                      disallow_acc_multi_buffer=True, warp_specialize=False):  # fmt: skip
        acc += tl.load(X + i + offs, mask=i + offs < N, other=0.0)
    tl.store(Y + offs, acc)


def test_range_keywords(mode):
    text = ttir_text(range_hints_kernel, "*fp32,*fp32,i32", {"BLOCK": 32})
    assert "tt.num_stages = 2 : i32" in text and "tt.loop_unroll_factor = 2 : i32" in text
    assert "tt.flatten" in text and "tt.disallow_acc_multi_buffer" in text
    n = 100
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(32, np.float32)
    range_hints_kernel[(1,)](x, y, n, BLOCK=32)
    want = np.zeros(32, np.float32)
    for i in range(0, n, 32):
        chunk = x[i : i + 32]
        want[: len(chunk)] += chunk
    np.testing.assert_array_equal(y, want)


# --------------------------------------------------------------------------- upstream's leniency


@tritium.jit
def _masked_row(ptr, offs_m: tl.constexpr, N_CTX: tl.constexpr, BLOCK: tl.constexpr):
    # as upstream's fused-attention tutorial: `offs_m` and `N_CTX` are annotated constexpr
    # but receive runtime values; the annotation is not checked for a callee
    return tl.load(ptr + offs_m, mask=offs_m < N_CTX, other=-1.0)


@tritium.jit
def lenient_kernel(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    p = X + offs
    tl.static_assert(p.type.element_ty == X.dtype)  # a block of pointers: its element type
    tl.static_assert(X.type.element_ty == tl.float32)  # a scalar pointer: the pointee
    tl.static_assert(X.dtype.element_ty == tl.float32)
    tl.static_assert(p.type.shape == offs.shape)
    tl.static_assert(offs.shape[0] == BLOCK and offs.numel == BLOCK)
    tl.static_assert(offs.type.is_block() and not N.type.is_block())
    tl.store(Y + offs, _masked_row(X, offs, N, BLOCK), mask=offs < N)


def test_callee_constexpr_leniency_and_type_attributes(mode):
    n = 100
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    lenient_kernel[(2,)](x, y, n, BLOCK=64)
    np.testing.assert_array_equal(y, x)


# --------------------------------------------------------------------------- static_*


@tritium.jit
def statics_kernel(Y, N: tl.constexpr):
    acc = tl.zeros((8,), tl.int32)
    for i in tl.static_range(10, 0, -3):  # 10, 7, 4, 1: unrolled, i a constexpr
        acc += i
    for j in tl.static_range(N):
        tl.static_assert(j < N, "j in range")
        acc += tl.full((8,), j, tl.int32)
    tl.static_print("acc is", acc, N, sep="|")
    tl.store(Y + tl.arange(0, 8), acc)


@tritium.jit
def failing_static_assert(N: tl.constexpr):
    tl.static_assert(N == 4, f"N is {N}")


def test_static_range_print_assert(mode, capsys):
    y = np.zeros(8, np.int32)
    statics_kernel[(1,)](y, 3)
    np.testing.assert_array_equal(y, np.full(8, 10 + 7 + 4 + 1 + 0 + 1 + 2))
    if mode == "interp":  # compiled once per mode (the cache may serve the other)
        assert "acc is|int32[8]|3" in capsys.readouterr().out
    with pytest.raises(tritium.CompilationError, match="static_assert failed: N is 3"):
        failing_static_assert[(1,)](3)


@tritium.jit
def logical_members_kernel(X, Y, OUT, N, BLOCK: tl.constexpr):
    """Upstream's tensor members `logical_and` / `logical_or` (torch inductor's bucketize
    helper masks with `(a < n).logical_and(b < m)`); a non-i1 operand counts as nonzero."""
    offs = tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(X + offs, mask=m, other=0)
    y = tl.load(Y + offs, mask=m, other=0)
    both = (x > 0).logical_and(y > 0)
    either = (x > 0).logical_or(y)  # (y: an int, nonzero is true)
    tl.store(OUT + offs, both.to(tl.int32) * 2 + either.to(tl.int32), mask=m)


def test_logical_and_or_tensor_members(mode):
    x = np.array([1, -1, 2, 0, -3, 5, 0, 7], dtype=np.int32)
    y = np.array([1, 1, 0, 0, 2, -4, 3, 0], dtype=np.int32)
    out = np.full(8, -1, dtype=np.int32)
    logical_members_kernel[(1,)](x, y, out, 8, BLOCK=8)
    expected = ((x > 0) & (y > 0)).astype(np.int32) * 2 + ((x > 0) | (y != 0)).astype(np.int32)
    np.testing.assert_array_equal(out, expected)
    with pytest.raises(tritium.CompilationError, match="no attribute `logical_xor`"):
        ttir(bad_logical_kernel, "*i32", {"BLOCK": 8})


@tritium.jit
def bad_logical_kernel(X, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(X + offs, (offs > 0).logical_xor(offs > 1).to(tl.int32))


@tritium.jit
def int_bits_kernel(X, OUT, BLOCK: tl.constexpr):
    """Upstream's `tl.core.get_int_dtype` (a constexpr function): torch inductor's sort
    helper bitcasts floats to the integer type of their width through it."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    idtype = standard.get_int_dtype(bitwidth=x.dtype.primitive_bitwidth, signed=True)
    tl.store(OUT + offs, x.to(idtype, bitcast=True))


def test_get_int_dtype_in_a_kernel(mode):
    x = np.array([1.0, -2.0, 0.5, 3.0], dtype=np.float32)
    out = np.zeros(4, dtype=np.int32)
    int_bits_kernel[(1,)](x, out, BLOCK=4)
    np.testing.assert_array_equal(out, x.view(np.int32))
    assert standard.get_int_dtype(16, False) == tl.uint16  # on the host: a plain function
    with pytest.raises(ValueError, match="24 bits"):
        standard.get_int_dtype(24, True)
