"""Types of the `tt` dialect and helpers over xDSL's builtin types.

`!tt.ptr<f32>` is a pointer to global memory (address space 1, omitted when printed, as
upstream does); `!tt.ptr<f16, 3>` names another address space. Tensors are xDSL's builtin
`TensorType`, whose optional encoding carries a TritonGPU layout after
convert-triton-to-tritongpu (`tensor<1024xf32, #blocked>`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3B11FNUZType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntAttr,
    IntegerType,
    NoneAttr,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer

GLOBAL_ADDRESS_SPACE = 1
SHARED_ADDRESS_SPACE = 3


@irdl_attr_definition
class PointerType(ParametrizedAttribute, TypeAttribute):
    """`!tt.ptr<pointee[, address_space]>`."""

    name = "tt.ptr"

    pointee: Attribute
    address_space: IntAttr

    def __init__(self, pointee: Attribute, address_space: int = GLOBAL_ADDRESS_SPACE):
        super().__init__(pointee, IntAttr(address_space))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            pointee = parser.parse_type()
            space = GLOBAL_ADDRESS_SPACE
            if parser.parse_optional_punctuation(","):
                space = parser.parse_integer(allow_boolean=False, allow_negative=False)
        return (pointee, IntAttr(space))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.pointee)
            if self.address_space.data != GLOBAL_ADDRESS_SPACE:
                printer.print_string(f", {self.address_space.data}")


i1 = IntegerType(1)
i8 = IntegerType(8)
i16 = IntegerType(16)
i32 = IntegerType(32)
i64 = IntegerType(64)
f16 = Float16Type()
bf16 = BFloat16Type()
f32 = Float32Type()
f64 = Float64Type()
f8E4M3FN = Float8E4M3FNType()  # tl.float8e4nv
f8E5M2 = Float8E5M2Type()  # tl.float8e5
f8E4M3B11FNUZ = Float8E4M3B11FNUZType()  # tl.float8e4b15
f8E4M3FNUZ = Float8E4M3FNUZType()  # tl.float8e4b8
f8E5M2FNUZ = Float8E5M2FNUZType()  # tl.float8e5b16

FloatTypes = (Float16Type, BFloat16Type, Float32Type, Float64Type)
# fp8 formats; in LLVM (and in memory) an fp8 element is an i8 of its bits
Float8Types = (
    Float8E4M3FNType,
    Float8E5M2Type,
    Float8E4M3B11FNUZType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
)


def tensor(
    shape: Sequence[int], element: Attribute, encoding: Attribute | None = None
) -> TensorType:
    return TensorType(element, list(shape), encoding if encoding is not None else NoneAttr())


def is_tensor(t: Attribute) -> bool:
    return isinstance(t, TensorType)


def element_type(t: Attribute) -> Attribute:
    """The scalar type of `t`: its element type if it is a tensor, else itself."""
    return t.element_type if isinstance(t, TensorType) else t


def shape_of(t: Attribute) -> tuple[int, ...]:
    """The shape of a tensor type; `()` for a scalar."""
    return t.get_shape() if isinstance(t, TensorType) else ()


def encoding_of(t: Attribute) -> Attribute | None:
    if isinstance(t, TensorType) and not isinstance(t.encoding, NoneAttr):
        return t.encoding
    return None


def with_element(t: Attribute, element: Attribute) -> Attribute:
    """`t` with its scalar type replaced; keeps shape and encoding."""
    if isinstance(t, TensorType):
        return TensorType(element, t.get_shape(), t.encoding)
    return element


def with_shape(t: Attribute, shape: Sequence[int], encoding: Attribute | None = None) -> Attribute:
    return tensor(shape, element_type(t), encoding)


def with_encoding(t: Attribute, encoding: Attribute | None) -> Attribute:
    if isinstance(t, TensorType):
        return TensorType(
            t.element_type, t.get_shape(), encoding if encoding is not None else NoneAttr()
        )
    return t


def is_int(t: Attribute) -> bool:
    return isinstance(element_type(t), IntegerType)


def is_float(t: Attribute) -> bool:
    return isinstance(element_type(t), FloatTypes)


def is_fp8(t: Attribute) -> bool:
    return isinstance(element_type(t), Float8Types)


def is_ptr(t: Attribute) -> bool:
    return isinstance(element_type(t), PointerType)


def int_width(t: Attribute) -> int:
    e = element_type(t)
    assert isinstance(e, IntegerType)
    return e.width.data


def is_signless(t: Attribute) -> bool:
    e = element_type(t)
    return isinstance(e, IntegerType) and e.signedness.data == Signedness.SIGNLESS


def bitwidth(t: Attribute) -> int:
    """Size in bits of a scalar type (pointers are 64-bit)."""
    e = element_type(t)
    if isinstance(e, IntegerType):
        return e.width.data
    if isinstance(e, Float8Types):
        return 8
    if isinstance(e, Float16Type | BFloat16Type):
        return 16
    if isinstance(e, Float32Type):
        return 32
    if isinstance(e, Float64Type):
        return 64
    if isinstance(e, PointerType):
        return 64
    raise TypeError(f"no bit width for {e}")


def same_shape(a: Attribute, b: Attribute) -> bool:
    return shape_of(a) == shape_of(b)
