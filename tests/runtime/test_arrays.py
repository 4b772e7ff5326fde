"""DeviceArray: on the CPU through a fake device whose memory is host memory, and for real
on a GPU (`-m gpu`)."""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest

from tritium.errors import ArgumentError, NoGPUError
from tritium.runtime import arrays, driver, memory
from tritium.runtime.arrays import _c_strides


class HostMemory:
    """Stands in for the driver's memory calls: allocations are ctypes buffers."""

    def __init__(self, monkeypatch):
        self.live: dict[int, ctypes.Array] = {}
        self.freed: list[int] = []
        dev = driver.Device(
            0, "Fake", (9, 0), 1, 1024, 49152, 232448, (2**31 - 1, 65535, 65535), 32, 1, None, None
        )
        monkeypatch.setattr(driver, "device", lambda ordinal=None: dev)
        monkeypatch.setattr(memory, "mem_alloc", self.alloc)
        monkeypatch.setattr(memory, "mem_free", self.free)
        monkeypatch.setattr(
            memory, "memcpy_htod", lambda dst, src, n, s=None, o=None: ctypes.memmove(dst, src, n)
        )
        monkeypatch.setattr(
            memory, "memcpy_dtoh", lambda dst, src, n, s=None, o=None: ctypes.memmove(dst, src, n)
        )
        monkeypatch.setattr(
            memory, "memset_d8", lambda p, v, n, s=None, o=None: ctypes.memset(p, v, n)
        )
        monkeypatch.setattr(driver, "synchronize", lambda s=None, o=None: None)

    def alloc(self, n, ordinal=None):
        if n <= 0:
            return 0
        buf = (ctypes.c_char * n)(*([b"\xab"] * n))  # not zeroed, like cuMemAlloc
        self.live[ctypes.addressof(buf)] = buf
        return ctypes.addressof(buf)

    def free(self, ptr, quiet=False, ordinal=None):
        if ptr:
            self.freed.append(ptr)
            del self.live[ptr]


@pytest.fixture
def mem(monkeypatch):
    return HostMemory(monkeypatch)


def test_c_strides():
    assert _c_strides((2, 3, 4), 4) == (48, 16, 4)
    assert _c_strides((), 8) == ()
    assert _c_strides((0, 5), 2) == (10, 2)
    for shape in [(3,), (2, 5), (4, 1, 3)]:
        assert _c_strides(shape, 8) == np.empty(shape, np.float64).strides


@pytest.mark.skipif(driver.gpu_available(), reason="this machine has a GPU")
def test_no_gpu_is_a_plain_error():
    with pytest.raises(NoGPUError, match="no CUDA driver|no GPU"):
        arrays.empty(4)


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float16, np.int64, np.uint8, np.bool_, np.complex64]
)
@pytest.mark.parametrize("shape", [(7,), (2, 3), (), (0, 4), (1, 1, 5)])
def test_round_trip(mem, dtype, shape):
    host = (np.arange(int(np.prod(shape))) % 5).astype(dtype).reshape(shape)
    a = arrays.to_device(host)
    assert a.shape == shape and a.dtype == np.dtype(dtype) and a.ndim == len(shape)
    assert a.nbytes == host.nbytes and a.size == host.size and a.itemsize == host.itemsize
    assert a.strides == _c_strides(shape, host.itemsize)
    if host.size:  # (numpy 2.4 gives empty arrays zero strides; both are valid)
        assert a.strides == np.empty(shape, dtype).strides
    back = a.numpy()
    assert back.dtype == host.dtype and back.shape == shape
    np.testing.assert_array_equal(back, host)


def test_non_contiguous_host_is_stored_contiguous(mem):
    host = np.arange(24, dtype=np.int32).reshape(4, 6)[:, ::2].T
    a = arrays.to_device(host)
    assert a.shape == (3, 4) and a.strides == (16, 4)
    np.testing.assert_array_equal(a.numpy(), host)


def test_empty_zeros_and_shape_forms(mem):
    assert arrays.empty(5).shape == (5,) and arrays.empty(5).dtype == np.float32
    assert arrays.empty(np.int64(3), "f8").shape == (3,)
    z = arrays.zeros([2, 3], np.int16)
    assert z.shape == (2, 3)
    np.testing.assert_array_equal(z.numpy(), np.zeros((2, 3), np.int16))
    with pytest.raises(ArgumentError, match=">= 0"):
        arrays.empty((2, -1))
    with pytest.raises(ArgumentError, match="object"):
        arrays.empty(3, object)


