"""The generated `kernel[grid](...)` fast path on a real GPU, with torch (and cupy) arrays:
results against numpy over many launches and specialisations, and the errors the fast
path must hand to the general path (CPU tensors, grids past CUDA's limits)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tritium
from tests.jit.test_launch_fast import fresh_kernel
from tritium.errors import ArgumentError

pytestmark = pytest.mark.gpu


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def test_torch_launches_match_numpy_across_specialisations(torch):
    k = fresh_kernel()
    rng = np.random.default_rng(0)
    sizes = [1, 17, 1024, 4099, 1, 17, 1024, 4099]
    for rep in range(3):
        for n in sizes:
            xh = rng.standard_normal(n + 1).astype(np.float32)
            yh = rng.standard_normal(n + 1).astype(np.float32)
            x, y = torch.from_numpy(xh).cuda(), torch.from_numpy(yh).cuda()
            out = torch.full((n + 1,), float("nan"), device="cuda")
            xs = x[1:] if rep == 2 else x[:n]  # rep 2: 4-byte aligned only
            ys = y[1:] if rep == 2 else y[:n]
            grid = lambda meta: (tritium.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)  # noqa: E731
            k[grid](xs, ys, out, n, BLOCK_SIZE=256)
            got = out.cpu().numpy()
            want = (xh[1:] if rep == 2 else xh[:n]).astype(np.float64) + (
                yh[1:] if rep == 2 else yh[:n]
            )
            np.testing.assert_allclose(got[:n], want, rtol=1e-6)
            assert np.isnan(got[n:]).all()
    # specialisations: n==1, n=17, n%16==0, n=4099 (x2 alignments): each one compiles once
    assert k.general_calls <= 1 + len(k.runners)


def test_cpu_tensor_and_bad_grid_after_the_fast_path(torch):
    k = fresh_kernel()
    x = torch.arange(64, device="cuda", dtype=torch.float32)
    out = torch.empty_like(x)
    for _ in range(3):
        k[(1,)](x, x, out, 64, BLOCK_SIZE=64)
    calls = k.general_calls
    with pytest.raises(ArgumentError, match="on the CPU"):
        k[(1,)](x.cpu(), x, out, 64, BLOCK_SIZE=64)
    with pytest.raises(ArgumentError, match="grid x = 2147483648 exceeds"):
        k[(2**31,)](x, x, out, 64, BLOCK_SIZE=64)
    with pytest.raises(ArgumentError, match="grid y = 65536 exceeds"):
        k[(1, 65536)](x, x, out, 64, BLOCK_SIZE=64)
    out.fill_(-1)
    k[(0,)](x, x, out, 64, BLOCK_SIZE=64)  # launches nothing
    torch.cuda.synchronize()
    assert (out == -1).all()
    k[(1,)](x, x, out, 64, BLOCK_SIZE=64)
    torch.cuda.synchronize()
    assert torch.equal(out, 2 * x)
    assert k.general_calls == calls + 4  # the 4 odd calls, and nothing else


def test_streams_and_threads(torch):
    k = fresh_kernel()
    s = torch.cuda.Stream()
    x = torch.arange(1000, device="cuda", dtype=torch.float32)
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        out = torch.empty_like(x)
        for _ in range(3):
            k[(4,)](x, x, out, 1000, BLOCK_SIZE=256, stream=s.cuda_stream)
    s.synchronize()
    assert torch.equal(out, 2 * x)

    outs = [torch.full_like(x, float("nan")) for _ in range(6)]
    errors = []

    def work(i):
        try:
            for j in range(300):
                k[(4,)](x, x if j % 2 else outs[i], outs[i], 1000, BLOCK_SIZE=256)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    torch.cuda.synchronize()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    torch.cuda.synchronize()
    assert not errors
    # j even: out = x + out (reads out: a wrong pointer shows), j odd: out = 2x; last j odd
    for o in outs:
        assert torch.equal(o, 2 * x)


def test_cupy_arrays_take_the_fast_path():
    cp = pytest.importorskip("cupy")
    k = fresh_kernel()
    x = cp.arange(300, dtype=cp.float32)
    out = cp.full(300, cp.nan, dtype=cp.float32)
    for _ in range(4):
        k[(2,)](x, x, out, 300, BLOCK_SIZE=256)
    cp.cuda.runtime.deviceSynchronize()
    np.testing.assert_array_equal(cp.asnumpy(out), 2 * np.arange(300, dtype=np.float32))
    assert k.general_calls == 2
    assert ".data.ptr" in k._launch._tritium_source


def test_launch_cost_is_printed(torch, capsys):
    """Prints `kernel[grid](...)` against a bare cuLaunchKernel; asserts no timing."""
    k = fresh_kernel()
    x = torch.randn(4096, device="cuda")
    out = torch.empty_like(x)
    for _ in range(3):
        k[(4,)](x, x, out, 4096, BLOCK_SIZE=1024)
    (lau,) = [r.launcher for r in k.runners.values()]
    fn, launch, s0, argv = lau._function, lau._launch, lau._stream0, lau._argv_addr
    n = 5000

    def per_launch(body):
        best = float("inf")
        for _ in range(3):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            body()
            torch.cuda.synchronize()
            best = min(best, (time.perf_counter() - t0) / n * 1e6)
        return best

    def bare():
        for _ in range(n):
            launch(fn, 4, 1, 1, 128, 1, 1, 0, s0, argv, 0)

    def jit():
        for _ in range(n):
            k[(4,)](x, x, out, 4096, BLOCK_SIZE=1024)

    b, t = per_launch(bare), per_launch(jit)
    with capsys.disabled():
        print(f"\n[launch] bare cuLaunchKernel {b:.2f} us, kernel[grid](...) {t:.2f} us")
