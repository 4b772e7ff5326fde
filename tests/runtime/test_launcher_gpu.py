"""Launcher on a real GPU: numpy, device arrays, torch/cupy, scalars, shared memory,
errors by name, threads (run with -m gpu on the GPU machine)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from tests.runtime.launcher_helpers import *  # noqa: F403
from tritium.errors import ArgumentError, LaunchError
from tritium.runtime import driver
from tritium.runtime.launcher import Launcher

# --------------------------------------------------------------------------- GPU tests


def _device_arrays(*hosts):
    from tritium.runtime import arrays

    return [arrays.to_device(h) for h in hosts]


@pytest.mark.gpu
def test_gpu_add_numpy():
    rng = np.random.default_rng(0)
    n = 1000
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    add_launcher()(((n + 127) // 128, 1, 1), [x, y, out, n])
    np.testing.assert_allclose(out.astype(np.float64), x.astype(np.float64) + y, rtol=1e-6)


@pytest.mark.gpu
def test_gpu_add_numpy_in_place_and_views():
    x = np.arange(300, dtype=np.float32)
    y = np.ones(300, np.float32)
    add_launcher()((3,), [x, y, x, 300])
    np.testing.assert_array_equal(x, np.arange(300) + 1)
    lau = strided_launcher()
    base = np.arange(30, dtype=np.float32)
    lau((1,), [base[2::3], 3, 10])
    want = np.arange(30, dtype=np.float32)
    want[2::3] *= 2
    np.testing.assert_array_equal(base, want)


@pytest.mark.gpu
def test_gpu_add_device_arrays_and_stream():
    n = 4097
    x, y = np.arange(n, dtype=np.float32), np.full(n, 0.5, np.float32)
    dx, dy, dout = _device_arrays(x, y, np.zeros(n, np.float32))
    lau = add_launcher(num_warps=8)
    lau(((n + 255) // 256, 1, 1), [dx, dy, dout, n])
    np.testing.assert_array_equal(dout.numpy(), x + y)
    cu = driver.cuda()
    err, s = cu.cuStreamCreate(0)
    driver.check(err, "cuStreamCreate")
    try:
        lau(((n + 255) // 256, 1, 1), [dout, dy, dout, n], stream=int(s))
        driver.synchronize(int(s))
        np.testing.assert_array_equal(dout.numpy(), x + 2 * y)
    finally:
        cu.cuStreamDestroy(s)


@pytest.mark.gpu
def test_gpu_add_torch_and_cupy():
    n = 1000
    ran = False
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        x = torch.arange(n, dtype=torch.float32, device="cuda")
        out = torch.empty_like(x)
        add_launcher()((8,), [x, x, out, n])
        torch.cuda.synchronize()
        assert torch.equal(out, 2 * x)
        with pytest.raises(ArgumentError, match="torch tensor on the CPU"):
            add_launcher()((8,), [x.cpu(), x, out, n])
        ran = True
    try:
        import cupy
    except ImportError:
        cupy = None
    if cupy is not None:
        x = cupy.arange(n, dtype=cupy.float32)
        out = cupy.empty_like(x)
        add_launcher()((8,), [x, x, out, n])
        driver.synchronize()
        assert bool((out == 2 * x).all())
        ran = True
    if not ran:
        pytest.skip("neither torch (with CUDA) nor cupy is importable")


@pytest.mark.gpu
def test_gpu_every_scalar_type():
    out = np.zeros(13, np.float64)
    values = [True, -5, -300, -(2**31), -(2**40), 255, 65535, 2**32 - 1, 2**53, 1.5, -2.0, 0.1, 2.5]
    scalars_launcher()((1,), [out, *values])
    want = [
        1,
        -5,
        -300,
        -(2**31),
        -(2**40),
        255,
        65535,
        2**32 - 1,
        2**53,
        1.5,
        -2.0,
        float(np.float32(0.1)),
        2.5,
    ]
    np.testing.assert_array_equal(out, want)


@pytest.mark.gpu
def test_gpu_large_dynamic_shared_memory():
    dev = driver.device()
    nbytes = min(100 * 1024, dev.max_shared_per_block_optin)
    assert nbytes > 48 * 1024, "every GPU tritium targets allows > 48 KiB per block when asked"
    out = np.zeros(128, np.int32)
    params = [{"name": "out", "type": "*i32"}, {"name": "nbytes", "type": "i32"}]
    lau = Launcher({"ptx": SMEM_PTX}, meta("smem_kernel", params, shared=nbytes))
    lau((1,), [out, nbytes])
    np.testing.assert_array_equal(out, np.arange(128))
    params = [{"name": "out", "type": "*i32"}, {"name": "nbytes", "type": "i32"}]
    too_big = Launcher(
        {"ptx": SMEM_PTX}, meta("smem_kernel", params, shared=dev.max_shared_per_block_optin + 1024)
    )
    with pytest.raises(LaunchError, match="bytes of shared memory per block"):
        too_big((1,), [out, 4])


@pytest.mark.gpu
def test_gpu_launch_errors_are_named():
    dx = _device_arrays(np.zeros(4, np.float32))[0]
    dev = driver.device()
    lau = add_launcher()
    # grid limits are checked before the driver sees them (launcher.check_grid)
    with pytest.raises(ArgumentError, match=r"kernel 'add_kernel': grid y = 65536 exceeds CUDA's limit"):
        lau((1, dev.max_grid[1] + 1, 1), [dx, dx, dx, 4])
    lau((0, 1, 1), [dx, dx, dx, 4])  # an empty grid is a no-op
    with pytest.raises(LaunchError, match="threads per block"):
        add_launcher(num_warps=64)((1,), [dx, dx, dx, 4])
    with pytest.raises(LaunchError, match="CUDA_ERROR_NOT_FOUND"):
        Launcher({"ptx": ADD_PTX}, meta("no_such_kernel", ADD_PARAMS))((1,), [dx, dx, dx, 4])


@pytest.mark.gpu
def test_gpu_host_pointer_is_refused():
    host = np.zeros(4, np.float32)
    with pytest.raises(ArgumentError, match="not memory CUDA knows"):
        add_launcher()((1,), [CAI(host.ctypes.data), None, None, 4])


@pytest.mark.gpu
def test_gpu_launch_from_another_thread():
    x = np.arange(256, dtype=np.float32)
    dx, dout = _device_arrays(x, np.zeros(256, np.float32))
    lau = add_launcher()
    lau((2,), [dx, dx, dout, 256])  # loaded on this thread
    errors = []

    def work():
        try:
            lau((2,), [dx, dout, dout, 256])
            driver.synchronize()
        except Exception as exc:  # reported below
            errors.append(exc)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert not errors, errors
    np.testing.assert_array_equal(dout.numpy(), 3 * x)


ILLEGAL_ADDRESS_SCRIPT = """
import sys
from tritium.errors import LaunchError
from tritium.runtime import driver, memory
from tritium.runtime.launcher import Launcher
ptx = {ptx!r}
lau = Launcher({{"ptx": ptx}}, {{"name": "bad_store_kernel", "num_warps": 1, "threads_per_warp": 32,
                               "shared": 0, "params": [{{"name": "addr", "type": "i64"}}]}})
