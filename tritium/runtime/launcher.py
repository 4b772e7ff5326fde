"""The launch fast path: one compiled kernel, called as `launcher(grid, args, stream)`.

Everything that does not depend on the argument values is resolved once per `Launcher`:

    Launcher(asm, metadata)          # asm["ptx"] (or asm["cubin"]) and a KernelMetadata
                                     # (metadata.py) or its dict: {"name": "add_kernel",
                                     #   "num_warps": 4, "threads_per_warp": 32, "shared": 0,
                                     #   "params": [{"name": "x_ptr", "type": "*fp32"}, ...,
                                     #              {"name": "n", "type": "i32"}]}
      -> block = (num_warps * 32, 1, 1), dynamic shared bytes,
         one `struct.Struct` for all parameters, e.g. "<Q Q Q i4x": each parameter in its own
         zeroed 8-byte slot of a ctypes buffer, and a ctypes `void*[n]` pointing at the slots
    first call
      -> check_args (dtypes, host vs device memory), cuModuleLoadData, cuModuleGetFunction,
         CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES when shared > 48 KiB
    every call
      -> pointer args to addresses (array_kinds.DEVICE_POINTERS, a dict from the argument's
         type to a getter: DeviceArray.ptr, torch's data_ptr(), cupy's data.ptr, CAI),
         one `pack_into` of every value into the slots (struct checks int ranges for free:
         2**31 for an i32 raises, never wraps), cuLaunchKernel(..., kernelParams=<address of
         the void* array>, ...). Passing the address as an int is cuda-python's cheapest form
         (~0.35 us); its (values, ctypes-types) tuple form costs ~1.5 us.

numpy arrays for pointer params take the slow path: they are copied to the device before
the launch and the ones the kernel may write copied back after it (staging.py), so a
script runs unchanged in interpreter and GPU modes. A read-only array (numpy's
`flags.writeable` False, a read-only `__cuda_array_interface__`) for a parameter the kernel
may write (`metadata.params[i]["writes"]`, from tritium/analysis/pointer_writes.py) is an
ArgumentError before anything is copied or launched (`check_writes`, which the
interpreter's launch path calls too).

Errors: a bad argument raises `ArgumentError` naming the parameter; a failed launch raises
`LaunchError` naming the CUDA error and the kernel. A Launcher may be called from several
threads: the pack-and-launch step holds a lock, since the parameter buffer is shared.

One Launcher runs on one GPU, `device`: the ordinal given (the JIT gives the one its key
names), else, at the first call, the device of the array arguments (two devices: an
ArgumentError naming both), else the current one (runtime/devices.py). The module is
loaded in that device's primary context, pushed for the load and popped after, so loading
on device 1 neither touches device 0's context nor changes the thread's current device. A
launch needs the function's context current: where another one is (CUDA answers
CUDA_ERROR_INVALID_CONTEXT), the launch is retried once with the device's context pushed
over it; where none is (a thread new to CUDA), it is made current and stays so.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import operator
import struct
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from tritium import config
from tritium.dtype_names import DTYPE_TO_TRITON, dtype_to_triton
from tritium.errors import ArgumentError, LaunchError, OutOfResources
from tritium.runtime import devices, driver, memory
from tritium.runtime.array_kinds import (
    DEVICE_POINTERS,
    arguments_device,
    device_of,
    device_pointer,
    kind_of,
    read_only_reason,
)
from tritium.runtime.metadata import KernelMetadata
from tritium.runtime.staging import Staging

__all__ = [
    "Launcher", "MAX_GRID", "Param", "SCALAR_TYPES", "check_grid", "check_writes", "param_writes",
]  # fmt: skip

# Triton scalar type -> (struct code, min, max); floats have None bounds.
SCALAR_TYPES: dict[str, tuple[str, Any, Any]] = {
    "i1": ("?", 0, 1),
    "i8": ("b", -(2**7), 2**7 - 1),
    "i16": ("h", -(2**15), 2**15 - 1),
    "i32": ("i", -(2**31), 2**31 - 1),
    "i64": ("q", -(2**63), 2**63 - 1),
    "u1": ("?", 0, 1),
    "u8": ("B", 0, 2**8 - 1),
    "u16": ("H", 0, 2**16 - 1),
    "u32": ("I", 0, 2**32 - 1),
    "u64": ("Q", 0, 2**64 - 1),
    "fp16": ("e", None, None),
    "bf16": ("H", None, None),  # packed from the float by _bf16_bits
    "fp32": ("f", None, None),
    "fp64": ("d", None, None),
}

_POINTEE_TYPES = frozenset(SCALAR_TYPES) | frozenset(DTYPE_TO_TRITON.values())


def _bf16_bits(x: Any) -> int:
    """A float's bfloat16 bit pattern, rounded to nearest even (NaN stays a quiet NaN)."""
    (bits,) = struct.unpack("<I", struct.pack("<f", x))
    if (bits & 0x7FFFFFFF) > 0x7F800000:
        return 0x7FC0
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


