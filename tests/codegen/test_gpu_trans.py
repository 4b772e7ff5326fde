"""`tl.trans` / `tl.permute` of loaded tiles, alone and feeding `tl.dot` (q @ k^T, as
attention writes it), against numpy: on the GPU (marker `gpu`) and in the interpreter.
convert-triton-to-tritongpu gives the trans operand its result's layout with the dims
permuted back, so a ttg.convert_layout (through smem) moves the data and the trans itself
is a register permutation; without that the GPU path could not compile these at all."""

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


@tritium.jit
def trans_kernel(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rm * N + rn)
    tl.store(y_ptr + rn.T * M + rm.T, tl.trans(x))


@tritium.jit
def permute_kernel(x_ptr, y_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    i = tl.arange(0, A)[:, None, None]
    j = tl.arange(0, B)[None, :, None]
    k = tl.arange(0, C)[None, None, :]
    x = tl.load(x_ptr + i * B * C + j * C + k)
    c = tl.arange(0, C)[:, None, None]
    a = tl.arange(0, A)[None, :, None]
    b = tl.arange(0, B)[None, None, :]
    tl.store(y_ptr + c * A * B + a * B + b, tl.permute(x, (2, 0, 1)))


@tritium.jit
def qk_kernel(q_ptr, k_ptr, s_ptr, B: tl.constexpr, D: tl.constexpr):
    rb = tl.arange(0, B)[:, None]
    rd = tl.arange(0, D)[None, :]
    q = tl.load(q_ptr + rb * D + rd)
    k = tl.load(k_ptr + rb * D + rd)
    s = tl.dot(q, tl.trans(k), input_precision="ieee")
    tl.store(s_ptr + rb * B + tl.arange(0, B)[None, :], s)


@pytest.mark.parametrize("m, n, warps", [(32, 32, 4), (16, 64, 4), (64, 8, 2), (8, 128, 8)])
def test_trans_of_a_loaded_tile(mode, m, n, warps):
    x = np.random.default_rng(m * n).standard_normal((m, n)).astype(np.float32)
    y = np.full((n, m), np.nan, np.float32)
    trans_kernel[(1,)](x, y, M=m, N=n, num_warps=warps)
    np.testing.assert_array_equal(y, x.T)


def test_permute_3d(mode):
    x = np.random.default_rng(1).standard_normal((4, 8, 16)).astype(np.float32)
    y = np.full((16, 4, 8), np.nan, np.float32)
    permute_kernel[(1,)](x, y, A=4, B=8, C=16)
    np.testing.assert_array_equal(y, x.transpose(2, 0, 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_q_times_k_transposed(mode, dtype):
    rng = np.random.default_rng(2)
    b, d = 32, 64
    q = rng.standard_normal((b, d)).astype(dtype)
    k = rng.standard_normal((b, d)).astype(dtype)
    s = np.full((b, b), np.nan, np.float32)
    qk_kernel[(1,)](q, k, s, B=b, D=d)
    want = q.astype(np.float64) @ k.astype(np.float64).T
    np.testing.assert_allclose(s, want, rtol=1e-3, atol=1e-3 * np.sqrt(d))


def test_trans_kernels_compile_and_assemble(ptxas, tmp_path):
    cases = [
        (trans_kernel, "*fp32,*fp32", {"M": 16, "N": 64}),
        (permute_kernel, "*fp32,*fp32", {"A": 4, "B": 8, "C": 16}),
        (qk_kernel, "*fp16,*fp16,*fp32", {"B": 64, "D": 64}),
        (qk_kernel, "*fp32,*fp32,*fp32", {"B": 32, "D": 32}),
    ]
    for fn, sig, consts in cases:
        ck = tritium.compile(fn, sig, consts, stop="ptx")
        assert "ttg.convert_layout" in ck.asm["ttgir"] and "tt.trans" in ck.asm["ttgir"]
        src = tmp_path / "k.ptx"
        src.write_text(ck.asm["ptx"])
        subprocess.run([ptxas, "-arch=sm_89", str(src), "-o", str(tmp_path / "k.cubin")],
                       check=True, capture_output=True)  # fmt: skip
