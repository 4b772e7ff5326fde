"""TritonGPU for `tl.dot`: tensor-core and dot-operand layouts, shared memory, async copies.

Layouts (distributed, with index maths in `tritium.ir.layouts`):

    #mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
    tensor<64x64xf32, #mma>                                      (mma.sync accumulators)
    #mma1 = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], instrShape = [16, 128, 16]}>
    tensor<128x128xf32, #mma1>                                   (wgmma accumulators, sm_90a)
    tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>   (its A operand)
    tensor<64x32xf32, #ttg.dot_op<{opIdx = 0, parent = #blocked}>>          (FMA dot's A)

Shared memory (index maths in `tritium.ir.shared_layout`):

    #shared = #ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
    #shared1 = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
    #smem = #ttg.shared_memory
    %buf = ttg.local_alloc : () -> !ttg.memdesc<3x128x32xf16, #shared, #smem, mutable>
    %s = ttg.memdesc_index %buf[%i] : !ttg.memdesc<3x128x32xf16, ...> -> !ttg.memdesc<128x32xf16, ...>
    %t = ttg.async_copy_global_to_local %ptrs, %s mask %m : tensor<128x32x!tt.ptr<f16>, #blocked> -> <128x32xf16, #shared, #smem, mutable>
    %g = ttg.async_commit_group tokens %t
    %w = ttg.async_wait %g {num = 1 : i32}
    %a = ttg.local_load %s token %w : !ttg.memdesc<128x32xf16, ...> -> tensor<128x32xf16, #ttg.dot_op<...>>
    ttg.local_store %x, %s : tensor<128x32xf16, #blocked> -> !ttg.memdesc<128x32xf16, ...>
    ttg.local_dealloc %buf : !ttg.memdesc<3x128x32xf16, #shared, #smem, mutable>

All in upstream Triton 3.6's syntax. Importing this module registers the attributes and
types into the `ttg` dialect and the layouts as distributed; the ops on these types
(`local_alloc`, async copies, ...) are in `tritium.ir.ttg_memory`, which imports this
module (`tritium.ir.context` imports both).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IntAttr
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import (
    irdl_attr_definition,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from tritium.ir import ttg
from tritium.ir.ttg import _ints, _parse_int_list, _parse_struct, _print_int_list

_CTA_FIELDS = ("CTAsPerCGA", "CTASplitNum", "CTAOrder", "CGALayout")  # read and dropped


def _ilist(a: ArrayAttr) -> list[int]:
    return [x.data for x in a.data]


# --------------------------------------------------------------------------- layouts


@irdl_attr_definition
class NvidiaMmaEncodingAttr(ParametrizedAttribute):
    """`#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA, instrShape}>`:
    the accumulator layout of `mma.sync` (version 2: Ampere/Ada tensor cores, 16x8 tiles
    per warp, repeated over the tensor) or, with versionMajor = 3 and instrShape
    [16, N, K], of `wgmma` (Hopper: each warp of a warpgroup holds 16 rows of the
    warpgroup's 64 x N tile; warps M-first)."""

    name = "ttg.nvidia_mma"

    version_major: IntAttr
    version_minor: IntAttr
    warps_per_cta: ArrayAttr
    instr_shape: ArrayAttr

    def __init__(
        self,
        warps_per_cta: Sequence[int],
        instr_shape: Sequence[int] = (16, 8),
        version_major: int = 2,
        version_minor: int = 0,
    ):
        super().__init__(
            IntAttr(version_major), IntAttr(version_minor), _ints(warps_per_cta), _ints(instr_shape)
        )

    @property
    def versionMajor(self) -> int:
        return self.version_major.data

    @property
    def warpsPerCTA(self) -> list[int]:
        return _ilist(self.warps_per_cta)

    @property
    def instrShape(self) -> list[int]:
        return _ilist(self.instr_shape)

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta.data)

    @property
    def order(self) -> list[int]:
        return list(range(self.rank - 1, -1, -1))

    @property
    def sizePerThread(self) -> list[int]:
        return [1] * (self.rank - 1) + [2]  # c0, c1 are neighbours along N

    def verify(self) -> None:
        if self.versionMajor not in (2, 3):
            raise VerifyException(
                "#ttg.nvidia_mma: versionMajor 2 (mma.sync) or 3 (wgmma) is supported"
            )
        if self.versionMajor == 3:
            wpc = self.warpsPerCTA
            if self.rank != 2 or len(self.instrShape) != 3 or wpc[0] % 4:
                raise VerifyException(
                    "#ttg.nvidia_mma version 3: warpsPerCTA [4k, n] (whole warpgroups along "
                    "M), instrShape [16, N, K]"
                )
        elif self.rank not in (2, 3) or len(self.instrShape) != 2:
            raise VerifyException("#ttg.nvidia_mma: warpsPerCTA of rank 2 or 3, instrShape [m, n]")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        num = lambda: parser.parse_integer(allow_boolean=False)  # noqa: E731
        lst = lambda: _parse_int_list(parser)  # noqa: E731
        fields = {"versionMajor": num, "versionMinor": num, "warpsPerCTA": lst, "instrShape": lst}
        fields |= {k: lst for k in _CTA_FIELDS}
        f = _parse_struct(parser, fields)
        for k in ("versionMajor", "warpsPerCTA", "instrShape"):
            if k not in f:
                parser.raise_error(f"#ttg.nvidia_mma needs {k}")
        return (
            IntAttr(f["versionMajor"]),
            IntAttr(f.get("versionMinor", 0)),
            _ints(f["warpsPerCTA"]),
            _ints(f["instrShape"]),
        )

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(
            f"<{{versionMajor = {self.versionMajor}, versionMinor = {self.version_minor.data}, "
            "warpsPerCTA = "
        )
        _print_int_list(printer, self.warpsPerCTA)
        printer.print_string(", instrShape = ")
        _print_int_list(printer, self.instrShape)
        printer.print_string("}>")