# --------------------------------------------------------------------------- pointer arguments


def _pointer_kind_error(p: Param, i: int, arg: Any) -> ArgumentError:
    return ArgumentError(
        f"argument '{p.name}' (#{i}) of type {p.type} must be a numpy array, a tritium "
        f"DeviceArray, an object with __cuda_array_interface__ (torch, cupy) or None; "
        f"got {type(arg).__name__}"
    )


# --------------------------------------------------------------------------- the launcher


class Param:
    """One kernel parameter: its name, Triton type, whether it is a pointer, and the
    divisibility the kernel was compiled to assume (16 for a `*fp32:16` pointer: its
    address is a multiple of 16 bytes)."""

    __slots__ = ("name", "type", "is_pointer", "pointee", "code", "divisibility", "writes")

    def __init__(
        self, name: str, type: str, divisibility: int | None = None, writes: bool | None = None
    ):
        self.name, self.type = name, type
        self.divisibility = int(divisibility) if divisibility else None
        self.is_pointer = type.startswith("*")
        # may the kernel write through it (None: the metadata does not say; a scalar: False)
        self.writes = writes if self.is_pointer else False
        if self.is_pointer:
            self.pointee = type[1:]
            if self.pointee not in _POINTEE_TYPES:
                raise ArgumentError(f"parameter '{name}' has unknown pointer type {type!r}")
            self.code = "Q"
        else:
            self.pointee = None
            if type not in SCALAR_TYPES:
                raise ArgumentError(f"parameter '{name}' has unknown type {type!r}")
            self.code = SCALAR_TYPES[type][0]

    def __repr__(self) -> str:
        return f"Param({self.name!r}, {self.type!r})"


