"""The random functions on the GPU (`pytest -m gpu`): bit for bit against the interpreter,
and against upstream Triton's own `tl.randint4x` / `rand4x` / `randn4x` / `philox` where
`import triton` works (the same kernel source under `@triton.jit`).

Integer streams and uniforms are compared bit for bit. Normals go through `log`, `sqrt`,
`cos`, `sin`, whose f32 results may differ in the last bits between numpy (the
interpreter), tritium's GPU lowering (codegen/lower/libm/, no libdevice) and upstream's
libdevice, so those are compared to a few ulps of their magnitude, on bit-identical
uniforms; with TRITIUM_LIBDEVICE=auto (libdevice mode: NVIDIA's functions, as upstream)
they are compared bit for bit too.
"""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tests.frontend import philox_numpy as ref
from tests.frontend.test_random import (
    philox_impl_kernel,
    philox_kernel,
    randint4x_kernel,
    streams4x_kernel,
    streams_kernel,
    uniform_kernel,
)
from tests.test_interop_atomics import _upstream_twin

pytestmark = pytest.mark.gpu

NORMAL_TOL = {"rtol": 1e-5, "atol": 1e-5}


def on_gpu_and_interpreter(monkeypatch, launch):
    """`launch()` (which returns its output arrays) on the GPU, then in the interpreter."""
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    gpu = launch()
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    return gpu, launch()


@pytest.mark.parametrize("seed", [0, 1, -1, 2**31 + 5, -(2**45), 2**63 + 3])
@pytest.mark.parametrize("base", [0, 1, -123, 2**32 - 9, 2**41 + 7])
def test_randint4x_gpu_equals_interpreter(monkeypatch, seed, base):
    def launch():
        out = np.zeros(4 * 512, np.uint32)
        randint4x_kernel[(1,)](out, seed, base, N=512, ROUNDS=10)
        return out

    gpu, cpu = on_gpu_and_interpreter(monkeypatch, launch)
    np.testing.assert_array_equal(gpu, cpu)
    off_bits = 32 if -(2**31) <= base < 2**31 else 64
    want = ref.randint4x(seed, base + np.arange(512), off_bits)
    np.testing.assert_array_equal(gpu.reshape(4, 512), np.stack(want))


@pytest.mark.parametrize("rounds", [3, 7])
def test_n_rounds_gpu_equals_interpreter(monkeypatch, rounds):
    def launch():
        out = np.zeros(4 * 256, np.uint32)
        randint4x_kernel[(1,)](out, 77, 2**33, N=256, ROUNDS=rounds)
        return out

    gpu, cpu = on_gpu_and_interpreter(monkeypatch, launch)
    np.testing.assert_array_equal(gpu, cpu)


@pytest.mark.parametrize("seed,base", [(5, 0), (-9, 70_000), (2**50 + 1, 2**33 + 1)])
def test_rand_randn_gpu_equals_interpreter(monkeypatch, seed, base):
    n, grid = 1024, 5

    def launch():
        ints = np.zeros(n * grid, np.uint32)
        unif = np.full(n * grid, np.nan, np.float32)
        norm = np.full(n * grid, np.nan, np.float32)
        streams_kernel[(grid,)](ints, unif, norm, seed, base, N=n)
        return ints, unif, norm

    (gi, gu, gn), (ci, cu, cn) = on_gpu_and_interpreter(monkeypatch, launch)
    np.testing.assert_array_equal(gi, ci)
    np.testing.assert_array_equal(gu.view(np.uint32), cu.view(np.uint32))
    np.testing.assert_allclose(gn, cn, **NORMAL_TOL)
    assert gu.max() < 1.0 and gu.min() >= 0.0


def test_rand4x_randn4x_gpu_equals_interpreter(monkeypatch):
    def launch():
        unif = np.full(4 * 2048, np.nan, np.float32)
        norm = np.full(4 * 2048, np.nan, np.float32)
        streams4x_kernel[(1,)](unif, norm, 31337, 2**40, N=2048)
        return unif, norm

    (gu, gn), (cu, cn) = on_gpu_and_interpreter(monkeypatch, launch)
    np.testing.assert_array_equal(gu.view(np.uint32), cu.view(np.uint32))
    np.testing.assert_allclose(gn, cn, **NORMAL_TOL)


