"""The CUDA driver, through cuda-python's `cuda.bindings.driver`.

Everything here is lazy: importing this module touches neither cuda-python nor the GPU.
The first call that needs the GPU runs `init()` (cuInit and a device count; no context
is made); without a driver library or a device, `init()` raises `NoGPUError` with a plain
message and `gpu_available()` returns False.

    >>> from tritium.runtime import driver
    >>> driver.gpu_available()
    True
    >>> dev = driver.device()                # the current device, its primary context current
    >>> dev.arch, dev.sm_count
    ('sm_90', 132)
    >>> dev1 = driver.opened(1)              # device 1's properties; nothing made current
    >>> mod = driver.load_module(ptx_text, dev1)  # cached per (device, sha256 of the image)
    >>> fn = driver.get_function(mod, "add_kernel")

Several devices: each has its primary context (the one torch and cupy use). `opened(n)`
retains it without making it current; `device(n)` makes it current on the calling thread
for good (the thread's pick, devices.py); `using(dev)` makes it current for a block and
then puts back whatever was current, so loading a module or staging a launch on device 1
neither touches device 0's context nor changes the device torch sees as current. Device
memory and copies are in memory.py, on top of this module.

Every CUDA result goes through `check(err, what, kernel)`, which raises `LaunchError`
naming the error as CUDA does (`CUDA_ERROR_ILLEGAL_ADDRESS`) and the kernel. Errors that
poison the context (a kernel's illegal address, trap, misaligned access) are "sticky": the
message says plainly that the context is lost and the process must restart.

`driver.active` is upstream's name for the same driver (`triton.runtime.driver.active`), with
upstream's methods, for code written against upstream: the current target, the torch
device, `utils.get_device_properties(i)` under upstream's keys.

cuda-python's two API generations differ in small ways (13.3 raises `RuntimeError` when
libcuda is missing, 13.4 a `DynamicLibNotFoundError`); nothing here depends on either.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from dataclasses import dataclass, field
from typing import Any

from tritium.errors import LaunchError, NoGPUError
from tritium.runtime import devices

__all__ = [
    "Device",
    "GPUTarget",
    "active",
    "check",
    "cuda",
    "current_arch",
    "current_context",
    "device",
    "device_arch",
    "ensure_context",
    "error_name",
    "get_function",
    "gpu_available",
    "in_context",
    "init",
    "load_module",
    "opened",
    "stream",
    "streams",
    "synchronize",
    "using",
]

# Errors after which the CUDA context is unusable: every later call fails with them too.
STICKY_ERRORS = frozenset(
    {
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        "CUDA_ERROR_MISALIGNED_ADDRESS",
        "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        "CUDA_ERROR_INVALID_ADDRESS_SPACE",
        "CUDA_ERROR_INVALID_PC",
        "CUDA_ERROR_HARDWARE_STACK_ERROR",
        "CUDA_ERROR_ASSERT",
        "CUDA_ERROR_LAUNCH_FAILED",
        "CUDA_ERROR_LAUNCH_TIMEOUT",
        "CUDA_ERROR_ECC_UNCORRECTABLE",
        "CUDA_ERROR_CONTEXT_IS_DESTROYED",
    }
)

_lock = threading.RLock()
_cu: Any = None  # the cuda.bindings.driver module, once imported
_init_error: str | None = None  # why init() failed, once it has
_initialized = False
_devices: dict[int, Device] = {}
_modules: dict[tuple[int, str], Any] = {}
_streams: dict[int, Any] = {}
streams = _streams  # raw handle -> CUstream, filled by stream(); the JIT's fast path reads it


class _LaunchState:
    """What the launcher last launched, so an asynchronous failure can name its kernel."""

    __slots__ = ("kernel", "lost")

    def __init__(self) -> None:
        self.kernel: str | None = None
        self.lost: str | None = None  # "CUDA_ERROR_X in kernel 'k'" once the context is lost


launch_state = _LaunchState()


# --------------------------------------------------------------------------- initialization


def cuda() -> Any:
    """The `cuda.bindings.driver` module (imported on first use; does not call cuInit)."""
    global _cu
    if _cu is None:
        try:
            from cuda.bindings import driver as cu
        except ImportError as exc:  # pragma: no cover - cuda-python is a dependency
            raise NoGPUError(
                f"cuda-python is not installed ({exc}); install it with "
                "`pip install cuda-python` to run kernels on a GPU"
            ) from None
        _cu = cu
    return _cu


def init() -> None:
    """Initialize the driver once; raise `NoGPUError` (always the same one) if impossible."""
    global _initialized, _init_error
    if _initialized:
        return
    with _lock:
        if _initialized:
            return
        if _init_error is None:
            _init_error = _try_init()
            _initialized = _init_error is None
        if _init_error is not None:
            raise NoGPUError(_init_error)


def _try_init() -> str | None:
    """cuInit + a device count; the reason as a sentence when there is no usable GPU."""
    try:
        cu = cuda()
    except NoGPUError as exc:
        return str(exc)
    try:
        (err,) = cu.cuInit(0)
    except Exception as exc:  # no libcuda.so: cuda-python raises instead of returning
        return (
            "no CUDA driver found on this machine (cuda-python could not load libcuda: "
            f"{str(exc).strip()}). Run on a machine with an NVIDIA GPU, or set "
            "TRITIUM_INTERPRET=1 to run kernels on the CPU."
        )
    if err:
        name = error_name(err)
        if name == "CUDA_ERROR_NO_DEVICE":
            return "the CUDA driver found no GPU (CUDA_ERROR_NO_DEVICE); set TRITIUM_INTERPRET=1 to run kernels on the CPU"
        return f"cuInit failed with {name}: {error_string(err)}"
    err, count = cu.cuDeviceGetCount()
    if err or count < 1:
        return "the CUDA driver found no GPU; set TRITIUM_INTERPRET=1 to run kernels on the CPU"
    return None


def gpu_available() -> bool:
    """True when a CUDA driver and at least one device are usable. Never raises."""
    try:
        init()
    except Exception:
        return False
    return True


# --------------------------------------------------------------------------- errors


def error_name(err: Any) -> str:
    """`CUDA_ERROR_ILLEGAL_ADDRESS` for result 700 (falls back to the enum's own name)."""
    cu = cuda()
    try:
        e, name = cu.cuGetErrorName(err)
        if not e and name:
            return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:
        pass
    try:
        return cu.CUresult(int(err)).name
    except Exception:
        return f"CUDA error {int(err)}"


def error_string(err: Any) -> str:
    """CUDA's one-line description of a result ('an illegal memory access was encountered')."""
    try:
        e, text = cuda().cuGetErrorString(err)
        if not e and text:
            return text.decode() if isinstance(text, bytes) else str(text)
    except Exception:
        pass
    return "no description"


def launch_error(err: Any, what: str, kernel: str | None = None, detail: str = "") -> LaunchError:
    """The `LaunchError` for CUDA result `err` from call `what` (see `check`)."""
    name = error_name(err)
    if kernel is None and name in STICKY_ERRORS:
        kernel = launch_state.kernel  # an asynchronous fault: blame the last launch
        where = f" (raised by {what}; the last kernel launched was '{kernel}')" if kernel else ""
    else:
        where = f" in kernel '{kernel}' ({what})" if kernel else f" in {what}"
    msg = f"{name}{where}: {error_string(err)}"
    if detail:
        msg += f"; {detail}"
    if name in STICKY_ERRORS:
        if launch_state.lost is None:
            launch_state.lost = f"{name} in kernel '{kernel}'" if kernel else name
            msg += (
                ". This error is sticky: the CUDA context is lost and every later CUDA call in "
                "this process will fail; restart the process. To find the faulting access, run "
                "with CUDA_LAUNCH_BLOCKING=1, or on the CPU with TRITIUM_INTERPRET=1"
            )
        else:
            msg += f". The CUDA context was lost earlier ({launch_state.lost}); restart the process"
    exc = LaunchError(msg)
    exc.cuda_error = name  # type: ignore[attr-defined]
    exc.kernel = kernel  # type: ignore[attr-defined]
    return exc


def check(err: Any, what: str, kernel: str | None = None) -> None:
    """Raise `LaunchError` naming the CUDA error, `what` was called, and `kernel`, unless success."""
    if err:  # CUresult is an int enum; CUDA_SUCCESS is 0
        raise launch_error(err, what, kernel)


def _call(what: str, result: tuple) -> Any:
    """Check a cuda-python result tuple `(err, *values)`; return the value(s)."""
    check(result[0], what)
    if len(result) == 1:
        return None
    return result[1] if len(result) == 2 else result[1:]


# --------------------------------------------------------------------------- devices


@dataclass(frozen=True)
class Device:
    """One GPU and its primary context, with the properties the compiler and launcher need."""

    ordinal: int
    name: str
    capability: tuple[int, int]
    sm_count: int
    max_threads_per_block: int
    max_shared_per_block: int  # without opting in (48 KiB)
    max_shared_per_block_optin: int  # with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    max_grid: tuple[int, int, int]
    warp_size: int
    total_memory: int
    handle: Any = field(repr=False, compare=False)
    context: Any = field(repr=False, compare=False)
    max_registers_per_block: int = 65536
    max_threads_per_sm: int = 2048
    sm_clock_rate_khz: int = 0
    mem_clock_rate_khz: int = 0
    mem_bus_width_bits: int = 0

    @property
    def arch(self) -> str:
        """The PTX target name: 'sm_90' for compute capability 9.0."""
        return f"sm_{self.capability[0]}{self.capability[1]}"


def device(ordinal: int | None = None) -> Device:
    """Device `ordinal` (default: `devices.current_device()`: torch's current device, this
    thread's pick, or $TRITIUM_DEVICE), its primary context made current on this thread for
    good: the thread's pick from here on."""
    if ordinal is None:
        ordinal = devices.current_device()
    dev = opened(ordinal)
    if devices.picked() != ordinal or current_context() != int(dev.context):
        make_current(dev)
    return dev


def opened(ordinal: int) -> Device:
    """Device `ordinal`'s properties, its primary context retained (not made current)."""
    dev = _devices.get(ordinal)
    if dev is None:
        init()
        with _lock:
            dev = _devices.get(ordinal)
            if dev is None:
                dev = _devices[ordinal] = _open_device(ordinal)
    return dev


def current_ordinal() -> int | None:
    """The device this thread picked (`device(n)`), or None."""
    return devices.picked()


def device_arch(ordinal: int | None = None) -> str | None:
    """Device `ordinal`'s PTX target ('sm_90'; default: the current device), or None where
    there is no usable GPU. Makes no context current."""
    if not gpu_available():
        return None
    return opened(devices.current_device() if ordinal is None else ordinal).arch


def current_arch() -> str | None:
    """The current device's PTX target ('sm_90'), or None where there is no usable GPU."""
    return device_arch(None)


def make_current(dev: Device) -> None:
    """Make `dev`'s primary context current on the calling thread (cuCtxSetCurrent), as its
    pick (`devices.picked()`)."""
    _call("cuCtxSetCurrent", cuda().cuCtxSetCurrent(dev.context))
    devices.pick(dev.ordinal)


def current_context() -> int:
    """The handle of the context current on the calling thread (0: none)."""
    init()
    ctx = _call("cuCtxGetCurrent", cuda().cuCtxGetCurrent())
    return int(ctx) if ctx is not None else 0


@contextlib.contextmanager
def using(dev: Device):
    """`dev`'s primary context current on this thread for the block. Where another context
    is current, it is pushed over it and popped after (the thread's current device, torch's
    too, is unchanged); where none is, it is made current and stays so (nothing to
    disturb, and the next launch there finds it), without becoming the thread's pick."""
    cu = cuda()
    current = current_context()
    if current == int(dev.context):
        yield dev
        return
    if not current:
        _call("cuCtxSetCurrent", cu.cuCtxSetCurrent(dev.context))
        yield dev
        return
    _call("cuCtxPushCurrent", cu.cuCtxPushCurrent(dev.context))
    try:
        yield dev
    finally:
        cu.cuCtxPopCurrent()


def ensure_context() -> None:
    """Some context current on this thread: the one there (a device's pushed by `using`
    stays), else the current device's, made current as `device()` does."""
    if not current_context():
        device()


def in_context(ordinal: int | None):
    """Where a call on device memory runs: device `ordinal`'s context for the block (`using`);
    for None, the one current on this thread (`ensure_context`)."""
    if ordinal is not None:
        return using(opened(ordinal))
    ensure_context()
    return contextlib.nullcontext()


def _open_device(ordinal: int) -> Device:
    cu = cuda()
    err, count = cu.cuDeviceGetCount()
    check(err, "cuDeviceGetCount")
    if not 0 <= ordinal < count:
        raise NoGPUError(f"there is no CUDA device {ordinal}: this machine has {count}")
    handle = _call("cuDeviceGet", cu.cuDeviceGet(ordinal))
    context = _call("cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain(handle))
    A = cu.CUdevice_attribute

    def attr(name: str) -> int:
        return int(_call("cuDeviceGetAttribute", cu.cuDeviceGetAttribute(getattr(A, name), handle)))

    raw = _call("cuDeviceGetName", cu.cuDeviceGetName(256, handle))
    name = raw.split(b"\0", 1)[0].decode(errors="replace") if isinstance(raw, bytes) else str(raw)
    return Device(
        ordinal=ordinal,
        name=name,
        capability=(
            attr("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR"),
            attr("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR"),
        ),
        sm_count=attr("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"),
        max_threads_per_block=attr("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"),
        max_shared_per_block=attr("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK"),
        max_shared_per_block_optin=attr("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
        max_grid=(
            attr("CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X"),
            attr("CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y"),
            attr("CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z"),
        ),
        warp_size=attr("CU_DEVICE_ATTRIBUTE_WARP_SIZE"),
        total_memory=int(_call("cuDeviceTotalMem", cu.cuDeviceTotalMem(handle))),
        handle=handle,
        context=context,
        max_registers_per_block=attr("CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK"),
        max_threads_per_sm=attr("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR"),
        sm_clock_rate_khz=attr("CU_DEVICE_ATTRIBUTE_CLOCK_RATE"),
        mem_clock_rate_khz=attr("CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE"),
        mem_bus_width_bits=attr("CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH"),
    )


# --------------------------------------------------------------------------- modules


def load_module(image: str | bytes, dev: Device | None = None) -> Any:
    """Load PTX text (str) or a cubin (bytes) into `dev`; cached per (device, sha256(image))."""
    dev = dev or device()
    data = image.encode() + b"\0" if isinstance(image, str) else bytes(image)
    key = (dev.ordinal, hashlib.sha256(data).hexdigest())
    module = _modules.get(key)
    if module is None:
        with _lock:
            module = _modules.get(key)
            if module is None:
                with using(dev):  # a module belongs to the context current when it loads
                    module = _modules[key] = _load(data, dev)
    return module


def _load(data: bytes, dev: Device) -> Any:
    """cuModuleLoadDataEx with an error-log buffer, so a bad PTX says what ptxas said."""
    cu = cuda()
    log = bytearray(16384)
    J = cu.CUjit_option
    try:
        opts = [J.CU_JIT_ERROR_LOG_BUFFER, J.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
        err, module = cu.cuModuleLoadDataEx(data, len(opts), opts, [log, len(log)])
    except (TypeError, ValueError):  # a binding generation that takes the options differently
        err, module = cu.cuModuleLoadData(data)
    if err:
        text = bytes(log).split(b"\0", 1)[0].decode(errors="replace").strip()
        detail = f"the JIT compiler said:\n{text}" if text else ""
        name = error_name(err)
        if name in ("CUDA_ERROR_NO_BINARY_FOR_GPU", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"):
            detail = (detail + "; " if detail else "") + (
                f"the image was not built for {dev.name} ({dev.arch}) or is newer than this driver"
            )
        raise launch_error(err, "cuModuleLoadDataEx", detail=detail)
    return module


def get_function(module: Any, name: str) -> Any:
    """The kernel `name` in `module` (a CUfunction); LaunchError naming it if it is not there."""
    err, fn = cuda().cuModuleGetFunction(module, name.encode())
    if err:
        raise launch_error(
            err, "cuModuleGetFunction", kernel=name, detail="no entry of that name in the module"
        )
    return fn


def function_attribute(fn: Any, name: str) -> int:
    """An attribute of a CUfunction, by its short name ('NUM_REGS', 'SHARED_SIZE_BYTES', ...)."""
    cu = cuda()
    attr = getattr(cu.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + name)
    return int(_call("cuFuncGetAttribute", cu.cuFuncGetAttribute(attr, fn)))


def set_function_attribute(fn: Any, name: str, value: int, kernel: str | None = None) -> None:
    cu = cuda()
    attr = getattr(cu.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + name)
    check(cu.cuFuncSetAttribute(fn, attr, int(value))[0], "cuFuncSetAttribute", kernel)


# --------------------------------------------------------------------------- streams


def stream(s: Any = None) -> Any:
    """A CUstream for `s`: None or 0 is the legacy default stream; an int is a raw handle."""
    if s is None:
        s = 0
    cu = cuda()
    if isinstance(s, cu.CUstream):
        return s
    h = int(s)
    cs = _streams.get(h)
    if cs is None:
        cs = _streams[h] = cu.CUstream(h)
    return cs


def synchronize(s: Any = None, ordinal: int | None = None) -> None:
    """Wait for stream `s` (the default stream when None) of device `ordinal` (default: the
    thread's current context); asynchronous kernel faults surface here."""
    with in_context(ordinal):
        check(cuda().cuStreamSynchronize(stream(s))[0], "cuStreamSynchronize")


# --------------------------------------------------------------------------- upstream's names


@dataclass(frozen=True)
class GPUTarget:
    """Upstream's target: backend "cuda", the compute capability as an int (90 for 9.0)."""

    backend: str
    arch: int
    warp_size: int


class _Utils:
    """`driver.active.utils`: upstream's device properties, under its keys."""

    @staticmethod
    def get_device_properties(ordinal: int | None = None) -> dict[str, int]:
        dev = opened(devices.current_device() if ordinal is None else int(ordinal))
        return {
            "max_shared_mem": dev.max_shared_per_block_optin,
            "max_num_regs": dev.max_registers_per_block,
            "multiprocessor_count": dev.sm_count,
            "warpSize": dev.warp_size,
            "sm_clock_rate": dev.sm_clock_rate_khz,
            "mem_clock_rate": dev.mem_clock_rate_khz,
            "mem_bus_width": dev.mem_bus_width_bits,
            "max_threads_per_sm": dev.max_threads_per_sm,
        }


class ActiveDriver:
    """`tritium.runtime.driver.active`: upstream's `triton.runtime.driver.active`.

    Without a GPU, `get_active_torch_device()` is torch's CPU device, so that host code
    written for upstream runs its kernels in the interpreter (TRITIUM_INTERPRET=1) on CPU
    tensors; upstream has no answer there."""

    utils = _Utils()

    @staticmethod
    def is_active() -> bool:
        return gpu_available()

    @staticmethod
    def get_current_device() -> int:
        return devices.current_device()  # torch's under torch, as upstream's answer

    @staticmethod
    def set_current_device(ordinal: int) -> None:
        torch = devices.torch_cuda()
        if torch is not None:  # upstream's is torch.cuda.set_device
            torch.cuda.set_device(int(ordinal))
        device(int(ordinal))

    def get_device_capability(self, ordinal: int | None = None) -> tuple[int, int]:
        return opened(self.get_current_device() if ordinal is None else int(ordinal)).capability

    def get_current_target(self) -> GPUTarget:
        major, minor = self.get_device_capability()
        return GPUTarget("cuda", major * 10 + minor, 32)

    def get_active_torch_device(self) -> Any:
        import torch

        if not gpu_available():
            return torch.device("cpu")
        return torch.device("cuda", self.get_current_device())

    @staticmethod
    def get_device_interface() -> Any:
        import torch

        return torch.cuda


active = ActiveDriver()
