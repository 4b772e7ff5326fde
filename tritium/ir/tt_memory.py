"""`tt` ops on pointers and memory: `tt.addptr`, `tt.load`, `tt.store`.

    %p = tt.addptr %ptrs, %offs : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %x = tt.load %p, %mask, %other cacheModifier = ca : tensor<8x!tt.ptr<f32>>
    tt.store %p, %x, %mask : tensor<8x!tt.ptr<f32>>

Loads and stores carry memory effects so CSE and DCE leave them alone.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    IntegerAttr,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    MemoryReadEffect,
    MemoryWriteEffect,
    Pure,
)

from tritium.ir.tt_common import (  # noqa: F401
    AXES,
    CACHE_MODIFIERS,
    EVICTION_POLICIES,
    INPUT_PRECISIONS,
    ROUNDING_MODES,
    _check,
    _pointee_type,
    _same_shape_encoding,
    _with_elem,
    i32_attr,
)
from tritium.ir.types import (
    element_type,
    i1,
    is_int,
    is_ptr,
)

# --------------------------------------------------------------------------- pointers & memory


@irdl_op_definition
class AddPtrOp(IRDLOperation):
    """`tt.addptr %ptrs, %offs : tensor<8x!tt.ptr<f32>>, tensor<8xi32>`: offsets in elements."""

    name = "tt.addptr"
    ptr = operand_def()
    offset = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, ptr: SSAValue, offset: SSAValue):
        super().__init__(operands=[ptr, offset], result_types=[ptr.type])

    @classmethod
    def parse(cls, parser: Parser):
        p = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        o = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pt = parser.parse_type()
        parser.parse_punctuation(",")
        ot = parser.parse_type()
        op = cls(parser.resolve_operand(p, pt), parser.resolve_operand(o, ot))
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list([self.ptr, self.offset], printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list([self.result.type, self.offset.type], printer.print_attribute)

    def verify_(self) -> None:
        _check(is_ptr(self.ptr.type), "tt.addptr: first operand must be a pointer")
        _check(is_int(self.offset.type), "tt.addptr: offset must be an integer")
        _check(
            self.ptr.type == self.result.type, "tt.addptr: result type must equal the pointer type"
        )
        _same_shape_encoding(self.ptr.type, self.offset.type, "tt.addptr")


def _parse_memory_modifiers(parser: Parser) -> dict[str, Attribute]:
    props: dict[str, Attribute] = {}
    while True:
        if parser.parse_optional_keyword("cacheModifier") is not None:
            parser.parse_punctuation("=")
            word = parser.parse_identifier()
            if word not in CACHE_MODIFIERS:
                parser.raise_error(f"unknown cache modifier {word}")
            props["cache"] = i32_attr(CACHE_MODIFIERS.index(word) + 1)
        elif parser.parse_optional_keyword("evictionPolicy") is not None:
            parser.parse_punctuation("=")
            word = parser.parse_identifier()
            if word not in EVICTION_POLICIES:
                parser.raise_error(f"unknown eviction policy {word}")
            props["evict"] = i32_attr(EVICTION_POLICIES.index(word) + 1)
        else:
            return props


def _print_memory_modifiers(printer: Printer, op: IRDLOperation) -> None:
    cache = op.cache_modifier
    evict = op.eviction_policy
    if cache != "none":
        printer.print_string(f" cacheModifier = {cache}")
    if evict != "evict_normal":
        printer.print_string(f" evictionPolicy = {evict}")


class _MemoryOpMixin:
    @property
    def cache_modifier(self) -> str:
        return CACHE_MODIFIERS[self.cache.value.data - 1] if self.cache is not None else "none"

    @property
    def eviction_policy(self) -> str:
        return (
            EVICTION_POLICIES[self.evict.value.data - 1]
            if self.evict is not None
            else "evict_normal"
        )


def _block_ptr_props(op) -> dict[str, Attribute]:
    """`boundaryCheck` / `padding`, printed in the attribute dict as upstream does."""
    out: dict[str, Attribute] = {}
    if getattr(op, "boundaryCheck", None) is not None:
        out["boundaryCheck"] = op.boundaryCheck
    if getattr(op, "padding", None) is not None:
        out["padding"] = op.padding
    return out


def _memory_props(cache: str, evict: str) -> dict[str, Attribute]:
    props: dict[str, Attribute] = {}
    if cache != "none":
        props["cache"] = i32_attr(CACHE_MODIFIERS.index(cache) + 1)
    if evict != "evict_normal":
        props["evict"] = i32_attr(EVICTION_POLICIES.index(evict) + 1)
    return props


@irdl_op_definition
class LoadOp(_MemoryOpMixin, IRDLOperation):
    """`tt.load %ptr[, %mask[, %other]] [cacheModifier = ca] [evictionPolicy = evict_last] : type(ptr)`"""

    name = "tt.load"
    ptr = operand_def()
    mask = opt_operand_def()
    other = opt_operand_def()
    result = result_def()
    cache = opt_prop_def(IntegerAttr)
    evict = opt_prop_def(IntegerAttr)
    isVolatile = opt_prop_def(BoolAttr)
    boundaryCheck = opt_prop_def(DenseArrayBase)  # block pointers: the dims checked
    padding = opt_prop_def(IntegerAttr)  # block pointers: 1 zero, 2 NaN
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(MemoryReadEffect())

    def __init__(
        self,
        ptr: SSAValue,
        mask: SSAValue | None = None,
        other: SSAValue | None = None,
        cache: str = "none",
        evict: str = "evict_normal",
    ):
        rt = _pointee_type(ptr.type)
        super().__init__(
            operands=[ptr, [mask] if mask else [], [other] if other else []],
            result_types=[rt],
            properties=_memory_props(cache, evict),
        )

    def verify_(self) -> None:
        _check(is_ptr(self.ptr.type), "tt.load: operand must be a pointer or a tensor of pointers")
        _check(
            self.result.type == _pointee_type(self.ptr.type),
            "tt.load: result type must be the pointee type",
        )
        if self.mask is not None:
            _check(element_type(self.mask.type) == i1, "tt.load: mask must be i1")
            _same_shape_encoding(self.ptr.type, self.mask.type, "tt.load mask")
        if self.other is not None:
            _check(self.mask is not None, "tt.load: `other` needs a mask")
            _check(
                self.other.type == self.result.type, "tt.load: `other` must have the result type"
            )

    @classmethod
    def parse(cls, parser: Parser):
        ops = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
        props = _parse_memory_modifiers(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pt = parser.parse_type()
        ptr = parser.resolve_operand(ops[0], pt)
        mask = parser.resolve_operand(ops[1], _with_elem(pt, i1)) if len(ops) > 1 else None
        other = parser.resolve_operand(ops[2], _pointee_type(pt)) if len(ops) > 2 else None
        op = cls(ptr, mask, other)
        op.properties |= props
        for k in ("isVolatile", "boundaryCheck", "padding"):
            if k in attrs:
                op.properties[k] = attrs.pop(k)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(
            [v for v in (self.ptr, self.mask, self.other) if v is not None], printer.print_operand
        )
        _print_memory_modifiers(printer, self)
        extra = _block_ptr_props(self)
        if self.isVolatile is not None and self.isVolatile.value.data:
            extra["isVolatile"] = self.isVolatile
        extra |= self.attributes
        printer.print_op_attributes(extra)
        printer.print_string(" : ")
        printer.print_attribute(self.ptr.type)


@irdl_op_definition
class StoreOp(_MemoryOpMixin, IRDLOperation):
    """`tt.store %ptr, %value[, %mask] [cacheModifier = ...] : type(ptr)`"""

    name = "tt.store"
    ptr = operand_def()
    value = operand_def()
    mask = opt_operand_def()
    cache = opt_prop_def(IntegerAttr)
    evict = opt_prop_def(IntegerAttr)
    boundaryCheck = opt_prop_def(DenseArrayBase)  # block pointers: the dims checked
    traits = traits_def(MemoryWriteEffect())

    def __init__(
        self,
        ptr: SSAValue,
        value: SSAValue,
        mask: SSAValue | None = None,
        cache: str = "none",
        evict: str = "evict_normal",
    ):
        super().__init__(
            operands=[ptr, value, [mask] if mask else []], properties=_memory_props(cache, evict)
        )

    def verify_(self) -> None:
        _check(is_ptr(self.ptr.type), "tt.store: operand must be a pointer or a tensor of pointers")
        _check(
            self.value.type == _pointee_type(self.ptr.type),
            "tt.store: value type must be the pointee type",
        )
        if self.mask is not None:
            _check(element_type(self.mask.type) == i1, "tt.store: mask must be i1")
            _same_shape_encoding(self.ptr.type, self.mask.type, "tt.store mask")

    @classmethod
    def parse(cls, parser: Parser):
        ops = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
        if len(ops) < 2:
            parser.raise_error("tt.store needs a pointer and a value")
        props = _parse_memory_modifiers(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pt = parser.parse_type()
        ptr = parser.resolve_operand(ops[0], pt)
        val = parser.resolve_operand(ops[1], _pointee_type(pt))
        mask = parser.resolve_operand(ops[2], _with_elem(pt, i1)) if len(ops) > 2 else None
        op = cls(ptr, val, mask)
        op.properties |= props
        if "boundaryCheck" in attrs:
            op.properties["boundaryCheck"] = attrs.pop("boundaryCheck")
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(
            [v for v in (self.ptr, self.value, self.mask) if v is not None], printer.print_operand
        )
        _print_memory_modifiers(printer, self)
        printer.print_op_attributes(_block_ptr_props(self) | dict(self.attributes))
        printer.print_string(" : ")
        printer.print_attribute(self.ptr.type)