def test_philox_32_and_64_bit_counters_gpu_equals_interpreter(monkeypatch):
    rng = np.random.default_rng(1)
    c32 = rng.integers(0, 2**32, size=4 * 128, dtype=np.uint64).astype(np.uint32)
    c64 = rng.integers(0, 2**64, size=4 * 128, dtype=np.uint64)
    key = np.array([0x452821E638D01377, 0xBE5466CF34E90C6C], np.uint64)

    def launch():
        o32, o64, oimpl = np.zeros_like(c32), np.zeros_like(c64), np.zeros_like(c64)
        philox_kernel[(1,)](c32, o32, 0xFEDCBA9876543210, N=128, ROUNDS=10)
        philox_kernel[(1,)](c64, o64, 0x0123456789ABCDEF, N=128, ROUNDS=10)
        philox_impl_kernel[(1,)](c64, key, oimpl, N=128, ROUNDS=10)
        return o32, o64, oimpl

    gpu, cpu = on_gpu_and_interpreter(monkeypatch, launch)
    for g, c in zip(gpu, cpu):
        np.testing.assert_array_equal(g, c)
    want = ref.philox4x64(c64[:4], key)
    assert [int(x) for x in gpu[2][:4]] == want


def test_uint_to_uniform_float_edges_on_gpu(monkeypatch):
    x = np.array([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0x40000000, 9], np.uint32)

    def launch():
        out = np.full(x.size, np.nan, np.float32)
        uniform_kernel[(1,)](x, out, N=x.size)
        return out

    gpu, cpu = on_gpu_and_interpreter(monkeypatch, launch)
    np.testing.assert_array_equal(gpu.view(np.uint32), cpu.view(np.uint32))
    assert (gpu < 1.0).all()


# ------------------------------------------------------------------ against upstream Triton
@tritium.jit
def upstream_rng_kernel(int_ptr, unif_ptr, norm_ptr, seed, base, N: tl.constexpr):
    pid = tl.program_id(0)
    i = pid * N + tl.arange(0, N)
    offs = base + i
    r0, r1, r2, r3 = tl.randint4x(seed, offs)
    tl.store(int_ptr + 4 * i, r0.to(tl.int32, bitcast=True))
    tl.store(int_ptr + 4 * i + 1, r1.to(tl.int32, bitcast=True))
    tl.store(int_ptr + 4 * i + 2, r2.to(tl.int32, bitcast=True))
    tl.store(int_ptr + 4 * i + 3, r3.to(tl.int32, bitcast=True))
    u0, u1, u2, u3 = tl.rand4x(seed, offs)
    tl.store(unif_ptr + 4 * i, u0)
    tl.store(unif_ptr + 4 * i + 1, u1)
    tl.store(unif_ptr + 4 * i + 2, u2)
    tl.store(unif_ptr + 4 * i + 3, u3)
    tl.store(unif_ptr + 4 * N * tl.num_programs(0) + i, tl.rand(seed, offs, 7))
    n0, n1, n2, n3 = tl.randn4x(seed, offs)
    tl.store(norm_ptr + 4 * i, n0)
    tl.store(norm_ptr + 4 * i + 1, n1)
    tl.store(norm_ptr + 4 * i + 2, n2)
    tl.store(norm_ptr + 4 * i + 3, n3)
    tl.store(norm_ptr + 4 * N * tl.num_programs(0) + i, tl.randn(seed, offs))


