"""Values in the interpreter: numpy dtypes for TTIR element types, and conversions.

Values are numpy arrays (tensors) or numpy scalars (scalars) of a *representation*
dtype per element type:

    i1 -> bool      i8/i16/i32/i64 (and index) -> int8/16/32/64 (two's complement, wraps)
    f16 -> float16  bf16 -> float32 holding bf16-exact values   f32/f64 -> float32/64
    f8E4M3FN / f8E5M2 -> float32 holding the fp8 value exactly (fp8.py)
    !tt.ptr<T> -> int64 virtual address

In memory an element has a *storage* dtype (i1 is one byte, bf16 is the uint16 of its
bits, so `np.uint16` arrays hold bf16 tensors; fp8 is the uint8 of its bits). bf16 results
are rounded to nearest even after every op (`round_bf16`), fp8 ones to their format.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
)

from tritium.errors import TritiumError
from tritium.ir.types import Float8Types, PointerType, element_type, is_tensor, shape_of
from tritium.runtime.interpreter import fp8


def int_width(elem) -> int:
    if isinstance(elem, IntegerType):
        return elem.width.data
    if isinstance(elem, IndexType):
        return 64
    raise TritiumError(f"interpreter: expected an integer type, got {elem}")


INT_DTYPES = {1: np.dtype(bool), 8: np.dtype(np.int8), 16: np.dtype(np.int16)}
INT_DTYPES |= {32: np.dtype(np.int32), 64: np.dtype(np.int64)}


def np_dtype(elem) -> np.dtype:
    """The representation dtype of a scalar type (see the module docstring)."""
    if isinstance(elem, IntegerType | IndexType):
        w = int_width(elem)
        if w not in INT_DTYPES:
            raise TritiumError(f"interpreter: unsupported integer width i{w}")
        return INT_DTYPES[w]
    if isinstance(elem, Float16Type):
        return np.dtype(np.float16)
    if isinstance(elem, (BFloat16Type, Float32Type, *Float8Types)):
        return np.dtype(np.float32)
    if isinstance(elem, Float64Type):
        return np.dtype(np.float64)
    if isinstance(elem, PointerType):
        return np.dtype(np.int64)
    raise TritiumError(f"interpreter: unsupported element type {elem}")


def storage_dtype(elem) -> np.dtype:
    """The dtype of the element's bytes in memory (i1 is a byte, bf16 two bytes)."""
    if isinstance(elem, IntegerType) and elem.width.data == 1:
        return np.dtype(np.uint8)
    if isinstance(elem, BFloat16Type):
        return np.dtype(np.uint16)
    if isinstance(elem, Float8Types):
        return np.dtype(np.uint8)
    return np_dtype(elem)


def from_storage(raw: np.ndarray, elem):
    if isinstance(elem, Float8Types):
        return fp8.decode(raw, elem)
    if isinstance(elem, BFloat16Type):
        return (raw.astype(np.uint32) << 16).view(np.float32)
    if isinstance(elem, IntegerType) and elem.width.data == 1:
        return raw != 0
    return raw


def to_storage(value, elem) -> np.ndarray:
    value = np.asarray(value)
    if isinstance(elem, Float8Types):
        return fp8.encode(value, elem, saturate=False)
    if isinstance(elem, BFloat16Type):
        return (value.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return value.astype(storage_dtype(elem), copy=False)


def round_bf16(x):
    """float32 (or float64) -> float32 values rounded to nearest-even bf16; NaN stays NaN."""
    x = np.asarray(x, np.float32)
    b = x.view(np.uint32)
    r = (b + (np.uint32(0x7FFF) + ((b >> 16) & np.uint32(1)))) & np.uint32(0xFFFF0000)
    r = np.where(np.isnan(x), (b & np.uint32(0xFFFF0000)) | np.uint32(0x00400000), r)
    return r.view(np.float32)[()]


def rounding_for(t):
    """The per-op fix-up for results of type `t`: bf16 / fp8 rounding, else None."""
    e = element_type(t)
    if isinstance(e, Float8Types):
        return lambda x: fp8.round_to(x, e)[()]
    return round_bf16 if isinstance(e, BFloat16Type) else None


def to_bits(x, elem):
    """The raw bits of a value as the unsigned int of the type's width (i1: 0/1 as uint8)."""
    if isinstance(elem, BFloat16Type):
        return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)[()]
    if isinstance(elem, Float8Types):
        return fp8.encode(x, elem, saturate=False)[()]
    if isinstance(elem, IntegerType) and elem.width.data == 1:
        return np.asarray(x).astype(np.uint8)[()]
    dt = np_dtype(elem)
    return np.asarray(x, dt).view(np.dtype(f"uint{dt.itemsize * 8}"))[()]