def test_cuda_array_interface(mem):
    a = arrays.to_device(np.zeros((2, 3), np.float16))
    cai = a.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (2, 3) and cai["typestr"] == "<f2"
    assert cai["data"] == (a.ptr, False) and cai["strides"] is None
    assert isinstance(a.ptr, int) and a.ptr != 0


def test_copy_from(mem):
    a = arrays.empty((2, 2), np.float32)
    assert a.copy_from(np.eye(2, dtype=np.float32)) is a
    np.testing.assert_array_equal(a.numpy(), np.eye(2))
    a.copy_from(np.asfortranarray(np.arange(4, dtype=np.float32).reshape(2, 2)))
    np.testing.assert_array_equal(a.numpy(), np.arange(4).reshape(2, 2))
    with pytest.raises(ArgumentError, match=r"shape \(2, 2\) and dtype float32, got shape \(4,\)"):
        a.copy_from(np.zeros(4, np.float32))
    with pytest.raises(ArgumentError, match="float64"):
        a.copy_from(np.zeros((2, 2)))


def test_freed_on_garbage_collection(mem):
    a = arrays.empty(100, np.float32)
    ptr = a.ptr
    b = a
    del a
    gc.collect()
    assert ptr in mem.live
    del b
    gc.collect()
    assert mem.freed == [ptr] and ptr not in mem.live


def test_explicit_free_then_gc_frees_once(mem):
    a = arrays.empty(10)
    ptr = a.ptr
    a.free()
    assert a.ptr == 0 and mem.freed == [ptr]
    del a
    gc.collect()
    assert mem.freed == [ptr]


def test_zero_size_allocates_nothing(mem):
    a = arrays.empty((0, 3))
    assert a.ptr == 0 and a.nbytes == 0
    assert a.numpy().shape == (0, 3)
    assert not mem.live


def test_len_and_repr(mem):
    a = arrays.empty((4, 2))
    assert len(a) == 4 and "shape=(4, 2)" in repr(a) and "float32" in repr(a)
    with pytest.raises(TypeError):
        len(arrays.empty(()))


# --------------------------------------------------------------------------- GPU tests


@pytest.mark.gpu
def test_gpu_round_trip_and_zeros():
    rng = np.random.default_rng(1)
    for host in [
        rng.standard_normal((33, 17)).astype(np.float32),
        np.arange(5, dtype=np.int64),
        np.array(3.5),
    ]:
        a = arrays.to_device(host)
        assert memory.pointer_memory_type(a.ptr) == "device"
        np.testing.assert_array_equal(a.numpy(), host)
    z = arrays.zeros((1000,), np.float64)
    np.testing.assert_array_equal(z.numpy(), np.zeros(1000))


@pytest.mark.gpu
def test_gpu_memory_is_released():
    # asked of the allocation itself (cuMemGetAddressRange), not of cuMemGetInfo, which is
    # device-wide: other processes on the GPU (the sharded GPU suite) move it by hundreds of MiB
    driver.device()
    big = arrays.empty(256 * 2**20, np.uint8)  # 256 MiB
    ptr = big.ptr
    base, size = memory.device_allocation(ptr)
    assert base == ptr and size >= 256 * 2**20
    fin = big._finalizer
    del big
    gc.collect()
    assert not fin.alive
    assert memory.device_allocation(ptr) is None  # freed: the address is no allocation's


@pytest.mark.gpu
def test_gpu_interop_through_cuda_array_interface():
    a = arrays.to_device(np.arange(6, dtype=np.float32).reshape(2, 3))
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        t = torch.as_tensor(a, device="cuda")
        assert t.data_ptr() == a.ptr and t.shape == (2, 3)
        t += 1
        torch.cuda.synchronize()
        np.testing.assert_array_equal(a.numpy(), np.arange(6).reshape(2, 3) + 1)
        return
    try:
        import cupy
    except ImportError:
        pytest.skip("neither torch (with CUDA) nor cupy is importable")
    c = cupy.asarray(a)
    assert c.data.ptr == a.ptr
    np.testing.assert_array_equal(cupy.asnumpy(c), a.numpy())
