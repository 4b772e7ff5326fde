"""Block pointers end to end against numpy: on the GPU (marker `gpu`) and in the
interpreter. A matmul whose K loop advances two block pointers (as upstream's tutorials
write it), and copies of odd-sized, strided (transposed) windows with boundary checks on
one or both dims, zero and NaN padding, and stores that must not write outside."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl


@pytest.fixture(params=["interpreter", pytest.param("gpu", marks=pytest.mark.gpu)])
def mode(request, monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1" if request.param == "interpreter" else "0")
    return request.param


@tritium.jit
def block_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):  # fmt: skip
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_blk = tl.make_block_ptr(a_ptr, (M, K), (sam, sak), (pid_m * BM, 0), (BM, BK), (1, 0))
    b_blk = tl.make_block_ptr(b_ptr, (K, N), (sbk, sbn), (0, pid_n * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_blk, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_blk, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(a, b, input_precision="ieee")
        a_blk = tl.advance(a_blk, (0, BK))
        b_blk = tl.advance(b_blk, (BK, 0))
    c_blk = tl.make_block_ptr(c_ptr, (M, N), (scm, scn), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    tl.store(c_blk, acc, boundary_check=(0, 1))


@pytest.mark.parametrize("m, n, k", [(64, 64, 64), (77, 45, 93), (128, 33, 17)])
def test_block_pointer_matmul(mode, m, n, k):
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    bt = np.ascontiguousarray(b.T)  # b as a transposed view: strides (1, k)
    c = np.full((m + 3, n), np.nan, np.float32)  # rows past m must stay NaN
    bm, bn, bk = 32, 32, 16
    grid = (tritium.cdiv(m, bm), tritium.cdiv(n, bn))
    block_matmul_kernel[grid](a, bt, c, m, n, k, k, 1, 1, k, n, 1, BM=bm, BN=bn, BK=bk)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c[:m], want, rtol=1e-4, atol=1e-4 * np.sqrt(k))
    assert np.isnan(c[m:]).all()


@tritium.jit
def window_copy_kernel(x_ptr, y_ptr, R, C, sxr, sxc, OR, OC,
                       BR: tl.constexpr, BC: tl.constexpr, CHECK: tl.constexpr, PAD: tl.constexpr):  # fmt: skip
    src = tl.make_block_ptr(x_ptr, (R, C), (sxr, sxc), (OR, OC), (BR, BC), (1, 0))
    if CHECK == 0:
        v = tl.load(src)
    elif CHECK == 1:
        v = tl.load(src, boundary_check=(0,), padding_option=PAD)
    elif CHECK == 2:
        v = tl.load(src, boundary_check=(1,), padding_option=PAD)
    else:
        v = tl.load(src, boundary_check=(0, 1), padding_option=PAD)
    dst = tl.make_block_ptr(y_ptr, (BR, BC), (BC, 1), (0, 0), (BR, BC), (1, 0))
    tl.store(dst, v)


def _window(x, o_r, o_c, br, bc, check, pad):
    """The numpy model: the window, out-of-bounds elements of checked dims padded."""
    r, c = x.shape
    out = np.empty((br, bc), x.dtype)
    fill = np.nan if pad == "nan" else 0
    for i in range(br):
        for j in range(bc):
            ii, jj = o_r + i, o_c + j
            bad_r, bad_c = not 0 <= ii < r, not 0 <= jj < c
            if (check in (1, 3) and bad_r) or (check in (2, 3) and bad_c):
                out[i, j] = fill
            else:
                out[i, j] = x[ii, jj]
    return out


@pytest.mark.parametrize("check", [1, 2, 3])
@pytest.mark.parametrize("pad", ["zero", "nan"])
@pytest.mark.parametrize("transposed", [False, True])
def test_boundary_checked_windows(mode, check, pad, transposed):
    rng = np.random.default_rng(check)
    base = rng.standard_normal((23, 19)).astype(np.float32)
    x = base.T if transposed else base  # a strided view: strides (1, 19) when transposed
    r, c = x.shape
    o_r, o_c = r - 5, c - 3  # the window hangs over the bottom-right corner
    if check == 1:
        o_c = 0  # unchecked dims must stay in bounds
    if check == 2:
        o_r = 0
    br, bc = 8, 16
    y = np.full((br, bc), -1.0, np.float32)
    sxr, sxc = (1, 19) if transposed else (19, 1)
    window_copy_kernel[(1,)](base, y, r, c, sxr, sxc, o_r, o_c, BR=br, BC=bc, CHECK=check, PAD=pad)
    np.testing.assert_array_equal(y, _window(x, o_r, o_c, br, bc, check, pad))


@tritium.jit
def store_edge_kernel(y_ptr, R, C, OR, OC, BR: tl.constexpr, BC: tl.constexpr):
    dst = tl.make_block_ptr(y_ptr, (R, C), (C, 1), (OR, OC), (BR, BC), (1, 0))
    dst = tl.advance(dst, (-2, 1))
    tl.store(dst, tl.full((BR, BC), 7.0, tl.float32), boundary_check=(0, 1))


def test_stores_stay_inside(mode):
    r, c = 10, 12
    y = np.zeros((r + 2, c), np.float32)  # two guard rows after the tensor
    store_edge_kernel[(1,)](y, r, c, 6, 5, BR=8, BC=8)
    want = np.zeros_like(y)
    want[4:10, 6:12] = 7.0  # rows 6-2 .. 9 and cols 5+1 .. 11: the rest is out of bounds
    np.testing.assert_array_equal(y, want)
