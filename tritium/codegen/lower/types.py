"""TTGIR scalar types -> LLVM types, and Triton's signature strings.

f32 -> float    f16 -> half    bf16 -> bfloat    i1 -> i1 (i8 in memory)
f8E4M3FN / f8E5M2 -> i8 (the byte; as upstream, LLVM has no fp8 type)
!tt.ptr<f32> -> ptr addrspace(1)                 signature: "*fp32", "i32", ...
"""

from __future__ import annotations

import struct

from llvmlite import ir
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
)
from xdsl.ir import Attribute

from tritium.ir.types import Float8Types, PointerType, element_type


def _bf16_bits(value: float) -> int:
    """Round a Python float to bfloat16 (nearest even), as raw bits."""
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    if value != value:  # NaN: keep it quiet
        return (bits >> 16) | 0x40
    bits += 0x7FFF + ((bits >> 16) & 1)
    return (bits >> 16) & 0xFFFF


class BFloatType(ir.types._BaseFloatType):
    """LLVM's `bfloat` (llvmlite has no such type)."""

    null = "0.0"
    intrinsic_name = "bf16"

    def __str__(self) -> str:
        return "bfloat"

    def format_constant(self, value: float) -> str:
        return f"0xR{_bf16_bits(float(value)):04X}"


BFloatType._create_instance()

i1 = ir.IntType(1)
i8 = ir.IntType(8)
i16 = ir.IntType(16)
i32 = ir.IntType(32)
i64 = ir.IntType(64)
f16 = ir.HalfType()
bf16 = BFloatType()
f32 = ir.FloatType()
f64 = ir.DoubleType()
void = ir.VoidType()


def ptr(address_space: int = 1) -> ir.PointerType:
    return ir.PointerType(addrspace=address_space)


def llvm_type(t: Attribute) -> ir.Type:
    """The LLVM type of one register of a value of type `t` (its element type)."""
    e = element_type(t)
    if isinstance(e, IntegerType):
        return ir.IntType(e.width.data)
    if isinstance(e, Float32Type):
        return f32
    if isinstance(e, Float16Type):
        return f16
    if isinstance(e, BFloat16Type):
        return bf16
    if isinstance(e, Float64Type):
        return f64
    if isinstance(e, Float8Types):
        return i8
    if isinstance(e, PointerType):
        return ptr(e.address_space.data)
    raise NotImplementedError(f"no LLVM type for {e}")


def memory_type(t: Attribute) -> ir.Type:
    """The LLVM type an element of type `t` has in memory (i1 is stored as a byte)."""
    ty = llvm_type(t)
    return i8 if ty == i1 else ty


def byte_size(ty: ir.Type) -> int:
    if isinstance(ty, ir.IntType):
        return max(1, ty.width // 8)
    if isinstance(ty, ir.HalfType | BFloatType):
        return 2
    if isinstance(ty, ir.FloatType):
        return 4
    if isinstance(ty, ir.DoubleType | ir.PointerType):
        return 8
    raise NotImplementedError(f"no byte size for {ty}")


def is_float_type(ty: ir.Type) -> bool:
    return isinstance(ty, ir.HalfType | BFloatType | ir.FloatType | ir.DoubleType)


_SIG_FLOATS = {Float16Type: "fp16", BFloat16Type: "bf16", Float32Type: "fp32", Float64Type: "fp64"}
_SIG_FLOATS |= {Float8E4M3FNType: "fp8e4nv", Float8E5M2Type: "fp8e5"}


def signature_type(t: Attribute) -> str:
    """Triton's signature string for a kernel argument type: `*fp32`, `i32`, `fp16`, ..."""
    if isinstance(t, PointerType):
        return "*" + signature_type(t.pointee)
    if isinstance(t, IntegerType):
        return f"i{t.width.data}"
    for cls, name in _SIG_FLOATS.items():
        if isinstance(t, cls):
            return name
    raise NotImplementedError(f"no signature string for {t}")
