"""`arith` as tritium uses it: xDSL's dialect with its scalar-only ops made tensor-aware.

xDSL 0.74 falls short here: its `arith.cmpi` / `arith.cmpf` always produce a scalar `i1`,
its `arith.select` only takes a scalar condition, and its integer casts (`extsi`, `extui`,
`trunci`, `sitofp`, `uitofp`, `fptosi`, `fptoui`) only take scalars, while MLIR (and
upstream Triton's IR) compare, select and cast whole tensors elementwise:

    %m = arith.cmpi slt, %offs, %n : tensor<1024xi32>           // -> tensor<1024xi1>
    %v = arith.select %m, %a, %b : tensor<1024xi1>, tensor<1024xf32>

The replacements keep xDSL's names, properties and printed form for the scalar case, so
every other arith op, pattern and helper of xDSL still applies. `arith.remf`, missing from
xDSL, is added.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects import arith as x_arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from tritium.ir.types import (
    element_type,
    i1,
    is_float,
    is_int,
    is_ptr,
    is_tensor,
    shape_of,
    with_element,
)

CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CMPF_PREDICATES = (
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
)  # fmt: skip


class _Compare(IRDLOperation):
    PREDICATES: ClassVar[tuple[str, ...]] = ()
    T: ClassVar = VarConstraint("T", AnyAttr())
    predicate = prop_def(IntegerAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue, rhs: SSAValue, predicate: str | int):
        if isinstance(predicate, str):
            predicate = self.PREDICATES.index(predicate)
        super().__init__(
            operands=[lhs, rhs],
            result_types=[with_element(lhs.type, i1)],
            properties={"predicate": IntegerAttr(predicate, 64)},
        )

    @property
    def predicate_name(self) -> str:
        return self.PREDICATES[self.predicate.value.data]

    def verify_(self) -> None:
        if self.result.type != with_element(self.lhs.type, i1):
            raise VerifyException(f"{self.name}: result must be i1 of the operands' shape")

    @classmethod
    def parse(cls, parser: Parser):
        pred = parser.parse_identifier()
        if pred not in cls.PREDICATES:
            parser.raise_error(f"unknown predicate {pred}")
        parser.parse_punctuation(",")
        a = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        b = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        op = cls(parser.resolve_operand(a, t), parser.resolve_operand(b, t), pred)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.predicate_name}, ")
        printer.print_list([self.lhs, self.rhs], printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.lhs.type)


@irdl_op_definition
class CmpiOp(_Compare):
    name = "arith.cmpi"
    PREDICATES: ClassVar[tuple[str, ...]] = CMPI_PREDICATES

    def verify_(self) -> None:
        super().verify_()
        if not (is_int(self.lhs.type) or is_ptr(self.lhs.type)):
            raise VerifyException("arith.cmpi: operands must be integers")


@irdl_op_definition
class CmpfOp(_Compare):
    name = "arith.cmpf"
    PREDICATES: ClassVar[tuple[str, ...]] = CMPF_PREDICATES

    def verify_(self) -> None:
        super().verify_()
        if not is_float(self.lhs.type):
            raise VerifyException("arith.cmpf: operands must be floats")


@irdl_op_definition
class SelectOp(IRDLOperation):
    """`arith.select %c, %a, %b : T` (scalar condition) or `: tensor<..xi1>, T` (elementwise)."""

    name = "arith.select"
    T: ClassVar = VarConstraint("T", AnyAttr())
    cond = operand_def()
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())

    def __init__(self, cond: SSAValue, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[cond, lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        c = self.cond.type
        if element_type(c) != i1:
            raise VerifyException("arith.select: condition must be i1")
        if is_tensor(c) and shape_of(c) != shape_of(self.lhs.type):
            raise VerifyException("arith.select: condition shape differs from the values'")

    @classmethod
    def parse(cls, parser: Parser):
        names = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            names.append(parser.parse_unresolved_operand())
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        ct: Attribute = i1
        if parser.parse_optional_punctuation(","):
            ct, t = t, parser.parse_type()
        op = cls(*(parser.resolve_operand(n, ty) for n, ty in zip(names, (ct, t, t))))
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list([self.cond, self.lhs, self.rhs], printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        if isinstance(self.cond.type, TensorType):
            printer.print_attribute(self.cond.type)
            printer.print_string(", ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class RemFOp(x_arith.FloatingPointLikeBinaryOperation):
    """`arith.remf`: C's fmod (the remainder has the dividend's sign). Missing from xDSL 0.74."""

    name = "arith.remf"
    traits = traits_def(Pure())


class _Cast(IRDLOperation):
    """`arith.<cast> %x : T to U` on scalars or tensors (shapes must match)."""

    SRC: ClassVar[str] = "int"
    DST: ClassVar[str] = "int"
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        a, b = self.input.type, self.result.type
        kinds = {"int": is_int, "float": is_float}
        if not kinds[self.SRC](a) or not kinds[self.DST](b):
            raise VerifyException(f"{self.name}: expected {self.SRC} -> {self.DST}, got {a} -> {b}")
        if shape_of(a) != shape_of(b) or is_tensor(a) != is_tensor(b):
            raise VerifyException(f"{self.name}: shapes differ ({a} -> {b})")


@irdl_op_definition
class ExtSIOp(_Cast):
    name = "arith.extsi"


@irdl_op_definition
class ExtUIOp(_Cast):
    name = "arith.extui"


@irdl_op_definition
class TruncIOp(_Cast):
    name = "arith.trunci"


@irdl_op_definition
class SIToFPOp(_Cast):
    name = "arith.sitofp"
    DST: ClassVar[str] = "float"


@irdl_op_definition
class UIToFPOp(_Cast):
    name = "arith.uitofp"
    DST: ClassVar[str] = "float"


@irdl_op_definition
class FPToSIOp(_Cast):
    name = "arith.fptosi"
    SRC: ClassVar[str] = "float"


@irdl_op_definition
class FPToUIOp(_Cast):
    name = "arith.fptoui"
    SRC: ClassVar[str] = "float"


_REPLACED = {
    op.name: op
    for op in (
        CmpiOp,
        CmpfOp,
        SelectOp,
        ExtSIOp,
        ExtUIOp,
        TruncIOp,
        SIToFPOp,
        UIToFPOp,
        FPToSIOp,
        FPToUIOp,
    )
}

Arith = Dialect(
    "arith",
    [_REPLACED.get(op.name, op) for op in x_arith.Arith.operations] + [RemFOp],
    list(x_arith.Arith.attributes),
)

# Re-export xDSL's other arith ops so callers need one import.
globals().update(
    {
        name: obj
        for name, obj in vars(x_arith).items()
        if isinstance(obj, type)
        and issubclass(obj, IRDLOperation)
        and getattr(obj, "name", None) not in _REPLACED
    }
)


def constant_value(value: SSAValue) -> int | float | None:
    """The number `value` always holds, if it is an `arith.constant` scalar or a splat
    dense tensor constant (i1 constants read as 0/1); else None."""
    op = value.owner
    if not isinstance(op, x_arith.ConstantOp):
        return None
    attr = op.value
    if isinstance(attr, IntegerAttr):
        return _bool01(attr.value.data, attr.type)
    if isinstance(attr, FloatAttr):
        return attr.value.data
    if isinstance(attr, DenseIntOrFPElementsAttr):
        v = _splat_value(attr)
        if isinstance(v, tuple):
            return None
        return _bool01(v, attr.get_element_type())
    return None


def same_bytes_value(attr: DenseIntOrFPElementsAttr):
    """The value of `attr`'s elements when they all have the same bytes (the usual splat,
    NaN included), decided without unpacking a tensor's worth of Python numbers; else
    (or for no elements) None."""
    data = attr.data.data
    n = len(attr)
    if n == 0:
        return None
    size = len(data) // n
    if data != data[:size] * n:
        return None
    return attr.get_element_type().unpack(data[:size], 1)[0]


def _splat_value(attr: DenseIntOrFPElementsAttr):
    """The value every element of `attr` holds (None when they differ, or for NaN, which
    differs from itself). Elements with identical bytes (the usual splat) are decided by
    comparing bytes (same_bytes_value)."""
    v = same_bytes_value(attr)
    if v is not None:
        return None if v != v else v  # NaN: as the elementwise comparison below decides
    if len(attr) == 0:
        return None
    vals = attr.get_values()
    return vals[0] if all(x == vals[0] for x in vals) else None


def _bool01(v, t: Attribute):
    if isinstance(t, IntegerType) and t.width.data == 1 and isinstance(v, int):
        return 1 if v else 0
    return v
