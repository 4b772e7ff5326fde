"""`tt` ops that compute across a tensor or beyond `arith`/`math`: `tt.reduce`, `tt.scan`,
`tt.dot`, `tt.precise_divf`, `tt.precise_sqrt`, `tt.mulhiui`, `tt.extern_elementwise`,
`tt.elementwise_inline_asm`, and `tt.assert`."""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import ClassVar

from xdsl.dialects.builtin import (
    BoolAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
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
    EffectInstance,
    HasParent,
    IsTerminator,
    MemoryEffect,
    MemoryWriteEffect,
    Pure,
    RecursiveMemoryEffect,
    ReturnLike,
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
    is_float,
    is_fp8,
    is_int,
    shape_of,
)

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


# --------------------------------------------------------------------------- scans


@irdl_op_definition
class ScanOp(IRDLOperation):
    """`"tt.scan"(%x) <{axis = 0 : i32, reverse = false}> ({ ^bb0(%a: i32, %b: i32): ...
    tt.scan.return %c : i32 }) : (tensor<128xi32>) -> tensor<128xi32>`

    An inclusive scan of one or more tensors of the same shape along `axis` with the
    combine region (2*N scalars: the running values, then the new elements; returns N);
    `reverse` scans from the last element down. Results have the operands' types.
    """

    name = "tt.scan"
    srcs = var_operand_def()
    axis = prop_def(IntegerAttr)
    reverse = prop_def(BoolAttr)
    combine_op = region_def("single_block")
    res = var_result_def()
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(self, srcs: Sequence[SSAValue], axis: int, reverse: bool, region: Region):
        super().__init__(
            operands=[list(srcs)],
            result_types=[[s.type for s in srcs]],
            properties={"axis": i32_attr(axis), "reverse": BoolAttr.from_bool(reverse)},
            regions=[region],
        )

    @property
    def is_reverse(self) -> bool:
        return bool(self.reverse.value.data)

    def verify_(self) -> None:
        ax = self.axis.value.data
        shapes = {shape_of(s.type) for s in self.srcs}
        _check(len(shapes) == 1, "tt.scan: operands must have the same shape")
        shape = shapes.pop()
        _check(0 <= ax < len(shape), f"tt.scan: axis {ax} out of range for rank {len(shape)}")
        _check(len(self.res) == len(self.srcs), "tt.scan: one result per operand")
        block = self.combine_op.block
        n = len(self.srcs)
        _check(len(block.args) == 2 * n, "tt.scan: combine region takes 2 arguments per operand")
        for i, s in enumerate(self.srcs):
            e = element_type(s.type)
            _check(
                block.args[i].type == e and block.args[n + i].type == e,
                "tt.scan: combine argument types differ from the operands'",
            )
            _check(self.res[i].type == s.type, f"tt.scan: result {i} has the wrong type")
        _check(
            isinstance(block.last_op, ScanReturnOp), "tt.scan: region must end in tt.scan.return"
        )


@irdl_op_definition
class ScanReturnOp(IRDLOperation):
    name = "tt.scan.return"
    result = var_operand_def()
    traits = traits_def(IsTerminator(), ReturnLike(), HasParent(ScanOp), Pure())
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
        ea, eb = element_type(self.a.type), element_type(self.b.type)
        _check(
            ea == eb or (is_fp8(ea) and is_fp8(eb)),
            "tt.dot: operand element types differ (only two fp8 formats may mix)",
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


@irdl_op_definition
class ExternElementwiseOp(IRDLOperation):
    """`tt.extern_elementwise %x {libname = "", libpath = "", pure = true, symbol =
    "__nv_tanhf"} : (tensor<8xf32>) -> tensor<8xf32>`: a libdevice function by its symbol
    (`tl.extra.libdevice`); the backend implements each symbol itself (no bitcode)."""

    name = "tt.extern_elementwise"
    srcs = var_operand_def()
    result = result_def()
    libname = prop_def(StringAttr)
    libpath = prop_def(StringAttr)
    symbol = prop_def(StringAttr)
    pure = prop_def(BoolAttr)
    traits = traits_def(Pure())
    assembly_format = "$srcs attr-dict `:` functional-type($srcs, $result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, srcs: list[SSAValue], result_type: Attribute, symbol: str):
        super().__init__(
            operands=[srcs],
            result_types=[result_type],
            properties={
                "libname": StringAttr(""),
                "libpath": StringAttr(""),
                "pure": BoolAttr.from_bool(True),
                "symbol": StringAttr(symbol),
            },
        )


class _AsmEffects(MemoryEffect):
    """A pure inline asm (`pure = true`) has no effect; any other one may write memory."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        return set() if op.pure.value.data else MemoryWriteEffect.get_effects(op)


@irdl_op_definition
class ElementwiseInlineAsmOp(IRDLOperation):
    """`tt.elementwise_inline_asm "shl.b32 $0, $0, 3;" {constraints = "=r,r",
    packed_element = 4 : i32, pure = true} %x : tensor<128xi8> -> tensor<128xi8>`: the asm
    runs once per group of `packed_element` elements of each thread (operands and results
    of the same shape; `tl.inline_asm_elementwise`)."""

    name = "tt.elementwise_inline_asm"
    args = var_operand_def()
    results_ = var_result_def()
    asm_string = prop_def(StringAttr)
    constraints = prop_def(StringAttr)
    pure = prop_def(BoolAttr)
    packed_element = prop_def(IntegerAttr)
    traits = traits_def(_AsmEffects())
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        asm: str,
        constraints: str,
        args: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        pure: bool,
        pack: int,
    ):
        super().__init__(
            operands=[list(args)],
            result_types=[list(result_types)],
            properties={
                "asm_string": StringAttr(asm),
                "constraints": StringAttr(constraints),
                "pure": BoolAttr.from_bool(pure),
                "packed_element": i32_attr(pack),
            },
        )

    def verify_(self) -> None:
        _check(self.packed_element.value.data >= 1, "tt.elementwise_inline_asm: pack must be >= 1")
        shapes = {shape_of(v.type) for v in (*self.args, *self.results_)}
        _check(
            len(shapes) <= 1, "tt.elementwise_inline_asm: operands and results must share a shape"
        )

    @classmethod
    def parse(cls, parser: Parser):
        asm = parser.parse_str_literal()
        attrs = parser.parse_optional_attr_dict()
        operands = (
            parser.parse_optional_undelimited_comma_separated_list(
                parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
            )
            or []
        )
        types = []
        if operands:
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        parser.parse_punctuation("->")
        results = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        args = [parser.resolve_operand(o, t) for o, t in zip(operands, types)]
        op = cls(
            asm,
            attrs.pop("constraints").data,
            args,
            results,
            attrs.pop("pure").value.data,
            attrs.pop("packed_element").value.data,
        )
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.asm_string.data)
        printer.print_string(" {constraints = ")
        printer.print_string_literal(self.constraints.data)
        printer.print_string(f", packed_element = {self.packed_element.value.data} : i32")
        printer.print_string(f", pure = {'true' if self.pure.value.data else 'false'}}}")
        printer.print_op_attributes(self.attributes)
        if self.args:
            printer.print_string(" ")
            printer.print_list(self.args, printer.print_operand)
            printer.print_string(" : ")
            printer.print_list([a.type for a in self.args], printer.print_attribute)
        printer.print_string(" -> ")
        printer.print_list([r.type for r in self.results_], printer.print_attribute)


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
