"""Issue 'GPU backend' acceptance kernels, launched through `kernel[grid](...)` on the GPU:
masked elementwise with `where`, integer kernels, a 2D transpose through strides, and a
kernel whose offsets pass 2**31 (i64 address arithmetic)."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl

pytestmark = pytest.mark.gpu


@tritium.jit
def masked_where_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    z = tl.where(x > y, x - y, tl.abs(y) * 0.5)
    tl.store(out_ptr + offs, z, mask=mask)


@pytest.mark.parametrize("n", [1, 1000, 4097, 100_003])
def test_masked_where(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.full(n + 5, np.nan, np.float32)
    masked_where_kernel[(tritium.cdiv(n, 512),)](x, y, out, n, BLOCK=512)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    np.testing.assert_allclose(
        out[:n], np.where(x64 > y64, x64 - y64, np.abs(y64) * 0.5), rtol=1e-6, atol=1e-7
    )
    assert np.isnan(out[n:]).all()


@tritium.jit
def int_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0)
    b = tl.load(b_ptr + offs, mask=mask, other=1)
    r = (a * 7 + b) // (tl.abs(b) % 13 + 1) ^ (a >> 3) | (b & 255)
    r = r - a % (tl.abs(b) % 7 + 1)
    tl.store(out_ptr + offs, r, mask=mask)


def _c_div(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def _c_mod(a, b):
    r = np.abs(a) % np.abs(b)
    return np.where(a < 0, -r, r)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_kernel(dtype):
    n = 77_777
    rng = np.random.default_rng(3)
    a = rng.integers(-(2**20), 2**20, n).astype(dtype)
    b = rng.integers(-(2**20), 2**20, n).astype(dtype)
    out = np.zeros(n, dtype)
    int_kernel[(tritium.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
    with np.errstate(over="ignore"):
        r = _c_div(a * 7 + b, np.abs(b) % 13 + 1) ^ (a >> 3) | (b & 255)
        r = r - _c_mod(a, np.abs(b) % 7 + 1)
    np.testing.assert_array_equal(out, r.astype(dtype))


@tritium.jit
def transpose_kernel(x_ptr, out_ptr, M, N, sxm, sxn, som, son, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=mask)
    tl.store(out_ptr + rn[None, :] * som + rm[:, None] * son, x, mask=mask)


@pytest.mark.parametrize("shape", [(64, 64), (300, 129), (1, 77)])
def test_transpose(shape):
    M, N = shape
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = np.full((N, M), np.nan, np.float32)
    grid = (tritium.cdiv(M, 32), tritium.cdiv(N, 64))
    transpose_kernel[grid](x, out, M, N, N, 1, M, 1, BM=32, BN=64)
    np.testing.assert_array_equal(out, x.T)


@tritium.jit
def far_offsets_kernel(buf_ptr, base, n, BLOCK: tl.constexpr):
    offs = base + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # base > 2**31: i64
    mask = offs < base + n
    v = tl.load(buf_ptr + offs, mask=mask, other=0)
    tl.store(buf_ptr + offs, v + 1, mask=mask)


def test_offsets_past_2_31():
    torch = pytest.importorskip("torch")
    size = 2**31 + 8192
    buf = torch.zeros(size, dtype=torch.int8, device="cuda")
    base, n = 2**31 + 100, 5000
    buf[base : base + n] = torch.arange(n, device="cuda").to(torch.int8)
    far_offsets_kernel[(tritium.cdiv(n, 1024),)](buf, base, n, BLOCK=1024)
    torch.cuda.synchronize()
    got = buf[base - 4 : base + n + 4].cpu().numpy()
    want = np.concatenate(
        [np.zeros(4, np.int8), (np.arange(n) + 1).astype(np.int8), np.zeros(4, np.int8)]
    )
    np.testing.assert_array_equal(got, want)
    assert int(buf[:base].abs().sum()) == 0  # nothing written below the window
    del buf
    torch.cuda.empty_cache()


def test_torch_and_device_arrays_pass_without_copies():
    torch = pytest.importorskip("torch")
    n = 10_000
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    masked_where_kernel[(tritium.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    torch.cuda.synchronize()
    ref = torch.where(x > y, x - y, y.abs() * 0.5)
    assert torch.allclose(out, ref)
    dx, dy = tritium.to_device(x.cpu().numpy()), tritium.to_device(y.cpu().numpy())
    dout = tritium.empty((n,), np.float32)
    masked_where_kernel[(tritium.cdiv(n, 256),)](dx, dy, dout, n, BLOCK=256)
    np.testing.assert_allclose(dout.numpy(), ref.cpu().numpy(), rtol=1e-6)


@tritium.jit
def float_mod_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, x % y, mask=mask)


@pytest.mark.parametrize(
    "dtype, rtol", [(np.float32, 1e-5), (np.float16, 2e-3), (np.float64, 1e-12)]
)
def test_float_mod_is_c_fmod(dtype, rtol):
    n = 5000
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(n) * 20).astype(dtype)
    y = (rng.uniform(0.5, 3.0, n) * rng.choice([-1, 1], n)).astype(dtype)
    out = np.full(n, np.nan, dtype)
    float_mod_kernel[(tritium.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    ref = np.fmod(x.astype(np.float64), y.astype(np.float64))  # sign of the dividend, as C
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=rtol, atol=rtol * 20)
