"""tritium's own device arrays: enough of an array to hand kernels GPU memory without torch.

    >>> from tritium.runtime import arrays
    >>> x = arrays.to_device(np.arange(4, dtype=np.float32))
    >>> x.shape, x.dtype, x.nbytes, hex(x.ptr)
    ((4,), dtype('float32'), 16, '0x7f2c40000000')
    >>> kernel[(1,)](x, ...)           # passed by address, no copy
    >>> x.numpy()
    array([0., 1., 2., 3.], dtype=float32)

A `DeviceArray` lives on one GPU, `device` (an ordinal; by default the current device,
runtime/devices.py: torch's current one under torch), where kernels given it run. It is
always C-contiguous and owns its allocation (cuMemAlloc), which is freed
when the last reference goes (a `weakref.finalize`, also after the CUDA context was lost,
when the free quietly does nothing). `.strides` are in bytes, as numpy's are, and
`__cuda_array_interface__` (version 3) lets torch, cupy and numba use the memory in place.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence

import numpy as np

from tritium.errors import ArgumentError
from tritium.runtime import devices, driver, memory

__all__ = ["DeviceArray", "empty", "to_device", "zeros"]


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides = []
    step = itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class DeviceArray:
    """A C-contiguous array in GPU memory: shape, dtype, strides (bytes), nbytes, ptr (int),
    device (the ordinal of the GPU holding it)."""

    __slots__ = (
        "shape",
        "dtype",
        "strides",
        "nbytes",
        "ptr",
        "device",
        "_finalizer",
        "__weakref__",
    )

    def __init__(
        self,
        shape: int | Sequence[int],
        dtype: np.dtype | type | str = np.float32,
        device: int | None = None,
    ):
        shape = (
            (int(shape),) if isinstance(shape, int | np.integer) else tuple(int(n) for n in shape)
        )
        if any(n < 0 for n in shape):
            raise ArgumentError(f"array dimensions must be >= 0, got shape {shape}")
        self.shape: tuple[int, ...] = shape
        self.dtype: np.dtype = np.dtype(dtype)
        if self.dtype.hasobject:
            raise ArgumentError("a DeviceArray cannot hold Python objects (dtype=object)")
        self.strides: tuple[int, ...] = _c_strides(shape, self.dtype.itemsize)
        self.nbytes: int = math.prod(shape) * self.dtype.itemsize
        self.device: int = devices.current_device() if device is None else int(device)
        self.ptr: int = memory.mem_alloc(self.nbytes, self.device)
        self._finalizer = weakref.finalize(self, memory.mem_free, self.ptr, True, self.device)
        self._finalizer.atexit = False  # the driver frees everything when the process ends

    # numpy-like read-only facts
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def __repr__(self) -> str:
        return (
            f"DeviceArray(shape={self.shape}, dtype={self.dtype}, ptr={self.ptr:#x}, "
            f"device={self.device})"
        )

    @property
    def __cuda_array_interface__(self) -> dict:
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "descr": self.dtype.descr,
            "data": (self.ptr, False),
            "strides": None,  # C-contiguous
            "version": 3,
            "stream": None,  # every tritium copy and launch that writes it is already complete
        }

    def numpy(self) -> np.ndarray:
        """A new host array with this array's contents (waits for the default stream)."""
        out = np.empty(self.shape, self.dtype)
        if self.nbytes:
            memory.memcpy_dtoh(out.ctypes.data, self.ptr, self.nbytes, None, self.device)
        return out

    def copy_from(self, host: np.ndarray) -> DeviceArray:
        """Overwrite this array with `host` (same shape and dtype; any layout). Returns self."""
        host = np.asarray(host)
        if host.shape != self.shape or host.dtype != self.dtype:
            raise ArgumentError(
                f"copy_from needs an array of shape {self.shape} and dtype {self.dtype}, "
                f"got shape {host.shape} and dtype {host.dtype}"
            )
        if not host.flags.c_contiguous:
            host = host.copy(order="C")
        if self.nbytes:
            memory.memcpy_htod(self.ptr, host.ctypes.data, self.nbytes, None, self.device)
        return self

    def free(self) -> None:
        """Free the memory now (the array must not be used afterwards)."""
        self._finalizer()
        self.ptr = 0


def empty(
    shape: int | Sequence[int], dtype: np.dtype | type | str = np.float32, device: int | None = None
) -> DeviceArray:
    """An uninitialized DeviceArray (on `device`, default: the current device)."""
    return DeviceArray(shape, dtype, device)


def zeros(
    shape: int | Sequence[int], dtype: np.dtype | type | str = np.float32, device: int | None = None
) -> DeviceArray:
    """A DeviceArray of zero bytes (on `device`, default: the current device)."""
    out = DeviceArray(shape, dtype, device)
    memory.memset_d8(out.ptr, 0, out.nbytes, None, out.device)
    driver.synchronize(None, out.device)
    return out


def to_device(host: np.ndarray, device: int | None = None) -> DeviceArray:
    """A new DeviceArray holding a copy of `host` (any layout; stored C-contiguous), on
    `device` (default: the current device)."""
    host = np.asarray(host)
    return DeviceArray(host.shape, host.dtype, device).copy_from(host)