lau((1, 1, 1), [16])
try:
    driver.synchronize()
except LaunchError as exc:
    print("FIRST:", exc)
try:
    memory.mem_alloc(16)
except LaunchError as exc:
    print("SECOND:", exc)
"""


@pytest.mark.gpu
def test_gpu_illegal_address_is_named():
    """In a subprocess: an illegal address poisons the context for the rest of the process."""
    script = textwrap.dedent(ILLEGAL_ADDRESS_SCRIPT.format(ptx=BAD_STORE_PTX))
    root = pathlib.Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        env=env,
    )
    out = proc.stdout
    assert "FIRST: CUDA_ERROR_ILLEGAL_ADDRESS" in out, out + proc.stderr
    assert "bad_store_kernel" in out and "context is lost" in out and "restart" in out
    assert "SECOND: CUDA_ERROR_ILLEGAL_ADDRESS" in out and "lost earlier" in out


@pytest.mark.gpu
def test_gpu_launch_overhead_is_printed(capsys):
    """Prints tritium's launch cost next to a bare cuLaunchKernel; asserts no timing."""
    dx = _device_arrays(np.zeros(4, np.float32))[0]
    lau = Launcher({"ptx": EMPTY_PTX}, meta("empty_kernel", ADD_PARAMS))
    args, grid, n = [dx, dx, dx, 4], (1, 1, 1), 5000
    lau(grid, args)
    driver.synchronize()
    fn, launch, s0, argv = lau._function, lau._launch, lau._stream0, lau._argv_addr

    def per_launch(body):
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            body()
            driver.synchronize()
            best = min(best, (time.perf_counter() - t0) / n * 1e6)
        return best

    def bare():
        for _ in range(n):
            launch(fn, 1, 1, 1, 128, 1, 1, 0, s0, argv, 0)

    def tritium():
        for _ in range(n):
            lau(grid, args)

    b, t = per_launch(bare), per_launch(tritium)
    with capsys.disabled():
        print(
            f"\n[launcher] bare cuLaunchKernel {b:.2f} us, tritium Launcher {t:.2f} us (+{t - b:.2f} us)"
        )
