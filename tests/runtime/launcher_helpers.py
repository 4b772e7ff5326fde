"""Shared pieces of the Launcher tests: hand-written PTX (in tests/data/ptx), metadata,
and a fake CUDA device that records what a launch would have done."""

from __future__ import annotations

import ctypes
import pathlib
import struct

import numpy as np
import pytest

from tritium.runtime import driver, memory
from tritium.runtime.arrays import DeviceArray
from tritium.runtime.launcher import Launcher

# --------------------------------------------------------------------------- hand-written PTX

PTX_DIR = pathlib.Path(__file__).resolve().parents[1] / "data" / "ptx"


def _ptx(name: str) -> str:
    return (PTX_DIR / name).read_text()


ADD_PTX = _ptx("add.ptx")

SCALE_STRIDED_PTX = _ptx("scale_strided.ptx")

# out[k] = (double) of the k-th scalar parameter, one of each type tritium packs. Declared as
# LLVM's NVPTX backend declares them (i1 as .u8, fp16/bf16 as 16-bit).
SCALARS_PTX = _ptx("scalars.ptx")

# Thread t writes t at byte nbytes - 4(t+1) of dynamic shared memory (its top end), reads it
# back into out[t]: runs only if all nbytes were granted.
SMEM_PTX = _ptx("smem.ptx")

# Stores 42 to the address it is given: with a bogus one, CUDA_ERROR_ILLEGAL_ADDRESS.
BAD_STORE_PTX = _ptx("bad_store.ptx")

EMPTY_PTX = _ptx("empty.ptx")

ADD_PARAMS = [  # with what a compile records: which pointers the kernel writes through
    {"name": "x_ptr", "type": "*fp32", "writes": False},
    {"name": "y_ptr", "type": "*fp32", "writes": False},
    {"name": "out_ptr", "type": "*fp32", "writes": True},
    {"name": "n", "type": "i32"},
]
SCALAR_TYPES = [
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "fp16",
    "bf16",
    "fp32",
    "fp64",
]


def meta(name, params, num_warps=4, shared=0):
    return {
        "name": name,
        "num_warps": num_warps,
        "threads_per_warp": 32,
        "shared": shared,
        "params": params,
    }


def add_launcher(**kw):
    return Launcher({"ptx": ADD_PTX}, meta("add_kernel", ADD_PARAMS, **kw))


def strided_launcher():
    params = [
        {"name": "x", "type": "*fp32", "writes": True},
        {"name": "s", "type": "i32"},
        {"name": "n", "type": "i32"},
    ]
    return Launcher({"ptx": SCALE_STRIDED_PTX}, meta("scale_strided_kernel", params))


def scalars_launcher():
    params = [{"name": "out_ptr", "type": "*fp64", "writes": True}] + [
        {"name": f"p_{t}", "type": t} for t in SCALAR_TYPES
    ]
    return Launcher({"ptx": SCALARS_PTX}, meta("scalars_kernel", params))


# --------------------------------------------------------------------------- a fake device


