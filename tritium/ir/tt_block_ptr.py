"""Block pointers: `tt.make_tensor_ptr` and `tt.advance`, in upstream Triton 3.x's syntax.

    %p = tt.make_tensor_ptr %base, [%M, %K], [%sm, %c1_i64], [%om, %c0_i32]
           {order = array<i32: 1, 0>} : <tensor<128x64xf16>>
    %q = tt.advance %p, [%c0_i32, %c64_i32] : <tensor<128x64xf16>>
    %x = tt.load %q {boundaryCheck = array<i32: 0, 1>, padding = 1 : i32}
           : !tt.ptr<tensor<128x64xf16>>

A block pointer (`!tt.ptr<tensor<128x64xf16>>`) names a 128x64 window at `offsets` of a
`shape`-sized tensor with `strides` (in elements) at `base`. `tt.load` / `tt.store` through
one read or write the window; `boundaryCheck` lists the dims checked against `shape`
(out-of-bounds elements read as `padding`: 1 zero, 2 NaN; writes are skipped). The
`rewrite-tensor-pointer` pass turns all of it into ordinary pointer tensors and masks.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, TensorType, i32, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure

from tritium.ir.tt_common import _check
from tritium.ir.types import PointerType

PADDING = {"zero": 1, "nan": 2}  # tt.load's `padding` property
PADDING_ZERO, PADDING_NAN = PADDING["zero"], PADDING["nan"]


def block_ptr_type(base: Attribute, block_shape: Sequence[int]) -> PointerType:
    """`!tt.ptr<tensor<block_shape x pointee>>` for a scalar pointer type `base`."""
    return PointerType(TensorType(base.pointee, list(block_shape)), base.address_space.data)


def is_block_ptr(t: Attribute) -> bool:
    return isinstance(t, PointerType) and isinstance(t.pointee, TensorType)


def _parse_list(parser: Parser, ty: Attribute) -> list[SSAValue]:
    parser.parse_punctuation("[")
    out: list[SSAValue] = []
    if not parser.parse_optional_punctuation("]"):
        out.append(parser.resolve_operand(parser.parse_unresolved_operand(), ty))
        while parser.parse_optional_punctuation(","):
            out.append(parser.resolve_operand(parser.parse_unresolved_operand(), ty))
        parser.parse_punctuation("]")
    return out


def _print_list(printer: Printer, values) -> None:
    printer.print_string("[")
    printer.print_list(values, printer.print_operand)
    printer.print_string("]")


def _parse_short_ptr(parser: Parser) -> PointerType:
    """The result type as upstream prints it: `<tensor<128x64xf16>>` (or `!tt.ptr<...>`)."""
    parser.parse_punctuation(":")
    if parser.parse_optional_punctuation("<"):
        pointee = parser.parse_type()
        parser.parse_punctuation(">")
        return PointerType(pointee)
    t = parser.parse_type()
    if not is_block_ptr(t):
        parser.raise_error(f"expected a block pointer type, got {t}")
    return t


def _print_short_ptr(printer: Printer, t: PointerType) -> None:
    printer.print_string(" : <")
    printer.print_attribute(t.pointee)
    printer.print_string(">")


@irdl_op_definition
class MakeTensorPtrOp(IRDLOperation):
    """`tt.make_tensor_ptr %base, [shape...], [strides...], [offsets...] {order} : <tensor<...>>`"""

    name = "tt.make_tensor_ptr"
    base = operand_def()
    shape = var_operand_def()
    strides = var_operand_def()
    offsets = var_operand_def()
    result = result_def()
    order = prop_def(DenseArrayBase)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure())

    def __init__(
        self,
        base: SSAValue,
        shape: Sequence[SSAValue],
        strides: Sequence[SSAValue],
        offsets: Sequence[SSAValue],
        block_shape: Sequence[int],
        order: Sequence[int],
    ):
        super().__init__(
            operands=[base, list(shape), list(strides), list(offsets)],
            result_types=[block_ptr_type(base.type, block_shape)],
            properties={"order": DenseArrayBase.from_list(i32, list(order))},
        )

    @property
    def order_list(self) -> list[int]:
        return list(self.order.get_values())

    def verify_(self) -> None:
        _check(
            isinstance(self.base.type, PointerType), "tt.make_tensor_ptr: base must be a pointer"
        )
        _check(is_block_ptr(self.result.type), "tt.make_tensor_ptr: result must be a block pointer")
        rank = len(self.result.type.pointee.get_shape())
        for what, vals, ty in (("shape", self.shape, i64), ("strides", self.strides, i64),
                               ("offsets", self.offsets, i32)):  # fmt: skip
            _check(
                len(vals) == rank, f"tt.make_tensor_ptr: {rank} {what} expected, got {len(vals)}"
            )
            _check(all(v.type == ty for v in vals), f"tt.make_tensor_ptr: {what} must be {ty}")
        _check(
            sorted(self.order_list) == list(range(rank)),
            f"tt.make_tensor_ptr: order must be a permutation of 0..{rank - 1}",
        )
        _check(
            self.result.type.pointee.element_type == self.base.type.pointee,
            "tt.make_tensor_ptr: the block's element type must be the base's pointee",
        )

    @classmethod
    def parse(cls, parser: Parser):
        base = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        shape = _parse_list(parser, i64)
        parser.parse_punctuation(",")
        strides = _parse_list(parser, i64)
        parser.parse_punctuation(",")
        offsets = _parse_list(parser, i32)
        attrs = parser.parse_optional_attr_dict()
        rt = _parse_short_ptr(parser)
        base_v = parser.resolve_operand(base, PointerType(rt.pointee.element_type))
        order = attrs.pop("order", None)
        op = cls(base_v, shape, strides, offsets, rt.pointee.get_shape(), [])
        if order is not None:
            op.properties["order"] = order
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.base)
        for vals in (self.shape, self.strides, self.offsets):
            printer.print_string(", ")
            _print_list(printer, vals)
        printer.print_op_attributes({"order": self.order, **self.attributes})
        _print_short_ptr(printer, self.result.type)


@irdl_op_definition
class AdvanceOp(IRDLOperation):
    """`tt.advance %ptr, [offsets...] : <tensor<...>>`: the window moved by `offsets`."""

    name = "tt.advance"
    ptr = operand_def()
    offsets = var_operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, ptr: SSAValue, offsets: Sequence[SSAValue]):
        super().__init__(operands=[ptr, list(offsets)], result_types=[ptr.type])

    def verify_(self) -> None:
        _check(is_block_ptr(self.ptr.type), "tt.advance: operand must be a block pointer")
        rank = len(self.ptr.type.pointee.get_shape())
        _check(len(self.offsets) == rank, f"tt.advance: {rank} offsets expected")
        _check(all(v.type == i32 for v in self.offsets), "tt.advance: offsets must be i32")
        _check(self.result.type == self.ptr.type, "tt.advance: result type must be the operand's")

    @classmethod
    def parse(cls, parser: Parser):
        ptr = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        offsets = _parse_list(parser, i32)
        attrs = parser.parse_optional_attr_dict()
        t = _parse_short_ptr(parser)
        op = cls(parser.resolve_operand(ptr, t), offsets)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.ptr)
        printer.print_string(", ")
        _print_list(printer, self.offsets)
        printer.print_op_attributes(self.attributes)
        _print_short_ptr(printer, self.result.type)


__all__ = [
    "PADDING",
    "PADDING_NAN",
    "PADDING_ZERO",
    "AdvanceOp",
    "MakeTensorPtrOp",
    "block_ptr_type",
    "is_block_ptr",
]
