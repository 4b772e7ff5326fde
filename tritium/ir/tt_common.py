"""Shared pieces of the `tt` dialect: enum spellings and verification helpers."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    IntegerAttr,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException

from tritium.ir.types import (
    PointerType,
    element_type,
    encoding_of,
    is_tensor,
    shape_of,
)

AXES = ("x", "y", "z")
CACHE_MODIFIERS = ("none", "ca", "cg", "wb", "cs", "wt", "cv")
EVICTION_POLICIES = ("evict_normal", "evict_first", "evict_last")
INPUT_PRECISIONS = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")
ROUNDING_MODES = ("rtz", "rtne")


def i32_attr(v: int) -> IntegerAttr:
    return IntegerAttr(v, 32)


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise VerifyException(msg)


def _same_shape_encoding(a: Attribute, b: Attribute, what: str) -> None:
    # the messages print both types: only build them on a failure (verification runs often)
    if shape_of(a) != shape_of(b):
        raise VerifyException(f"{what}: shapes differ ({a} vs {b})")
    if is_tensor(a) != is_tensor(b):
        raise VerifyException(f"{what}: tensor vs scalar ({a} vs {b})")
    if encoding_of(a) != encoding_of(b):
        raise VerifyException(f"{what}: layouts differ ({a} vs {b})")


def _with_elem(t: Attribute, e: Attribute) -> Attribute:
    if isinstance(t, TensorType):
        return TensorType(e, t.get_shape(), t.encoding)
    return e


def _pointee_type(t: Attribute) -> Attribute:
    p = element_type(t)
    if not isinstance(p, PointerType):
        raise VerifyException(f"expected a pointer type, got {t}")
    return _with_elem(t, p.pointee)
