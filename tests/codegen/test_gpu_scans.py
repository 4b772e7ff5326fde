"""Scans end to end against numpy: on the GPU (marker `gpu`) and, for the same kernels, in
the interpreter. 1D and 2D, both axes, reverse, layouts whose axis runs through registers,
lanes, warps and repetitions (and rows in lanes and warps), tensors smaller than the thread
tile (replicated), several operands and a non-commutative combine (a linear recurrence),
and the PTX of every configuration assembled with ptxas."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import tritium
import tritium.language as tl


@pytest.fixture(params=["interpreter", pytest.param("gpu", marks=pytest.mark.gpu)])
def mode(request, monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1" if request.param == "interpreter" else "0")
    return request.param


@pytest.fixture
def gpu(monkeypatch):
    """Layout matrices: they only mean something on the GPU (the interpreter has none)."""
    monkeypatch.setenv("TRITIUM_INTERPRET", "0")


@tritium.jit
def cumsum_1d(x_ptr, y_ptr, n, BLOCK: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    tl.store(y_ptr + offs, tl.cumsum(x, axis=0, reverse=REVERSE), mask=m)


def _cumsum(x, axis, reverse):
    if reverse:
        return np.flip(np.cumsum(np.flip(x, axis), axis=axis), axis)
    return np.cumsum(x, axis=axis)


@pytest.mark.gpu
@pytest.mark.parametrize("block", [16, 128, 1024, 4096])
@pytest.mark.parametrize("warps", [1, 4, 8])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_1d_int(gpu, block, warps, reverse):
    rng = np.random.default_rng(block + warps)
    n = block - 3
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    y = np.full(n, -7, np.int32)
    cumsum_1d[(1,)](x, y, n, BLOCK=block, REVERSE=reverse, num_warps=warps)
    np.testing.assert_array_equal(y, _cumsum(x.astype(np.int64), 0, reverse))


@tritium.jit
def cumsum_2d(x_ptr, y_ptr, M, N, AXIS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
              REVERSE: tl.constexpr):  # fmt: skip
    rm = tl.arange(0, BM)[:, None]
    rn = tl.arange(0, BN)[None, :]
    m = (rm < M) & (rn < N)
    x = tl.load(x_ptr + rm * N + rn, mask=m, other=0.0)
    tl.store(y_ptr + rm * N + rn, tl.cumsum(x, axis=AXIS, reverse=REVERSE), mask=m)


SHAPES_2D = [(4, 256), (64, 64), (256, 4), (2, 8), (32, 128), (8, 16)]


@pytest.mark.gpu
@pytest.mark.parametrize("bm, bn", SHAPES_2D)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("warps", [2, 8])
def test_cumsum_2d_float(gpu, bm, bn, axis, reverse, warps):
    rng = np.random.default_rng(bm * bn + axis)
    m_, n_ = max(bm - 1, 1), max(bn - 1, 1)
    x = rng.standard_normal((m_, n_)).astype(np.float32)
    y = np.full_like(x, np.nan)
    cumsum_2d[(1,)](x, y, m_, n_, AXIS=axis, BM=bm, BN=bn, REVERSE=reverse, num_warps=warps)
    want = _cumsum(x.astype(np.float64), axis, reverse)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-4 * max(bm, bn) ** 0.5)


@tritium.jit
def _recurrence(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@tritium.jit
def recurrence_kernel(a_ptr, b_ptr, h_ptr, n, BLOCK: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=1.0)
    b = tl.load(b_ptr + offs, mask=m, other=0.0)
    _, h = tl.associative_scan((a, b), 0, _recurrence, reverse=REVERSE)
    tl.store(h_ptr + offs, h, mask=m)


@pytest.mark.parametrize("block, warps", [(32, 1), (256, 4), (2048, 8), (64, 4)])
@pytest.mark.parametrize("reverse", [False, True])
def test_linear_recurrence_is_order_sensitive(mode, block, warps, reverse):  # (both modes)
    """h_t = a_t h_(t-1) + b_t: the combine is not commutative, so any element combined
    in the wrong order shows (64 elements over 4 warps: replicated warps too)."""
    rng = np.random.default_rng(block)
    n = block - 1
    a = rng.uniform(0.5, 1.0, n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    h = np.full(n, np.nan, np.float32)
    recurrence_kernel[(1,)](a, b, h, n, BLOCK=block, REVERSE=reverse, num_warps=warps)
    want = np.empty(n)
    acc = None
    for t in reversed(range(n)) if reverse else range(n):
        pair = (float(a[t]), float(b[t]))
        acc = pair if acc is None else (acc[0] * pair[0], acc[1] * pair[0] + pair[1])
        want[t] = acc[1]
    np.testing.assert_allclose(h, want, rtol=2e-4, atol=1e-4)


@tritium.jit
def cumprod_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    tl.store(y_ptr + offs, tl.cumprod(x, 0), mask=m)


def test_cumprod_fp64(mode):  # (both modes)
    rng = np.random.default_rng(5)
    n = 500
    x = rng.uniform(0.9, 1.1, n)
    y = np.full(n, np.nan)
    cumprod_kernel[(1,)](x, y, n, BLOCK=512)
    np.testing.assert_allclose(y, np.cumprod(x), rtol=1e-12)


def test_every_configuration_assembles(ptxas, tmp_path):
    """Without a GPU: the scan PTX of each 1D/2D configuration above is valid for sm_89."""
    for block, warps in [(16, 1), (1024, 4), (4096, 8)]:
        ck = tritium.compile(cumsum_1d, "*i32,*i32,i32", {"BLOCK": block, "REVERSE": True},
                             num_warps=warps, stop="ptx")  # fmt: skip
        _assemble(ptxas, ck.asm["ptx"], tmp_path)
    for bm, bn in SHAPES_2D:
        for axis in (0, 1):
            ck = tritium.compile(cumsum_2d, "*fp32,*fp32,i32,i32",
                                 {"AXIS": axis, "BM": bm, "BN": bn, "REVERSE": False},
                                 num_warps=8, stop="ptx")  # fmt: skip
            _assemble(ptxas, ck.asm["ptx"], tmp_path)
    ck = tritium.compile(recurrence_kernel, "*fp32,*fp32,*fp32,i32",
                         {"BLOCK": 2048, "REVERSE": False}, num_warps=8, stop="ptx")  # fmt: skip
    assert "bar.sync" in ck.asm["ptx"] and "shfl.sync.idx" in ck.asm["ptx"]
    _assemble(ptxas, ck.asm["ptx"], tmp_path)


def _assemble(ptxas, ptx: str, tmp_path) -> None:
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    subprocess.run([ptxas, "-arch=sm_89", str(src), "-o", str(tmp_path / "k.cubin")],
                   check=True, capture_output=True)  # fmt: skip


@tritium.jit
def dot_then_cumsum(a_ptr, b_ptr, c_ptr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    """fla's chunk_gla_bwd_kernel_inter: a scan along axis 0 of a dot's result."""
    rt, rk, rv = tl.arange(0, BT), tl.arange(0, BK), tl.arange(0, BV)
    a = tl.load(a_ptr + rt[:, None] * BV + rv[None, :])
    b = tl.load(b_ptr + rv[:, None] * BK + rk[None, :])
    acc = tl.dot(a.to(tl.float16), b.to(tl.float16))  # fp32 accumulator in an mma layout
    d = acc - tl.cumsum(acc, axis=0) + tl.sum(acc, axis=0)[None, :]
    tl.store(c_ptr + rt[:, None] * BK + rk[None, :], d)


@pytest.mark.parametrize("warps, bk", [(2, 32), (4, 64), (8, 32)])
def test_scan_of_a_dot_result(mode, warps, bk):  # (both modes)
    """The mma layout of a dot's result is not flooded into the scan (which is lowered in
    blocked layouts only, as upstream's): a convert stays between them."""
    rng = np.random.default_rng(warps)
    a = rng.standard_normal((64, 64)).astype(np.float32)
    b = rng.standard_normal((64, bk)).astype(np.float32)
    c = np.full((64, bk), np.nan, np.float32)
    dot_then_cumsum[(1,)](a, b, c, BT=64, BK=bk, BV=64, num_warps=warps)
    acc = a.astype(np.float16).astype(np.float64) @ b.astype(np.float16)
    want = acc - np.cumsum(acc, axis=0) + acc.sum(axis=0)[None, :]
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-3)


def test_scan_of_a_dot_result_assembles(ptxas, tmp_path):
    for warps, bk in [(2, 32), (4, 64), (8, 32)]:
        ck = tritium.compile(dot_then_cumsum, "*fp32:16,*fp32:16,*fp32:16",
                             {"BT": 64, "BK": bk, "BV": 64}, num_warps=warps,
                             stop="ptx")  # fmt: skip
        assert "mma.sync" in ck.asm["ptx"]
        _assemble(ptxas, ck.asm["ptx"], tmp_path)
