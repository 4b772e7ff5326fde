"""`tt` ops that move elements between positions of tensors: `tt.join`, `tt.split`,
`tt.cat`, `tt.gather`, `tt.histogram`, in upstream Triton 3.6's printed syntax:

    %j = tt.join %a, %b : tensor<64xf32> -> tensor<64x2xf32>
    %l, %r = tt.split %j : tensor<64x2xf32> -> tensor<64xf32>
    %c = tt.cat %a, %b : tensor<64xf32> -> tensor<128xf32>
    %g = tt.gather %src[%idx] {axis = 0 : i32} : (tensor<32xf32>, tensor<64xi32>) -> tensor<64xf32>
    %h = tt.histogram %x, %mask : tensor<128xi32> -> tensor<16xi32>

`tt.join` adds a minor dimension of size 2 (`lhs` at 0, `rhs` at 1), `tt.split` takes
it apart again, `tt.cat` concatenates along dim 0, `tt.gather` reads
`src[..., idx[i...], ...]` along `axis` (the result has the indices' shape) and
`tt.histogram` counts the values `0 <= x < bins` (of the elements whose mask is true)
into `bins` counters.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, TensorType, UnitAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure

from tritium.ir.tt_common import _check, i32_attr
from tritium.ir.types import element_type, i1, is_int, is_tensor, shape_of, with_element


def _parse_types(parser: Parser) -> tuple[Attribute, Attribute]:
    parser.parse_punctuation(":")
    src = parser.parse_type()
    parser.parse_punctuation("->")
    return src, parser.parse_type()


def _print_types(printer: Printer, src: Attribute, result: Attribute) -> None:
    printer.print_string(" : ")
    printer.print_attribute(src)
    printer.print_string(" -> ")
    printer.print_attribute(result)


class _BinaryShapeOp(IRDLOperation):
    """`lhs, rhs` of one type -> `result`: `$lhs, $rhs attr-dict : type($lhs) -> type($result)`."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def _verify_operands(self) -> None:
        _check(self.lhs.type == self.rhs.type, f"{self.name}: operand types differ")
        _check(
            element_type(self.result.type) == element_type(self.lhs.type),
            f"{self.name}: element types differ",
        )

    @classmethod
    def parse(cls, parser: Parser):
        lhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        rhs = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        t, rt = _parse_types(parser)
        op = cls(parser.resolve_operand(lhs, t), parser.resolve_operand(rhs, t), rt)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.lhs)
        printer.print_string(", ")
        printer.print_operand(self.rhs)
        printer.print_op_attributes(self.attributes)
        _print_types(printer, self.lhs.type, self.result.type)


@irdl_op_definition
class JoinOp(_BinaryShapeOp):
    """Joins two tensors along a new minor dim: `result[..., 0] = lhs`, `[..., 1] = rhs`."""

    name = "tt.join"

    def verify_(self) -> None:
        self._verify_operands()
        want = (*shape_of(self.lhs.type), 2)
        _check(
            shape_of(self.result.type) == want,
            f"tt.join: result shape must be {list(want)}, got {list(shape_of(self.result.type))}",
        )


@irdl_op_definition
class CatOp(_BinaryShapeOp):
    """Concatenates along dim 0: `result[:n] = lhs`, `result[n:] = rhs`."""

    name = "tt.cat"

    def verify_(self) -> None:
        self._verify_operands()
        s = shape_of(self.lhs.type)
        _check(len(s) >= 1, "tt.cat: operands must have rank >= 1")
        want = (2 * s[0], *s[1:])
        _check(
            shape_of(self.result.type) == want,
            f"tt.cat: result shape must be {list(want)}, got {list(shape_of(self.result.type))}",
        )


@irdl_op_definition
class SplitOp(IRDLOperation):
    """Splits off the minor dim of size 2: `outLHS = src[..., 0]`, `outRHS = src[..., 1]`."""

    name = "tt.split"
    src = operand_def(TensorType)
    outLHS = result_def(TensorType)
    outRHS = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, src: SSAValue, result_type: Attribute):
        super().__init__(operands=[src], result_types=[result_type, result_type])

    def verify_(self) -> None:
        s = shape_of(self.src.type)
        _check(len(s) >= 2 and s[-1] == 2, "tt.split: the operand's last dim must have size 2")
        _check(self.outLHS.type == self.outRHS.type, "tt.split: result types differ")
        _check(shape_of(self.outLHS.type) == s[:-1], "tt.split: result shape is wrong")
        _check(
            element_type(self.outLHS.type) == element_type(self.src.type),
            "tt.split: element types differ",
        )

    @classmethod
    def parse(cls, parser: Parser):
        src = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        t, rt = _parse_types(parser)
        op = cls(parser.resolve_operand(src, t), rt)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        printer.print_op_attributes(self.attributes)
        _print_types(printer, self.src.type, self.outLHS.type)


