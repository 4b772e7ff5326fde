"""What `check_kernel` draws, without hypothesis: array specs, drawn cases, their buffers.

    array("rows", "cols", layout="rows")   ->  ArraySpec: the shape by dimension names,
                                               which memory layouts the kernel accepts
    Case(dims={"rows": 3, "cols": 5}, ...) ->  buffers: each array a view into a buffer
                                               whose other bytes hold a poison value

A drawn array (`Drawn`) is a view `buffer[index]` (`.T` when transposed) of a buffer filled
with poison; inputs then get their values, outputs keep the poison, so an element the
kernel never writes, or a write outside the view, shows after the launch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tritium.errors import ArgumentError

LAYOUTS = ("contiguous", "rows", "any")

# Relative and absolute tolerances by output dtype: torch.testing.assert_close's defaults.
TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}
FLOAT_POISON_BITS = {2: 0x7E5A, 4: 0x7FA5A5A5, 8: 0x7FF5A5A5A5A5A5A5}  # NaNs with a payload
INT_POISON_BYTE = 0x5A


@dataclass(frozen=True)
class ArraySpec:
    """One array argument: see `array`."""

    shape: tuple
    dtype: object = None
    elements: tuple | None = None
    specials: bool | None = None
    layout: str = "contiguous"


def array(*shape, dtype=None, elements=None, specials=None, layout="contiguous") -> ArraySpec:
    """An array argument of `check_kernel`.

    shape     dimension names (drawn once per example and shared by every array that names
              them, see `dims=`) or fixed ints: `array("n")`, `array("rows", 64)`.
    dtype     None: the example's dtype (drawn from `check_kernel(dtypes=...)`); a dtype
              (`"int32"`, `np.float16`); or a list of dtypes to draw from.
    elements  (low, high): the range of the finite values drawn for an input (default: a
              range drawn among +-4 in integers, +-1, +-100, +-1e4 and +-1e-3).
    specials  inputs only: also put NaN, +-inf, -0.0, the largest and smallest normal
              values (ints: min, max, 0, -1) at a few drawn positions (default: when
              `elements` is not given).
    layout    the strides the kernel accepts: "contiguous" (C order; the array may sit
              inside a larger poisoned buffer), "rows" (rows padded: the kernel reads the
              row stride from `x.strides`), "any" (also a step in the last dimension and
              transposed 2-D views).
    """
    if not shape:
        raise ArgumentError("array(): give at least one dimension (scalars go in scalars=)")
    for s in shape:
        if not isinstance(s, (str, int)) or isinstance(s, bool) or (isinstance(s, int) and s < 0):
            raise ArgumentError(f"array(): a dimension is a name or an int >= 0, got {s!r}")
    if layout not in LAYOUTS:
        raise ArgumentError(f"array(): layout must be one of {LAYOUTS}, got {layout!r}")
    if elements is not None and (len(elements) != 2 or not elements[0] <= elements[1]):
        raise ArgumentError(
            f"array(): elements must be (low, high) with low <= high, got {elements!r}"
        )
    return ArraySpec(
        tuple(shape), dtype, None if elements is None else tuple(elements), specials, layout
    )


def np_dtype(d) -> np.dtype:
    try:
        return np.dtype(d)
    except TypeError:
        raise ArgumentError(f"check_kernel: {d!r} is not a numpy dtype") from None


def tolerance(dt: np.dtype, rtol, atol, name: str) -> tuple[float, float]:
    """(rtol, atol) for an output: the user's (a number, or a dict by output name), else
    the dtype's default; 0 for integers and bools."""
    r0, a0 = TOLERANCES.get(dt.name, (0.0, 0.0))
    r = rtol.get(name, r0) if isinstance(rtol, dict) else (r0 if rtol is None else rtol)
    a = atol.get(name, a0) if isinstance(atol, dict) else (a0 if atol is None else atol)
    return float(r), float(a)


def poison_of(dt: np.dtype) -> np.ndarray:
    """The 0-d poison value of a dtype: a NaN with a payload for floats, 0x5A5A... else."""
    if dt.kind == "f":
        return np.array(FLOAT_POISON_BITS[dt.itemsize], dtype=f"u{dt.itemsize}").view(dt)
    if dt.kind == "b":
        return np.array(True)
    return np.frombuffer(bytes([INT_POISON_BYTE]) * dt.itemsize, dtype=dt).reshape(())