class Launcher:
    """A compiled kernel ready to launch: `launcher(grid, args, stream=None)`."""

    def __init__(
        self,
        asm: dict,
        metadata: KernelMetadata | dict,
        debug: bool | None = None,
        device: int | None = None,
    ) -> None:
        meta = KernelMetadata.of(metadata)
        self.device = device  # the GPU's ordinal (None: chosen at the first call)
        self.name: str = meta.name
        self.image: str | bytes = asm["cubin"] if asm.get("cubin") else asm["ptx"]
        self.params = [
            Param(p["name"], p["type"], p.get("divisibility"), p.get("writes")) for p in meta.params
        ]
        self._writes = [(p.name, p.writes) for p in self.params]
        self.num_warps = int(meta.num_warps)
        self.block = (self.num_warps * int(meta.threads_per_warp), 1, 1)
        self._block_x = self.block[0]
        self.shared = int(meta.shared)
        self.debug = config.debug() if debug is None else debug
        n = len(self.params)
        # "<" = standard sizes, no implicit alignment: each value in its own zero-padded
        # 8-byte slot, so the driver reads the right bytes whatever size the kernel declares.
        fmt = "<" + "".join(
            p.code
            + (f"{8 - struct.calcsize('<' + p.code)}x" if struct.calcsize("<" + p.code) < 8 else "")
            for p in self.params
        )
        self._struct = struct.Struct(fmt)
        self._pack_into = self._struct.pack_into
        self._data = (ctypes.c_uint64 * max(n, 1))()
        base = ctypes.addressof(self._data)
        self._argv = (ctypes.c_void_p * max(n, 1))(*[base + 8 * i for i in range(n)])
        self._argv_addr = ctypes.addressof(self._argv) if n else 0
        self._pointer_index = tuple(i for i, p in enumerate(self.params) if p.is_pointer)
        self._bf16_index = tuple(i for i, p in enumerate(self.params) if p.type == "bf16")
        self._lock = threading.Lock()
        self._ready = False  # False until the first call loaded the function (always in debug)
        self._function: Any = None
        self._launch: Any = None  # cuda.bindings.driver.cuLaunchKernel
        self._stream0: Any = None  # the default CUstream
        self._device: driver.Device | None = None

    def __repr__(self) -> str:
        sig = ", ".join(f"{p.name}: {p.type}" for p in self.params)
        return f"Launcher({self.name}({sig}), block={self.block}, shared={self.shared})"

    # ----------------------------------------------------------------- the fast path
    def __call__(self, grid: Sequence[int], args: Sequence, stream: Any = None) -> None:
        if not self._ready:
            self._first_call(args)
        vals = list(args)
        try:
            for i in self._pointer_index:
                a = vals[i]
                vals[i] = DEVICE_POINTERS[type(a)](a)
        except KeyError:  # numpy (staged), or a type not seen before
            return self._staged_call(grid, args, stream)
        for i in self._bf16_index:
            vals[i] = self._bf16(i, vals[i])
        # From here on the same as _submit, inlined: a method call costs ~80 ns.
        n = len(grid) if type(grid) is tuple else 0
        if n == 3:
            gx, gy, gz = grid
        elif n == 1:
            gx, gy, gz = grid[0], 1, 1
        else:
            gx, gy, gz = _normalize_grid(grid)
        lock = self._lock
        lock.acquire()  # (a `with` block costs twice as much)
        try:
            if gx > 0x7FFFFFFF or gy > 0xFFFF or gz > 0xFFFF:  # _submit says which
                raise OverflowError
            self._pack_into(self._data, 0, *vals)
            (err,) = self._launch(
                self._function, gx, gy, gz, self._block_x, 1, 1, self.shared,
                self._stream0 if stream is None else driver.stream(stream), self._argv_addr, 0,
            )  # fmt: skip
        except (struct.error, OverflowError, TypeError):
            err = None
        finally:
            lock.release()
        if err is None:  # packing failed, or a bad grid: _submit says which
            return self._submit(grid, vals, stream, args)
        if err:
            return self._failed(err, (gx, gy, gz), vals, stream, args)
        driver.launch_state.kernel = self.name

    def _submit(self, grid: Sequence[int], vals: list, stream: Any, args: Sequence) -> None:
        """Pack `vals` (pointers as addresses, bf16 as bits) into the parameter slots; launch."""
        gx, gy, gz = grid = check_grid(grid, self.name)
        hstream = self._stream0 if stream is None else driver.stream(stream)
        with self._lock:
            try:
                self._struct.pack_into(self._data, 0, *vals)
            except (struct.error, OverflowError, TypeError):
                raise self._argument_error(args) from None
            try:
                (err,) = self._launch(
                    self._function, gx, gy, gz, self._block_x, 1, 1, self.shared,
                    hstream, self._argv_addr, 0,
                )  # fmt: skip
            except (OverflowError, TypeError):
                raise ArgumentError(
                    f"a launch grid must be 1 to 3 ints in [0, 2**32); kernel '{self.name}' got {grid!r}"
                ) from None
        if err:
            return self._failed(err, (gx, gy, gz), vals, stream, args)
        driver.launch_state.kernel = self.name

    def _failed(self, err: Any, grid: tuple, vals: list, stream: Any, args: Sequence) -> None:
        if self._launch_failed(err, grid):  # another device's context is current, or none
            with driver.using(self._device):
                self._submit(grid, vals, stream, args)  # (fails for good: the context is right)

    # ----------------------------------------------------------------- slow paths
    def _first_call(self, args: Sequence) -> None:
        """Argument checks (first call, or every call in debug mode) and the function's loading."""
        if self.device is None:
            d = arguments_device(self.name, ((p.name, a) for p, a in zip(self.params, args)))
            self.device = devices.current_device() if d is None else d
        self.check_args(args)
        if self._function is None:
            self._load()
        self._ready = not self.debug

    def _load(self) -> None:
        dev = driver.opened(self.device)
        with driver.using(dev):  # device `dev`'s context for the load, whatever is current
            self._load_on(dev)

    def _load_on(self, dev: driver.Device) -> None:
        fn = driver.get_function(driver.load_module(self.image, dev), self.name)
        if self.block[0] > dev.max_threads_per_block:
            raise LaunchError(
                f"kernel '{self.name}': num_warps={self.num_warps} gives {self.block[0]} threads per "
                f"block; {dev.name} allows at most {dev.max_threads_per_block}"
            )
        limit = driver.function_attribute(fn, "MAX_THREADS_PER_BLOCK")
        if self.block[0] > limit:
            regs = driver.function_attribute(fn, "NUM_REGS")
            raise OutOfResources(
                f"kernel '{self.name}' uses {regs} registers per thread, so at most {limit} threads "
                f"fit in a block, but num_warps={self.num_warps} needs {self.block[0]}; use fewer warps",
                self.block[0], limit, "threads",
            )
        static = driver.function_attribute(fn, "SHARED_SIZE_BYTES")
        if self.shared + static > dev.max_shared_per_block_optin:
            raise OutOfResources(
                f"kernel '{self.name}' needs {self.shared + static} bytes of shared memory per block; "
                f"{dev.name} ({dev.arch}) allows at most {dev.max_shared_per_block_optin}",
                self.shared + static, dev.max_shared_per_block_optin, "shared memory",
            )
        if self.shared + static > dev.max_shared_per_block:
            driver.set_function_attribute(
                fn, "MAX_DYNAMIC_SHARED_SIZE_BYTES", self.shared, self.name
            )
        self._device = dev
        self._stream0 = driver.stream(None)
        self._launch = driver.cuda().cuLaunchKernel
        self._function = fn

    def _bf16(self, i: int, x: Any) -> int:
        try:
            return _bf16_bits(x)
        except (struct.error, OverflowError, TypeError):
            raise ArgumentError(
                self._scalar_problem(self.params[i], i, x) or f"bad bf16 value {x!r}"
            ) from None

    def _staged_call(self, grid: Sequence[int], args: Sequence, stream: Any) -> None:
        """A call with numpy arrays for pointer params (or a read-only CAI array, whose
        getter sends it here): check that no read-only array is written, copy in, launch,
        copy back what the kernel may write, free."""
        check_writes(self.name, self._writes, args)
        vals = list(args)
        hosts: list[tuple[int, np.ndarray]] = []
        for i in self._pointer_index:
            a = vals[i]
            if isinstance(a, np.ndarray):
                hosts.append((i, a))
                continue
            getter = device_pointer(a)
            if getter is None:
                raise _pointer_kind_error(self.params[i], i, a)
            try:
                vals[i] = getter(a)
            except KeyError:  # a read-only CAI array, which the kernel only reads
                vals[i] = kind_of(a).get_pointer(a)  # type: ignore[union-attr]
        dev = self._device
        staging = Staging(
            self.name,
            [(self.params[i].name, a, self.params[i].writes is not False) for i, a in hosts],
            dev.total_memory if dev is not None else None,
        )
        # the copies go to the launch's device, whatever context is current
        with driver.using(dev) if dev is not None else contextlib.nullcontext():
            try:
                staging.copy_in(stream)
                for i, a in hosts:
                    vals[i] = staging.address(a)
                for i in self._bf16_index:
                    vals[i] = self._bf16(i, vals[i])
                self._submit(grid, vals, stream, args)
                staging.copy_out(stream)
            finally:
                staging.free()

    def _launch_failed(self, err: Any, grid: tuple) -> bool:
        """Raise the LaunchError for `err`; True to retry in the device's context (it was not
        current: another device's, or none on a thread new to CUDA), False to skip."""
        name = driver.error_name(err)
        dev = self._device
        if (
            dev is not None
            and name not in driver.STICKY_ERRORS
            and driver.current_context() != int(dev.context)
        ):
            return True
        if name == "CUDA_ERROR_INVALID_VALUE" and 0 in grid:
            return False  # an empty grid launches nothing (as upstream Triton does)
        detail = f"grid={grid}, block={self.block}, shared={self.shared} bytes"
        if name == "CUDA_ERROR_INVALID_VALUE" and self._device is not None:
            mx = self._device.max_grid
            if any(g > m for g, m in zip(grid, mx)):
                detail += f"; the grid exceeds {self._device.name}'s maximum {mx}"
        raise driver.launch_error(err, "cuLaunchKernel", self.name, detail)

    # ----------------------------------------------------------------- argument checks
    def check_args(self, args: Sequence) -> None:
        """Raise ArgumentError if `args` do not fit the parameters (kinds, dtypes, ranges, memory)."""
        if len(args) != len(self.params):
            names = ", ".join(p.name for p in self.params)
            raise ArgumentError(
                f"kernel '{self.name}' takes {len(self.params)} arguments ({names}), got {len(args)}"
            )
        for i, (p, a) in enumerate(zip(self.params, args)):
            problem = (
                self._pointer_problem(p, i, a) if p.is_pointer else self._scalar_problem(p, i, a)
            )
            if problem:
                raise ArgumentError(problem)

    def _pointer_problem(self, p: Param, i: int, a: Any) -> str | None:
        if a is None:
            return None
        what = f"argument '{p.name}' (#{i}) of kernel '{self.name}'"
        kind = kind_of(a)
        if kind is None:
            return str(_pointer_kind_error(p, i, a))
        dtype = kind.get_dtype(a)
        if kind.name == "torch" and not a.is_cuda:
            return f"{what} is a torch tensor on the CPU; move it to the GPU (.cuda()) or pass a numpy array"
        d = device_of(a)
        if d is not None and self.device is not None and d != self.device:
            return (
                f"{what} is on cuda:{d}, but this launch runs on cuda:{self.device}; pass "
                f"arrays on cuda:{self.device} (or compile and launch it for cuda:{d})"
            )

        elem = dtype_to_triton(dtype)
        if elem != p.pointee:
            return (
                f"{what} is an array of {dtype} ({elem or 'no Triton type'}), but the kernel was "
                f"compiled for {p.type}"
            )
        if p.divisibility:
            addr = kind.get_pointer(a)
            if addr % p.divisibility:  # numpy copies keep the host address mod 256
                return (
                    f"{what} starts at address {addr:#x}, which is not a multiple of "
                    f"{p.divisibility} bytes, but the kernel was compiled assuming it is "
                    f"('{p.type}:{p.divisibility}', so it may use vector loads); pass an aligned "
                    f"array, or compile without ':{p.divisibility}' for this parameter"
                )
        if kind.name != "numpy" and driver.gpu_available():
            ptr = kind.get_pointer(a)
            if ptr and memory.pointer_memory_type(ptr) is None:
                return (
                    f"{what} points to {ptr:#x}, which is not memory CUDA knows about "
                    f"(host memory, or freed); pass device memory or a numpy array"
                )
        return None

    def _scalar_problem(self, p: Param, i: int, a: Any) -> str | None:
        what = f"argument '{p.name}' (#{i}) of kernel '{self.name}'"
        if isinstance(a, np.ndarray) and a.ndim == 0:
            a = a[()]
        if kind_of(a) is not None:
            return f"{what} is an array, but the parameter is a scalar of type {p.type}"
        code, lo, hi = SCALAR_TYPES[p.type]
        if lo is not None:  # integer parameter
            if isinstance(a, bool | np.bool_):
                a = int(a)
            if not isinstance(a, int | np.integer):
                return f"{what} must be an integer for type {p.type}, got {type(a).__name__} {a!r}"
            if not lo <= int(a) <= hi:
                return f"{what} = {int(a)} does not fit {p.type} (range [{lo}, {hi}])"
            return None
        if not isinstance(a, int | float | np.integer | np.floating):
            return f"{what} must be a number for type {p.type}, got {type(a).__name__}"
        x = float(a)
        limit = {"fp16": 65504.0, "bf16": 3.3895313892515355e38, "fp32": 3.4028234663852886e38}.get(
            p.type
        )
        if limit is not None and math.isfinite(x) and abs(x) > limit:
            return f"{what} = {x!r} overflows {p.type} (largest finite value {limit:g})"
        return None

    def _argument_error(self, args: Sequence) -> ArgumentError:
        """Why packing failed, found by checking each argument (off the fast path)."""
        try:
            self.check_args(args)
        except ArgumentError as exc:
            return exc
        return ArgumentError(
            f"kernel '{self.name}': arguments {list(args)!r} cannot be packed for {self.params}"
        )


