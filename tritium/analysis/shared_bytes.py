"""Bytes in shared memory: what one element of a tensor takes, and buffer alignment.

    element_bytes(tensor<64xf16>) = 2     element_bytes(tensor<64xi1>) = 1 (a byte)
    element_bytes(tensor<64x!tt.ptr<f32>>) = 8                align(20) = 32

Every buffer (and every operand's part of one) starts 16-byte aligned, so 16-byte
`st/ld.shared.v4` can reach any of them.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute

from tritium.ir.types import PointerType, element_type

ALIGN = 16


def align(n: int, a: int = ALIGN) -> int:
    return (n + a - 1) // a * a


def element_bytes(t: Attribute) -> int:
    """Bytes one element of `t` takes in shared memory (i1 as a byte, pointers 8)."""
    e = element_type(t)
    if isinstance(e, PointerType):
        return 8
    if isinstance(e, IntegerType):
        return max(1, e.width.data // 8)
    width = getattr(e, "bitwidth", None)
    if width is None:
        raise NotImplementedError(f"no shared-memory size for {e}")
    return width // 8


__all__ = ["ALIGN", "align", "element_bytes"]
