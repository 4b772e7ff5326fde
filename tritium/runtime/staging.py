"""numpy arguments on the GPU for one launch: copied in, and what the kernel may have
written copied back. The Launcher's slow path (launcher.py) runs it:

    staging = Staging("add_kernel", [("x_ptr", x, False), ("out_ptr", out, True)])
    staging.copy_in(stream)       # allocate every copy first, then copy the spans in
    address = staging.address(x)  # the device address of x's first element
    ... cuLaunchKernel ...
    staging.copy_out(stream)      # wait for the kernel, then copy back what it may write
    staging.free()                # (in a finally)

Choices:
* **spans**: an array's copy is the whole memory span it touches (numpy's byte bounds;
  negative strides included), so strides the script computed from a view stay right.
* **aliasing**: arrays whose spans overlap (`out` is `x`, `x[1:]` next to `x`) share one
  device copy, so in-place kernels see what they would see on device memory.
* **alignment**: each copy is placed so that device address = host address (mod 256), so a
  pointer the compiler specialised as 16-byte aligned is aligned on the device too.
* **copy-back**: only the arrays the kernel may write (the compiler's `writes` flag per
  parameter; unknown counts as written), and only their own elements: a dense array is
  copied back over its span, a strided view through a host buffer element by element, so
  the gaps of a view (another field of a structured array, the rows a slice skipped) and
  the bytes of arrays the kernel only reads are never written. Read-only arrays are never
  written (the launcher refuses them for a parameter the kernel may write).
* **failures**: every device copy is allocated before anything is copied; an allocation
  that fails (arrays larger than the device's free memory) frees the others and raises a
  `LaunchError` naming the arguments and sizes. `copy_out` first waits for the kernel, so a
  kernel fault raises before any host byte changes: the arrays are written whole or not at all.
* a zero-size array passes a null pointer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tritium.errors import LaunchError
from tritium.runtime import driver, memory
from tritium.runtime.array_kinds import host_span

__all__ = ["Staging"]

ALIGN = 256


def _dense(a: np.ndarray) -> bool:
    """The elements of `a` fill its span exactly (any order of axes, any stride signs)."""
    step = a.itemsize
    for stride, n in sorted((abs(s), n) for n, s in zip(a.shape, a.strides) if n > 1):
        if stride != step:
            return False
        step *= n
    return True


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} bytes" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError  # pragma: no cover


class _Group:
    """One device copy: host bytes [lo, hi) and the arrays inside them."""

    __slots__ = ("lo", "hi", "members", "alloc", "dev")

    def __init__(self, lo: int, hi: int):
        self.lo, self.hi = lo, hi
        self.members: list[tuple[str, np.ndarray, bool]] = []
        self.alloc = 0  # the cuMemAlloc address (to free)
        self.dev = 0  # the device address of host byte lo


class Staging:
    """The numpy arguments of one launch: `arrays` = [(parameter name, array, written)]."""

    def __init__(self, kernel: str, arrays: list[tuple[str, np.ndarray, bool]], total_memory=None):
        self.kernel = kernel
        self.total_memory = total_memory  # the device's, for the out-of-memory message
        spans = sorted(((*host_span(a), (name, a, w)) for name, a, w in arrays if a.size),
                       key=lambda t: t[:2])  # fmt: skip
        self.groups: list[_Group] = []
        for lo, hi, member in spans:
            if self.groups and lo < self.groups[-1].hi:
                g = self.groups[-1]
                g.hi = max(g.hi, hi)
            else:
                g = _Group(lo, hi)
                self.groups.append(g)
            g.members.append(member)

    def copy_in(self, s: Any) -> None:
        for g in self.groups:
            try:
                g.alloc = memory.mem_alloc(g.hi - g.lo + g.lo % ALIGN)  # cuMemAlloc: 256-aligned
            except LaunchError as e:
                if getattr(e, "cuda_error", None) != "CUDA_ERROR_OUT_OF_MEMORY":
                    raise
                self.free()
                raise self._out_of_memory(e) from None
            g.dev = g.alloc + g.lo % ALIGN
        for g in self.groups:
            memory.memcpy_htod_async(g.dev, g.lo, g.hi - g.lo, s)

    def _out_of_memory(self, e: LaunchError) -> LaunchError:
        need = sum(g.hi - g.lo + g.lo % ALIGN for g in self.groups)
        sizes = []
        for g in self.groups:
            for name, a, _ in g.members:
                lo, hi = host_span(a)
                sizes.append(f"{name} {_size(hi - lo)}")
        total = f"; the device has {_size(self.total_memory)} in all" if self.total_memory else ""
        exc = LaunchError(
            f"kernel '{self.kernel}': its numpy arguments need {_size(need)} of device memory "
            f"while they are staged ({', '.join(sizes)}), and cuMemAlloc failed with "
            f"CUDA_ERROR_OUT_OF_MEMORY{total}. Nothing was copied or written; process the "
            "data in parts, or pass device arrays (tritium.to_device, torch) that fit"
        )
        exc.cuda_error = "CUDA_ERROR_OUT_OF_MEMORY"  # type: ignore[attr-defined]
        exc.kernel = self.kernel  # type: ignore[attr-defined]
        return exc

    def address(self, a: np.ndarray) -> int:
        if a.size == 0:
            return 0
        addr = a.ctypes.data
        for g in self.groups:
            if g.lo <= addr < g.hi:
                return g.dev + (addr - g.lo)
        raise AssertionError("unstaged array")  # pragma: no cover

    def copy_out(self, s: Any) -> None:
        driver.synchronize(s)  # a kernel fault raises here, before any host byte changes
        strided = []
        for g in self.groups:
            spans = []  # the dense written arrays' spans, merged
            for _, a, written in g.members:
                if not written:
                    continue
                lo, hi = host_span(a)
                if _dense(a):
                    if spans and lo <= spans[-1][1]:
                        spans[-1][1] = max(spans[-1][1], hi)
                    else:
                        spans.append([lo, hi])
                else:
                    buf = np.empty(hi - lo, np.uint8)
                    memory.memcpy_dtoh_async(buf.ctypes.data, g.dev + (lo - g.lo), hi - lo, s)
                    strided.append((a, buf, a.ctypes.data - lo))
            for lo, hi in spans:
                memory.memcpy_dtoh_async(lo, g.dev + (lo - g.lo), hi - lo, s)
        driver.synchronize(s)
        for a, buf, offset in strided:
            np.copyto(a, np.ndarray(a.shape, a.dtype, buffer=buf, offset=offset, strides=a.strides))

    def free(self) -> None:
        for g in self.groups:
            if g.alloc:
                memory.mem_free(g.alloc, quiet=True)
                g.alloc = 0