class FakeDevice:
    """Device memory = host memory; a launch runs a Python function on the packed params.

    `launch` has cuLaunchKernel's signature: it reads the kernelParams void* array the
    launcher built, so the tests see exactly the bytes the driver would."""

    def __init__(self, monkeypatch, kernels=None, result=0):
        self.buffers: dict[int, tuple[ctypes.Array, int]] = {}
        self.launches: list[dict] = []
        self.kernels = kernels or {}
        self.result = result
        self.results: list[int] = []  # results for the next launches, then `result`
        monkeypatch.setattr(memory, "mem_alloc", self.mem_alloc)
        monkeypatch.setattr(memory, "mem_free", self.mem_free)
        monkeypatch.setattr(memory, "memcpy_htod_async", self.memcpy)
        monkeypatch.setattr(memory, "memcpy_dtoh_async", self.memcpy)
        monkeypatch.setattr(driver, "synchronize", lambda s=None: None)
        monkeypatch.setattr(driver, "stream", lambda s=None: ("stream", s))
        monkeypatch.setattr(driver, "gpu_available", lambda: False)  # also on a GPU machine

    def mem_alloc(self, n):
        buf = ctypes.create_string_buffer(n + 256)
        addr = -(-ctypes.addressof(buf) // 256) * 256  # 256-aligned, like cuMemAlloc
        self.buffers[addr] = (buf, n)
        return addr

    def mem_free(self, ptr, quiet=False):
        self.buffers.pop(ptr)

    def owns(self, addr):
        return any(a <= addr < a + n for a, (_, n) in self.buffers.items())

    @staticmethod
    def memcpy(dst, src, n, s=None):
        ctypes.memmove(dst, src, n)

    def bind(self, lau: Launcher, name: str | None = None):
        """Make `lau` launch here (what Launcher._load does with the real driver)."""
        lau._function = name or lau.name
        lau._launch = self.launch
        lau._stream0 = ("stream", None)
        return lau

    def launch(self, fn, gx, gy, gz, bx, by, bz, shared, stream, argv, extra):
        for g in (gx, gy, gz):  # what cuda-python's unsigned int conversion does
            if not isinstance(g, int):
                raise TypeError(f"an integer is required, got {type(g).__name__}")
            if not 0 <= g < 2**32:
                raise OverflowError("value too large to convert to unsigned int")
        if 0 in (gx, gy, gz) or gx >= 2**31 or gy > 65535 or gz > 65535:
            # the driver refuses an empty grid or one past the limits, and launches nothing
            return (driver.cuda().CUresult(1),)  # CUDA_ERROR_INVALID_VALUE
        slots = [ctypes.c_void_p.from_address(argv + 8 * i).value for i in range(self.nparams(fn))]
        raw = [ctypes.string_at(p, 8) for p in slots]
        self.launches.append(
            dict(
                fn=fn, grid=(gx, gy, gz), block=(bx, by, bz), shared=shared, stream=stream, raw=raw
            )
        )
        result = self.results.pop(0) if self.results else self.result
        if result:
            return (driver.cuda().CUresult(result),)
        if fn in self.kernels and self.owns(struct.unpack("<Q", raw[0])[0]):
            self.kernels[fn](raw, (gx, gy, gz))  # (tests with made-up addresses run nothing)
        return (driver.cuda().CUresult(0),)

    def nparams(self, fn):
        return self.nparams_by_fn.get(fn, 4)

    nparams_by_fn: dict = {}


def f32_at(addr, n):
    return np.frombuffer((ctypes.c_float * n).from_address(addr), np.float32)


def fake_add(raw, grid):
    x, y, out = (struct.unpack("<Q", r)[0] for r in raw[:3])
    (n,) = struct.unpack("<i", raw[3][:4])
    f32_at(out, n)[:] = f32_at(x, n) + f32_at(y, n)


def fake_scale_strided(raw, grid):
    (x,) = struct.unpack("<Q", raw[0])
    (stride,) = struct.unpack("<i", raw[1][:4])
    (n,) = struct.unpack("<i", raw[2][:4])
    if n:
        lo = min(0, (n - 1) * stride)  # in elements, relative to x
        v = f32_at(x + 4 * lo, abs((n - 1) * stride) + 1)
        v[-lo :: stride if stride > 0 else stride][:n] *= 2


@pytest.fixture
def fake(monkeypatch):
    dev = FakeDevice(
        monkeypatch, {"add_kernel": fake_add, "scale_strided_kernel": fake_scale_strided}
    )
    dev.nparams_by_fn = {"add_kernel": 4, "scale_strided_kernel": 3, "scalars_kernel": 14}
    return dev


def fake_device_array(ptr, shape, dtype):
    """A DeviceArray over an existing address (no allocation, so no GPU needed)."""
    a = DeviceArray.__new__(DeviceArray)
    a.shape, a.dtype, a.ptr, a.device = tuple(shape), np.dtype(dtype), ptr, 0
    a.strides = np.empty(shape, dtype).strides
    a.nbytes = int(np.prod(shape)) * a.dtype.itemsize
    return a


class CAI:
    """A minimal foreign device array: only __cuda_array_interface__."""

    def __init__(self, ptr, typestr="<f4", shape=(4,)):
        self.__cuda_array_interface__ = {
            "data": (ptr, False),
            "typestr": typestr,
            "shape": shape,
            "version": 3,
        }
