"""The lattice and per-op rules of the axis-info analysis (see `axis_info.py`).

    AxisInfo(contiguity=(1024,), divisibility=(16,), constancy=(1,))   # a row of 16B-aligned ptrs

Each rule maps an op and the `AxisInfo` of its operands to the `AxisInfo` of its result,
following upstream Triton's visitors (lib/Analysis/AxisInfo.cpp); ops without a rule know
nothing about their results.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import DenseArrayBase, DenseIntOrFPElementsAttr, IntegerAttr
from xdsl.ir import Attribute, Operation

from tritium.ir import tt
from tritium.ir.arith import CMPI_PREDICATES, CmpiOp, SelectOp, constant_value
from tritium.ir.types import PointerType, bitwidth, element_type, shape_of

MAX_DIVISOR = 1 << 62
"""Divisibility of 0 (and contiguity/constancy of 'anything goes' during loop fixpoints)."""


def pow2_divisor(n: int) -> int:
    """Largest power of two dividing `n` (MAX_DIVISOR for 0)."""
    if n == 0:
        return MAX_DIVISOR
    return min(abs(n) & -abs(n), MAX_DIVISOR)


def gcd(*xs: int) -> int:
    g = 0
    for x in xs:
        g = math.gcd(g, x)
    return g


def _mul_div(a: int, b: int) -> int:
    return min(a * b, MAX_DIVISOR)


@dataclass(frozen=True)
class AxisInfo:
    contiguity: tuple[int, ...]
    divisibility: tuple[int, ...]
    constancy: tuple[int, ...]
    constant: int | None = None

    @property
    def rank(self) -> int:
        return len(self.contiguity)

    @staticmethod
    def unknown(rank: int) -> AxisInfo:
        """Nothing known (the safe answer)."""
        return AxisInfo((1,) * rank, (1,) * rank, (1,) * rank)

    @staticmethod
    def top(rank: int) -> AxisInfo:
        """Anything possible so far (start of a loop fixpoint)."""
        m = (MAX_DIVISOR,) * rank
        return AxisInfo(m, m, m)

    def __str__(self) -> str:
        c = "" if self.constant is None else f", constant = {self.constant}"
        return (
            f"contiguity = {list(self.contiguity)}, divisibility = {list(self.divisibility)}, "
            f"constancy = {list(self.constancy)}{c}"
        )


def _div_from_contiguity(a: AxisInfo, b: AxisInfo, d: int) -> int:
    ca, cb = a.contiguity[d], b.contiguity[d]
    if ca == cb or MAX_DIVISOR in (ca, cb):
        return gcd(a.divisibility[d], b.divisibility[d])
    return gcd(a.divisibility[d], b.divisibility[d], ca, cb)


def join(a: AxisInfo, b: AxisInfo) -> AxisInfo:
    """What holds for a value that is either `a` or `b`."""
    if a.rank != b.rank:
        return AxisInfo.unknown(max(a.rank, b.rank))
    r = range(a.rank)
    return AxisInfo(
        tuple(gcd(a.contiguity[d], b.contiguity[d]) for d in r),
        tuple(_div_from_contiguity(a, b, d) for d in r),
        tuple(gcd(a.constancy[d], b.constancy[d]) for d in r),
        a.constant if a.constant is not None and a.constant == b.constant else None,
    )


def _hint(attr: Attribute | None, rank: int) -> tuple[int, ...] | None:
    if isinstance(attr, IntegerAttr):
        return (attr.value.data,) * rank if rank == 1 else None
    if isinstance(attr, DenseArrayBase):
        vals = tuple(int(v) for v in attr.get_values())
        return vals if len(vals) == rank else None
    if isinstance(attr, DenseIntOrFPElementsAttr):
        vals = tuple(int(v) for v in attr.get_values())
        return vals if len(vals) == rank else None
    return None


def with_hints(info: AxisInfo, attrs: dict[str, Attribute]) -> AxisInfo:
    """Apply `tt.contiguity` / `tt.divisibility` / `tt.constancy` hints."""
    c = _hint(attrs.get("tt.contiguity"), info.rank) or info.contiguity
    v = _hint(attrs.get("tt.divisibility"), info.rank) or info.divisibility
    k = _hint(attrs.get("tt.constancy"), info.rank) or info.constancy
    return AxisInfo(c, v, k, info.constant)


# --------------------------------------------------------------------------- op rules

Rule = Callable[[Operation, list[AxisInfo]], AxisInfo | None]
RULES: dict[str, Rule] = {}


def _rule(*names: str):
    def deco(fn: Rule) -> Rule:
        for n in names:
            RULES[n] = fn
        return fn

    return deco


def _shape(op: Operation) -> tuple[int, ...]:
    return shape_of(op.results[0].type)


def _is_contig_dim(info: AxisInfo, shape: tuple[int, ...], d: int) -> bool:
    return bool(shape) and info.contiguity[d] == shape[d]


def _is_const_dim(info: AxisInfo, shape: tuple[int, ...], d: int) -> bool:
    return bool(shape) and info.constancy[d] == shape[d]


def _binary(op, ins, contig, divis, const, value) -> AxisInfo:
    """Upstream's BinaryOpVisitorImpl: a known constant result has contiguity 1."""
    a, b = ins
    k = value(a.constant, b.constant) if a.constant is not None and b.constant is not None else None
    r = range(a.rank)
    if k is not None:
        return AxisInfo(
            (1,) * a.rank,
            (pow2_divisor(k),) * a.rank,
            tuple(max(a.constancy[d], b.constancy[d]) for d in r),
            k,
        )
    return AxisInfo(
        tuple(contig(a, b, d) for d in r),
        tuple(divis(a, b, d) for d in r),
        tuple(const(a, b, d) for d in r),
    )


