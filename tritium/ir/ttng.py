"""The `ttng` dialect (TritonNvidiaGPU): Hopper's warpgroup MMA, in upstream 3.6's syntax.

    %d = ttng.warp_group_dot %a, %b, %c {inputPrecision = 0 : i32, isAsync = true}
           : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> * !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
           -> tensor<128x128xf32, #mma>
    %r:3 = ttng.warp_group_dot_wait %d, %a, %b {pendings = 0 : i32}
           : tensor<128x128xf32, #mma>, !ttg.memdesc<...>, !ttg.memdesc<...>
    ttng.fence_async_shared {bCluster = false}

`warp_group_dot` is `tt.dot` with A and B read by the tensor cores straight from shared
tiles in `#ttg.nvmma_shared` layouts (A may instead be a 16-bit tensor in registers, in the
`#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>` layout of a version 3 `#mma`:
wgmma's register-A form, attention's P @ V), the accumulator in `#ttg.nvidia_mma<{versionMajor =
3}>` (wgmma.mma_async; `isAsync`: its result may only be read after a
`warp_group_dot_wait` with fewer groups pending). `warp_group_dot_wait` waits until at
most `pendings` wgmma groups are in flight (wgmma.wait_group) and passes its operands
through: using its results orders later reads of the accumulator and later writes of the
tiles after the wait. `fence_async_shared` (fence.proxy.async) orders earlier ordinary
shared-memory writes before the tensor cores' reads. Lowering: codegen/lower/dot_wgmma.py.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import BoolAttr, IntegerAttr, IntegerType, TensorType
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    base,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException

from tritium.ir.tt_common import INPUT_PRECISIONS  # upstream's InputPrecision enum
from tritium.ir.ttg_mma import (
    DotOperandEncodingAttr,
    MemDescType,
    NVMMASharedEncodingAttr,
    is_mma_v3,
)
from tritium.ir.types import bitwidth, element_type, encoding_of, shape_of


def _i32(v: int) -> IntegerAttr:
    return IntegerAttr(v, 32)


@irdl_op_definition
class WarpGroupDotOp(IRDLOperation):
    """`%d = ttng.warp_group_dot %a, %b, %c[, %useC] {isAsync = true} : A * B -> D`."""

    name = "ttng.warp_group_dot"
    a = operand_def(base(MemDescType) | base(TensorType))
    b = operand_def(MemDescType)
    c = operand_def(TensorType)
    use_c = opt_operand_def(IntegerType)
    d = result_def(TensorType)
    traits = traits_def(MemoryReadEffect())

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        c: SSAValue,
        input_precision: str = "tf32",
        is_async: bool = True,
        use_c: SSAValue | None = None,
    ):
        attrs: dict[str, Attribute] = {
            "inputPrecision": _i32(INPUT_PRECISIONS.index(input_precision))
        }
        if is_async:
            attrs["isAsync"] = BoolAttr.from_bool(True)
        super().__init__(
            operands=[a, b, c, [use_c] if use_c is not None else []],
            result_types=[c.type],
            attributes=attrs,
        )

    @property
    def is_async(self) -> bool:
        v = self.attributes.get("isAsync")
        return isinstance(v, IntegerAttr) and bool(v.value.data)

    @property
    def input_precision(self) -> str:
        v = self.attributes.get("inputPrecision")
        return INPUT_PRECISIONS[v.value.data] if isinstance(v, IntegerAttr) else "tf32"

    def verify_(self) -> None:
        ta, tb = self.a.type, self.b.type
        (m, k), (k2, n) = ta.get_shape()[-2:], tb.get_shape()[-2:]
        if k != k2 or shape_of(self.d.type) != (m, n) or self.c.type != self.d.type:
            raise VerifyException("ttng.warp_group_dot: shapes must be MxK * KxN -> MxN")
        for t in (ta, tb) if isinstance(ta, MemDescType) else (tb,):
            if not isinstance(t.encoding, NVMMASharedEncodingAttr):
                raise VerifyException("ttng.warp_group_dot: operands in #ttg.nvmma_shared tiles")
        if isinstance(ta, TensorType):
            enc = encoding_of(ta)
            if not (
                isinstance(enc, DotOperandEncodingAttr)
                and enc.opIdx == 0
                and is_mma_v3(enc.parent)
                and enc.kWidth == 2
                and bitwidth(element_type(ta)) == 16
            ):
                raise VerifyException(
                    "ttng.warp_group_dot: a register A is 16-bit, in #ttg.dot_op<{opIdx = 0, "
                    "parent = #mma (version 3), kWidth = 2}>"
                )
        if not is_mma_v3(encoding_of(self.d.type)):
            raise VerifyException(
                "ttng.warp_group_dot: the result layout must be #ttg.nvidia_mma version 3"
            )
        if element_type(self.c.type) != element_type(self.d.type):
            raise VerifyException("ttng.warp_group_dot: accumulator and result types differ")

    @classmethod
    def parse(cls, parser: Parser):
        names = [parser.parse_unresolved_operand()]
        while parser.parse_optional_punctuation(","):
            names.append(parser.parse_unresolved_operand())
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ta = parser.parse_type()
        parser.parse_punctuation("*")
        tb = parser.parse_type()
        parser.parse_punctuation("->")
        td = parser.parse_type()
        if len(names) not in (3, 4):
            parser.raise_error("ttng.warp_group_dot takes %a, %b, %c[, %useC]")
        use_c = parser.resolve_operand(names[3], IntegerType(1)) if len(names) == 4 else None
        op = cls(
            parser.resolve_operand(names[0], ta),
            parser.resolve_operand(names[1], tb),
            parser.resolve_operand(names[2], td),
            is_async=False,
            use_c=use_c,
        )
        op.attributes.clear()
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.a.type)
        printer.print_string(" * ")
        printer.print_attribute(self.b.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.d.type)


@irdl_op_definition
class WarpGroupDotWaitOp(IRDLOperation):
    """`%r:n = ttng.warp_group_dot_wait %x, ... {pendings = N : i32} : T1, ...`."""

    name = "ttng.warp_group_dot_wait"
    inputs = var_operand_def()
    outputs = var_result_def()
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, inputs: Sequence[SSAValue], pendings: int):
        super().__init__(
            operands=[list(inputs)],
            result_types=[[v.type for v in inputs]],
            attributes={"pendings": _i32(pendings)},
        )

    @property
    def pendings(self) -> int:
        return self.attributes["pendings"].value.data

    def verify_(self) -> None:
        if not isinstance(self.attributes.get("pendings"), IntegerAttr):
            raise VerifyException("ttng.warp_group_dot_wait needs {pendings = N : i32}")
        if [v.type for v in self.inputs] != [r.type for r in self.outputs]:
            raise VerifyException("ttng.warp_group_dot_wait: results have the inputs' types")

    @classmethod
    def parse(cls, parser: Parser):
        names = [parser.parse_unresolved_operand()]
        while parser.parse_optional_punctuation(","):
            names.append(parser.parse_unresolved_operand())
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = [parser.parse_type()]
        while parser.parse_optional_punctuation(","):
            types.append(parser.parse_type())
        if len(types) != len(names) or not isinstance(attrs.get("pendings"), IntegerAttr):
            parser.raise_error("ttng.warp_group_dot_wait: one type per operand, {pendings = N}")
        vals = [parser.resolve_operand(n, t) for n, t in zip(names, types, strict=True)]
        op = cls(vals, attrs.pop("pendings").value.data)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list([v.type for v in self.inputs], printer.print_attribute)


@irdl_op_definition
class FenceAsyncSharedOp(IRDLOperation):
    """`ttng.fence_async_shared {bCluster = false}`: fence.proxy.async.shared::cta."""

    name = "ttng.fence_async_shared"
    assembly_format = "attr-dict"
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self):
        super().__init__(attributes={"bCluster": BoolAttr.from_bool(False)})


TTNG = Dialect("ttng", [WarpGroupDotOp, WarpGroupDotWaitOp, FenceAsyncSharedOp])

__all__ = [
    "TTNG",
    "FenceAsyncSharedOp",
    "WarpGroupDotOp",
    "WarpGroupDotWaitOp",
]