def special_values(dt: np.dtype) -> list:
    if dt.kind == "f":
        fi = np.finfo(dt)
        return [np.nan, np.inf, -np.inf, -0.0, float(fi.max), float(fi.tiny), -float(fi.max)]
    if dt.kind in "iu":
        ii = np.iinfo(dt)
        return [int(ii.min), int(ii.max), 0] + ([-1] if dt.kind == "i" else [1])
    return [True, False]


@dataclass
class Drawn:
    """A drawn array: a view of `buffer_shape`'s buffer, and (inputs) how to fill it."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    buffer_shape: tuple[int, ...]
    index: tuple[slice, ...]
    transposed: bool = False
    seed: int = 0
    kind: str = "integers"  # "integers": small integer values; "uniform": in [low, high)
    low: float = -4.0
    high: float = 4.0
    specials: list = field(default_factory=list)  # [(flat index, value)]
    is_input: bool = True
    reshape: bool = False  # a C-contiguous run of a 1-D buffer, reshaped

    @property
    def layout(self) -> str:
        if self.transposed:
            return "transposed"
        if self.buffer_shape == self.shape:
            return "exact"
        return "embedded" if self.reshape else "strided"

    def view_of(self, buf: np.ndarray) -> np.ndarray:
        v = (buf.T if self.transposed else buf)[self.index]
        return v.reshape(self.shape) if self.reshape else v

    def values(self) -> np.ndarray:
        """The input's element values (C order, the view's shape)."""
        rng = np.random.default_rng(self.seed)
        n = int(np.prod(self.shape, dtype=np.int64))
        dt = self.dtype
        if dt.kind == "b":
            v = rng.integers(0, 2, n).astype(bool)
        elif dt.kind in "iu":
            ii = np.iinfo(dt)
            lo, hi = max(int(self.low), int(ii.min)), min(int(self.high), int(ii.max))
            v = rng.integers(lo, hi, n, endpoint=True, dtype=np.int64).astype(dt)
        elif self.kind == "integers":
            v = rng.integers(int(np.floor(self.low)), int(np.ceil(self.high)), n, endpoint=True)
            v = np.clip(v, self.low, self.high).astype(dt)
        else:
            v = rng.uniform(self.low, self.high, n).astype(dt)
        for i, s in self.specials:
            if n:
                v[i % n] = np.array(s).astype(dt) if dt.kind != "f" else s
        return v.reshape(self.shape)

    def build(self) -> tuple[np.ndarray, np.ndarray]:
        """(buffer, view): the buffer poisoned, an input's view filled with its values."""
        buf = np.empty(self.buffer_shape, self.dtype)
        buf[...] = poison_of(self.dtype)
        view = self.view_of(buf)
        if self.is_input:
            with np.errstate(over="ignore", invalid="ignore"):
                view[...] = self.values()
        return buf, view

    def view_expr(self, buf: str) -> str:
        if self.layout == "exact":
            return buf
        idx = ", ".join(_slice_text(s) for s in self.index)
        text = f"{buf}.T[{idx}]" if self.transposed else f"{buf}[{idx}]"
        return text + (f".reshape({self.shape})" if self.reshape else "")


def _slice_text(s: slice) -> str:
    text = f"{'' if s.start in (None, 0) else s.start}:{'' if s.stop is None else s.stop}"
    return text + (f":{s.step}" if s.step not in (None, 1) else "")


class Case:
    """One drawn example: the dimensions, the shared dtype, scalars and every array
    (name -> Drawn: the inputs first, then the outputs that are not also inputs). Not a
    dataclass, so that hypothesis prints its short repr."""

    def __init__(self, dims: dict, dtype: np.dtype, scalars: dict, arrays: dict):
        self.dims, self.dtype, self.scalars, self.arrays = dims, dtype, scalars, arrays

    def __repr__(self) -> str:
        parts = [f"{k}={v}" for k, v in {**self.dims, **self.scalars}.items()]
        parts.append(f"dtype={self.dtype.name}")
        for a in self.arrays.values():
            extra = f", specials={a.specials}" if a.specials else ""
            parts.append(f"{a.name}=<{a.dtype.name} {a.shape} {a.layout}{extra}>")
        return f"Case({', '.join(parts)})"