def _gcd_constancy(a, b, d):
    return gcd(a.constancy[d], b.constancy[d])


@_rule("arith.addi", "arith.subi", "tt.addptr")
def _add_sub(op, ins):
    scale = 1
    if op.name == "tt.addptr":
        pointee = element_type(op.results[0].type)
        scale = max(1, bitwidth(pointee.pointee) // 8) if isinstance(pointee, PointerType) else 1
    return add_info(ins[0], ins[1], scale, sub=op.name == "arith.subi")


def add_info(a: AxisInfo, b: AxisInfo, scale: int = 1, sub: bool = False) -> AxisInfo:
    """`a + b * scale` (or `a - b`): addi / subi, and `tt.addptr` with `scale` the
    pointee's bytes."""

    def contig(a, b, d):
        if sub:
            return gcd(a.contiguity[d], b.constancy[d])
        return max(gcd(a.constancy[d], b.contiguity[d]), gcd(a.contiguity[d], b.constancy[d]))

    def divis(a, b, d):
        return gcd(a.divisibility[d], _mul_div(b.divisibility[d], scale))

    def value(x, y):
        return x - y if sub else x + y * scale

    return _binary(None, [a, b], contig, divis, _gcd_constancy, value)


@_rule("arith.muli")
def _mul(op, ins):
    def contig(a, b, d):
        return max(
            a.contiguity[d] if b.constant == 1 else 1, b.contiguity[d] if a.constant == 1 else 1
        )

    def divis(a, b, d):
        da = 1 if a.contiguity[d] > 1 and b.constant != 1 else a.divisibility[d]
        db = 1 if b.contiguity[d] > 1 and a.constant != 1 else b.divisibility[d]
        return _mul_div(da, db)

    return _binary(op, ins, contig, divis, _gcd_constancy, lambda x, y: x * y)


def _trunc_div(x: int, y: int) -> int | None:
    if y == 0:
        return None
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


@_rule("arith.divsi", "arith.divui")
def _div(op, ins):
    shape = _shape(op)

    def contig(a, b, d):
        return a.contiguity[d] if b.constant == 1 else 1

    def const(a, b, d):
        k = gcd(a.constancy[d], b.constancy[d])
        if _is_contig_dim(a, shape, d) and _is_const_dim(b, shape, d):
            k = max(k, gcd(a.contiguity[d], a.divisibility[d], b.divisibility[d]))
        return k if shape else 1

    def divis(a, b, d):
        if a.constant == 0 or b.constant == 1:
            return a.divisibility[d]
        if (
            b.constant is not None
            and b.constant != 0
            and pow2_divisor(b.constant) == abs(b.constant)
        ):
            if a.contiguity[d] == 1:
                return max(1, a.divisibility[d] // abs(b.constant))
        return 1

    return _binary(op, ins, contig, divis, const, _trunc_div)


def _rem_value(x: int, y: int) -> int | None:
    q = _trunc_div(x, y)
    return None if q is None else x - y * q


@_rule("arith.remsi", "arith.remui")
def _rem(op, ins):
    shape = _shape(op)

    def contig(a, b, d):
        if _is_contig_dim(a, shape, d) and _is_const_dim(b, shape, d):
            return gcd(a.contiguity[d], a.divisibility[d], b.divisibility[d])
        return 1

    def divis(a, b, d):
        if b.constancy[d] > 1:
            return gcd(a.divisibility[d], b.divisibility[d])
        return 1

    def const(a, b, d):
        if not shape:
            return 1
        if b.constant == 1:
            return shape[d]
        return gcd(a.constancy[d], b.constancy[d])

    info = _binary(op, ins, contig, divis, const, _rem_value)
    if info.constant is None and ins[1].constant == 1:
        info = AxisInfo(info.contiguity, info.divisibility, info.constancy, 0)
    return info


@_rule("arith.andi", "arith.ori", "arith.xori")
def _logical(op, ins):
    fn = {"arith.andi": int.__and__, "arith.ori": int.__or__, "arith.xori": int.__xor__}[op.name]

    def one(a, b, d):
        return 1

    return _binary(op, ins, one, one, _gcd_constancy, fn)


@_rule("arith.shli", "arith.shrui", "arith.shrsi")
def _shift(op, ins):
    left = op.name == "arith.shli"

    def contig(a, b, d):
        return a.contiguity[d] if b.constant == 0 else 1

    def divis(a, b, d):
        if not left and b.constant is None:
            return 1
        shift = b.constant or 0
        if shift < 0 or shift >= 63:
            return 1
        da = 1 if a.contiguity[d] > 1 and shift else a.divisibility[d]
        return _mul_div(da, 1 << shift) if left else max(1, da >> shift)

    def value(x, y):
        if not 0 <= y < 64:
            return None
        return x << y if left else x >> y

    return _binary(op, ins, contig, divis, _gcd_constancy, value)


@_rule("arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui")
def _max_min(op, ins):
    a, b = ins
    if a.constant is not None and b.constant is not None:
        k = max(a.constant, b.constant) if "max" in op.name else min(a.constant, b.constant)
        return AxisInfo((1,) * a.rank, (1,) * a.rank, (1,) * a.rank, k)
    r = range(a.rank)
    return AxisInfo(
        tuple(gcd(a.contiguity[d], b.contiguity[d]) for d in r),
        tuple(_div_from_contiguity(a, b, d) for d in r),
        tuple(gcd(a.constancy[d], b.constancy[d]) for d in r),
    )


@_rule("arith.cmpi")
def _cmpi(op: CmpiOp, ins):
    shape = _shape(op)
    if not shape:
        return None
    a, b = ins
    pred = CMPI_PREDICATES[op.predicate.value.data]
    kind = pred if pred in ("eq", "ne") else pred[1:]
    if a.constant is not None and b.constant is not None:
        ops = {
            "eq": a.constant == b.constant,
            "ne": a.constant != b.constant,
            "lt": a.constant < b.constant,
            "le": a.constant <= b.constant,
            "gt": a.constant > b.constant,
            "ge": a.constant >= b.constant,
        }
        return AxisInfo((1,) * a.rank, (1,) * a.rank, a.constancy, int(ops[kind]))
    const = []
    for d in range(a.rank):
        k = gcd(a.constancy[d], b.constancy[d])
        if kind in ("gt", "le") and _is_const_dim(a, shape, d):
            k = max(k, gcd(b.contiguity[d], a.divisibility[d], b.divisibility[d]))
        elif kind in ("lt", "ge") and _is_const_dim(b, shape, d):
            k = max(k, gcd(a.contiguity[d], a.divisibility[d], b.divisibility[d]))
        const.append(k)
    return AxisInfo((1,) * a.rank, (1,) * a.rank, tuple(const))


@_rule("arith.select")
def _select(op: SelectOp, ins):
    c, a, b = ins
    if c.constant is not None:
        return b if c.constant == 0 else a
    r = range(a.rank)
    scalar_cond = not shape_of(op.cond.type)
    cc = (MAX_DIVISOR,) * a.rank if scalar_cond else c.constancy
    return AxisInfo(
        tuple(gcd(a.contiguity[d], b.contiguity[d], cc[d]) for d in r),
        tuple(_div_from_contiguity(a, b, d) for d in r),
        tuple(gcd(a.constancy[d], b.constancy[d], cc[d]) for d in r),
        a.constant if a.constant is not None and a.constant == b.constant else None,
    )


@_rule(
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
    "arith.index_cast",
    "tt.ptr_to_int",
    "tt.int_to_ptr",
    "tt.bitcast",
    "ttg.convert_layout",
)
def _same(op, ins):
    return ins[0]


@_rule("arith.constant")
def _constant(op, ins):
    k = constant_value(op.results[0])
    if not isinstance(k, int):
        return None
    shape = _shape(op)
    rank = max(len(shape), 1)
    return AxisInfo((1,) * rank, (pow2_divisor(k),) * rank, tuple(shape) or (1,), k)


@_rule("tt.make_range")
def _make_range(op: tt.MakeRangeOp, ins):
    start, end = op.start.value.data, op.end.value.data
    return AxisInfo((end - start,), (pow2_divisor(start),), (1,))


@_rule("tt.splat")
def _splat(op, ins):
    shape = _shape(op)
    return AxisInfo(
        (1,) * len(shape), (ins[0].divisibility[0],) * len(shape), tuple(shape), ins[0].constant
    )


@_rule("tt.broadcast")
def _broadcast(op: tt.BroadcastOp, ins):
    src, dst = shape_of(op.src.type), _shape(op)
    a = ins[0]
    r = range(len(dst))
    return AxisInfo(
        tuple(1 if src[d] == 1 else a.contiguity[d] for d in r),
        a.divisibility,
        tuple(dst[d] if src[d] == 1 else a.constancy[d] for d in r),
        a.constant,
    )


@_rule("tt.expand_dims")
def _expand_dims(op: tt.ExpandDimsOp, ins):
    a = ins[0]
    axis = op.axis.value.data
    if a.constant is not None:
        new_div = pow2_divisor(a.constant)
    else:
        new_div = gcd(*(1 if c > 1 else v for c, v in zip(a.contiguity, a.divisibility)))
    c, v, k = list(a.contiguity), list(a.divisibility), list(a.constancy)
    c.insert(axis, 1)
    v.insert(axis, new_div)
    k.insert(axis, 1)
    return AxisInfo(tuple(c), tuple(v), tuple(k), a.constant)


@_rule("tt.trans")
def _trans(op: tt.TransOp, ins):
    """Result dim i is operand dim order[i]: each per-dim fact moves with its dim."""
    a, order = ins[0], op.order_list
    return AxisInfo(
        tuple(a.contiguity[d] for d in order),
        tuple(a.divisibility[d] for d in order),
        tuple(a.constancy[d] for d in order),
        a.constant,
    )


@_rule("tt.load")
def _load(op: tt.LoadOp, ins):
    """Equal pointers under equal masks load equal values. Upstream ignores `other`; a
    masked-off element is `other`'s, so its constancy counts too."""
    p, rest = ins[0], ins[1:]
    r = range(p.rank)
    return AxisInfo(
        (1,) * p.rank,
        (1,) * p.rank,
        tuple(gcd(p.constancy[d], *(x.constancy[d] for x in rest)) for d in r),
    )
