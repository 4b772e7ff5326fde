"""`canonicalize`: local simplifications, applied until nothing changes.

    %c0 = arith.constant 0 : i32
    %s = tt.splat %c0 : i32 -> tensor<8xi32>
    %y = arith.addi %x, %s : tensor<8xi32>
    %b = tt.broadcast %t : tensor<1x8xi32> -> tensor<1x8xi32>
    %p2 = tt.addptr %p, %c0 : !tt.ptr<f32>, i32
  =>
    (%y is %x, %b is %t, %p2 is %p; the splat becomes `arith.constant dense<0>` and,
     unused, goes)

The patterns (all tensor-aware: a tensor constant is a splat `dense<c>`):
* constant folding of integer arith (addi, subi, muli, and/or/xor, shifts, min/max,
  divsi/remsi) and of f32/f64 addf/subf/mulf/divf (computed in the type's precision),
  and of `arith.cmpi`;
* identities: `x + 0`, `x - 0`, `x * 1`, `x * 0`, `x | 0`, `x ^ 0`, `x & 0`, `x << 0`,
  float `x * 1.0` and `x / 1.0` (not `x + 0.0`: wrong for -0.0);
* `tt.splat` of a constant -> dense constant; `tt.broadcast` / `tt.expand_dims` of a splat
  -> splat; a broadcast to its own type -> its operand; `tt.addptr` by zero -> the pointer;
* `arith.select` with a constant condition or equal arms;
* `tt.load` / `tt.store` with an all-true mask lose it; a store with an all-false mask goes;
  a load with an all-false mask and an `other` becomes `other`;
* TTGIR: `ttg.convert_layout` to its own layout goes, convert-of-convert becomes one
  convert, and a convert of a splat, make_range or constant makes that value directly in
  the new layout;
* xDSL's own canonicalization patterns for scf/cf and scalar integer arith, except its
  float constant folders (they compute in double precision whatever the type).
Unused side-effect-free ops are erased as they are found (see `dce`).
"""

from __future__ import annotations

import operator

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.traits import HasCanonicalizationPatternsTrait

from tritium.ir import arith, tt
from tritium.ir.arith import CMPI_PREDICATES, constant_value
from tritium.ir.ttg import ConvertLayoutOp
from tritium.ir.types import element_type, is_tensor
from tritium.passes.dce import RemoveDeadOps, has_volatile_access
from tritium.passes.utils import (
    is_exact_float_type,
    keep_locations,
    make_constant,
    wrap_int,
)


def replace_with(rewriter: PatternRewriter, op: Operation, new_ops, results=None) -> None:
    """`rewriter.replace`, giving the new ops `op`'s source location."""
    if isinstance(new_ops, Operation):
        new_ops = [new_ops]
    for n in new_ops:
        n.location = op.location
    rewriter.replace(op, new_ops, results)


def replace_with_value(rewriter: PatternRewriter, op: Operation, value: SSAValue) -> None:
    rewriter.replace(op, [], [value])


# --------------------------------------------------------------------------- constant folding


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _int_fold(name: str, a: int, b: int, width: int) -> int | None:
    mask = (1 << width) - 1
    if name in ("arith.shli", "arith.shrui", "arith.shrsi") and not 0 <= b < width:
        return None
    if name in ("arith.divsi", "arith.remsi"):
        if b == 0 or (a == -(1 << (width - 1)) and b == -1):
            return None
        q = _trunc_div(a, b)
        return q if name == "arith.divsi" else a - b * q
    simple = {
        "arith.addi": operator.add,
        "arith.subi": operator.sub,
        "arith.muli": operator.mul,
        "arith.andi": operator.and_,
        "arith.ori": operator.or_,
        "arith.xori": operator.xor,
        "arith.maxsi": max,
        "arith.minsi": min,
        "arith.shli": operator.lshift,
        "arith.shrsi": operator.rshift,
    }
    if name in simple:
        return simple[name](a, b)
    if name == "arith.shrui":
        return (a & mask) >> b
    return None


_FLOAT_OPS = {  # numpy's ufuncs by name: numpy loads when a compile first folds a float
    "arith.addf": "add",
    "arith.subf": "subtract",
    "arith.mulf": "multiply",
    "arith.divf": "divide",
}


