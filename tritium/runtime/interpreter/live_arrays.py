"""The memory a kernel can reach besides its arguments: every live array, found by address.

A kernel may compute pointers: grouped GEMM keeps one address per problem in an int64
tensor, loads it and casts it (`tt.int_to_ptr`). On the GPU that address is the array's
device address; in the interpreter it is looked up here among the program's live arrays
(those referenced from any object the garbage collector knows, from module globals or
from the locals of the calling frames), and the array is added to the address space, so
accesses through it are bounds-checked against that array as any argument's are:

    addresses ──find(addr)──▶ (name, host bytes, shift)     shift = program address - host address

| array | program address | host bytes |
|---|---|---|
| numpy, torch CPU tensor | its host address | the whole buffer (numpy: the base array; torch: the storage) |
| torch CUDA tensor, cupy, DeviceArray, other `__cuda_array_interface__` | its device address | a host copy of the whole allocation (torch: the storage; else what `cuMemGetAddressRange` gives), made when first reached |

Device arguments are copied the same way (`DeviceCopies.view`). Each allocation is copied
on the GPU holding it (`memory.pointer_device`), which is synchronized (in its context)
before its first copy; after the launch every copy is written back (`write_back`), so the
arrays hold what the kernel stored, as after a GPU launch.
"""

from __future__ import annotations

import ctypes
import gc
import sys
from typing import Any

import numpy as np
from numpy.lib.array_utils import byte_bounds

from tritium.errors import ArgumentError
from tritium.runtime.array_kinds import kind_of
from tritium.runtime.arrays import DeviceArray

__all__ = ["DeviceCopies", "LiveArrays"]


def _raw(addr: int, nbytes: int) -> np.ndarray:
    """The `nbytes` of host memory at `addr` as a uint8 array (no copy)."""
    if nbytes == 0:
        return np.zeros(0, np.uint8)
    return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(addr))


def _span(a: Any) -> tuple[int, int, bool] | None:
    """(start address, size in bytes, on the device) of the buffer array `a` lives in."""
    kind = kind_of(a)
    if kind is None:
        return None
    if kind.name == "numpy":
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        lo, hi = byte_bounds(root)
        return lo, hi - lo, False
    if kind.name == "torch":
        storage = a.untyped_storage()
        return storage.data_ptr(), storage.nbytes(), bool(a.is_cuda)
    if kind.name == "device_array":
        return a.ptr, a.nbytes, True
    ptr = kind.get_pointer(a)
    from tritium.runtime import memory

    alloc = memory.device_allocation(ptr) if ptr else None
    return (alloc[0], alloc[1], True) if alloc else None


class DeviceCopies:
    """Host copies of device allocations, one per allocation, written back at the end."""

    def __init__(self) -> None:
        self.copies: dict[int, np.ndarray] = {}  # device address -> host bytes
        self.devices: dict[int, int | None] = {}  # device address -> the GPU holding it
        self.synced: set[int | None] = set()  # the GPUs synchronized

    def host(self, lo: int, size: int) -> np.ndarray:
        buf = self.copies.get(lo)
        if buf is None or buf.size < size:
            from tritium.runtime import driver, memory

            ordinal = self.devices.get(lo, -1)
            if ordinal == -1:
                ordinal = self.devices[lo] = memory.pointer_device(lo)
            if ordinal not in self.synced:  # once per GPU, in its context
                with driver.in_context(ordinal):
                    driver.check(driver.cuda().cuCtxSynchronize()[0], "cuCtxSynchronize")
                self.synced.add(ordinal)
            buf = np.empty(size, np.uint8)
            memory.memcpy_dtoh(buf, lo, size, None, ordinal)
            self.copies[lo] = buf
        return buf

    def view(self, a: Any, name: str) -> tuple[np.ndarray, int]:
        """A device argument as (a host view starting at its first element, shift)."""
        span = _span(a)
        if span is None:
            raise ArgumentError(f"argument {name!r}: cannot find the device memory it lives in")
        lo, size, _ = span
        buf = self.host(lo, size)
        ptr = kind_of(a).get_pointer(a)
        return buf[ptr - lo :], lo - buf.ctypes.data

    def write_back(self) -> None:
        if not self.copies:
            return
        from tritium.runtime import memory

        for lo, buf in self.copies.items():
            memory.memcpy_htod(lo, buf, buf.size, None, self.devices.get(lo))


class LiveArrays:
    """Find the live array holding an address (see the module docstring)."""

    def __init__(self, copies: DeviceCopies):
        self.copies = copies
        self._spans: list[tuple[int, int, bool, Any]] | None = None  # sorted by start

    def find(self, addr: int) -> tuple[str, np.ndarray, int] | None:
        """(a name for messages, the host bytes of the array's buffer, shift) or None."""
        if self._spans is None:
            self._spans = _live_spans()
        best = None
        for lo, size, on_device, obj in self._spans:
            if lo <= addr < lo + size and (best is None or size > best[1]):
                best = (lo, size, on_device, obj)
        if best is None:
            return None
        lo, size, on_device, obj = best
        name = f"the {type(obj).__name__} at {lo:#x} (reached by address)"
        if on_device:
            buf = self.copies.host(lo, size)
            return name, buf, lo - buf.ctypes.data
        if isinstance(obj, np.ndarray):  # its base array, read-only if that is
            while isinstance(obj.base, np.ndarray):
                obj = obj.base
            return name, obj, 0
        return name, _raw(lo, size), 0


def _maybe_array(obj: Any) -> bool:
    """Cheap test before `kind_of` (which may ask an unknown object for attributes)."""
    if isinstance(obj, np.ndarray) or type(obj) is DeviceArray:
        return True
    module = getattr(type(obj), "__module__", "")
    if not isinstance(module, str) or not module.startswith(("torch", "cupy")):
        return False
    try:
        return kind_of(obj) is not None
    except Exception:  # torch's lazy modules raise RuntimeError for unknown attributes
        return False


def _live_spans() -> list[tuple[int, int, bool, Any]]:
    """Every array the program can still reach, by the buffer it lives in."""
    seen: set[int] = set()
    spans = []

    def visit(obj):
        if id(obj) in seen or not _maybe_array(obj):
            return
        seen.add(id(obj))
        try:
            span = _span(obj)
        except Exception:  # an array whose memory cannot be asked about
            return
        if span is not None and span[1] > 0:
            spans.append((*span, obj))

    roots = gc.get_objects()
    frame = sys._getframe()
    while frame is not None:
        roots.append(frame.f_locals)
        frame = frame.f_back
    for obj in roots:
        visit(obj)
    for obj in gc.get_referents(*roots):
        visit(obj)
    spans.sort(key=lambda s: s[0])
    return spans
