"""Tensor descriptors (`tl.make_tensor_descriptor`, `.load` / `.store`,
`tl.load_tensor_descriptor` / `tl.store_tensor_descriptor`) against numpy, in the
interpreter and (marker `gpu`) on the GPU: odd shapes, boxes hanging over every edge
(also at negative offsets: zero, or NaN padding), stores that must not write outside,
1-D to 3-D, a dot K loop as upstream's tutorials write it, descriptors passed to and
returned from helpers; the TTIR (block pointers with every dim checked), PTX that
ptxas assembles, and upstream's errors."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tests.frontend.helpers import ttir_text

MODES = ["interp", pytest.param("gpu", marks=pytest.mark.gpu)]


@pytest.fixture(params=MODES)
def mode(request, monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1" if request.param == "interp" else "0")
    return request.param


@tritium.jit
def _maybe_desc(p, shape, strides, block_shape):
    # upstream's fused-attention tutorial: a descriptor, or a pointer to make one from
    if isinstance(p, tl.tensor_descriptor):
        return p
    else:
        return tl.make_tensor_descriptor(p, shape, strides, block_shape)


@tritium.jit
def copy2d_kernel(X, Y, M, N, sx, sy, DM, DN, BM: tl.constexpr, BN: tl.constexpr,
                  PAD: tl.constexpr, FUNCS: tl.constexpr):  # fmt: skip
    """Y[i, j] = X[i + DM, j + DN] * 2 + 1 over Y's [M, N] boxes (X is M x N too)."""
    dx = _maybe_desc(X, [M, N], [sx, 1], [BM, BN])
    if PAD == "nan":
        dx = tl.make_tensor_descriptor(X, [M, N], [sx, 1], [BM, BN], padding_option="nan")
    dy = tl.make_tensor_descriptor(Y, shape=[M, N], strides=[sy, 1], block_shape=[BM, BN])
    dy = _maybe_desc(dy, [M, N], [sy, 1], [BM, BN])
    pm = tl.program_id(0) * BM
    for j in range(0, tl.cdiv(N, BN)):
        if FUNCS:
            x = tl.load_tensor_descriptor(dx, [pm + DM, j * BN + DN])
            tl.store_tensor_descriptor(dy, [pm, j * BN], x * 2 + 1)
        else:
            x = dx.load([pm + DM, j * BN + DN])
            dy.store([pm, j * BN], x * 2 + 1)


def _shifted(x, dm, dn, fill):
    """x shifted by (dm, dn): out[i, j] = x[i + dm, j + dn], `fill` outside."""
    m, n = x.shape
    out = np.full((m, n), fill, np.float32)
    for i in range(m):
        for j in range(n):
            if 0 <= i + dm < m and 0 <= j + dn < n:
                out[i, j] = x[i + dm, j + dn]
    return out


@pytest.mark.parametrize("m, n, dm, dn", [(37, 50, 0, 0), (16, 64, 3, -5), (5, 9, -2, 4)])
@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_copy_with_every_edge(mode, m, n, dm, dn, pad):
    x = np.arange(m * (n + 3), dtype=np.float32).reshape(m, n + 3)[:, :n]  # row stride n+3
    y = np.full((m + 2, n + 1), -7, np.float32)  # row stride n+1; the margins must stay
    copy2d_kernel[(tritium.cdiv(m, 16),)](
        x.base, y, m, n, n + 3, n + 1, dm, dn, BM=16, BN=16, PAD=pad, FUNCS=dm > 0
    )
    want = _shifted(x, dm, dn, np.nan if pad == "nan" else 0.0) * 2 + 1
    np.testing.assert_array_equal(y[:m, :n], want)
    assert (y[m:] == -7).all() and (y[:, n] == -7).all()


@tritium.jit
def rank_kernel(X, Y, A, B, C, RANK: tl.constexpr, B0: tl.constexpr, B1: tl.constexpr,
                B2: tl.constexpr):  # fmt: skip
    pid = tl.program_id(0)
    if RANK == 1:
        d = tl.make_tensor_descriptor(X, [A], [1], [B0])
        e = tl.make_tensor_descriptor(Y, [A], [1], [B0])
        e.store([pid * B0], d.load([pid * B0]) + 1)
    else:
        d = tl.make_tensor_descriptor(X, [A, B, C], [B * C, C, 1], [B0, B1, B2])
        e = tl.make_tensor_descriptor(Y, [A, B, C], [B * C, C, 1], [B0, B1, B2])
        e.store([pid * B0, 0, 0], d.load([pid * B0, 0, 0]) + 1)


