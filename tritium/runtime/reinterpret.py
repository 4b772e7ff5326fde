"""`tritium.reinterpret(array, tl.float8e4nv)`: hand a kernel an array whose bytes it reads
as another element type of the same size, as upstream's `triton.reinterpret`.

numpy has no fp8 type, so fp8 data lives in uint8 arrays:

    >>> codes = np.frombuffer(..., np.uint8)                 # e4m3fn bytes
    >>> kernel[grid](tritium.reinterpret(codes, tl.float8e4nv), out, n)   # *fp8e4nv

A numpy array becomes a `ReinterpretedArray` (an ndarray view of the same memory: the
launcher stages it like any numpy array and the interpreter reads it in place); a device
array (torch, cupy, DeviceArray: anything with `__cuda_array_interface__`) becomes a
`TensorWrapper` around it. Both carry `_tritium_dtype`, the name of the element type the
kernel is specialised for ("float8_e4m3fn": dtype_names.py's vocabulary), which
array_kinds.py reads in place of the array's own dtype. torch's own
fp8 tensors (`torch.float8_e4m3fn`, `torch.float8_e5m2`) need no wrapper.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tritium.dtype_names import DTYPE_TO_TRITON
from tritium.errors import ArgumentError


class ReinterpretedArray(np.ndarray):
    """A numpy view whose elements a kernel sees as `_tritium_dtype` ("float8_e4m3fn", ...)."""

    _tritium_dtype: str | None = None

    def __array_finalize__(self, obj) -> None:
        self._tritium_dtype = getattr(obj, "_tritium_dtype", None)


class TensorWrapper:
    """A device array whose elements a kernel sees as `dtype` (upstream's TensorWrapper)."""

    def __init__(self, base: Any, dtype: Any, name: str):
        self.base, self.dtype, self._tritium_dtype = base, dtype, name
        self.shape = tuple(base.shape)

    @property
    def __cuda_array_interface__(self) -> dict:
        return self.base.__cuda_array_interface__

    def data_ptr(self) -> int:
        return self.base.__cuda_array_interface__["data"][0]

    def __repr__(self) -> str:
        return f"TensorWrapper({self.base!r}, dtype={self.dtype})"


_NAMES = {sig: name for name, sig in reversed(DTYPE_TO_TRITON.items())}  # "fp8e4nv" -> its name


def _itemsize(array: Any) -> int:
    dtype = getattr(array, "dtype", None)
    size = getattr(dtype, "itemsize", None)
    if size is None:
        size = np.dtype(array.__cuda_array_interface__["typestr"]).itemsize
    return int(size)


def reinterpret(array: Any, dtype: Any):
    """`array` with its elements read as `dtype` (a `tl` dtype of the same byte size)."""
    sig = getattr(dtype, "signature", None)
    bits = getattr(dtype, "primitive_bitwidth", None)
    name = _NAMES.get(sig)
    if name is None or bits is None:
        raise ArgumentError(
            f"reinterpret needs a tl scalar dtype (tl.float8e4nv, ...), got {dtype!r}"
        )
    if isinstance(array, TensorWrapper | ReinterpretedArray):
        array = array.base if isinstance(array, TensorWrapper) else array.view(np.ndarray)
    size = _itemsize(array)
    if size * 8 != bits:
        raise ArgumentError(
            f"reinterpret: elements of {size} bytes cannot be read as {dtype} ({bits // 8} bytes)"
        )
    if isinstance(array, np.ndarray):
        view = array.view(ReinterpretedArray)
        view._tritium_dtype = name
        return view
    if hasattr(array, "__cuda_array_interface__"):
        return TensorWrapper(array, dtype, name)
    raise ArgumentError(
        f"reinterpret takes a numpy array or a device array, got {type(array).__name__}"
    )


__all__ = ["ReinterpretedArray", "TensorWrapper", "reinterpret"]