def param_writes(params: Sequence[dict]) -> list[tuple[str, bool | None]]:
    """(name, may the kernel write through it) per parameter of a KernelMetadata's `params`:
    None for a pointer whose metadata does not say (saved by an older tritium)."""
    return [(p["name"], p.get("writes") if p["type"].startswith("*") else False) for p in params]


def check_writes(kernel: str, writes: Sequence[tuple[str, bool | None]], args: Sequence) -> None:
    """ArgumentError, before anything runs, for a read-only array given for a parameter
    the kernel may write (`writes` as `param_writes` gives it, `args` in the same order)."""
    for i, ((name, w), a) in enumerate(zip(writes, args)):
        if w is False:
            continue
        why = read_only_reason(a)
        if why is None:
            continue
        what = f"argument '{name}' (#{i}) of kernel '{kernel}' is {why}"
        if w:
            raise ArgumentError(
                f"{what}, but the kernel writes through it (tl.store or an atomic); pass a "
                f"writable array (np.array({name}) is a writable copy)"
            )
        raise ArgumentError(
            f"{what}, and the kernel's metadata does not say whether it writes through "
            "that parameter (it was saved by an older tritium): compile it again, or pass a "
            "writable array"
        )


MAX_GRID = (2**31 - 1, 65535, 65535)  # CUDA's limits on gridDim.x, .y, .z