def from_bits(bits, elem):
    if isinstance(elem, Float8Types):
        return fp8.decode(bits, elem)[()]
    if isinstance(elem, BFloat16Type):
        return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)[()]
    if isinstance(elem, IntegerType) and elem.width.data == 1:
        return (np.asarray(bits) & 1).astype(bool)[()]
    return np.asarray(bits).view(np_dtype(elem))[()]


def constant_value(attr, t):
    """The numpy value of an `arith.constant`'s attribute."""
    elem = element_type(t)
    if isinstance(attr, DenseIntOrFPElementsAttr):
        shape = shape_of(attr.type)
        raw = np.frombuffer(attr.data.data, storage_dtype(elem))
        n = int(np.prod(shape))
        if raw.size == 1 and n != 1:
            raw = np.full(n, raw[0], raw.dtype)
        value = from_storage(raw, elem).reshape(shape)
        return value if is_tensor(t) else value[()]
    if isinstance(attr, IntegerAttr):
        return wrap_int(attr.value.data, elem)
    if isinstance(attr, FloatAttr):
        v = np_dtype(elem).type(attr.value.data)
        post = rounding_for(elem)
        return post(v) if post is not None else v
    raise TritiumError(f"interpreter: unsupported constant {attr}")


def wrap_int(v: int, elem):
    """A Python int as the two's-complement value of the integer type `elem`."""
    w = int_width(elem)
    if w == 1:
        return np.bool_(v & 1)
    v &= (1 << w) - 1
    if v >= 1 << (w - 1):
        v -= 1 << w
    return np_dtype(elem).type(v)


def float_cast(src, dst, rounding: str = "rtne"):
    """Float -> float conversion, round-to-nearest-even or toward zero."""
    if isinstance(dst, Float8Types) and not isinstance(src, Float8Types):
        if rounding == "rtz":
            return lambda x: fp8.decode(fp8.encode_rtz(x, isinstance(src, Float16Type)), dst)[()]
        return lambda x: fp8.round_to(x, dst)[()]
    dt = np_dtype(dst)
    to_bf16 = isinstance(dst, BFloat16Type)
    narrowing = np_dtype(src).itemsize > dt.itemsize or (
        to_bf16 and not isinstance(src, BFloat16Type)
    )
    if not narrowing:
        return lambda x: np.asarray(x).astype(dt)[()]
    if rounding == "rtne":
        if to_bf16:
            return round_bf16
        return lambda x: np.asarray(x).astype(dt)[()]

    def toward_zero(x, dtype):
        x = np.asarray(x)
        y = x.astype(dtype)
        over = np.abs(y.astype(x.dtype)) > np.abs(x)
        return np.where(over, np.nextafter(y, dtype.type(0)), y)

    def rtz(x):
        if to_bf16:
            y = toward_zero(x, np.dtype(np.float32))
            b = y.view(np.uint32)
            kept = np.where(np.isnan(y), b | np.uint32(0x00400000), b) & np.uint32(0xFFFF0000)
            return kept.view(np.float32)[()]
        return toward_zero(x, dt)[()]

    return rtz
