"""The `ttg` (TritonGPU) dialect: layout encodings and layout-changing ops.

A layout encoding rides on a tensor type and says which thread holds which element:

    #blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
    %x = tt.load %p : tensor<1024x!tt.ptr<f32>, #blocked>
    %s = ttg.convert_layout %x : tensor<1024xf32, #blocked> -> tensor<1024xf32, #blocked1>

The index maths for these encodings lives in `tritium.ir.layouts`; this file defines how
they are stored, verified, parsed and printed (upstream Triton 3.x syntax), the builders
the passes use to make them (`blocked_layout`, `default_blocked_layout`), and the module
attributes of TTGIR (`"ttg.num-warps" = 4 : i32`, ...).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IntAttr, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException


def _ints(values: Sequence[int]) -> ArrayAttr:
    return ArrayAttr([IntAttr(v) for v in values])


def _parse_int_list(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
    )


def _print_int_list(printer: Printer, values: Sequence[int]) -> None:
    printer.print_string("[" + ", ".join(str(v) for v in values) + "]")


def _parse_struct(parser: AttrParser, fields: dict) -> dict:
    """Parse `<{key = value, ...}>` where `fields` maps key -> parse function."""
    out: dict = {}
    with parser.in_angle_brackets():
        parser.parse_punctuation("{")
        while True:
            key = parser.parse_identifier()
            parser.parse_punctuation("=")
            if key not in fields:
                parser.raise_error(f"unknown layout field '{key}'")
            out[key] = fields[key]()
            if parser.parse_optional_punctuation(",") is None:
                break
        parser.parse_punctuation("}")
    return out


@irdl_attr_definition
class BlockedEncodingAttr(ParametrizedAttribute):
    """`#ttg.blocked<{sizePerThread, threadsPerWarp, warpsPerCTA, order}>`.

    `order` lists the dims fastest-varying first. CTA-split parameters are left out: tritium
    targets one CTA per program (`ttg.num-ctas = 1`).
    """

    name = "ttg.blocked"

    size_per_thread: ArrayAttr
    threads_per_warp: ArrayAttr
    warps_per_cta: ArrayAttr
    order_attr: ArrayAttr

    def __init__(
        self,
        size_per_thread: Sequence[int],
        threads_per_warp: Sequence[int],
        warps_per_cta: Sequence[int],
        order: Sequence[int],
    ):
        super().__init__(
            _ints(size_per_thread), _ints(threads_per_warp), _ints(warps_per_cta), _ints(order)
        )

    @property
    def sizePerThread(self) -> list[int]:
        return [a.data for a in self.size_per_thread.data]

    @property
    def threadsPerWarp(self) -> list[int]:
        return [a.data for a in self.threads_per_warp.data]

    @property
    def warpsPerCTA(self) -> list[int]:
        return [a.data for a in self.warps_per_cta.data]

    @property
    def order(self) -> list[int]:
        return [a.data for a in self.order_attr.data]

    @property
    def rank(self) -> int:
        return len(self.size_per_thread.data)

    def verify(self) -> None:
        n = self.rank
        if not (len(self.threadsPerWarp) == len(self.warpsPerCTA) == len(self.order) == n):
            raise VerifyException("#ttg.blocked: all fields must have the same rank")
        if sorted(self.order) != list(range(n)):
            raise VerifyException("#ttg.blocked: order must be a permutation")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        lst = lambda: _parse_int_list(parser)  # noqa: E731
        f = _parse_struct(
            parser,
            {
                "sizePerThread": lst,
                "threadsPerWarp": lst,
                "warpsPerCTA": lst,
                "order": lst,
                "CGALayout": lst,
            },
        )
        for k in ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"):
            if k not in f:
                parser.raise_error(f"#ttg.blocked needs {k}")
        return (
            _ints(f["sizePerThread"]),
            _ints(f["threadsPerWarp"]),
            _ints(f["warpsPerCTA"]),
            _ints(f["order"]),
        )

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<{sizePerThread = ")
        _print_int_list(printer, self.sizePerThread)
        printer.print_string(", threadsPerWarp = ")
        _print_int_list(printer, self.threadsPerWarp)
        printer.print_string(", warpsPerCTA = ")
        _print_int_list(printer, self.warpsPerCTA)
        printer.print_string(", order = ")
        _print_int_list(printer, self.order)
        printer.print_string("}>")


@irdl_attr_definition
class SliceEncodingAttr(ParametrizedAttribute):
    """`#ttg.slice<{dim = 1, parent = #blocked}>`: the parent layout with `dim` removed
    (the layout of a reduction's result, or of the operand of `tt.expand_dims`)."""

    name = "ttg.slice"

    dim_attr: IntAttr
    parent: Attribute

    def __init__(self, dim: int, parent: Attribute):
        super().__init__(IntAttr(dim), parent)

    @property
    def dim(self) -> int:
        return self.dim_attr.data

    @property
    def rank(self) -> int:
        return layout_rank(self.parent) - 1

    @property
    def order(self) -> list[int]:
        """The parent's order without `dim`, renumbered (fastest-varying first)."""
        return [d if d < self.dim else d - 1 for d in layout_order(self.parent) if d != self.dim]

    @property
    def sizePerThread(self) -> list[int]:
        spt = layout_size_per_thread(self.parent)
        return spt[: self.dim] + spt[self.dim + 1 :]

    def verify(self) -> None:
        # other parents (mma, ...) come with the layouts that define them
        if not isinstance(self.parent, BlockedEncodingAttr | SliceEncodingAttr):
            return
        if not 0 <= self.dim < layout_rank(self.parent):
            raise VerifyException("#ttg.slice: dim out of range for the parent layout")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        f = _parse_struct(
            parser,
            {
                "dim": lambda: parser.parse_integer(allow_boolean=False),
                "parent": parser.parse_attribute,
            },
        )
        return (IntAttr(f["dim"]), f["parent"])

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{{dim = {self.dim}, parent = ")
        printer.print_attribute(self.parent)
        printer.print_string("}>")


@irdl_op_definition
class ConvertLayoutOp(IRDLOperation):
    """`ttg.convert_layout %x : tensor<..., #a> -> tensor<..., #b>`: same values, new owners."""

    name = "ttg.convert_layout"
    src = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue, result_type: Attribute):
        super().__init__(operands=[src], result_types=[result_type])

    def verify_(self) -> None:
        s, r = self.src.type, self.result.type
        if s.get_shape() != r.get_shape() or s.element_type != r.element_type:
            raise VerifyException("ttg.convert_layout: shape and element type must not change")


TTG = Dialect("ttg", [ConvertLayoutOp], [BlockedEncodingAttr, SliceEncodingAttr])


# --------------------------------------------------------------------------- layout helpers

DistributedLayout = BlockedEncodingAttr | SliceEncodingAttr
# Layout classes defined elsewhere (ttg_mma.py: #ttg.nvidia_mma, #ttg.dot_op) join with
# `register_distributed_layout`; each has `rank`, `order` and `sizePerThread`.
_DISTRIBUTED: list[type] = [BlockedEncodingAttr, SliceEncodingAttr]


def register_distributed_layout(cls: type) -> None:
    if cls not in _DISTRIBUTED:
        _DISTRIBUTED.append(cls)


def is_distributed(attr: Attribute | None) -> bool:
    """A layout that spreads a tensor over the threads' registers (blocked, slice, mma,
    dot operand)."""
    return isinstance(attr, tuple(_DISTRIBUTED))


def layout_rank(attr: Attribute) -> int:
    if is_distributed(attr):
        return attr.rank
    raise TypeError(f"not a distributed layout: {attr}")


def layout_order(attr: Attribute) -> list[int]:
    """Dims fastest-varying first (a slice drops its `dim` from the parent's order)."""
    if is_distributed(attr):
        return attr.order
    raise TypeError(f"not a distributed layout: {attr}")


def layout_size_per_thread(attr: Attribute) -> list[int]:
    if is_distributed(attr):
        return attr.sizePerThread
    raise TypeError(f"not a distributed layout: {attr}")


def blocked_layout(
    shape: Sequence[int],
    size_per_thread: Sequence[int],
    order: Sequence[int],
    num_warps: int,
    threads_per_warp: int = 32,
) -> BlockedEncodingAttr:
    """The blocked layout that covers `shape` starting from its fastest dim, as upstream's
    `BlockedEncodingAttr::get(shape, sizePerThread, order, numWarps, threadsPerWarp)` builds it.

    Walking the dims in `order` (all but the slowest), each takes as many threads as it has
    elements left to cover (`shape / sizePerThread`), lanes of a warp first, then warps; the
    slowest dim takes whatever lanes and warps remain, so a warp always has all its lanes and
    the CTA all its warps (small shapes are then replicated).
    """
    rank = len(shape)
    if not (len(size_per_thread) == len(order) == rank) or sorted(order) != list(range(rank)):
        raise ValueError("blocked_layout: shape, sizePerThread and order must agree in rank")
    tpw = [1] * rank
    wpc = [1] * rank
    lanes_left, warps_left = threads_per_warp, num_warps
    threads_left = num_warps * threads_per_warp
    lanes_used = warps_used = 1
    for i in list(order)[:-1]:
        wanted = _clamp(threads_left, 1, max(1, shape[i] // size_per_thread[i]))
        tpw[i] = _clamp(wanted, 1, lanes_left)
        wpc[i] = _clamp(wanted // tpw[i], 1, warps_left)
        lanes_left //= tpw[i]
        warps_left //= wpc[i]
        threads_left //= wanted
        lanes_used *= tpw[i]
        warps_used *= wpc[i]
    last = order[-1]
    tpw[last] = threads_per_warp // lanes_used
    wpc[last] = num_warps // warps_used
    return BlockedEncodingAttr(size_per_thread, tpw, wpc, order)


def default_blocked_layout(
    shape: Sequence[int], num_warps: int, threads_per_warp: int = 32
) -> BlockedEncodingAttr:
    """convert-triton-to-tritongpu's layout: one element per thread, row-major order
    (`[rank-1, ..., 0]`), e.g. `tensor<1024xf32>` with 4 warps gets
    `sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]`."""
    rank = len(shape)
    return blocked_layout(
        shape, [1] * rank, list(range(rank - 1, -1, -1)), num_warps, threads_per_warp
    )


def _clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(v, hi))


# --------------------------------------------------------------------------- module attributes

NUM_WARPS_ATTR = "ttg.num-warps"
NUM_CTAS_ATTR = "ttg.num-ctas"
THREADS_PER_WARP_ATTR = "ttg.threads-per-warp"
TARGET_ATTR = "ttg.target"


def module_int_attr(module: Operation, key: str, default: int | None = None) -> int | None:
    """An integer module attribute such as `"ttg.num-warps" = 4 : i32`."""
    attr = module.attributes.get(key)
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    return default


def compute_capability(op: Operation) -> int:
    """`ttg.target = "cuda:89"` of `op`'s module (or of `op`, a module) -> 89; 80 when unset."""
    while op.parent_op() is not None and TARGET_ATTR not in op.attributes:
        op = op.parent_op()
    attr = op.attributes.get(TARGET_ATTR)
    text = attr.data if isinstance(attr, StringAttr) else ""
    return int(text.removeprefix("cuda:")) if text.removeprefix("cuda:").isdigit() else 80


def num_warps_of(module: Operation) -> int:
    n = module_int_attr(module, NUM_WARPS_ATTR)
    if n is None:
        raise ValueError('module has no "ttg.num-warps" attribute (not TTGIR?)')
    return n


def threads_per_warp_of(module: Operation) -> int:
    return module_int_attr(module, THREADS_PER_WARP_ATTR, 32)