@tritium.jit
def upstream_philox64_kernel(c_ptr, out_ptr, seed, N: tl.constexpr):
    i = tl.arange(0, N)
    c0 = tl.load(c_ptr + 4 * i)
    c1 = tl.load(c_ptr + 4 * i + 1)
    c2 = tl.load(c_ptr + 4 * i + 2)
    c3 = tl.load(c_ptr + 4 * i + 3)
    r0, r1, r2, r3 = tl.philox(seed, c0, c1, c2, c3)
    tl.store(out_ptr + 4 * i, r0.to(tl.int64, bitcast=True))
    tl.store(out_ptr + 4 * i + 1, r1.to(tl.int64, bitcast=True))
    tl.store(out_ptr + 4 * i + 2, r2.to(tl.int64, bitcast=True))
    tl.store(out_ptr + 4 * i + 3, r3.to(tl.int64, bitcast=True))


@pytest.mark.parametrize(
    "seed,base",
    [(0, 0), (1, 1), (-1, -5000), (2**31 + 11, 123), (2**45 - 3, 2**32 + 17), (2**63 + 1, 2**40)],
)
def test_same_numbers_as_upstream_triton(monkeypatch, seed, base):
    torch = pytest.importorskip("torch", reason="torch is not installed here")
    twin = _upstream_twin(upstream_rng_kernel)
    n, grid = 256, 4
    m = n * grid
    ints = torch.zeros(4 * m, dtype=torch.int32, device="cuda")
    unif = torch.zeros(5 * m, dtype=torch.float32, device="cuda")
    norm = torch.zeros(5 * m, dtype=torch.float32, device="cuda")
    twin[(grid,)](ints, unif, norm, seed, base, N=n)
    up_i, up_u, up_n = (t.cpu().numpy() for t in (ints, unif, norm))

    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    t_i = np.zeros(4 * m, np.int32)
    t_u = np.zeros(5 * m, np.float32)
    t_n = np.zeros(5 * m, np.float32)
    upstream_rng_kernel[(grid,)](t_i, t_u, t_n, seed, base, N=n)

    np.testing.assert_array_equal(t_i, up_i)  # randint4x, bit for bit
    np.testing.assert_array_equal(t_u.view(np.uint32), up_u.view(np.uint32))  # rand4x, rand
    np.testing.assert_allclose(t_n, up_n, **NORMAL_TOL)  # randn4x, randn: see the docstring


def test_same_philox_4x64_as_upstream_triton():
    torch = pytest.importorskip("torch", reason="torch is not installed here")
    twin = _upstream_twin(upstream_philox64_kernel)
    rng = np.random.default_rng(2)
    c = rng.integers(-(2**63), 2**63, size=4 * 64, dtype=np.int64)
    up = torch.zeros(4 * 64, dtype=torch.int64, device="cuda")
    twin[(1,)](torch.from_numpy(c).cuda(), up, 0x0123456789ABCDEF, N=64)
    mine = np.zeros(4 * 64, np.int64)
    upstream_philox64_kernel[(1,)](c, mine, 0x0123456789ABCDEF, N=64)
    np.testing.assert_array_equal(mine, up.cpu().numpy())


@pytest.mark.parametrize("seed,base", [(0, 0), (-1, -5000), (2**45 - 3, 2**32 + 17), (2**63 + 1, 2**40)])
def test_randn_bit_identical_to_upstream_in_libdevice_mode(monkeypatch, tmp_path, seed, base):
    torch = pytest.importorskip("torch", reason="torch is not installed here")
    twin = _upstream_twin(upstream_rng_kernel)
    n, grid = 256, 4
    m = n * grid
    norm = torch.zeros(5 * m, dtype=torch.float32, device="cuda")
    unif = torch.zeros(5 * m, dtype=torch.float32, device="cuda")
    ints = torch.zeros(4 * m, dtype=torch.int32, device="cuda")
    twin[(grid,)](ints, unif, norm, seed, base, N=n)
    up_n = norm.cpu().numpy()

    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    monkeypatch.setenv("TRITIUM_LIBDEVICE", "auto")
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    t_n = np.zeros(5 * m, np.float32)
    fresh = tritium.jit(upstream_rng_kernel.fn)  # compiled now, in libdevice mode
    fresh[(grid,)](np.zeros(4 * m, np.int32), np.zeros(5 * m, np.float32), t_n, seed, base, N=n)
    np.testing.assert_array_equal(t_n.view(np.uint32), up_n.view(np.uint32))  # randn4x, randn
