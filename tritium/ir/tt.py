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

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
)
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    CallableOpInterface,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    ReturnLike,
    SymbolOpInterface,
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
    PointerType,
    bitwidth,
    element_type,
    i32,
    is_float,
    is_fp8,
    is_int,
    is_ptr,
    is_tensor,
    shape_of,
)

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
            all(is_float(t) or is_fp8(t) for t in (self.src.type, self.result.type)),
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


from tritium.ir.tt_atomic import AtomicCASOp, AtomicRMWOp  # noqa: E402
from tritium.ir.tt_block_ptr import AdvanceOp, MakeTensorPtrOp  # noqa: E402
from tritium.ir.tt_compute import (  # noqa: E402
    AssertOp,
    DotOp,
    ElementwiseInlineAsmOp,
    ExternElementwiseOp,
    MulhiUIOp,
    PreciseDivFOp,
    PreciseSqrtOp,
    ReduceOp,
    ReduceReturnOp,
    ScanOp,
    ScanReturnOp,
)
from tritium.ir.tt_memory import AddPtrOp, LoadOp, StoreOp  # noqa: E402
from tritium.ir.tt_print import PrintOp  # noqa: E402
from tritium.ir.tt_shape import CatOp, GatherOp, HistogramOp, JoinOp, SplitOp  # noqa: E402

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
        JoinOp,
        SplitOp,
        CatOp,
        GatherOp,
        HistogramOp,
        BitcastOp,
        IntToPtrOp,
        PtrToIntOp,
        FpToFpOp,
        AddPtrOp,
        LoadOp,
        StoreOp,
        AtomicRMWOp,
        AtomicCASOp,
        MakeTensorPtrOp,
        AdvanceOp,
        ReduceOp,
        ReduceReturnOp,
        ScanOp,
        ScanReturnOp,
        DotOp,
        PreciseDivFOp,
        PreciseSqrtOp,
        MulhiUIOp,
        ExternElementwiseOp,
        ElementwiseInlineAsmOp,
        AssertOp,
        PrintOp,
    ],
    [PointerType],
)

