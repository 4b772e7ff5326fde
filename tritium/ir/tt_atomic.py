"""`tt` atomics: `tt.atomic_rmw` and `tt.atomic_cas`, in upstream Triton 3.x's syntax.

    %old = tt.atomic_rmw fadd, acq_rel, gpu, %ptrs, %vals, %mask
        : (tensor<128x!tt.ptr<f32>>, tensor<128xf32>, tensor<128xi1>) -> tensor<128xf32>
    %old = tt.atomic_cas acq_rel, gpu, %ptr, %cmp, %val : (!tt.ptr<i32>, i32, i32) -> i32

Each element is one atomic read-modify-write of its address, returning the value that was
there before. The ops read and write memory, so CSE and DCE leave them alone (an unused
result still updates memory).
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect

from tritium.ir.tt_common import _check, _pointee_type, _same_shape_encoding
from tritium.ir.types import element_type, i1, is_ptr

RMW_OPS = ("and", "or", "xor", "add", "fadd", "max", "min", "umax", "umin", "exch")
SEMANTICS = ("relaxed", "acquire", "release", "acq_rel")
SCOPES = ("gpu", "cta", "sys")


def _keyword(parser: Parser, allowed: tuple[str, ...], what: str) -> str:
    word = parser.parse_identifier()
    if word not in allowed:
        parser.raise_error(f"expected {what} ({', '.join(allowed)}), got '{word}'")
    return word


def _functional_types(parser: Parser, n: int):
    parser.parse_punctuation(":")
    parser.parse_punctuation("(")
    types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
    parser.parse_punctuation(")")
    parser.parse_punctuation("->")
    result = parser.parse_type()
    if len(types) != n:
        parser.raise_error(f"expected {n} operand types, got {len(types)}")
    return types, result


def _print_functional(printer: Printer, operands, result) -> None:
    printer.print_string(" : (")
    printer.print_list([v.type for v in operands], printer.print_attribute)
    printer.print_string(") -> ")
    printer.print_attribute(result.type)


class _AtomicMixin:
    @property
    def sem_name(self) -> str:
        return self.sem.data

    @property
    def scope_name(self) -> str:
        return self.scope.data

    def _verify_common(self, what: str) -> None:
        _check(is_ptr(self.ptr.type), f"{what}: operand must be a pointer or a tensor of pointers")
        _check(self.sem.data in SEMANTICS, f"{what}: unknown memory semantic '{self.sem.data}'")
        _check(self.scope.data in SCOPES, f"{what}: unknown scope '{self.scope.data}'")
        _check(
            self.result.type == _pointee_type(self.ptr.type),
            f"{what}: result type must be the pointee type",
        )


@irdl_op_definition
class AtomicRMWOp(_AtomicMixin, IRDLOperation):
    """`tt.atomic_rmw OP, SEM, SCOPE, %ptr, %val[, %mask] : (types) -> type`"""

    name = "tt.atomic_rmw"
    ptr = operand_def()
    val = operand_def()
    mask = opt_operand_def()
    result = result_def()
    atomic_rmw_op = prop_def(StringAttr)
    sem = prop_def(StringAttr)
    scope = prop_def(StringAttr)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(
        self,
        rmw: str,
        ptr: SSAValue,
        val: SSAValue,
        mask: SSAValue | None = None,
        sem: str = "acq_rel",
        scope: str = "gpu",
    ):
        super().__init__(
            operands=[ptr, val, [mask] if mask else []],
            result_types=[_pointee_type(ptr.type)],
            properties={
                "atomic_rmw_op": StringAttr(rmw),
                "sem": StringAttr(sem),
                "scope": StringAttr(scope),
            },
        )

    @property
    def rmw(self) -> str:
        return self.atomic_rmw_op.data

    def verify_(self) -> None:
        self._verify_common("tt.atomic_rmw")
        _check(self.rmw in RMW_OPS, f"tt.atomic_rmw: unknown operation '{self.rmw}'")
        _check(
            self.val.type == self.result.type, "tt.atomic_rmw: value type must be the pointee type"
        )
        if self.mask is not None:
            _check(element_type(self.mask.type) == i1, "tt.atomic_rmw: mask must be i1")
            _same_shape_encoding(self.ptr.type, self.mask.type, "tt.atomic_rmw mask")

    @classmethod
    def parse(cls, parser: Parser):
        rmw = _keyword(parser, RMW_OPS, "an atomic operation")
        parser.parse_punctuation(",")
        sem = _keyword(parser, SEMANTICS, "a memory semantic")
        parser.parse_punctuation(",")
        scope = _keyword(parser, SCOPES, "a scope")
        parser.parse_punctuation(",")
        ops = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
        attrs = parser.parse_optional_attr_dict()
        types, _ = _functional_types(parser, len(ops))
        vals = [parser.resolve_operand(o, t) for o, t in zip(ops, types)]
        op = cls(rmw, vals[0], vals[1], vals[2] if len(vals) > 2 else None, sem, scope)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.rmw}, {self.sem_name}, {self.scope_name}, ")
        operands = [v for v in (self.ptr, self.val, self.mask) if v is not None]
        printer.print_list(operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        _print_functional(printer, operands, self.result)


@irdl_op_definition
class AtomicCASOp(_AtomicMixin, IRDLOperation):
    """`tt.atomic_cas SEM, SCOPE, %ptr, %cmp, %val : (types) -> type`: where the memory
    holds `cmp`, write `val`; the old value either way."""

    name = "tt.atomic_cas"
    ptr = operand_def()
    cmp = operand_def()
    val = operand_def()
    result = result_def()
    sem = prop_def(StringAttr)
    scope = prop_def(StringAttr)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(
        self,
        ptr: SSAValue,
        cmp: SSAValue,
        val: SSAValue,
        sem: str = "acq_rel",
        scope: str = "gpu",
    ):
        super().__init__(
            operands=[ptr, cmp, val],
            result_types=[_pointee_type(ptr.type)],
            properties={"sem": StringAttr(sem), "scope": StringAttr(scope)},
        )

    def verify_(self) -> None:
        self._verify_common("tt.atomic_cas")
        _check(
            self.cmp.type == self.result.type, "tt.atomic_cas: cmp type must be the pointee type"
        )
        _check(
            self.val.type == self.result.type, "tt.atomic_cas: value type must be the pointee type"
        )

    @classmethod
    def parse(cls, parser: Parser):
        sem = _keyword(parser, SEMANTICS, "a memory semantic")
        parser.parse_punctuation(",")
        scope = _keyword(parser, SCOPES, "a scope")
        parser.parse_punctuation(",")
        ops = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
        attrs = parser.parse_optional_attr_dict()
        types, _ = _functional_types(parser, 3)
        if len(ops) != 3:
            parser.raise_error("tt.atomic_cas takes a pointer, a compare value and a value")
        vals = [parser.resolve_operand(o, t) for o, t in zip(ops, types)]
        op = cls(*vals, sem=sem, scope=scope)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.sem_name}, {self.scope_name}, ")
        operands = [self.ptr, self.cmp, self.val]
        printer.print_list(operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        _print_functional(printer, operands, self.result)


__all__ = ["RMW_OPS", "SCOPES", "SEMANTICS", "AtomicCASOp", "AtomicRMWOp"]
