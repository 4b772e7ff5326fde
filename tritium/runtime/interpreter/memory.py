"""The interpreter's address space: numpy arrays seen as global memory, bounds-checked.

Every pointer argument is a numpy array (any dtype, any strides). The interpreter maps
the whole buffer the array lives in (its base array's byte range) to its own region of
virtual addresses, widely separated from the others:

    region i   = [(i + 1) << 40,  (i + 2) << 40)          (256-byte aligned)
    buffer     = region start + (real start address % 256)  .. + buffer size
    argument   = buffer start + (view's first element - buffer's first byte)

so a pointer is a plain int64 (as on the GPU), `tt.addptr` is integer arithmetic, and the
low address bits keep the real memory's alignment. Arguments that share memory (the
same array passed twice, two views of one array) share a region, so writes through one
are seen through the other. A load or store touches only unmasked lanes; a lane whose
address lies outside every buffer, straddles a buffer's end, or is not aligned to the
element size is a fault (`MemoryFault`), which `out_of_bounds` turns into an
`OutOfBoundsError` naming the op's source line (for load_store.py and atomic.py).

Pointers the program turns into integers and back (`tt.ptr_to_int`, `tt.int_to_ptr`) see
*program addresses*, as on the GPU: a region's program address is its real host address,
or for a copy of device memory the device address (`shift` = program - host address).
`to_int` maps virtual to program addresses; `to_pointer` maps back, finding an address
outside every region among the program's live arrays (`live_arrays.py`: grouped GEMM's
table of addresses) and adding that array as a region; an address in no live array maps
to a virtual address in no region (`UNMAPPED`, arithmetic preserved), where any access
faults and from which `to_int` gives the address back.

A region whose arrays are all read-only (`flags.writeable` False: a view of a `bytes`
object, a `np.memmap` opened with mode "r", or marked so by the caller) is read-only here
too: a store or atomic into it is a fault, and nothing is written. (Launches refuse a
read-only array for a parameter the kernel may write before the run; this catches the
rest: `interpret` called directly, or a pointer computed from another argument's.)
"""

from __future__ import annotations

import ctypes

import numpy as np
from numpy.lib.array_utils import byte_bounds

from tritium.errors import OutOfBoundsError
from tritium.ir.locations import op_source_loc

REGION_SHIFT = 40
UNMAPPED = 1 << 62  # virtual = program address - UNMAPPED, for addresses in no live array


class MemoryFault(Exception):
    """An access outside every argument buffer; the message names argument and offset."""


def out_of_bounds(op, e: MemoryFault, st) -> OutOfBoundsError:
    """The user-facing error for a fault of `op` in the program `st` runs (`blocks.State`)."""
    pid = tuple(int(p) for p in st.pid)
    return OutOfBoundsError(f"{op.name}: {e} (program id {pid})", op_source_loc(op))


class _Region:
    """One buffer's bytes (`mem`, uint8 over real memory) at virtual address `vbase`."""

    def __init__(self, index: int, lo: int, hi: int, shift: int = 0):
        self.index = index
        self.lo = lo
        self.size = hi - lo
        self.program_lo = lo + shift  # the address a program's integers see
        self.vbase = ((index + 1) << REGION_SHIFT) + (lo & 255)
        if self.size:
            raw = (ctypes.c_uint8 * self.size).from_address(lo)
            self.mem = np.ctypeslib.as_array(raw)
        else:
            self.mem = np.zeros(0, np.uint8)
        self.args: list[tuple[str, int]] = []  # (what it is, virtual address of its start)
        self.writable = True
        self._typed: dict[np.dtype, tuple[int, np.ndarray]] = {}

    def make_read_only(self) -> None:
        self.writable = False
        self.mem.flags.writeable = False  # (the typed views are made from it)

    def typed(self, dtype: np.dtype) -> tuple[int, np.ndarray]:
        """(first aligned byte offset p0, the region's bytes from p0 viewed as `dtype`)."""
        view = self._typed.get(dtype)
        if view is None:
            k = dtype.itemsize
            p0 = (-self.lo) % k
            n = max(self.size - p0, 0) // k
            view = (p0, self.mem[p0 : p0 + n * k].view(dtype))
            self._typed[dtype] = view
        return view


def _like(x, shape) -> np.ndarray:
    x = np.asarray(x)
    return x if x.shape == shape else np.broadcast_to(x, shape)


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