def test_one_and_three_dims(mode):
    x = np.arange(100, dtype=np.int32)
    y = np.zeros(100, np.int32)
    rank_kernel[(tritium.cdiv(100, 32),)](x, y, 100, 1, 1, RANK=1, B0=32, B1=1, B2=1)
    np.testing.assert_array_equal(y, x + 1)
    x3 = np.arange(5 * 3 * 6, dtype=np.float16).reshape(5, 3, 6)
    y3 = np.zeros_like(x3)
    rank_kernel[(3,)](x3, y3, 5, 3, 6, RANK=3, B0=2, B1=4, B2=8)
    np.testing.assert_array_equal(y3, x3 + 1)


@tritium.jit
def desc_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                       BK: tl.constexpr):  # fmt: skip
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BM, BN])
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=3):
        acc = tl.dot(a_desc.load([om, k]), b_desc.load([k, on]), acc)
    c_desc.store([om, on], acc)


@pytest.mark.parametrize("m, n, k", [(64, 64, 64), (50, 40, 70)])
def test_dot_loop(mode, m, n, k):
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    grid = (tritium.cdiv(m, 32), tritium.cdiv(n, 32))
    desc_matmul_kernel[grid](a, b, c, m, n, k, BM=32, BN=32, BK=16)
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c, want, rtol=1e-2, atol=1e-2)


def test_ttir_and_ptx(ptxas, tmp_path):
    sig = "*fp32:16,*fp32:16,i32,i32,i32,i32,i32,i32"
    consts = {"BM": 16, "BN": 32, "PAD": "zero", "FUNCS": False}
    text = ttir_text(copy2d_kernel, sig, consts)
    assert text.count("tt.make_tensor_ptr") == 2
    assert "tt.load %" in text and "{boundaryCheck = array<i32: 0, 1>, padding = 1 : i32}" in text
    assert "tt.store %" in text and "{boundaryCheck = array<i32: 0, 1>}" in text
    ptx = tritium.compile(copy2d_kernel, sig, consts, stop="ptx").asm["ptx"]
    (tmp_path / "k.ptx").write_text(ptx)
    res = subprocess.run(["ptxas", "-arch=sm_89", str(tmp_path / "k.ptx"), "-o",
                          str(tmp_path / "k.cubin")], capture_output=True, text=True)  # fmt: skip
    assert res.returncode == 0, res.stderr
    ptx = tritium.compile(desc_matmul_kernel, "*fp16:16,*fp16:16,*fp32:16,i32:16,i32:16,i32:16",
                          {"BM": 64, "BN": 64, "BK": 32}, stop="ptx").asm["ptx"]  # fmt: skip
    assert "mma.sync" in ptx and "cp.async" in ptx  # tensor cores, pipelined loads


@tritium.jit
def bad_kernel(X, n, s, KIND: tl.constexpr):
    if KIND == 0:
        tl.make_tensor_descriptor(X, [n, n], [s, s], [16, 16])
    elif KIND == 1:
        tl.make_tensor_descriptor(X, [n], [1], [2])
    elif KIND == 2:
        tl.make_tensor_descriptor(X, [n, n, n, n, n, n], [1] * 6, [16] * 6)
    elif KIND == 3:
        tl.make_tensor_descriptor(X, [n, n], [n, 1], [16, 12])
    elif KIND == 4:
        d = tl.make_tensor_descriptor(X, [n, n], [n, 1], [16, 16])
        d.load([0])
    else:
        tl.load_tensor_descriptor(X, [0])


@pytest.mark.parametrize(
    "kind, message",
    [
        (0, "tensor descriptor last dim must be 1 but got int32"),
        (1, "at least 16 bytes in the last dimension, but got 2 \\* 4 = 8 bytes"),
        (2, "expected 1 <= ndim <= 5 but got 6 dimensions"),
        (3, "block_shape: shape \\[16, 12\\] must have power-of-two dimensions"),
        (4, "the descriptor has 2 dims but 1 offsets were given"),
        (5, "needs a tensor descriptor"),
    ],
)
def test_errors(kind, message):
    with pytest.raises(tritium.CompilationError, match=message):
        ttir_text(bad_kernel, "*fp32,i32,i32", {"KIND": kind})
