"""`tt.print`: print values from the device (`tl.device_print`), in upstream Triton 3.x's syntax.

    tt.print " x: " {hex = false, isSigned = array<i32: 1>} : %x : tensor<128xi32>
    tt.print " a and b: " {hex = true, isSigned = array<i32: 0, 1>} : %a, %b : f32, i32
    tt.print " hello" {hex = false, isSigned = array<i32>}

`prefix` is the text printed before each value (the frontend makes it `" name: "`),
`hex` asks for hexadecimal, and `isSigned` has one entry per operand: 1 where an integer
operand prints as signed. On the GPU every element prints on a line of its own as
`pid (x, y, z) idx (i, j)<prefix><value>`. The op writes (to the output stream), so CSE,
DCE and loop-invariant code motion leave it where it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import BoolAttr, DenseArrayBase, IntegerAttr, IntegerType, StringAttr
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def, traits_def, var_operand_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryWriteEffect

from tritium.ir.tt_common import _check
from tritium.ir.types import i32

_PROPS = ("hex", "isSigned")


@irdl_op_definition
class PrintOp(IRDLOperation):
    """`tt.print "prefix" {hex = .., isSigned = array<i32: ..>} : %a, %b : ta, tb`."""

    name = "tt.print"
    args = var_operand_def()
    prefix = prop_def(StringAttr)
    hex = prop_def(IntegerAttr)
    isSigned = prop_def(DenseArrayBase)
    traits = traits_def(MemoryWriteEffect())

    def __init__(
        self,
        prefix: str,
        args: Sequence[SSAValue] = (),
        hex: bool = False,
        is_signed: Sequence[bool] | None = None,
    ):
        signed = [int(bool(s)) for s in (is_signed or [False] * len(args))]
        super().__init__(
            operands=[list(args)],
            properties={
                "prefix": StringAttr(prefix),
                "hex": BoolAttr.from_bool(bool(hex)),
                "isSigned": DenseArrayBase.from_list(i32, signed),
            },
        )

    @property
    def is_hex(self) -> bool:
        return bool(self.hex.value.data)

    @property
    def signed_list(self) -> list[bool]:
        return [bool(v) for v in self.isSigned.get_values()]

    def verify_(self) -> None:
        _check(
            isinstance(self.hex.type, IntegerType) and self.hex.type.width.data == 1,
            "tt.print: hex must be a bool",
        )
        _check(
            len(self.isSigned.get_values()) == len(self.args),
            "tt.print: isSigned needs one entry per operand",
        )

    @classmethod
    def parse(cls, parser: Parser):
        prefix = parser.parse_str_literal()
        attrs = parser.parse_optional_attr_dict()
        operands, types = [], []
        if parser.parse_optional_punctuation(":") is not None:
            operands = parser.parse_comma_separated_list(
                parser.Delimiter.NONE, parser.parse_unresolved_operand
            )
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            if len(types) != len(operands):
                parser.raise_error(f"expected {len(operands)} types, got {len(types)}")
        values = [parser.resolve_operand(o, t) for o, t in zip(operands, types)]
        hex_attr = attrs.pop("hex", None)
        signed_attr = attrs.pop("isSigned", None)
        signed = list(signed_attr.get_values()) if isinstance(signed_attr, DenseArrayBase) else None
        hex_value = bool(hex_attr.value.data) if isinstance(hex_attr, IntegerAttr) else False
        op = cls(prefix, values, hex_value, signed)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.prefix.data)
        printer.print_op_attributes({"hex": self.hex, "isSigned": self.isSigned} | self.attributes)
        if self.args:
            printer.print_string(" : ")
            printer.print_list(self.args, printer.print_operand)
            printer.print_string(" : ")
            printer.print_list([a.type for a in self.args], printer.print_attribute)


__all__ = ["PrintOp"]
