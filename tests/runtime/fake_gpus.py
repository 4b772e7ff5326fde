"""A fake `cuda.bindings.driver` with several GPUs, and a fake torch, for testing where
launches go on a machine without GPUs.

`FakeCuda(archs)` answers the driver calls tritium makes (driver.py) the way libcuda does
where it matters here:

* each device has a primary context, created by `cuDevicePrimaryCtxRetain` (recorded in
  `retained`: a program that only used device 1 never retained device 0's);
* the current context is per thread, a stack (`cuCtxSetCurrent` replaces the top,
  `cuCtxPushCurrent` / `cuCtxPopCurrent`);
* memory: `cuMemAlloc` allocates in the current context's device (host memory underneath,
  so copies really copy); `cuPointerGetAttribute` knows each allocation's device;
* `cuModuleLoadDataEx` loads into the current context (recorded in `loads`); a function
  belongs to its module's context, and `cuLaunchKernel` refuses it with
  CUDA_ERROR_INVALID_CONTEXT unless that context is current, as CUDA does; launches are
  recorded in `launches` with their device, grid, stream and parameter bytes;
* events (`cuEventCreate`) belong to the current context (recorded in `events`) and time
  every interval as 0.01 ms.

Install it with the `gpus` fixture (tests/conftest.py, through `install_gpus`): the driver
module's state is swapped for a fresh one and put back after the test; the `torch` fixture
adds a fake torch on top (`install_torch`).
"""

from __future__ import annotations

import ctypes
import sys
import threading
import types
from dataclasses import dataclass

from tritium.runtime import devices, driver

try:
    from cuda.bindings import driver as _real
except ImportError:  # pragma: no cover - cuda-python is a dependency
    _real = None

OK = 0
INVALID_VALUE = 1
INVALID_CONTEXT = 201
INVALID_HANDLE = 400


class FakeContext:
    def __init__(self, handle: int, ordinal: int | None):
        self.handle, self.ordinal = handle, ordinal

    def __int__(self) -> int:
        return self.handle

    def __bool__(self) -> bool:
        return bool(self.handle)

    def __repr__(self) -> str:
        return f"<FakeContext of device {self.ordinal}>"


NO_CONTEXT = FakeContext(0, None)


@dataclass
class FakeModule:
    context: FakeContext
    image: bytes


@dataclass
class FakeFunction:
    module: FakeModule
    name: str


