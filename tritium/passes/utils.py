"""Helpers the passes share: what kind of op is this, which of its tensors must share a
layout, constants, and changing a value's type in place.

Nothing here is a pass; each pass file imports what it needs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from xdsl.dialects import cf, scf
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tritium.ir import arith, tt
from tritium.ir.types import encoding_of, is_tensor, shape_of, with_encoding

# tt ops that act on each element independently (besides arith.* and math.*).
_TT_ELEMENTWISE = {
    "tt.addptr",
    "tt.bitcast",
    "tt.fp_to_fp",
    "tt.int_to_ptr",
    "tt.ptr_to_int",
    "tt.precise_divf",
    "tt.precise_sqrt",
    "tt.mulhiui",
    "tt.clampf",
    "tt.extern_elementwise",
    "tt.elementwise_inline_asm",  # a pure one (an impure one is not moved or duplicated)
}


def is_elementwise(op: Operation) -> bool:
    """True for ops computing each result element from the same-index operand elements
    (arith, math, tt.addptr, casts...). `arith.constant` is not elementwise."""
    if not op.results or op.regions:
        return False
    name = op.name
    if name == "arith.constant":
        return False
    if isinstance(op, tt.ElementwiseInlineAsmOp) and not op.pure.value.data:
        return False
    if not (name.startswith("arith.") or name.startswith("math.") or name in _TT_ELEMENTWISE):
        return False
    shapes = {shape_of(v.type) for v in (*op.operands, *op.results) if is_tensor(v.type)}
    return len(shapes) <= 1


# Ops that access global memory through a tensor of pointers: their operands and results
# share one layout, and that layout decides how the accesses spread over threads.
MEMORY_OPS = (tt.LoadOp, tt.StoreOp, tt.AtomicRMWOp, tt.AtomicCASOp)


def same_layout_values(op: Operation) -> list[SSAValue]:
    """The tensor operands/results of `op` that must all carry the same layout."""
    if (
        is_elementwise(op)
        or isinstance(op, tt.BroadcastOp | tt.ElementwiseInlineAsmOp)
        or _same_shape_reshape(op)
    ):
        return [v for v in (*op.operands, *op.results) if is_tensor(v.type)]
    if isinstance(op, MEMORY_OPS):
        return [v for v in (*op.operands, *op.results) if is_tensor(v.type)]
    if isinstance(op, tt.ScanOp):  # results have the operands' types
        return [v for v in (*op.operands, *op.results) if is_tensor(v.type)]
    if isinstance(op, tt.ReduceOp):
        # all operands share one layout; all results another (a slice of it)
        return [v for v in op.operands if is_tensor(v.type)]
    return []


def _same_shape_reshape(op: Operation) -> bool:
    """A `tt.reshape` that keeps the shape moves no data: it is layout-neutral."""
    return isinstance(op, tt.ReshapeOp) and shape_of(op.src.type) == shape_of(op.result.type)


def control_flow_groups(op: Operation) -> list[list[SSAValue]]:
    """Values that control flow passes into each other, so must have identical types:
    loop inits / region arguments / yielded values / results, branch operands / block args."""
    groups: list[list[SSAValue]] = []
    if isinstance(op, scf.ForOp):
        body = op.body.block
        yields = _yield_args(body)
        for i, init in enumerate(op.iter_args):
            g = [init, body.args[i + 1], op.res[i]]
            if yields is not None:
                g.append(yields[i])
            groups.append(g)
    elif isinstance(op, scf.IfOp):
        for i, res in enumerate(op.output):
            g = [res]
            for region in (op.true_region, op.false_region):
                if region.blocks:
                    ys = _yield_args(region.block)
                    if ys is not None:
                        g.append(ys[i])
            groups.append(g)
    elif isinstance(op, scf.WhileOp):
        before = op.before_region.block
        after = op.after_region.block
        cond = before.last_op
        ys = _yield_args(after)
        for i, init in enumerate(op.arguments):
            g = [init, before.args[i]]
            if ys is not None:
                g.append(ys[i])
            groups.append(g)
        if isinstance(cond, scf.ConditionOp):
            for i, v in enumerate(cond.args):
                groups.append([v, after.args[i], op.res[i]])
    elif isinstance(op, cf.BranchOp):
        groups += [[v, a] for v, a in zip(op.arguments, op.successor.args)]
    elif isinstance(op, cf.ConditionalBranchOp):
        groups += [[v, a] for v, a in zip(op.then_arguments, op.then_block.args)]
        groups += [[v, a] for v, a in zip(op.else_arguments, op.else_block.args)]
    return groups


def _yield_args(block: Block) -> Sequence[SSAValue] | None:
    last = block.last_op
    if isinstance(last, scf.YieldOp):
        return last.arguments
    return None


def expected_operand_types(op: Operation) -> list[Attribute | None] | None:
    """For terminators and region ops, the type each operand must have to match the value
    it flows into (None: not constrained); None for other ops."""
    parent = op.parent_op()
    if isinstance(op, scf.YieldOp) and parent is not None:
        if isinstance(parent, scf.ForOp | scf.IfOp):
            return [r.type for r in parent.results]
        if isinstance(parent, scf.WhileOp):
            return [a.type for a in parent.before_region.block.args]
    if isinstance(op, scf.ConditionOp) and isinstance(parent, scf.WhileOp):
        return [None] + [a.type for a in parent.after_region.block.args]
    if isinstance(op, scf.ForOp):
        return [None, None, None] + [a.type for a in op.body.block.args[1:]]
    if isinstance(op, scf.WhileOp):
        return [a.type for a in op.before_region.block.args]
    if isinstance(op, cf.BranchOp):
        return [a.type for a in op.successor.args]
    if isinstance(op, cf.ConditionalBranchOp):
        return [None] + [a.type for a in op.then_block.args] + [a.type for a in op.else_block.args]
    return None


def walk_values(root: Operation) -> Iterator[SSAValue]:
    """Every SSA value defined under `root`: block arguments then op results, in order."""
    for op in root.walk():
        for region in op.regions:
            for block in region.blocks:
                yield from block.args
        yield from op.results


# --------------------------------------------------------------------------- retyping


def set_type(value: SSAValue, new_type: Attribute) -> SSAValue:
    """Give `value` a new type in place (its uses follow); returns the new SSA value.

    `arith.constant` keeps its value attribute's type in step with its result.
    """
    if value.type == new_type:
        return value
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, DenseIntOrFPElementsAttr):
        owner.properties["value"] = DenseIntOrFPElementsAttr(new_type, owner.value.data)
    new = Rewriter.replace_value_with_new_type(value, new_type)
    return new


def set_layout(value: SSAValue, layout: Attribute | None) -> SSAValue:
    return set_type(value, with_encoding(value.type, layout))


def layout_of(value: SSAValue) -> Attribute | None:
    return encoding_of(value.type)


def insert_before(anchor: Operation, new_op: Operation) -> Operation:
    """Insert `new_op` before `anchor`, giving it `anchor`'s source location."""
    new_op.location = anchor.location
    Rewriter.insert_op(new_op, InsertPoint.before(anchor))
    return new_op


