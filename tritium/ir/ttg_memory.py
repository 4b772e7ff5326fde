"""TritonGPU shared-memory ops: buffers, views, loads and stores, asynchronous copies.

    %buf = ttg.local_alloc : () -> !ttg.memdesc<3x128x32xf16, #shared, #smem, mutable>
    %s = ttg.memdesc_index %buf[%i] : !ttg.memdesc<3x128x32xf16, ...> -> !ttg.memdesc<128x32xf16, ...>
    %v = ttg.memdesc_trans %s {order = array<i32: 1, 0>} : !ttg.memdesc<128x32xf16, #shared, ...> -> !ttg.memdesc<32x128xf16, #shared1, ...>
    %t = ttg.async_copy_global_to_local %ptrs, %s mask %m : tensor<128x32x!tt.ptr<f16>, #blocked> -> <128x32xf16, #shared, #smem, mutable>
    %g = ttg.async_commit_group tokens %t
    %w = ttg.async_wait %g {num = 1 : i32}
    %a = ttg.local_load %s token %w : !ttg.memdesc<128x32xf16, ...> -> tensor<128x32xf16, #ttg.dot_op<...>>
    ttg.local_store %x, %s : tensor<128x32xf16, #blocked> -> !ttg.memdesc<128x32xf16, ...>
    %m = ttg.local_alloc %x : (tensor<128x32xf16, #blocked>) -> !ttg.memdesc<128x32xf16, ...>
    ttg.local_dealloc %buf : !ttg.memdesc<3x128x32xf16, #shared, #smem, mutable>

In upstream Triton 3.6's syntax. The types (`!ttg.memdesc`, `!ttg.async.token`) and
layouts are in ttg_mma.py, which this module imports; both register into the `ttg`
dialect. Memory effects: allocs allocate (never merged by CSE), loads read, stores,
copies, commits and waits write (so CSE never merges loads across them).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, FunctionType, IntegerAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    MemoryAllocEffect,
    MemoryFreeEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    Pure,
)
from xdsl.utils.exceptions import VerifyException

from tritium.ir import ttg
from tritium.ir.tt_memory import _parse_memory_modifiers
from tritium.ir.ttg_mma import (
    AsyncTokenType,
    MemDescType,
    NVMMASharedEncodingAttr,
    SwizzledSharedEncodingAttr,
)
from tritium.ir.types import element_type, encoding_of, i1, i32, is_ptr, shape_of


def _parse_memdesc_body(parser: Parser) -> MemDescType:
    """The type after `->` of async_copy_global_to_local: `<64x32xf32, #shared, #smem, mutable>`."""
    return MemDescType.new(MemDescType.parse_parameters(parser))


@irdl_op_definition
class LocalAllocOp(IRDLOperation):
    """`%m = ttg.local_alloc [%src] : ([tensor]) -> !ttg.memdesc<...>`: a shared-memory
    buffer, optionally initialised from a distributed tensor."""

    name = "ttg.local_alloc"
    src = opt_operand_def(TensorType)
    result = result_def(MemDescType)
    traits = traits_def(MemoryAllocEffect(), MemoryWriteEffect())

    def __init__(self, result_type: MemDescType, src: SSAValue | None = None):
        super().__init__(operands=[[src] if src is not None else []], result_types=[result_type])

    def verify_(self) -> None:
        t = self.result.type
        if self.src is not None:
            if (
                shape_of(self.src.type) != t.get_shape()
                or element_type(self.src.type) != t.element_type
            ):
                raise VerifyException("ttg.local_alloc: the source must match the buffer")

    @classmethod
    def parse(cls, parser: Parser):
        src = parser.parse_optional_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ft = parser.parse_type()
        if not isinstance(ft, FunctionType) or len(ft.outputs.data) != 1:
            parser.raise_error("ttg.local_alloc: expected (...) -> !ttg.memdesc<...>")
        ins = list(ft.inputs.data)
        value = parser.resolve_operand(src, ins[0]) if src is not None else None
        op = cls(ft.outputs.data[0], value)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        if self.src is not None:
            printer.print_string(" ")
            printer.print_operand(self.src)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : (")
        if self.src is not None:
            printer.print_attribute(self.src.type)
        printer.print_string(") -> ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class LocalDeallocOp(IRDLOperation):
    """`ttg.local_dealloc %m : !ttg.memdesc<...>`: the buffer is no longer used."""

    name = "ttg.local_dealloc"
    src = operand_def(MemDescType)
    traits = traits_def(MemoryFreeEffect())
    assembly_format = "$src attr-dict `:` type($src)"

    def __init__(self, src: SSAValue):
        super().__init__(operands=[src])


@irdl_op_definition
class MemDescIndexOp(IRDLOperation):
    """`%s = ttg.memdesc_index %m[%i] : !ttg.memdesc<3x64x32xf16, ...> -> !ttg.memdesc<64x32xf16, ...>`:
    buffer `i` of a multi-buffer allocation."""

    name = "ttg.memdesc_index"
    src = operand_def(MemDescType)
    index = operand_def()
    result = result_def(MemDescType)
    traits = traits_def(Pure())

    def __init__(self, src: SSAValue, index: SSAValue, result_type: MemDescType | None = None):
        if result_type is None:
            t = src.type
            result_type = MemDescType(
                t.get_shape()[1:], t.element_type, t.encoding, t.memory_space, t.mutable
            )
        super().__init__(operands=[src, index], result_types=[result_type])

    def verify_(self) -> None:
        if self.src.type.get_shape()[1:] != self.result.type.get_shape():
            raise VerifyException("ttg.memdesc_index: the result is one buffer of the source")

    @classmethod
    def parse(cls, parser: Parser):
        src = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        idx = parser.parse_unresolved_operand()
        parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        st = parser.parse_type()
        parser.parse_punctuation("->")
        rt = parser.parse_type()
        from tritium.ir.types import i32

        op = cls(parser.resolve_operand(src, st), parser.resolve_operand(idx, i32), rt)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        printer.print_string("[")
        printer.print_operand(self.index)
        printer.print_string("]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.src.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class MemDescTransOp(IRDLOperation):
    """`%v = ttg.memdesc_trans %m {order = array<i32: 1, 0>} : !ttg.memdesc<64x32xf16, #shared, ...>
    -> !ttg.memdesc<32x64xf16, #shared1, ...>`: the same bytes seen with the dims permuted
    (`#shared1` is `#shared` with its `order` permuted alike; of a 2D `#ttg.nvmma_shared`
    tile, the same with `transposed` flipped), as upstream's op of that name.
    A tile written once can so be read as a dot operand and as the transposed operand of
    another dot."""

    name = "ttg.memdesc_trans"
    src = operand_def(MemDescType)
    order = prop_def(DenseArrayBase)
    result = result_def(MemDescType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue, order: Sequence[int] = (1, 0)):
        order = list(order)
        super().__init__(
            operands=[src],
            result_types=[transposed_memdesc(src.type, order)],
            properties={"order": DenseArrayBase.from_list(i32, order)},
        )

    @property
    def order_list(self) -> list[int]:
        return list(self.order.get_values())

    def verify_(self) -> None:
        order = self.order_list
        if sorted(order) != list(range(len(self.src.type.get_shape()))):
            raise VerifyException("ttg.memdesc_trans: order must be a permutation")
        enc = self.src.type.encoding
        if not isinstance(enc, SwizzledSharedEncodingAttr | NVMMASharedEncodingAttr) or (
            isinstance(enc, NVMMASharedEncodingAttr) and order != [1, 0]
        ):
            raise VerifyException(
                "ttg.memdesc_trans: only #ttg.swizzled_shared tiles and 2D #ttg.nvmma_shared ones"
            )
        if self.result.type != transposed_memdesc(self.src.type, order):
            raise VerifyException(
                "ttg.memdesc_trans: the result must be the source with its dims and its "
                "shared order permuted by `order`"
            )


def transposed_memdesc(t: MemDescType, order: Sequence[int]) -> MemDescType:
    """The type of `ttg.memdesc_trans` of a `t` by `order` (a view: dims permuted, and the
    shared encoding's order with them, so every element keeps its bytes)."""
    shape = t.get_shape()
    enc = t.encoding
    if isinstance(enc, NVMMASharedEncodingAttr) and len(shape) == 2 and list(order) == [1, 0]:
        # the other dim contiguous: `transposed` flips (upstream's view of an nvmma tile)
        enc = NVMMASharedEncodingAttr(
            enc.swizzlingByteWidth, not enc.transposed, enc.elementBitWidth
        )
    elif isinstance(enc, SwizzledSharedEncodingAttr):
        where = {d: i for i, d in enumerate(order)}  # old dim -> new dim
        enc = SwizzledSharedEncodingAttr(
            enc.vec, enc.perPhase, enc.maxPhase, [where[d] for d in enc.order]
        )
    else:
        raise NotImplementedError(f"ttg.memdesc_trans of a {enc} tile")
    return MemDescType(
        [shape[d] for d in order], t.element_type, enc, t.memory_space, t.mutable
    )


@irdl_op_definition
class LocalLoadOp(IRDLOperation):
    """`%x = ttg.local_load %m [token %t] : !ttg.memdesc<...> -> tensor<..., #layout>`."""

    name = "ttg.local_load"
    src = operand_def(MemDescType)
    token = opt_operand_def(AsyncTokenType)
    result = result_def(TensorType)
    traits = traits_def(MemoryReadEffect())

    def __init__(self, src: SSAValue, result_type: Attribute, token: SSAValue | None = None):
        super().__init__(
            operands=[src, [token] if token is not None else []], result_types=[result_type]
        )

    def verify_(self) -> None:
        if shape_of(self.result.type) != self.src.type.get_shape():
            raise VerifyException("ttg.local_load: the result must have the buffer's shape")

    @classmethod
    def parse(cls, parser: Parser):
        src = parser.parse_unresolved_operand()
        tok = None
        if parser.parse_optional_keyword("token") is not None:
            tok = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        st = parser.parse_type()
        parser.parse_punctuation("->")
        rt = parser.parse_type()
        token = parser.resolve_operand(tok, AsyncTokenType()) if tok is not None else None
        op = cls(parser.resolve_operand(src, st), rt, token)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        if self.token is not None:
            printer.print_string(" token ")
            printer.print_operand(self.token)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.src.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class LocalStoreOp(IRDLOperation):
    """`ttg.local_store %x, %m : tensor<..., #layout> -> !ttg.memdesc<...>`."""

    name = "ttg.local_store"
    src = operand_def(TensorType)
    dst = operand_def(MemDescType)
    traits = traits_def(MemoryWriteEffect())
    assembly_format = "$src `,` $dst attr-dict `:` type($src) `->` type($dst)"

    def __init__(self, src: SSAValue, dst: SSAValue):
        super().__init__(operands=[src, dst])


@irdl_op_definition
class AsyncCopyGlobalToLocalOp(IRDLOperation):
    """`%t = ttg.async_copy_global_to_local %ptrs, %m [mask %c] [other %o] : tensor<...x!tt.ptr<T>, #l> -> <..., #shared, #smem, mutable>`:
    cp.async of each element to its place in the buffer (masked-off elements become 0)."""

    name = "ttg.async_copy_global_to_local"
    src = operand_def(TensorType)
    result_buf = operand_def(MemDescType)
    mask = opt_operand_def(TensorType)
    other = opt_operand_def(TensorType)
    token = result_def(AsyncTokenType)
    cache = opt_prop_def(IntegerAttr)
    evict = opt_prop_def(IntegerAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(
        self,
        src: SSAValue,
        dst: SSAValue,
        mask: SSAValue | None = None,
        other: SSAValue | None = None,
    ):
        super().__init__(
            operands=[src, dst, [mask] if mask else [], [other] if other else []],
            result_types=[AsyncTokenType()],
        )

    def verify_(self) -> None:
        if not is_ptr(self.src.type) or shape_of(self.src.type) != self.result_buf.type.get_shape():
            raise VerifyException(
                "ttg.async_copy_global_to_local: a tensor of pointers shaped like the buffer"
            )
        if self.mask is not None and (
            element_type(self.mask.type) != i1
            or encoding_of(self.mask.type) != encoding_of(self.src.type)
        ):
            raise VerifyException("ttg.async_copy_global_to_local: mask must be i1 in src's layout")

    @classmethod
    def parse(cls, parser: Parser):
        src = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        dst = parser.parse_unresolved_operand()
        mask = other = None
        if parser.parse_optional_keyword("mask") is not None:
            mask = parser.parse_unresolved_operand()
        if parser.parse_optional_keyword("other") is not None:
            other = parser.parse_unresolved_operand()
        props = _parse_memory_modifiers(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        st = parser.parse_type()
        parser.parse_punctuation("->")
        dt = _parse_memdesc_body(parser)
        from tritium.ir.types import with_element

        mask_v = parser.resolve_operand(mask, with_element(st, i1)) if mask else None
        other_t = with_element(st, dt.element_type)
        other_v = parser.resolve_operand(other, other_t) if other else None
        op = cls(parser.resolve_operand(src, st), parser.resolve_operand(dst, dt), mask_v, other_v)
        op.properties |= props
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        printer.print_string(", ")
        printer.print_operand(self.result_buf)
        if self.mask is not None:
            printer.print_string(" mask ")
            printer.print_operand(self.mask)
        if self.other is not None:
            printer.print_string(" other ")
            printer.print_operand(self.other)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.src.type)
        printer.print_string(" -> <")
        self.result_buf.type.print_body(printer)
        printer.print_string(">")


@irdl_op_definition
class AsyncCommitGroupOp(IRDLOperation):
    """`%g = ttg.async_commit_group [tokens %t, ...]`: close the group of async copies
    issued since the last commit (cp.async.commit_group)."""

    name = "ttg.async_commit_group"
    tokens = var_operand_def(AsyncTokenType)
    result = result_def(AsyncTokenType)
    traits = traits_def(MemoryWriteEffect())

    def __init__(self, tokens: Sequence[SSAValue] = ()):
        super().__init__(operands=[list(tokens)], result_types=[AsyncTokenType()])

    @classmethod
    def parse(cls, parser: Parser):
        toks = []
        if parser.parse_optional_keyword("tokens") is not None:
            toks = parser.parse_comma_separated_list(
                parser.Delimiter.NONE, parser.parse_unresolved_operand
            )
        attrs = parser.parse_optional_attr_dict()
        op = cls([parser.resolve_operand(t, AsyncTokenType()) for t in toks])
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        if self.tokens:
            printer.print_string(" tokens ")
            printer.print_list(self.tokens, printer.print_operand)
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class AsyncWaitOp(IRDLOperation):
    """`%w = ttg.async_wait [%t, ...] {num = N : i32}`: wait until at most N commit groups
    are in flight (cp.async.wait_group N), then make the copied data visible to every
    thread (the lowering adds bar.sync)."""

    name = "ttg.async_wait"
    tokens = var_operand_def(AsyncTokenType)
    result = result_def(AsyncTokenType)
    traits = traits_def(MemoryWriteEffect())

    def __init__(self, num: int, tokens: Sequence[SSAValue] = ()):
        super().__init__(
            operands=[list(tokens)],
            result_types=[AsyncTokenType()],
            attributes={"num": IntegerAttr(num, 32)},
        )

    @property
    def num(self) -> int:
        return self.attributes["num"].value.data

    def verify_(self) -> None:
        if not isinstance(self.attributes.get("num"), IntegerAttr):
            raise VerifyException("ttg.async_wait needs {num = N : i32}")

    @classmethod
    def parse(cls, parser: Parser):
        toks = []
        t = parser.parse_optional_unresolved_operand()
        if t is not None:
            toks = [t]
            while parser.parse_optional_punctuation(","):
                toks.append(parser.parse_unresolved_operand())
        attrs = parser.parse_optional_attr_dict()
        num = attrs.pop("num", None)
        if not isinstance(num, IntegerAttr):
            parser.raise_error("ttg.async_wait needs {num = N : i32}")
        op = cls(num.value.data, [parser.resolve_operand(x, AsyncTokenType()) for x in toks])
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        if self.tokens:
            printer.print_string(" ")
            printer.print_list(self.tokens, printer.print_operand)
        printer.print_op_attributes(self.attributes)


OPS: list[type[Operation]] = [
    LocalAllocOp,
    LocalDeallocOp,
    MemDescIndexOp,
    MemDescTransOp,
    LocalLoadOp,
    LocalStoreOp,
    AsyncCopyGlobalToLocalOp,
    AsyncCommitGroupOp,
    AsyncWaitOp,
]
for _op in OPS:
    if _op not in ttg.TTG._operations:
        ttg.TTG._operations.append(_op)

__all__ = [
    "AsyncCommitGroupOp",
    "AsyncCopyGlobalToLocalOp",
    "AsyncWaitOp",
    "LocalAllocOp",
    "LocalDeallocOp",
    "LocalLoadOp",
    "LocalStoreOp",
    "MemDescIndexOp",
    "MemDescTransOp",
    "transposed_memdesc",
]
