"""driver: lazy init, clean failure without a GPU, CUDA errors by name; GPU tests (`-m gpu`) for
devices, module loading and memory."""

from __future__ import annotations

import ctypes
import os
import pathlib
import subprocess
import sys
import types

import numpy as np
import pytest

from tritium.errors import LaunchError, NoGPUError
from tritium.runtime import driver, memory

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run_python(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_import_touches_no_cuda():
    out = run_python(
        "import sys\n"
        "import tritium.runtime.driver, tritium.runtime.launcher, tritium.runtime.arrays, tritium.runtime.cache\n"
        "print('cuda.bindings.driver' in sys.modules)"
    )
    assert out.strip() == "False"


@pytest.fixture
def fresh(monkeypatch):
    """A driver module state as if nothing had been initialized, restored afterwards."""
    monkeypatch.setattr(driver, "_initialized", False)
    monkeypatch.setattr(driver, "_init_error", None)
    monkeypatch.setattr(driver, "_devices", {})
    monkeypatch.setattr(driver, "_modules", {})
    monkeypatch.setattr(driver.launch_state, "lost", None)
    monkeypatch.setattr(driver.launch_state, "kernel", None)
    return monkeypatch


def fake_cuda(fresh, cuInit=None, count=1):
    """Install a stand-in for cuda.bindings.driver with the given cuInit behaviour."""
    from cuda.bindings import driver as real

    cu = types.SimpleNamespace(CUresult=real.CUresult)
    cu.cuInit = cuInit or (lambda flags: (real.CUresult.CUDA_SUCCESS,))
    cu.cuDeviceGetCount = lambda: (real.CUresult.CUDA_SUCCESS, count)
    cu.cuGetErrorName = real.cuGetErrorName
    cu.cuGetErrorString = real.cuGetErrorString
    fresh.setattr(driver, "_cu", cu)
    return cu


def test_gpu_available_is_a_bool_and_never_raises():
    assert isinstance(driver.gpu_available(), bool)


@pytest.mark.skipif(driver.gpu_available(), reason="this machine has a GPU")
def test_no_gpu_here_is_a_plain_noGPUError():
    assert driver.gpu_available() is False
    with pytest.raises(NoGPUError, match="TRITIUM_INTERPRET=1") as info:
        driver.init()
    assert "Traceback" not in str(info.value)
    with pytest.raises(NoGPUError):
        driver.device()
    with pytest.raises(NoGPUError):
        memory.mem_alloc(16)
    assert driver.current_arch() is None


@pytest.mark.parametrize(
    "exc",
    [
        RuntimeError("Failed to dlopen libcuda.so.1"),
        OSError("libcuda.so.1: cannot open shared object file"),
    ],
)
def test_missing_driver_library_means_no_gpu(fresh, exc):
    def cuInit(flags):
        raise exc

    fake_cuda(fresh, cuInit)
    assert driver.gpu_available() is False
    with pytest.raises(NoGPUError, match="no CUDA driver found on this machine"):
        driver.init()


def test_no_device_means_no_gpu(fresh):
    from cuda.bindings import driver as real

    fake_cuda(fresh, lambda flags: (real.CUresult.CUDA_ERROR_NO_DEVICE,))
    assert driver.gpu_available() is False
    with pytest.raises(NoGPUError, match="CUDA_ERROR_NO_DEVICE"):
        driver.init()
    fake_cuda(fresh, count=0)
    fresh.setattr(driver, "_init_error", None)
    assert driver.gpu_available() is False


def test_init_result_is_remembered(fresh):
    calls = []

    def cuInit(flags):
        calls.append(flags)
        raise RuntimeError("Failed to dlopen libcuda.so.1")

    fake_cuda(fresh, cuInit)
    for _ in range(3):
        assert driver.gpu_available() is False
    assert len(calls) == 1


def test_fake_driver_with_device_is_available(fresh):
    fake_cuda(fresh)
    assert driver.gpu_available() is True


def test_check_success_does_nothing():
    from cuda.bindings import driver as cu

    driver.check(cu.CUresult.CUDA_SUCCESS, "cuMemAlloc")
    driver.check(0, "cuMemAlloc")


def test_error_names_cuda_error_and_kernel(fresh):
    from cuda.bindings import driver as cu

    with pytest.raises(
        LaunchError, match=r"^CUDA_ERROR_INVALID_VALUE in kernel 'add_kernel' \(cuLaunchKernel\)"
    ) as info:
        driver.check(cu.CUresult.CUDA_ERROR_INVALID_VALUE, "cuLaunchKernel", kernel="add_kernel")
    assert "context" not in str(info.value)  # not sticky
    with pytest.raises(LaunchError, match=r"^CUDA_ERROR_OUT_OF_MEMORY in cuMemAlloc"):
        driver.check(cu.CUresult.CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc")
    assert driver.error_name(700) == "CUDA_ERROR_ILLEGAL_ADDRESS"


def test_sticky_error_says_the_context_is_lost(fresh):
    from cuda.bindings import driver as cu

    driver.launch_state.kernel = "add_kernel"
    with pytest.raises(LaunchError) as info:
        driver.check(cu.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamSynchronize")
    msg = str(info.value)
    assert msg.startswith(
        "CUDA_ERROR_ILLEGAL_ADDRESS (raised by cuStreamSynchronize; the last kernel launched was 'add_kernel')"
    )
    assert "the CUDA context is lost" in msg and "restart the process" in msg
    assert (
        info.value.cuda_error == "CUDA_ERROR_ILLEGAL_ADDRESS" and info.value.kernel == "add_kernel"
    )
    with pytest.raises(
        LaunchError,
        match=r"context was lost earlier \(CUDA_ERROR_ILLEGAL_ADDRESS in kernel 'add_kernel'\)",
    ):
        driver.check(cu.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, "cuMemAlloc")


def test_device_arch_names():
    def dev(major, minor):
        return driver.Device(
            0, "GPU", (major, minor), 1, 1024, 49152, 49152, (1, 1, 1), 32, 1, None, None
        )

    assert dev(9, 0).arch == "sm_90"
    assert dev(8, 9).arch == "sm_89"
    assert dev(12, 0).arch == "sm_120"


# --------------------------------------------------------------------------- GPU tests

TINY_PTX = """.version 7.0
.target sm_80
.address_size 64
.visible .entry tiny_kernel(.param .u64 p)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, 7;
    st.global.u32 [%rd1], %r1;
    ret;
}
"""


@pytest.mark.gpu
def test_gpu_device_properties():
    dev = driver.device()
    assert dev is driver.device(0)
    assert dev.capability >= (8, 0) and dev.arch.startswith("sm_")
    assert dev.sm_count > 0 and dev.warp_size == 32 and dev.max_threads_per_block >= 1024
    assert dev.max_shared_per_block_optin >= dev.max_shared_per_block == 48 * 1024
    assert dev.max_grid[0] == 2**31 - 1 and dev.max_grid[1] == 65535
    assert dev.total_memory > 2**30 and dev.name
    assert driver.current_arch() == dev.arch
    print(f"\n[driver] {dev}")


@pytest.mark.gpu
def test_gpu_module_cache_and_functions():
    m1 = driver.load_module(TINY_PTX)
    assert driver.load_module(TINY_PTX) is m1
    assert driver.load_module(TINY_PTX.replace("7;", "8;")) is not m1
    assert driver.get_function(m1, "tiny_kernel") is not None
    with pytest.raises(LaunchError, match="CUDA_ERROR_NOT_FOUND in kernel 'nope'"):
        driver.get_function(m1, "nope")
    assert driver.function_attribute(driver.get_function(m1, "tiny_kernel"), "NUM_REGS") > 0


@pytest.mark.gpu
def test_gpu_bad_ptx_says_what_the_jit_said():
    with pytest.raises(LaunchError, match="CUDA_ERROR_INVALID_PTX") as info:
        driver.load_module(TINY_PTX.replace("mov.u32", "mov.bogus"))
    print(f"\n[driver] {info.value}")


@pytest.mark.gpu
def test_gpu_memory_round_trip():
    host = np.arange(1000, dtype=np.int32)
    ptr = memory.mem_alloc(host.nbytes)
    try:
        assert memory.pointer_memory_type(ptr) == "device"
        memory.memcpy_htod(ptr, host, host.nbytes)
        back = np.zeros_like(host)
        memory.memcpy_dtoh(back, ptr, host.nbytes)
        np.testing.assert_array_equal(back, host)
        memory.memset_d8(ptr, 0, 400)
        memory.memcpy_dtoh(back.ctypes.data, ptr, host.nbytes)
        np.testing.assert_array_equal(back, np.where(np.arange(1000) < 100, 0, host))
    finally:
        memory.mem_free(ptr)
    assert memory.mem_alloc(0) == 0
    buf = ctypes.create_string_buffer(16)
    assert memory.pointer_memory_type(ctypes.addressof(buf)) is None