@irdl_attr_definition
class DotOperandEncodingAttr(ParametrizedAttribute):
    """`#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>`: operand A (opIdx 0) or B (1)
    of a `tt.dot` whose result has layout `parent`. With an mma parent, each thread holds
    the elements its mma.sync fragments need (`kWidth` consecutive K elements per 32-bit
    register); with a blocked parent (the FMA dot), each thread holds whole K rows (A) or
    columns (B) for the accumulator elements it owns. kWidth 0: not given (FMA)."""

    name = "ttg.dot_op"

    op_idx: IntAttr
    parent: Attribute
    k_width: IntAttr

    def __init__(self, op_idx: int, parent: Attribute, k_width: int = 0):
        super().__init__(IntAttr(op_idx), parent, IntAttr(k_width))

    @property
    def opIdx(self) -> int:
        return self.op_idx.data

    @property
    def kWidth(self) -> int:
        return self.k_width.data

    @property
    def rank(self) -> int:
        return ttg.layout_rank(self.parent)

    @property
    def k_dim(self) -> int:
        return self.rank - 1 if self.opIdx == 0 else self.rank - 2

    @property
    def order(self) -> list[int]:
        if isinstance(self.parent, NvidiaMmaEncodingAttr):
            # K fastest (upstream's getOrderForDotOperand with kContig)
            rest = [d for d in range(self.rank - 1, -1, -1) if d != self.k_dim]
            return [self.k_dim] + rest
        return ttg.layout_order(self.parent)

    @property
    def sizePerThread(self) -> list[int]:
        spt = [1] * self.rank
        if isinstance(self.parent, NvidiaMmaEncodingAttr):
            spt[self.k_dim] = max(1, self.kWidth)
            return spt
        spt = list(ttg.layout_size_per_thread(self.parent))
        spt[self.k_dim] = 1
        return spt

    def verify(self) -> None:
        if self.opIdx not in (0, 1):
            raise VerifyException("#ttg.dot_op: opIdx must be 0 or 1")
        if isinstance(self.parent, NvidiaMmaEncodingAttr) and self.kWidth <= 0:
            raise VerifyException("#ttg.dot_op: an mma parent needs kWidth")
        if not isinstance(self.parent, NvidiaMmaEncodingAttr | ttg.BlockedEncodingAttr):
            raise VerifyException("#ttg.dot_op: the parent must be #ttg.nvidia_mma or #ttg.blocked")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        num = lambda: parser.parse_integer(allow_boolean=False)  # noqa: E731
        f = _parse_struct(parser, {"opIdx": num, "parent": parser.parse_attribute, "kWidth": num})
        if "opIdx" not in f or "parent" not in f:
            parser.raise_error("#ttg.dot_op needs opIdx and parent")
        return (IntAttr(f["opIdx"]), f["parent"], IntAttr(f.get("kWidth", 0)))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{{opIdx = {self.opIdx}, parent = ")
        printer.print_attribute(self.parent)
        if self.kWidth:
            printer.print_string(f", kWidth = {self.kWidth}")
        printer.print_string("}>")


@irdl_attr_definition
class SwizzledSharedEncodingAttr(ParametrizedAttribute):
    """`#ttg.swizzled_shared<{vec, perPhase, maxPhase, order}>`: a tile in shared memory,
    rows along `order[1]`, contiguous along `order[0]`, with groups of `vec` elements of
    row r moved to group `g ^ ((r / perPhase) % maxPhase)` (so that the rows a warp reads
    at once sit in different banks)."""

    name = "ttg.swizzled_shared"

    vec_attr: IntAttr
    per_phase: IntAttr
    max_phase: IntAttr
    order_attr: ArrayAttr

    def __init__(self, vec: int, per_phase: int, max_phase: int, order: Sequence[int]):
        super().__init__(IntAttr(vec), IntAttr(per_phase), IntAttr(max_phase), _ints(order))

    @property
    def vec(self) -> int:
        return self.vec_attr.data

    @property
    def perPhase(self) -> int:
        return self.per_phase.data

    @property
    def maxPhase(self) -> int:
        return self.max_phase.data

    @property
    def order(self) -> list[int]:
        return _ilist(self.order_attr)

    def verify(self) -> None:
        for v in (self.vec, self.perPhase, self.maxPhase):
            if v < 1 or v & (v - 1):
                raise VerifyException(
                    "#ttg.swizzled_shared: vec, perPhase, maxPhase are powers of 2"
                )
        if sorted(self.order) != list(range(len(self.order))):
            raise VerifyException("#ttg.swizzled_shared: order must be a permutation")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        num = lambda: parser.parse_integer(allow_boolean=False)  # noqa: E731
        lst = lambda: _parse_int_list(parser)  # noqa: E731
        fields = {"vec": num, "perPhase": num, "maxPhase": num, "order": lst}
        f = _parse_struct(parser, fields | {k: lst for k in _CTA_FIELDS})
        if "order" not in f:
            parser.raise_error("#ttg.swizzled_shared needs order")
        return (
            IntAttr(f.get("vec", 1)),
            IntAttr(f.get("perPhase", 1)),
            IntAttr(f.get("maxPhase", 1)),
            _ints(f["order"]),
        )

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(
            f"<{{vec = {self.vec}, perPhase = {self.perPhase}, maxPhase = {self.maxPhase}, order = "
        )
        _print_int_list(printer, self.order)
        printer.print_string("}>")


@irdl_attr_definition
class NVMMASharedEncodingAttr(ParametrizedAttribute):
    """`#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>`:
    a tile in the layout the tensor cores' matrix descriptors read (wgmma operands).
    Contiguous along the last dim (`transposed`: the first), cut into slabs of
    `swizzlingByteWidth` bytes along it; a slab is all rows of that width, one after the
    other, with 16-byte chunks of row r moved to chunk `c ^ (r / perPhase) % maxPhase` (the
    hardware's 128 / 64 / 32-byte swizzle). Index maths: `tritium.ir.shared_layout`."""

    name = "ttg.nvmma_shared"

    swizzle_attr: IntAttr
    transposed_attr: IntAttr
    element_bits: IntAttr

    def __init__(self, swizzle: int, transposed: bool, element_bits: int):
        super().__init__(IntAttr(swizzle), IntAttr(int(transposed)), IntAttr(element_bits))

    @property
    def swizzlingByteWidth(self) -> int:
        return self.swizzle_attr.data

    @property
    def transposed(self) -> bool:
        return bool(self.transposed_attr.data)

    @property
    def elementBitWidth(self) -> int:
        return self.element_bits.data

    @property
    def order(self) -> list[int]:
        return [0, 1] if self.transposed else [1, 0]

    def verify(self) -> None:
        if self.swizzlingByteWidth not in (32, 64, 128):
            raise VerifyException("#ttg.nvmma_shared: swizzlingByteWidth is 32, 64 or 128")
        if self.elementBitWidth not in (8, 16, 32):
            raise VerifyException("#ttg.nvmma_shared: elementBitWidth is 8, 16 or 32")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        num = lambda: parser.parse_integer(allow_boolean=False)  # noqa: E731
        flag = lambda: parser.parse_boolean()  # noqa: E731
        lst = lambda: _parse_int_list(parser)  # noqa: E731
        fields = {"swizzlingByteWidth": num, "transposed": flag, "elementBitWidth": num}
        fields |= {"fp4Padded": flag, "rank": num} | {k: lst for k in _CTA_FIELDS}
        f = _parse_struct(parser, fields)
        if "swizzlingByteWidth" not in f or "elementBitWidth" not in f:
            parser.raise_error("#ttg.nvmma_shared needs swizzlingByteWidth and elementBitWidth")
        return (
            IntAttr(f["swizzlingByteWidth"]),
            IntAttr(int(f.get("transposed", False))),
            IntAttr(f["elementBitWidth"]),
        )

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(
            f"<{{swizzlingByteWidth = {self.swizzlingByteWidth}, transposed = "
            f"{'true' if self.transposed else 'false'}, elementBitWidth = {self.elementBitWidth}}}>"
        )


@irdl_attr_definition
class SharedMemorySpaceAttr(ParametrizedAttribute):
    """`#ttg.shared_memory`: the memory space of a `!ttg.memdesc`."""

    name = "ttg.shared_memory"


# --------------------------------------------------------------------------- types


def _print_shape(printer: Printer, shape: Sequence[int], elem: Attribute | None) -> None:
    printer.print_string("x".join(str(d) for d in shape))
    if elem is not None:
        printer.print_string("x")
        printer.print_attribute(elem)


@irdl_attr_definition
class MemDescType(ParametrizedAttribute, TypeAttribute):
    """`!ttg.memdesc<2x64x32xf32, #shared, #smem, mutable>`: a tile of shared memory.
    A trailing `2x64x32` (upstream's allocShape) names the allocation a view was taken
    from when it is larger than the view."""

    name = "ttg.memdesc"

    shape_attr: ArrayAttr
    element_type: Attribute
    encoding: Attribute
    memory_space: Attribute
    mutable_attr: IntAttr
    alloc_shape_attr: ArrayAttr

    def __init__(
        self,
        shape: Sequence[int],
        element: Attribute,
        encoding: Attribute,
        memory_space: Attribute | None = None,
        mutable: bool = True,
        alloc_shape: Sequence[int] = (),
    ):
        super().__init__(
            _ints(shape),
            element,
            encoding,
            memory_space if memory_space is not None else SharedMemorySpaceAttr(),
            IntAttr(int(mutable)),
            _ints(alloc_shape),
        )

    def get_shape(self) -> tuple[int, ...]:
        return tuple(_ilist(self.shape_attr))

    @property
    def mutable(self) -> bool:
        return bool(self.mutable_attr.data)

    @property
    def alloc_shape(self) -> tuple[int, ...]:
        return tuple(_ilist(self.alloc_shape_attr)) or self.get_shape()

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims, elem = parser.parse_ranked_shape()
            parser.parse_punctuation(",")
            enc = parser.parse_attribute()
            parser.parse_punctuation(",")
            space = parser.parse_attribute()
            mutable, alloc = 0, []
            while parser.parse_optional_punctuation(","):
                if parser.parse_optional_keyword("mutable") is not None:
                    mutable = 1
                else:
                    alloc = parser.parse_dimension_list()
        return (_ints(dims), elem, enc, space, IntAttr(mutable), _ints(alloc))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        self.print_body(printer)
        printer.print_string(">")

    def print_body(self, printer: Printer) -> None:
        _print_shape(printer, self.get_shape(), self.element_type)
        printer.print_string(", ")
        printer.print_attribute(self.encoding)
        printer.print_string(", ")
        printer.print_attribute(self.memory_space)
        if self.mutable:
            printer.print_string(", mutable")
        if self.alloc_shape_attr.data:
            printer.print_string(", ")
            _print_shape(printer, _ilist(self.alloc_shape_attr), None)


@irdl_attr_definition
class AsyncTokenType(ParametrizedAttribute, TypeAttribute):
    """`!ttg.async.token`: orders async copies, their commit groups and waits."""

    name = "ttg.async.token"


def memdesc_bytes(t: MemDescType) -> int:
    from tritium.ir.types import bitwidth

    n = 1
    for d in t.alloc_shape:
        n *= d
    return n * bitwidth(t.element_type) // 8


ATTRS: list[type[Attribute]] = [
    NvidiaMmaEncodingAttr,
    DotOperandEncodingAttr,
    SwizzledSharedEncodingAttr,
    NVMMASharedEncodingAttr,
    SharedMemorySpaceAttr,
    MemDescType,
    AsyncTokenType,
]


def _register() -> None:
    for attr in ATTRS:
        if attr not in ttg.TTG._attributes:
            ttg.TTG._attributes.append(attr)
    ttg.register_distributed_layout(NvidiaMmaEncodingAttr)
    ttg.register_distributed_layout(DotOperandEncodingAttr)
    from tritium.ir.printer import register_alias_prefix

    register_alias_prefix(NvidiaMmaEncodingAttr, "mma")
    register_alias_prefix(SwizzledSharedEncodingAttr, "shared")
    register_alias_prefix(NVMMASharedEncodingAttr, "shared")
    register_alias_prefix(SharedMemorySpaceAttr, "smem")


_register()


def is_mma(attr: Attribute | None) -> bool:
    return isinstance(attr, NvidiaMmaEncodingAttr)


def is_mma_v3(attr: Attribute | None) -> bool:
    """A wgmma accumulator layout (`#ttg.nvidia_mma<{versionMajor = 3, ...}>`)."""
    return isinstance(attr, NvidiaMmaEncodingAttr) and attr.versionMajor == 3


def is_dot_operand(attr: Attribute | None) -> bool:
    return isinstance(attr, DotOperandEncodingAttr)


def is_mma_to_dot_shortcut(src: Attribute, dst: Attribute, elem_bits: int) -> bool:
    """Whether converting an mma accumulator (encoding `src`) of `elem_bits`-bit elements
    to the A operand layout `dst` moves no data between threads (upstream's
    `isMmaToDotShortcut`): A's fragment of K step k is the accumulator's fragments of
    N blocks 2k and 2k + 1, when the elements are 16-bit (kWidth 2) and no warps split N
    (A's layout repeats across such warps; the accumulator's does not). For wgmma
    (version 3) the A operand may belong to another dot's `#mma` (attention's P @ V,
    whose instrShape N is V's width): the A fragment depends only on the warps, so the
    two layouts need the same warpsPerCTA; a warp's 16 x 16 piece of A is then exactly
    wgmma's register-A fragment (`{a0..a3}`), the accumulator's registers unmoved."""
    if not (
        isinstance(src, NvidiaMmaEncodingAttr)
        and isinstance(dst, DotOperandEncodingAttr)
        and isinstance(dst.parent, NvidiaMmaEncodingAttr)
        and dst.opIdx == 0
        and elem_bits == 16
        and dst.kWidth == 2
        and src.rank == 2
        and src.warpsPerCTA[1] == 1
    ):
        return False
    if src.versionMajor == 3:
        return is_mma_v3(dst.parent) and dst.parent.warpsPerCTA == src.warpsPerCTA
    return src.versionMajor == 2 and dst.parent == src


__all__ = [
    "AsyncTokenType",
    "DotOperandEncodingAttr",
    "MemDescType",
    "NVMMASharedEncodingAttr",
    "NvidiaMmaEncodingAttr",
    "SharedMemorySpaceAttr",
    "SwizzledSharedEncodingAttr",
    "is_dot_operand",
    "is_mma",
    "is_mma_v3",
    "is_mma_to_dot_shortcut",
    "memdesc_bytes",
]