class FoldConstantBinary(RewritePattern):
    """`op(c1, c2)` -> `c` for integer arith and f32/f64 addf/subf/mulf/divf."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if len(op.operands) != 2 or len(op.results) != 1 or not op.name.startswith("arith."):
            return
        a, b = (constant_value(v) for v in op.operands)
        if a is None or b is None:
            return
        rtype = op.results[0].type
        elem = element_type(rtype)
        if isinstance(elem, IntegerType) and op.operands[0].type == rtype:
            width = elem.width.data
            r = _int_fold(op.name, int(a), int(b), width)
            if r is not None:
                replace_with(rewriter, op, make_constant(wrap_int(r, width), rtype))
        elif op.name in _FLOAT_OPS and is_exact_float_type(elem):
            import numpy as np

            dt = np.float32 if elem.bitwidth == 32 else np.float64
            with np.errstate(all="ignore"):
                r = getattr(np, _FLOAT_OPS[op.name])(dt(a), dt(b))
            replace_with(rewriter, op, make_constant(float(r), rtype))


def _cmpi(pred: str, a: int, b: int, width: int) -> bool:
    if pred.startswith("u"):
        a &= (1 << width) - 1
        b &= (1 << width) - 1
    op = {
        "eq": operator.eq,
        "ne": operator.ne,
        "lt": operator.lt,
        "le": operator.le,
        "gt": operator.gt,
        "ge": operator.ge,
    }
    key = pred if pred in ("eq", "ne") else pred[1:]
    return op[key](a, b)


class FoldConstantCmpi(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, arith.CmpiOp):
            return
        a, b = constant_value(op.lhs), constant_value(op.rhs)
        elem = element_type(op.lhs.type)
        if a is None or b is None or not isinstance(elem, IntegerType):
            return
        r = _cmpi(CMPI_PREDICATES[op.predicate.value.data], a, b, elem.width.data)
        replace_with(rewriter, op, make_constant(int(r), op.result.type))


# --------------------------------------------------------------------------- identities

# op name -> (right identity, left identity or None, absorbing value or None)
_INT_IDENTITIES = {
    "arith.addi": (0, 0, None),
    "arith.subi": (0, None, None),
    "arith.muli": (1, 1, 0),
    "arith.ori": (0, 0, None),
    "arith.xori": (0, 0, None),
    "arith.andi": (None, None, 0),
    "arith.shli": (0, None, None),
    "arith.shrsi": (0, None, None),
    "arith.shrui": (0, None, None),
}
_FLOAT_IDENTITIES = {"arith.mulf": (1.0, 1.0), "arith.divf": (1.0, None)}


class FoldIdentityOperand(RewritePattern):
    """`x + 0`, `x * 1`, `x * 0`, ... (and float `x * 1.0`, `x / 1.0`)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if len(op.operands) != 2 or len(op.results) != 1:
            return
        lhs, rhs = op.operands
        rtype = op.results[0].type
        if lhs.type != rtype or rhs.type != rtype:
            return
        a, b = constant_value(lhs), constant_value(rhs)
        if op.name in _INT_IDENTITIES:
            right, left, absorbing = _INT_IDENTITIES[op.name]
            if absorbing is not None and absorbing in (a, b):
                zero = lhs if a == absorbing else rhs
                replace_with_value(rewriter, op, zero)
            elif right is not None and b == right:
                replace_with_value(rewriter, op, lhs)
            elif left is not None and a == left:
                replace_with_value(rewriter, op, rhs)
        elif op.name in _FLOAT_IDENTITIES:
            right, left = _FLOAT_IDENTITIES[op.name]
            if b == right:
                replace_with_value(rewriter, op, lhs)
            elif left is not None and a == left:
                replace_with_value(rewriter, op, rhs)


# --------------------------------------------------------------------------- shape ops


class SplatOfConstant(RewritePattern):
    """`tt.splat (arith.constant c)` -> `arith.constant dense<c>`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, tt.SplatOp) and (c := constant_value(op.src)) is not None:
            replace_with(rewriter, op, make_constant(c, op.result.type))


class SimplifyBroadcastExpand(RewritePattern):
    """Broadcast to the same type -> operand; broadcast/expand_dims of a splat (or a splat
    constant) -> a splat (constant) of the result type."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, tt.BroadcastOp | tt.ExpandDimsOp):
            return
        src = op.src
        if isinstance(op, tt.BroadcastOp) and src.type == op.result.type:
            replace_with_value(rewriter, op, src)
        elif isinstance(src.owner, tt.SplatOp):
            replace_with(rewriter, op, tt.SplatOp(src.owner.src, op.result.type))
        elif (c := constant_value(src)) is not None:
            replace_with(rewriter, op, make_constant(c, op.result.type))