def check_grid(grid: Any, kernel: str) -> tuple[int, int, int]:
    """`grid` as 3 ints within CUDA's limits (x < 2**31, y and z < 65536), else an
    ArgumentError saying which dimension is wrong. A 0 launches nothing (as upstream)."""
    g = _normalize_grid(grid)
    for axis, v, limit in zip("xyz", g, MAX_GRID):
        if v < 0:
            raise ArgumentError(f"kernel '{kernel}': grid {axis} = {v} is negative (grid {grid!r})")
        if v > limit:
            raise ArgumentError(
                f"kernel '{kernel}': grid {axis} = {v} exceeds CUDA's limit of {limit} "
                f"(grid {grid!r}; x may reach 2**31 - 1, y and z 65535); launch fewer, larger "
                "programs, or loop inside the kernel"
            )
    return g


def _normalize_grid(grid: Any) -> tuple[int, int, int]:
    if isinstance(grid, int | np.integer):
        return int(grid), 1, 1
    try:
        g = tuple(operator.index(x) for x in grid)
    except TypeError:
        raise ArgumentError(f"a launch grid must be a tuple of 1 to 3 ints, got {grid!r}") from None
    if not 1 <= len(g) <= 3:
        raise ArgumentError(f"a launch grid must be a tuple of 1 to 3 ints, got {grid!r}")
    return g + (1,) * (3 - len(g))  # type: ignore[return-value]