@irdl_op_definition
class GatherOp(IRDLOperation):
    """`result[i] = src[i with i[axis] replaced by indices[i]]`; result shape = indices'."""

    name = "tt.gather"
    src = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr)
    efficient_layout = opt_prop_def(UnitAttr)
    traits = traits_def(Pure())

    def __init__(self, src: SSAValue, indices: SSAValue, axis: int, result_type: Attribute):
        super().__init__(
            operands=[src, indices],
            result_types=[result_type],
            properties={"axis": i32_attr(axis)},
        )

    @property
    def axis_int(self) -> int:
        return self.axis.value.data

    def verify_(self) -> None:
        s, i, r = shape_of(self.src.type), shape_of(self.indices.type), shape_of(self.result.type)
        ax = self.axis_int
        _check(len(s) == len(i), "tt.gather: source and indices must have the same rank")
        _check(0 <= ax < len(s), f"tt.gather: axis {ax} out of range for rank {len(s)}")
        _check(is_int(self.indices.type), "tt.gather: indices must be integers")
        _check(r == i, "tt.gather: the result must have the indices' shape")
        _check(
            element_type(self.result.type) == element_type(self.src.type),
            "tt.gather: the result must have the source's element type",
        )
        for d, (a, b) in enumerate(zip(s, i)):
            _check(
                d == ax or b <= a,
                f"tt.gather: indices dim {d} ({b}) is larger than the source's ({a})",
            )

    @classmethod
    def parse(cls, parser: Parser):
        src = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        idx = parser.parse_unresolved_operand()
        parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        ft = parser.parse_type()
        ins, outs = getattr(ft, "inputs", None), getattr(ft, "outputs", None)
        if ins is None or len(ins.data) != 2 or len(outs.data) != 1:
            parser.raise_error("tt.gather: expected (src type, indices type) -> result type", pos)
        axis = attrs.pop("axis", None)
        if not isinstance(axis, IntegerAttr):
            parser.raise_error("tt.gather: missing {axis = N : i32}", pos)
        efficient = attrs.pop("efficient_layout", None)
        op = cls(
            parser.resolve_operand(src, ins.data[0]),
            parser.resolve_operand(idx, ins.data[1]),
            axis.value.data,
            outs.data[0],
        )
        if efficient is not None:
            op.efficient_layout = UnitAttr()
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        printer.print_string("[")
        printer.print_operand(self.indices)
        printer.print_string("]")
        attrs = {"axis": self.axis}
        if self.efficient_layout is not None:
            attrs["efficient_layout"] = UnitAttr()
        printer.print_op_attributes(attrs | dict(self.attributes))
        printer.print_string(" : (")
        printer.print_attribute(self.src.type)
        printer.print_string(", ")
        printer.print_attribute(self.indices.type)
        printer.print_string(") -> ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class HistogramOp(IRDLOperation):
    """Counts of the values `0 <= x < bins` among `src`'s (masked-on) elements; `bins` is
    the result's length."""

    name = "tt.histogram"
    src = operand_def(TensorType)
    mask = opt_operand_def()
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, src: SSAValue, result_type: Attribute, mask: SSAValue | None = None):
        super().__init__(operands=[src, [mask] if mask is not None else []],
                         result_types=[result_type])  # fmt: skip

    def verify_(self) -> None:
        _check(
            is_int(self.src.type) and len(shape_of(self.src.type)) == 1,
            "tt.histogram: the operand must be a 1D integer tensor",
        )
        _check(
            is_int(self.result.type) and len(shape_of(self.result.type)) == 1,
            "tt.histogram: the result must be a 1D integer tensor",
        )
        if self.mask is not None:
            m = self.mask.type
            _check(
                element_type(m) == i1 and (not is_tensor(m) or shape_of(m) == shape_of(self.src.type)),
                "tt.histogram: the mask must be i1 of the operand's shape",
            )

    @classmethod
    def parse(cls, parser: Parser):
        src = parser.parse_unresolved_operand()
        mask = None
        if parser.parse_optional_punctuation(","):
            mask = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        t, rt = _parse_types(parser)
        m = parser.resolve_operand(mask, with_element(t, i1)) if mask is not None else None
        op = cls(parser.resolve_operand(src, t), rt, m)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        if self.mask is not None:
            printer.print_string(", ")
            printer.print_operand(self.mask)
        printer.print_op_attributes(self.attributes)
        _print_types(printer, self.src.type, self.result.type)


__all__ = ["CatOp", "GatherOp", "HistogramOp", "JoinOp", "SplitOp"]
