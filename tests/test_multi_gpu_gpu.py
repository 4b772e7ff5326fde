"""Device selection on real GPUs (`-m gpu`): launches run where their tensors live, on
torch's current stream there; with one GPU the stream and current-device rules, with two or
more (tests that need them skip otherwise) tensors on each device, arguments on two devices
refused, and a process that only uses device 1 never creating device 0's context.
scripts/multi_gpu_check.sh runs these on a machine of several GPUs, then DDP under torchrun."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tritium
from tests.jit.test_launch_fast import fresh_kernel
from tritium.errors import ArgumentError
from tritium.runtime import arrays, devices, driver, memory

pytestmark = pytest.mark.gpu


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _count() -> int:
    cu = driver.cuda()
    driver.init()
    return int(cu.cuDeviceGetCount()[1])


def _need(n: int) -> None:
    if _count() < n:
        pytest.skip(f"needs {n} GPUs, this machine has {_count()}")


def test_a_launch_runs_on_torchs_current_stream(torch):
    """A kernel given no stream goes on torch's current one: launched inside
    `torch.cuda.stream(s)` after work queued on `s` that fills x late, it sees the fill."""
    k = fresh_kernel()
    n = 1 << 16
    x = torch.zeros(n, device="cuda")
    out = torch.empty_like(x)
    for _ in range(3):  # warm: the fast path
        k[(tritium.cdiv(n, 1024),)](x, x, out, n, BLOCK_SIZE=1024)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)  # ~25 ms of GPU time on s, then the fill
        x.fill_(1.0)
        k[(tritium.cdiv(n, 1024),)](x, x, out, n, BLOCK_SIZE=1024)
    s.synchronize()
    assert torch.equal(out, torch.full_like(out, 2.0))  # ordered after the fill on s


def test_current_device_follows_torch(torch):
    torch.cuda.set_device(0)
    assert devices.current_device() == 0
    a = arrays.empty(16)
    assert a.device == 0 and memory.pointer_device(a.ptr) == 0


def test_tensors_on_each_device(torch):
    _need(2)
    k = fresh_kernel()
    n = 4099
    torch.cuda.set_device(0)
    results = {}
    for rep in range(3):
        for d in range(torch.cuda.device_count()):
            x = torch.arange(n, device=f"cuda:{d}", dtype=torch.float32) + d
            out = torch.full_like(x, float("nan"))
            k[(tritium.cdiv(n, 1024),)](x, x, out, n, BLOCK_SIZE=1024)
            results[d] = (x, out)
        for d, (x, out) in results.items():
            torch.cuda.synchronize(d)
            assert torch.equal(out, 2 * x), (rep, d)
    assert torch.cuda.current_device() == 0  # the launches left torch's device alone
    assert sorted(r.device for r in k.runners.values()) == list(range(torch.cuda.device_count()))


def test_arguments_on_two_devices_are_refused(torch):
    _need(2)
    k = fresh_kernel()
    x0 = torch.ones(64, device="cuda:0")
    x1 = torch.ones(64, device="cuda:1")
    for x in (x0, x1, x0, x1):  # warm entries on both devices
        k[(1,)](x, x, x, 64, BLOCK_SIZE=64)
    with pytest.raises(
        ArgumentError, match="'x_ptr' is on cuda:0 but argument 'y_ptr' is on cuda:1"
    ):
        k[(1,)](x0, x1, x0, 64, BLOCK_SIZE=64)


def test_device_arrays_and_numpy_on_device_1():
    _need(2)
    k = fresh_kernel()
    x = arrays.to_device(np.arange(256, dtype=np.float32), device=1)
    out = arrays.empty(256, device=1)
    for _ in range(3):
        k[(1,)](x, x, out, 256, BLOCK_SIZE=256)
    np.testing.assert_array_equal(out.numpy(), 2 * np.arange(256))
    driver.device(1)  # numpy arguments go to the thread's device
    host = np.arange(256, dtype=np.float32)
    res = np.zeros(256, np.float32)
    k[(1,)](host, host, res, 256, BLOCK_SIZE=256)
    np.testing.assert_array_equal(res, 2 * host)


DEVICE_1_ONLY = """
import numpy as np
from cuda.bindings import driver as cu
from examples.vector_add import add_kernel
from tritium.runtime import arrays, driver, memory

x = arrays.to_device(np.arange(1024, dtype=np.float32), device=1)
out = arrays.empty(1024, device=1)
for _ in range(3):
    add_kernel[(1,)](x, x, out, 1024, BLOCK_SIZE=1024)
assert (out.numpy() == 2 * np.arange(1024)).all()
err, dev0 = cu.cuDeviceGet(0)  # (not driver.opened(0): retaining would create it)
err, flags, active = cu.cuDevicePrimaryCtxGetState(dev0)
print("device 0 context active:", bool(active))
assert not active, "device 0's context was created"
"""


def test_a_process_using_only_device_1_never_creates_device_0s_context():
    _need(2)
    root = pathlib.Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    env.pop("TRITIUM_DEVICE", None)
    res = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(DEVICE_1_ONLY)],
        capture_output=True, text=True, timeout=300, cwd=root, env=env,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