class AddPtrZeroOffset(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, tt.AddPtrOp) and constant_value(op.offset) == 0:
            replace_with_value(rewriter, op, op.ptr)


class SimplifySelect(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, arith.SelectOp):
            return
        if op.lhs is op.rhs:
            replace_with_value(rewriter, op, op.lhs)
        elif (c := constant_value(op.cond)) is not None:
            replace_with_value(rewriter, op, op.lhs if c else op.rhs)


class SimplifyMaskedMemory(RewritePattern):
    """All-true masks go; a store under an all-false mask goes; a load under an all-false
    mask with an `other` value is that value."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, tt.LoadOp | tt.StoreOp) or op.mask is None:
            return
        m = constant_value(op.mask)
        if m is None:
            return
        volatile = isinstance(op, tt.LoadOp) and has_volatile_access(op)
        if m and not volatile:
            if isinstance(op, tt.LoadOp):
                new = tt.LoadOp(op.ptr)
            else:
                new = tt.StoreOp(op.ptr, op.value)
            new.properties.update(
                {k: v for k, v in op.properties.items() if k != "operandSegmentSizes"}
            )
            new.attributes.update(op.attributes)
            replace_with(rewriter, op, new)
        elif not m and isinstance(op, tt.StoreOp):
            rewriter.erase(op)
        elif not m and op.other is not None and not volatile:
            replace_with_value(rewriter, op, op.other)


# --------------------------------------------------------------------------- ttg.convert_layout


class FoldConvertLayout(RewritePattern):
    """`convert(x : L -> L)` -> x; `convert(convert(x))` -> one convert (or x); a convert
    of a splat / make_range / splat constant -> that op in the new layout."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, ConvertLayoutOp):
            return
        src, rtype = op.src, op.result.type
        producer = src.owner
        if src.type == rtype:
            replace_with_value(rewriter, op, src)
        elif isinstance(producer, ConvertLayoutOp):
            inner = producer.src
            if inner.type == rtype:
                replace_with_value(rewriter, op, inner)
            else:
                replace_with(rewriter, op, ConvertLayoutOp(inner, rtype))
        elif isinstance(producer, tt.SplatOp):
            replace_with(rewriter, op, tt.SplatOp(producer.src, rtype))
        elif isinstance(producer, tt.MakeRangeOp):
            start, end = producer.start.value.data, producer.end.value.data
            replace_with(rewriter, op, tt.MakeRangeOp(start, end, rtype))
        elif (c := constant_value(src)) is not None and is_tensor(rtype):
            replace_with(rewriter, op, make_constant(c, rtype))


# --------------------------------------------------------------------------- xDSL's patterns

# xDSL's float folders compute in Python doubles whatever the float type; ours
# (FoldConstantBinary) round to the type. Its other arith/scf/cf patterns are kept.
_XDSL_SKIPPED = {"FoldConstConstOp", "FoldConstsByReassociation"}


class XdslCanonicalizationPatterns(RewritePattern):
    """The canonicalization patterns xDSL attaches to its own ops (scf, cf, scalar arith)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        for trait in op.get_traits_of_type(HasCanonicalizationPatternsTrait):
            for pattern in trait.get_patterns(type(op)):
                if type(pattern).__name__ in _XDSL_SKIPPED:
                    continue
                pattern.match_and_rewrite(op, rewriter)
                if rewriter.has_done_action:
                    return


TTIR_PATTERNS: tuple[type[RewritePattern], ...] = (
    RemoveDeadOps,
    FoldConstantBinary,
    FoldConstantCmpi,
    FoldIdentityOperand,
    SplatOfConstant,
    SimplifyBroadcastExpand,
    AddPtrZeroOffset,
    SimplifySelect,
    SimplifyMaskedMemory,
    FoldConvertLayout,
    XdslCanonicalizationPatterns,
)


def canonicalize(module: Operation, extra: tuple[RewritePattern, ...] = ()) -> None:
    applier = GreedyRewritePatternApplier(
        [p() for p in TTIR_PATTERNS] + list(extra), dce_enabled=False
    )
    PatternRewriteWalker(applier, listener=keep_locations()).rewrite_region(module.regions[0])


class CanonicalizePass(ModulePass):
    name = "canonicalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        canonicalize(op)