def insert_after(anchor: Operation, new_op: Operation) -> Operation:
    new_op.location = anchor.location
    anchor.parent_block().insert_op_after(new_op, anchor)
    return new_op


# --------------------------------------------------------------------------- constants
# (`constant_value`, which reads one, lives with the dialect: tritium.ir.arith)


def wrap_int(v: int, width: int) -> int:
    """`v` wrapped to a signed `width`-bit integer (i1 as 0/1... read as 0 or -1 -> 0/1)."""
    if width == 1:
        return v & 1
    v &= (1 << width) - 1
    return v - (1 << width) if v >= 1 << (width - 1) else v


def make_constant(value: int | float, type_: Attribute) -> arith.ConstantOp:
    """`arith.constant value : type` (a splat dense attribute for tensor types)."""
    elem = type_.element_type if isinstance(type_, TensorType) else type_
    if isinstance(elem, IntegerType):
        value = wrap_int(int(value), elem.width.data)
        if elem.width.data == 1:
            value = -1 if value else 0  # xDSL stores i1 `true` as -1
    else:
        value = float(round_float(value, elem))
    if isinstance(type_, TensorType):
        attr = DenseIntOrFPElementsAttr.from_list(type_, [value])
        return arith.ConstantOp(attr, type_)
    if isinstance(elem, IntegerType):
        return arith.ConstantOp(IntegerAttr(value, elem), elem)
    return arith.ConstantOp(FloatAttr(value, elem), elem)


def round_float(value: float, elem: Attribute) -> float:
    if isinstance(elem, Float32Type):
        import numpy as np  # (here: a compile that rounds no f32 constant loads no numpy)

        return float(np.float32(value))
    return float(value)


def is_exact_float_type(t: Attribute) -> bool:
    """Float types whose arithmetic numpy reproduces exactly (IEEE single and double)."""
    return isinstance(t, Float32Type | Float64Type)


def keep_locations():
    """A rewriter listener under which ops that replace an op take over its source location.

    xDSL's pattern rewriter leaves new ops at `loc(unknown)` (e.g. when a canonicalization
    puts a constant operand on the right of a commutative op); diagnostics, dumps and
    upstream interop want every op to keep pointing at the user's line.
    """
    from xdsl.dialects.builtin import UnknownLoc
    from xdsl.ir import OpResult
    from xdsl.pattern_rewriter import PatternRewriterListener

    def on_replace(op: Operation, new_results) -> None:
        for v in new_results:
            if isinstance(v, OpResult) and isinstance(v.op.location, UnknownLoc):
                v.op.location = op.location

    return PatternRewriterListener(operation_replacement_handler=[on_replace])