class AddressSpace:
    """The arrays passed to one launch, as bounds-checked global memory. Each array is
    `(name, ndarray)` or `(name, ndarray, shift)` (a host copy of device memory, see the
    module docstring); `live` finds arrays the program reaches by address."""

    def __init__(self, arrays: list[tuple], live=None):
        spans = []
        shifts = {}
        for name, a, *shift in arrays:
            lo, hi = byte_bounds(_root(a))
            spans.append((lo, hi, name, a))
            shifts[lo] = shift[0] if shift else 0
        order = sorted(range(len(spans)), key=lambda i: spans[i][:2])
        self.regions: list[_Region] = []
        region_of: dict[int, _Region] = {}
        groups: list[list[int]] = []
        hi_so_far = None
        for i in order:
            lo, hi = spans[i][:2]
            if groups and hi_so_far is not None and lo < hi_so_far:
                groups[-1].append(i)
                hi_so_far = max(hi_so_far, hi)
            else:
                groups.append([i])
                hi_so_far = hi
        for members in groups:
            lo = min(spans[i][0] for i in members)
            hi = max(spans[i][1] for i in members)
            region = _Region(len(self.regions), lo, hi, shifts[lo])
            self.regions.append(region)
            for i in members:
                region_of[i] = region
            if not any(spans[i][3].flags.writeable for i in members):
                region.make_read_only()
        self.pointers: list[int] = []
        for i, (_, _, name, a) in enumerate(spans):
            region = region_of[i]
            start = a.__array_interface__["data"][0]
            ptr = region.vbase + (start - region.lo)
            region.args.append((f"argument '{name}'", ptr))
            self.pointers.append(ptr)
        self._arrays = list(arrays)  # keep the memory alive
        self.live = live
        self._index()

    # ------------------------------------------------------------------ program addresses

    def _index(self) -> None:
        order = sorted(self.regions, key=lambda r: r.program_lo)
        self._plo = np.array([r.program_lo for r in order], np.int64)
        self._phi = np.array([r.program_lo + r.size for r in order], np.int64)
        self._pregion = order

    def to_int(self, ptr) -> np.ndarray:
        """Virtual addresses (int64, any shape) as the program addresses they stand for."""
        v = np.asarray(ptr, np.int64)
        idx = (v >> REGION_SHIFT) - 1
        out = np.where(v < 0, v + UNMAPPED, v)  # (a virtual address in no region)
        for i in np.unique(idx):
            if 0 <= i < len(self.regions):
                r = self.regions[int(i)]
                lanes = idx == i
                out = np.where(lanes, v - r.vbase + r.program_lo, out)
        return out

    def to_pointer(self, addr) -> np.ndarray:
        """Program addresses (int64, any shape) as virtual addresses (see the docstring)."""
        a = np.asarray(addr, np.int64)
        out = a - UNMAPPED
        todo = np.ones(a.shape, bool)
        for attempt in range(2):
            i = np.searchsorted(self._plo, a, side="right") - 1
            ok = (i >= 0) & todo
            ic = np.clip(i, 0, max(len(self._pregion) - 1, 0))
            if len(self._pregion):
                ok &= a <= self._phi[ic]
                for j in np.unique(ic[ok]):
                    r = self._pregion[int(j)]
                    lanes = ok & (ic == j)
                    out = np.where(lanes, a - r.program_lo + r.vbase, out)
            todo &= ~ok
            if attempt or not todo.any() or self.live is None:
                break
            found = False
            for x in np.unique(a[todo]):
                hit = self.live.find(int(x))
                if hit is not None:
                    self.add(*hit)
                    found = True
            if not found:
                break
        return out

    def add(self, name: str, buf: np.ndarray, shift: int) -> None:
        """Map a buffer the program reached by address (after the arguments' regions)."""
        lo, hi = byte_bounds(_root(buf))
        region = _Region(len(self.regions), lo, hi, shift)
        region.args.append((name, region.vbase + (buf.__array_interface__["data"][0] - lo)))
        if not buf.flags.writeable:
            region.make_read_only()
        self.regions.append(region)
        self._arrays.append((name, buf))
        self._index()

    # ------------------------------------------------------------------ access

    def load(self, addr, mask, dtype: np.dtype, what: str = "load") -> np.ndarray:
        """Read `dtype` elements at `addr` (int64, any shape) where `mask` is true (0 elsewhere)."""
        addr = np.asarray(addr)
        if mask is None or mask.all():
            flat = addr.reshape(-1)
            return self._gather(flat, dtype, what, addr, None).reshape(addr.shape)
        m = _like(mask, addr.shape)
        out = np.zeros(addr.shape, dtype)
        sel = addr[m]
        if sel.size:
            out[m] = self._gather(sel, dtype, what, addr, m)
        return out

    def store(self, addr, values, mask, dtype: np.dtype, what: str = "store") -> None:
        """Write `values` (already `dtype`) at `addr` where `mask` is true."""
        addr = np.asarray(addr)
        values = _like(np.asarray(values, dtype), addr.shape)
        if mask is None or mask.all():
            self._scatter(addr.reshape(-1), values.reshape(-1), dtype, what, addr, None)
            return
        m = _like(mask, addr.shape)
        sel = addr[m]
        if sel.size:
            self._scatter(sel, values[m], dtype, what, addr, m)

    def _gather(self, flat, dtype, what, full, mask) -> np.ndarray:
        k = dtype.itemsize
        region = self._single_region(flat, k)
        if region is not None:
            p0, view = region.typed(dtype)
            return view[(flat - (region.vbase + p0)) // k]
        out = np.zeros(flat.shape, dtype)
        for region, lanes in self._split(flat, k, what, full, mask):
            p0, view = region.typed(dtype)
            out[lanes] = view[(flat[lanes] - (region.vbase + p0)) // k]
        return out

    def _scatter(self, flat, values, dtype, what, full, mask) -> None:
        k = dtype.itemsize
        region = self._single_region(flat, k)
        if region is not None:
            if not region.writable:
                raise MemoryFault(self._read_only(region, int(flat[0]), what))
            p0, view = region.typed(dtype)
            view[(flat - (region.vbase + p0)) // k] = values
            return
        groups = self._split(flat, k, what, full, mask)
        for region, lanes in groups:
            if not region.writable and lanes.any():
                raise MemoryFault(self._read_only(region, int(flat[lanes][0]), what))
        for region, lanes in groups:
            p0, view = region.typed(dtype)
            view[(flat[lanes] - (region.vbase + p0)) // k] = values[lanes]

    def _single_region(self, flat: np.ndarray, k: int) -> _Region | None:
        """The region holding every lane, when all lanes are in bounds and aligned."""
        if flat.size == 0:
            return None
        lo, hi = int(flat.min()), int(flat.max())
        i = (lo >> REGION_SHIFT) - 1
        if not 0 <= i < len(self.regions):
            return None
        r = self.regions[i]
        if lo < r.vbase or hi + k > r.vbase + r.size:
            return None
        if k > 1 and (flat & (k - 1)).any():
            return None
        return r

    def _split(self, flat, k, what, full, mask):
        """Lanes grouped by region; raises MemoryFault at the first bad lane."""
        idx = (flat >> REGION_SHIFT) - 1
        ok = np.zeros(flat.shape, bool)
        groups = []
        for i in np.unique(idx):
            if not 0 <= i < len(self.regions):
                continue
            r = self.regions[int(i)]
            lanes = idx == i
            off = flat - r.vbase
            good = lanes & (off >= 0) & (off + k <= r.size) & ((flat & (k - 1)) == 0)
            ok |= good
            groups.append((r, good))
        bad = np.flatnonzero(~ok)
        if bad.size:
            raise MemoryFault(self._describe(int(flat[bad[0]]), k, int(bad[0]), what, full, mask))
        return groups

    # ------------------------------------------------------------------ diagnostics

    def _nearest(self, addr: int) -> _Region | None:
        """The region `addr` is in or nearest to (within half the region spacing)."""
        best, best_d = None, 1 << (REGION_SHIFT - 1)
        for r in self.regions:
            d = max(r.vbase - addr, addr - (r.vbase + r.size - 1), 0)
            if d < best_d:
                best, best_d = r, d
        return best

    @staticmethod
    def _read_only(r: _Region, addr: int, what: str) -> str:
        before = [a for a in r.args if a[1] <= addr]
        name = max(before, key=lambda a: a[1])[0] if before else r.args[0][0]
        return f"{what} into {name}, a read-only array (flags.writeable is False)"

    def _describe(self, addr: int, k: int, lane: int, what: str, full, mask) -> str:
        if full.ndim:
            pos = (
                np.argwhere(mask)[lane] if mask is not None else np.unravel_index(lane, full.shape)
            )
            where = (
                f" at lane {tuple(int(p) for p in pos)} of a {'x'.join(map(str, full.shape))} block"
            )
        else:
            where = ""
        if addr < 0:  # UNMAPPED: an address the program computed, in no live array
            real = addr + UNMAPPED
            return f"{what} of address {real:#x}{where} points into no live array"
        r = self._nearest(addr)
        if r is None:
            return f"{what} of address {addr:#x}{where} points into no argument buffer"
        before = [a for a in r.args if a[1] <= addr]
        name, start = max(before, key=lambda a: a[1]) if before else r.args[0]
        rel = addr - start
        first, last = r.vbase - start, r.vbase + r.size - start
        if rel % k == 0 and first % k == 0 and last % k == 0:
            span = f"elements [{first // k}, {last // k})"
            offset = f"element offset {rel // k}"
        else:
            span = f"bytes [{first}, {last})"
            offset = f"byte offset {rel}"
        if (addr & (k - 1)) and r.vbase <= addr and addr + k <= r.vbase + r.size:
            return (
                f"misaligned {what} of {k}-byte elements at {offset} from {name}{where}"
            )
        return (
            f"out-of-bounds {what}{where}: {offset} from {name}, "
            f"whose buffer holds {span} relative to it ({k}-byte elements)"
        )
