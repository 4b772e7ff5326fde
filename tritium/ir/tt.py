"""The `tt` dialect: Triton's target-independent tensor program IR, defined with xDSL IRDL.

Every op prints in upstream Triton 3.x's syntax, e.g.

    %pid = tt.get_program_id x : i32
    %offs = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %ptrs = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %x = tt.load %ptrs, %mask, %other : tensor<1024x!tt.ptr<f32>>

so that tritium's TTIR and upstream's can be read by each other. Every op verifies its
shapes and element types; `tt.load` / `tt.store` carry memory effects so that CSE and DCE
leave them alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
)
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    CallableOpInterface,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    MemoryReadEffect,
    MemoryWriteEffect,
    Pure,
    RecursiveMemoryEffect,
    ReturnLike,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from tritium.ir.types import (
    PointerType,
    bitwidth,
    element_type,
    encoding_of,
    i1,
    i32,
    is_float,
    is_int,
    is_ptr,
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
    _check(shape_of(a) == shape_of(b), f"{what}: shapes differ ({a} vs {b})")
    _check(is_tensor(a) == is_tensor(b), f"{what}: tensor vs scalar ({a} vs {b})")
    _check(encoding_of(a) == encoding_of(b), f"{what}: layouts differ ({a} vs {b})")


# --------------------------------------------------------------------------- functions


class _FuncCallable(CallableOpInterface):
    @classmethod
    def get_callable_region(cls, op: Operation) -> Region:
        return op.body

    @classmethod
    def get_argument_types(cls, op: Operation) -> tuple[Attribute, ...]:
        return op.function_type.inputs.data

    @classmethod
    def get_result_types(cls, op: Operation) -> tuple[Attribute, ...]:
        return op.function_type.outputs.data


@irdl_op_definition
class FuncOp(IRDLOperation):
    """`tt.func public @name(%a: !tt.ptr<f32> {tt.divisibility = 16 : i32}) attributes {noinline = false} {...}`"""

    name = "tt.func"

    body = region_def()
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    sym_visibility = opt_prop_def(StringAttr)
    arg_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    res_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface(), _FuncCallable())

    def __init__(
        self,
        name: str,
        inputs: Sequence[Attribute],
        outputs: Sequence[Attribute] = (),
        visibility: str | None = "public",
        arg_attrs: Sequence[dict[str, Attribute]] | None = None,
        region: Region | None = None,
    ):
        ftype = FunctionType.from_lists(list(inputs), list(outputs))
        if region is None:
            region = Region(Block(arg_types=ftype.inputs))
        props: dict[str, Attribute | None] = {
            "sym_name": StringAttr(name),
            "function_type": ftype,
            "sym_visibility": StringAttr(visibility) if visibility else None,
            "arg_attrs": (
                ArrayAttr([DictionaryAttr(d) for d in arg_attrs])
                if arg_attrs is not None and any(arg_attrs)
                else None
            ),
        }
        super().__init__(properties=props, regions=[region])
        self.attributes["noinline"] = BoolAttr.from_bool(False)

    @property
    def args(self) -> tuple[SSAValue, ...]:
        return tuple(self.body.block.args)

    def arg_attr(self, index: int, key: str) -> Attribute | None:
        if self.arg_attrs is None:
            return None
        return self.arg_attrs.data[index].data.get(key)

    def verify_(self) -> None:
        if not self.body.blocks:
            return
        _check(
            tuple(self.body.blocks.first.arg_types) == self.function_type.inputs.data,
            "tt.func: entry block arguments differ from the function type",
        )

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        visibility = parser.parse_optional_visibility_keyword()
        name, ins, outs, region, extra, arg_attrs, _ = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type", "sym_visibility")
        )
        op = cls(
            name,
            ins,
            outs,
            visibility.data if visibility else None,
            region=region if region is not None else Region(),
        )
        if arg_attrs is not None:
            op.arg_attrs = arg_attrs
        if extra is not None:
            op.attributes = dict(extra.data)
        return op

    def print(self, printer: Printer) -> None:
        if self.sym_visibility:
            printer.print_string(f" {self.sym_visibility.data}")
        print_func_op_like(
            printer,
            self.sym_name,
            self.function_type,
            self.body,
            self.attributes,
            arg_attrs=self.arg_attrs,
            reserved_attr_names=("sym_name", "function_type", "sym_visibility", "arg_attrs"),
        )


@irdl_op_definition
class ReturnOp(IRDLOperation):
    name = "tt.return"
    srcs = var_operand_def()
    traits = traits_def(IsTerminator(), ReturnLike(), HasParent(FuncOp), Pure())
    assembly_format = "attr-dict ($srcs^ `:` type($srcs))?"

    def __init__(self, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[list(values)])

    def verify_(self) -> None:
        func = self.parent_op()
        if isinstance(func, FuncOp):
            want = func.function_type.outputs.data
            _check(
                tuple(v.type for v in self.srcs) == want,
                "tt.return: types differ from the function's results",
            )


@irdl_op_definition
class CallOp(IRDLOperation):
    name = "tt.call"
    callee = prop_def(SymbolRefAttr)
    args = var_operand_def()
    res = var_result_def()
    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $res)"

    def __init__(self, callee: str, args: Sequence[SSAValue], result_types: Sequence[Attribute]):
        super().__init__(
            operands=[list(args)],
            result_types=[list(result_types)],
            properties={"callee": SymbolRefAttr(callee)},
        )


# --------------------------------------------------------------------------- program ids


class _ProgramIdBase(IRDLOperation):
    axis = prop_def(IntegerAttr)
    result = result_def(i32)
    traits = traits_def(Pure())

    def __init__(self, axis: int):
        super().__init__(properties={"axis": i32_attr(axis)}, result_types=[i32])

    @property
    def axis_value(self) -> int:
        return self.axis.value.data

    def verify_(self) -> None:
        _check(0 <= self.axis_value < 3, f"{self.name}: axis must be 0, 1 or 2")

    @classmethod
    def parse(cls, parser: Parser):
        word = parser.parse_identifier()
        if word not in AXES:
            parser.raise_error("expected x, y or z")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        parser.parse_type()
        op = cls(AXES.index(word))
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {AXES[self.axis_value]}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : i32")


@irdl_op_definition
class GetProgramIdOp(_ProgramIdBase):
    name = "tt.get_program_id"


@irdl_op_definition
class GetNumProgramsOp(_ProgramIdBase):
    name = "tt.get_num_programs"


# --------------------------------------------------------------------------- shape ops


@irdl_op_definition
class MakeRangeOp(IRDLOperation):
    name = "tt.make_range"
    start = prop_def(IntegerAttr)
    end = prop_def(IntegerAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, start: int, end: int, result_type: Attribute):
        super().__init__(
            properties={"end": i32_attr(end), "start": i32_attr(start)}, result_types=[result_type]
        )

    def verify_(self) -> None:
        t = self.result.type
        s, e = self.start.value.data, self.end.value.data
        _check(len(shape_of(t)) == 1, "tt.make_range: result must be a 1D tensor")
        _check(element_type(t) == i32, "tt.make_range: result must hold i32")
        _check(e > s, "tt.make_range: end must be greater than start")
        _check(shape_of(t)[0] == e - s, "tt.make_range: result length must be end - start")


class _UnaryShapeOp(IRDLOperation):
    src = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue, result_type: Attribute, props: dict | None = None):
        super().__init__(operands=[src], result_types=[result_type], properties=props or {})


@irdl_op_definition
class SplatOp(_UnaryShapeOp):
    name = "tt.splat"

    def verify_(self) -> None:
        _check(not is_tensor(self.src.type), "tt.splat: source must be a scalar")
        _check(is_tensor(self.result.type), "tt.splat: result must be a tensor")
        _check(
            element_type(self.result.type) == self.src.type,
            "tt.splat: result element type must equal the source type",
        )


@irdl_op_definition
class BroadcastOp(_UnaryShapeOp):
    name = "tt.broadcast"

    def verify_(self) -> None:
        s, r = self.src.type, self.result.type
        _check(is_tensor(s) and is_tensor(r), "tt.broadcast: operands must be tensors")
        _check(element_type(s) == element_type(r), "tt.broadcast: element types differ")
        ss, rs = shape_of(s), shape_of(r)
        _check(len(ss) == len(rs), "tt.broadcast: ranks differ")
        for a, b in zip(ss, rs):
            _check(a == b or a == 1, f"tt.broadcast: cannot broadcast {list(ss)} to {list(rs)}")


@irdl_op_definition
class ExpandDimsOp(_UnaryShapeOp):
    name = "tt.expand_dims"
    axis = prop_def(IntegerAttr)
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, src: SSAValue, axis: int, result_type: Attribute):
        super().__init__(src, result_type, {"axis": i32_attr(axis)})

    def verify_(self) -> None:
        ss, rs = list(shape_of(self.src.type)), list(shape_of(self.result.type))
        ax = self.axis.value.data
        _check(0 <= ax <= len(ss), "tt.expand_dims: axis out of range")
        _check(ss[:ax] + [1] + ss[ax:] == rs, "tt.expand_dims: result shape is wrong")
        _check(
            element_type(self.src.type) == element_type(self.result.type),
            "tt.expand_dims: element types differ",
        )


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """`tt.reshape %x [allow_reorder] : tensor<4x8xf32> -> tensor<32xf32>`"""

    name = "tt.reshape"
    src = operand_def(TensorType)
    result = result_def(TensorType)
    allow_reorder = opt_prop_def(Attribute)
    efficient_layout = opt_prop_def(Attribute)
    traits = traits_def(Pure())

    def __init__(self, src: SSAValue, result_type: Attribute, allow_reorder: bool = False):
        from xdsl.dialects.builtin import UnitAttr

        super().__init__(
            operands=[src],
            result_types=[result_type],
            properties={"allow_reorder": UnitAttr() if allow_reorder else None},
        )

    def verify_(self) -> None:
        import math

        _check(
            math.prod(shape_of(self.src.type)) == math.prod(shape_of(self.result.type)),
            "tt.reshape: element counts differ",
        )
        _check(
            element_type(self.src.type) == element_type(self.result.type),
            "tt.reshape: element types differ",
        )

    @classmethod
    def parse(cls, parser: Parser):
        src = parser.parse_unresolved_operand()
        reorder = parser.parse_optional_keyword("allow_reorder") is not None
        efficient = parser.parse_optional_keyword("efficient_layout") is not None
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        st = parser.parse_type()
        parser.parse_punctuation("->")
        rt = parser.parse_type()
        op = cls(parser.resolve_operand(src, st), rt, reorder)
        if efficient:
            from xdsl.dialects.builtin import UnitAttr

            op.efficient_layout = UnitAttr()
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        if self.allow_reorder is not None:
            printer.print_string(" allow_reorder")
        if self.efficient_layout is not None:
            printer.print_string(" efficient_layout")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.src.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class TransOp(_UnaryShapeOp):
    """`tt.trans %x {order = array<i32: 1, 0>} : tensor<16x32xf32> -> tensor<32x16xf32>`"""

    name = "tt.trans"
    order = prop_def(DenseArrayBase)
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, src: SSAValue, order: Sequence[int], result_type: Attribute):
        super().__init__(src, result_type, {"order": DenseArrayBase.from_list(i32, list(order))})

    @property
    def order_list(self) -> list[int]:
        return list(self.order.get_values())

    def verify_(self) -> None:
        ss, rs = shape_of(self.src.type), shape_of(self.result.type)
        order = self.order_list
        _check(sorted(order) == list(range(len(ss))), "tt.trans: order must be a permutation")
        _check(tuple(ss[i] for i in order) == rs, "tt.trans: result shape does not match the order")


@irdl_op_definition
class BitcastOp(_UnaryShapeOp):
    name = "tt.bitcast"

    def verify_(self) -> None:
        s, r = self.src.type, self.result.type
        _check(shape_of(s) == shape_of(r), "tt.bitcast: shapes differ")
        _check(bitwidth(s) == bitwidth(r), "tt.bitcast: bit widths differ")


@irdl_op_definition
class IntToPtrOp(_UnaryShapeOp):
    name = "tt.int_to_ptr"

    def verify_(self) -> None:
        _check(
            is_int(self.src.type) and bitwidth(self.src.type) == 64,
            "tt.int_to_ptr: source must be i64",
        )
        _check(is_ptr(self.result.type), "tt.int_to_ptr: result must be a pointer")


@irdl_op_definition
class PtrToIntOp(_UnaryShapeOp):
    name = "tt.ptr_to_int"

    def verify_(self) -> None:
        _check(is_ptr(self.src.type), "tt.ptr_to_int: source must be a pointer")
        _check(
            is_int(self.result.type) and bitwidth(self.result.type) == 64,
            "tt.ptr_to_int: result must be i64",
        )


@irdl_op_definition
class FpToFpOp(IRDLOperation):
    """`tt.fp_to_fp %x, rounding = rtne : tensor<8xf32> -> tensor<8xf16>`"""

    name = "tt.fp_to_fp"
    src = operand_def()
    result = result_def()
    rounding = opt_prop_def(IntegerAttr)
    traits = traits_def(Pure())

    def __init__(self, src: SSAValue, result_type: Attribute, rounding: str | None = None):
        props = {"rounding": i32_attr(ROUNDING_MODES.index(rounding))} if rounding else {}
        super().__init__(operands=[src], result_types=[result_type], properties=props)

    def verify_(self) -> None:
        _check(
            is_float(self.src.type) and is_float(self.result.type),
            "tt.fp_to_fp: operands must be floats",
        )
        _check(shape_of(self.src.type) == shape_of(self.result.type), "tt.fp_to_fp: shapes differ")

    @classmethod
    def parse(cls, parser: Parser):
        src = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        rounding = None
        if parser.parse_optional_punctuation(","):
            parser.parse_keyword("rounding")
            parser.parse_punctuation("=")
            rounding = parser.parse_identifier()
        parser.parse_punctuation(":")
        st = parser.parse_type()
        parser.parse_punctuation("->")
        rt = parser.parse_type()
        op = cls(parser.resolve_operand(src, st), rt, rounding)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        printer.print_op_attributes(self.attributes)
        if self.rounding is not None:
            printer.print_string(f", rounding = {ROUNDING_MODES[self.rounding.value.data]}")
        printer.print_string(" : ")
        printer.print_attribute(self.src.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


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
        ops = [parser.parse_unresolved_operand()]
        while parser.parse_optional_punctuation(","):
            ops.append(parser.parse_unresolved_operand())
        props = _parse_memory_modifiers(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pt = parser.parse_type()
        ptr = parser.resolve_operand(ops[0], pt)
        mask = parser.resolve_operand(ops[1], _with_elem(pt, i1)) if len(ops) > 1 else None
        other = parser.resolve_operand(ops[2], _pointee_type(pt)) if len(ops) > 2 else None
        op = cls(ptr, mask, other)
        op.properties |= props
        for k in ("isVolatile",):
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
        extra = dict(self.attributes)
        if self.isVolatile is not None and self.isVolatile.value.data:
            extra["isVolatile"] = self.isVolatile
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
        ops = [parser.parse_unresolved_operand()]
        while parser.parse_optional_punctuation(","):
            ops.append(parser.parse_unresolved_operand())
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
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(
            [v for v in (self.ptr, self.value, self.mask) if v is not None], printer.print_operand
        )
        _print_memory_modifiers(printer, self)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.ptr.type)


def _with_elem(t: Attribute, e: Attribute) -> Attribute:
    if isinstance(t, TensorType):
        return TensorType(e, t.get_shape(), t.encoding)
    return e


def _pointee_type(t: Attribute) -> Attribute:
    p = element_type(t)
    if not isinstance(p, PointerType):
        raise VerifyException(f"expected a pointer type, got {t}")
    return _with_elem(t, p.pointee)


# --------------------------------------------------------------------------- reductions


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """`"tt.reduce"(%x) <{axis = 0 : i32}> ({ ^bb0(%a: f32, %b: f32): ... tt.reduce.return %c : f32 })`

    Reduces one or more tensors of the same shape along `axis` with the combine region,
    which takes 2*N scalars (the N accumulators, then the N new elements) and returns N.
    """

    name = "tt.reduce"
    srcs = var_operand_def()
    axis = prop_def(IntegerAttr)
    combine_op = region_def("single_block")
    res = var_result_def()
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(
        self, srcs: Sequence[SSAValue], axis: int, result_types: Sequence[Attribute], region: Region
    ):
        super().__init__(
            operands=[list(srcs)],
            result_types=[list(result_types)],
            properties={"axis": i32_attr(axis)},
            regions=[region],
        )

    def verify_(self) -> None:
        ax = self.axis.value.data
        shapes = {shape_of(s.type) for s in self.srcs}
        _check(len(shapes) == 1, "tt.reduce: operands must have the same shape")
        shape = shapes.pop()
        _check(0 <= ax < len(shape), f"tt.reduce: axis {ax} out of range for rank {len(shape)}")
        _check(len(self.res) == len(self.srcs), "tt.reduce: one result per operand")
        block = self.combine_op.block
        n = len(self.srcs)
        _check(len(block.args) == 2 * n, "tt.reduce: combine region takes 2 arguments per operand")
        for i, s in enumerate(self.srcs):
            e = element_type(s.type)
            _check(
                block.args[i].type == e and block.args[n + i].type == e,
                "tt.reduce: combine argument types differ from the operands'",
            )
            rshape = shape[:ax] + shape[ax + 1 :]
            r = self.res[i].type
            _check(
                shape_of(r) == rshape and element_type(r) == e,
                f"tt.reduce: result {i} has the wrong type",
            )
        last = block.last_op
        _check(isinstance(last, ReduceReturnOp), "tt.reduce: region must end in tt.reduce.return")


@irdl_op_definition
class ReduceReturnOp(IRDLOperation):
    name = "tt.reduce.return"
    result = var_operand_def()
    traits = traits_def(IsTerminator(), ReturnLike(), HasParent(ReduceOp), Pure())
    assembly_format = "$result attr-dict `:` type($result)"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[list(values)])


# --------------------------------------------------------------------------- dot


@irdl_op_definition
class DotOp(IRDLOperation):
    """`tt.dot %a, %b, %c, inputPrecision = tf32 : tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>`"""

    name = "tt.dot"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    c = operand_def(TensorType)
    d = result_def(TensorType)
    inputPrecision = opt_prop_def(IntegerAttr)
    maxNumImpreciseAcc = opt_prop_def(IntegerAttr)
    traits = traits_def(Pure())

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        c: SSAValue,
        input_precision: str = "ieee",
        max_num_imprecise_acc: int = 0,
    ):
        props: dict[str, Attribute] = {
            "inputPrecision": i32_attr(INPUT_PRECISIONS.index(input_precision))
        }
        if max_num_imprecise_acc:
            props["maxNumImpreciseAcc"] = i32_attr(max_num_imprecise_acc)
        super().__init__(operands=[a, b, c], result_types=[c.type], properties=props)

    @property
    def input_precision(self) -> str:
        if self.inputPrecision is None:
            return "tf32"
        return INPUT_PRECISIONS[self.inputPrecision.value.data]

    def verify_(self) -> None:
        a, b, c = shape_of(self.a.type), shape_of(self.b.type), shape_of(self.c.type)
        _check(
            len(a) == len(b) == len(c) and len(a) in (2, 3),
            "tt.dot: operands must be 2D (or 3D, batched)",
        )
        _check(a[-1] == b[-2], f"tt.dot: inner dimensions differ ({a[-1]} vs {b[-2]})")
        _check(c[-2:] == (a[-2], b[-1]), "tt.dot: accumulator shape must be M x N")
        _check(self.d.type == self.c.type, "tt.dot: result type must equal the accumulator's")
        _check(
            element_type(self.a.type) == element_type(self.b.type),
            "tt.dot: operand element types differ",
        )

    @classmethod
    def parse(cls, parser: Parser):
        names = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            names.append(parser.parse_unresolved_operand())
        precision = None
        props: dict[str, Attribute] = {}
        while parser.parse_optional_punctuation(","):
            key = parser.parse_identifier()
            parser.parse_punctuation("=")
            if key == "inputPrecision":
                precision = parser.parse_identifier()
            elif key == "maxNumImpreciseAcc":
                props["maxNumImpreciseAcc"] = i32_attr(parser.parse_integer())
            else:
                parser.raise_error(f"unknown tt.dot keyword {key}")
        attrs = parser.parse_optional_attr_dict()
        for k in ("inputPrecision", "maxNumImpreciseAcc"):
            if k in attrs:
                props[k] = attrs.pop(k)
        parser.parse_punctuation(":")
        at = parser.parse_type()
        parser.parse_punctuation("*")
        bt = parser.parse_type()
        parser.parse_punctuation("->")
        ct = parser.parse_type()
        a, b, c = (parser.resolve_operand(n, t) for n, t in zip(names, (at, bt, ct)))
        op = cls(a, b, c)
        op.properties.pop("inputPrecision", None)
        if precision is not None:
            op.properties["inputPrecision"] = i32_attr(INPUT_PRECISIONS.index(precision))
        op.properties |= props
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list([self.a, self.b, self.c], printer.print_operand)
        if self.inputPrecision is not None:
            printer.print_string(f", inputPrecision = {self.input_precision}")
        if self.maxNumImpreciseAcc is not None and self.maxNumImpreciseAcc.value.data:
            printer.print_string(f", maxNumImpreciseAcc = {self.maxNumImpreciseAcc.value.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.a.type)
        printer.print_string(" * ")
        printer.print_attribute(self.b.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.d.type)


# --------------------------------------------------------------------------- math extras


class _FloatBinary(IRDLOperation):
    T: ClassVar = VarConstraint("T", AnyAttr())
    x = operand_def(T)
    y = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$x `,` $y attr-dict `:` type($x)"

    def __init__(self, x: SSAValue, y: SSAValue):
        super().__init__(operands=[x, y], result_types=[x.type])

    def verify_(self) -> None:
        _check(is_float(self.x.type), f"{self.name}: operands must be floats")
        _check(self.x.type == self.y.type == self.result.type, f"{self.name}: types differ")


@irdl_op_definition
class PreciseDivFOp(_FloatBinary):
    """IEEE round-to-nearest division (`tl.div_rn`, `tl.fdiv(ieee_rounding=True)`)."""

    name = "tt.precise_divf"


@irdl_op_definition
class PreciseSqrtOp(IRDLOperation):
    name = "tt.precise_sqrt"
    T: ClassVar = VarConstraint("T", AnyAttr())
    x = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$x attr-dict `:` type($x)"

    def __init__(self, x: SSAValue):
        super().__init__(operands=[x], result_types=[x.type])


@irdl_op_definition
class MulhiUIOp(_FloatBinary):
    name = "tt.mulhiui"

    def verify_(self) -> None:
        _check(is_int(self.x.type), "tt.mulhiui: operands must be integers")


# --------------------------------------------------------------------------- assert


@irdl_op_definition
class AssertOp(IRDLOperation):
    """`tt.assert %cond, "message" : tensor<8xi1>`: fails the launch where `cond` is false."""

    name = "tt.assert"
    condition = operand_def()
    message = prop_def(StringAttr)
    traits = traits_def(MemoryWriteEffect())

    def __init__(self, condition: SSAValue, message: str):
        super().__init__(operands=[condition], properties={"message": StringAttr(message)})

    def verify_(self) -> None:
        _check(element_type(self.condition.type) == i1, "tt.assert: condition must be i1")

    @classmethod
    def parse(cls, parser: Parser):
        c = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        msg = parser.parse_str_literal()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        op = cls(parser.resolve_operand(c, t), msg)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.condition)
        printer.print_string(", ")
        printer.print_string_literal(self.message.data)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.condition.type)


TT = Dialect(
    "tt",
    [
        FuncOp,
        ReturnOp,
        CallOp,
        GetProgramIdOp,
        GetNumProgramsOp,
        MakeRangeOp,
        SplatOp,
        BroadcastOp,
        ExpandDimsOp,
        ReshapeOp,
        TransOp,
        BitcastOp,
        IntToPtrOp,
        PtrToIntOp,
        FpToFpOp,
        AddPtrOp,
        LoadOp,
        StoreOp,
        ReduceOp,
        ReduceReturnOp,
        DotOp,
        PreciseDivFOp,
        PreciseSqrtOp,
        MulhiUIOp,
        AssertOp,
    ],
    [PointerType],
)

__all__ = ["TT", "AnyAttr", "UnresolvedOperand", "IntegerType"]