class FakeCuda:
    """The driver calls tritium makes, for len(archs) fake GPUs of these capabilities."""

    def __init__(self, archs=((9, 0), (9, 0))):
        self.archs = list(archs)
        self.contexts = [FakeContext(0x1000 * (i + 1), i) for i in range(len(archs))]
        self.retained: set[int] = set()
        self.loads: list[tuple[int, int]] = []  # (device, hash of the image)
        self.launches: list[dict] = []
        self.allocations: dict[int, tuple[int, int, ctypes.Array]] = {}  # addr -> dev, n, buf
        self.calls: list[str] = []
        self.events: list[int] = []  # the device of each event created
        self.syncs: list[int] = []  # the device of each cuCtxSynchronize
        self.results: list[int] = []  # results for the next launches (then: success)
        self._tls = threading.local()

    def __getattr__(self, name):  # enums and handle classes: cuda-python's own
        return getattr(_real, name)

    # ------------------------------------------------------------------ helpers
    def _r(self, code: int):
        return _real.CUresult(code)

    @property
    def _stack(self) -> list:
        if not hasattr(self._tls, "stack"):
            self._tls.stack = []
        return self._tls.stack

    def current(self) -> FakeContext:
        return self._stack[-1] if self._stack else NO_CONTEXT

    def current_device(self) -> int | None:
        return self.current().ordinal

    def device_of(self, addr: int) -> int | None:
        for base, (dev, n, _) in self.allocations.items():
            if base <= addr < base + max(n, 1):
                return dev
        return None

    # ------------------------------------------------------------------ init and devices
    def cuInit(self, flags):
        self.calls.append("cuInit")
        return (self._r(OK),)

    def cuDeviceGetCount(self):
        return (self._r(OK), len(self.archs))

    def cuDeviceGet(self, ordinal):
        return (self._r(OK), ordinal)

    def cuDevicePrimaryCtxRetain(self, handle):
        self.retained.add(handle)
        return (self._r(OK), self.contexts[handle])

    def cuDeviceGetAttribute(self, attr, handle):
        name = attr.name.removeprefix("CU_DEVICE_ATTRIBUTE_")
        major, minor = self.archs[handle]
        values = {
            "COMPUTE_CAPABILITY_MAJOR": major,
            "COMPUTE_CAPABILITY_MINOR": minor,
            "MULTIPROCESSOR_COUNT": 100 + handle,
            "MAX_THREADS_PER_BLOCK": 1024,
            "MAX_SHARED_MEMORY_PER_BLOCK": 49152,
            "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 232448,
            "MAX_GRID_DIM_X": 2**31 - 1,
            "WARP_SIZE": 32,
        }
        return (self._r(OK), values.get(name, 65535))

    def cuDeviceGetName(self, n, handle):
        return (self._r(OK), f"Fake GPU {handle}".encode() + b"\0")

    def cuDeviceTotalMem(self, handle):
        return (self._r(OK), 80 << 30)

    def cuGetErrorName(self, err):
        return (self._r(OK), _real.CUresult(int(err)).name.encode())

    def cuGetErrorString(self, err):
        return (self._r(OK), b"fake error")

    # ------------------------------------------------------------------ contexts
    def cuCtxGetCurrent(self):
        return (self._r(OK), self.current())

    def cuCtxSetCurrent(self, ctx):
        stack = self._stack
        if stack:
            stack.pop()
        if int(ctx):
            stack.append(ctx)
        return (self._r(OK),)

    def cuCtxPushCurrent(self, ctx):
        self._stack.append(ctx)
        return (self._r(OK),)

    def cuCtxPopCurrent(self):
        stack = self._stack
        return (self._r(OK), stack.pop() if stack else NO_CONTEXT)

    # ------------------------------------------------------------------ modules and launches
    def cuModuleLoadDataEx(self, data, n, opts, values):
        ctx = self.current()
        if not ctx:
            return (self._r(INVALID_CONTEXT), None)
        self.loads.append((ctx.ordinal, hash(bytes(data))))
        return (self._r(OK), FakeModule(ctx, bytes(data)))

    def cuModuleGetFunction(self, module, name):
        return (self._r(OK), FakeFunction(module, name.decode()))

    def cuFuncGetAttribute(self, attr, fn):
        name = attr.name.removeprefix("CU_FUNC_ATTRIBUTE_")
        return (self._r(OK), {"MAX_THREADS_PER_BLOCK": 1024, "NUM_REGS": 32}.get(name, 0))

    def cuFuncSetAttribute(self, fn, attr, value):
        return (self._r(OK),)

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, argv, extra):
        if self.results:
            return (self._r(self.results.pop(0)),)
        if self.current() is not f.module.context:
            return (self._r(INVALID_CONTEXT),)  # the function belongs to another context
        n = self.nparams.get(f.name, 0)
        raw = [
            ctypes.string_at(ctypes.c_void_p.from_address(argv + 8 * i).value, 8) for i in range(n)
        ]
        self.launches.append(
            dict(
                device=f.module.context.ordinal, kernel=f.name, grid=(gx, gy, gz),
                stream=int(stream), raw=raw,
            )
        )  # fmt: skip
        return (self._r(OK),)

    nparams: dict = {}  # kernel name -> how many parameter slots to record

    def cuStreamSynchronize(self, stream):
        return (self._r(OK if self.current() else INVALID_CONTEXT),)

    def cuCtxSynchronize(self):
        """Recorded in `syncs`: the device of the context synchronized."""
        if not self.current():
            return (self._r(INVALID_CONTEXT),)
        self.syncs.append(self.current_device())
        return (self._r(OK),)

    # ------------------------------------------------------------------ events
    def cuEventCreate(self, flags):
        """An event of the current context (recorded in `events`: its device)."""
        ctx = self.current()
        if not ctx:
            return (self._r(INVALID_CONTEXT), None)
        self.events.append(ctx.ordinal)
        return (self._r(OK), len(self.events))

    def cuEventRecord(self, event, stream):
        return (self._r(OK),)

    def cuEventSynchronize(self, event):
        return (self._r(OK),)

    def cuEventElapsedTime(self, start, end):
        return (self._r(OK), 0.01)

    def cuEventDestroy(self, event):
        return (self._r(OK),)

    # ------------------------------------------------------------------ memory
    def cuMemAlloc(self, n):
        ctx = self.current()
        if not ctx:
            return (self._r(INVALID_CONTEXT), 0)
        buf = ctypes.create_string_buffer(n + 256)
        addr = -(-ctypes.addressof(buf) // 256) * 256
        self.allocations[addr] = (ctx.ordinal, n, buf)
        return (self._r(OK), addr)

    def cuMemFree(self, ptr):
        self.allocations.pop(int(ptr), None)
        return (self._r(OK),)

    def _copy(self, dst, src, n, stream):
        ctypes.memmove(int(dst), int(src), n)
        return (self._r(OK),)

    cuMemcpyHtoDAsync = cuMemcpyDtoHAsync = cuMemcpyDtoDAsync = _copy

    def cuMemsetD8Async(self, ptr, value, n, stream):
        ctypes.memset(int(ptr), value, n)
        return (self._r(OK),)

    def cuPointerGetAttribute(self, attr, ptr):
        dev = self.device_of(int(ptr))
        if dev is None:
            return (self._r(INVALID_VALUE), 0)
        if attr.name.endswith("DEVICE_ORDINAL"):
            return (self._r(OK), dev)
        return (self._r(OK), 2)  # CU_MEMORYTYPE_DEVICE


def install_gpus(monkeypatch):
    """Two fake sm_90 GPUs (`.archs` can be set before first use) behind tritium's driver,
    with fresh driver state; TRITIUM_INTERPRET and TRITIUM_DEVICE unset. A generator (for a
    fixture): the thread's device pick is put back after."""
    fake = FakeCuda()
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    monkeypatch.delenv("TRITIUM_DEVICE", raising=False)
    monkeypatch.setattr(driver, "_cu", fake)
    monkeypatch.setattr(driver, "_initialized", False)
    monkeypatch.setattr(driver, "_init_error", None)
    monkeypatch.setattr(driver, "_devices", {})
    monkeypatch.setattr(driver, "_modules", {})
    streams: dict = {}
    monkeypatch.setattr(driver, "_streams", streams)
    monkeypatch.setattr(driver, "streams", streams)
    picked = devices.picked()
    devices.pick(None)
    yield fake
    devices.pick(picked)


# --------------------------------------------------------------------------- a fake torch


class _Dtype:
    """Stands for a torch dtype (an interned object whose str is "torch.float32")."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


_Dtype.__module__ = "torch"
_Dtype.__name__ = "dtype"
float32 = _Dtype("float32")


class Tensor:
    """What tritium reads of a torch tensor: data_ptr(), dtype, is_cuda, get_device(); its
    memory is a fake allocation on its device."""

    def __init__(self, ptr: int, device: int, n: int, dtype=float32):
        self._ptr, self._device, self.dtype, self.shape = ptr, device, dtype, (n,)
        self.is_cuda = device >= 0

    def data_ptr(self) -> int:
        return self._ptr

    def get_device(self) -> int:
        return self._device


Tensor.__module__ = "torch"


class FakeTorch(types.ModuleType):
    """`torch` as tritium sees it: `cuda.is_initialized()`, the current device and the
    current stream per device (`current`, `streams`), and tensors on fake GPUs."""

    def __init__(self, cuda: FakeCuda):
        super().__init__("torch")
        self.fake_cuda = cuda
        self.current = 0
        self.streams: dict[int, int] = {}
        self.stream_reads: list[int] = []
        torch = self
        self.cuda = types.SimpleNamespace(is_initialized=lambda: True)

        def get_device():
            return torch.current

        def raw_stream(ordinal):
            torch.stream_reads.append(ordinal)
            return torch.streams.get(ordinal, 0)

        self._C = types.SimpleNamespace(
            _cuda_getDevice=get_device, _cuda_getCurrentRawStream=raw_stream
        )
        self.float32 = float32

    def empty(self, n: int, device: int) -> Tensor:
        """A float32 tensor of n elements on fake GPU `device`, allocated as torch does
        (the device's context pushed for the allocation and popped after)."""
        cu = self.fake_cuda
        _, ctx = cu.cuDevicePrimaryCtxRetain(device)
        cu.cuCtxPushCurrent(ctx)
        _, ptr = cu.cuMemAlloc(4 * n)
        cu.cuCtxPopCurrent()
        return Tensor(ptr, device, n)


def install_torch(gpus: FakeCuda, monkeypatch) -> FakeTorch:
    """A fake torch over the fake GPUs, in sys.modules for the test."""
    fake = FakeTorch(gpus)
    monkeypatch.setitem(sys.modules, "torch", fake)
    return fake
