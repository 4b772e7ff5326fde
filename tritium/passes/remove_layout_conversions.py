"""`remove-layout-conversions`: choose layouts so that few `ttg.convert_layout`s remain.

    #blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
    #blocked1 = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
    %p1 = ttg.convert_layout %p : tensor<1024x!tt.ptr<f32>, #blocked> -> tensor<1024x!tt.ptr<f32>, #blocked1>
    %x1 = tt.load %p1 : tensor<1024x!tt.ptr<f32>, #blocked1>
    %x = ttg.convert_layout %x1 : tensor<1024xf32, #blocked1> -> tensor<1024xf32, #blocked>
    %y = arith.addf %x, %x : tensor<1024xf32, #blocked>
  =>
    %x1 = tt.load %p : tensor<1024x!tt.ptr<f32>, #blocked1>      (%p now made in #blocked1)
    %y = arith.addf %x1, %x1 : tensor<1024xf32, #blocked1>

Upstream's pass is a large forward/backward propagation engine; this one does the common
cases in three steps:

1. *Unify.* Each use of a tensor constant or splat gets its own copy (a constant shared
   by two unrelated computations does not tie their layouts). Tensor values that must share a layout (operands and results of an
   elementwise op, of a broadcast, of a load or store, loop-carried values and the values
   flowing into them, ...) form one group. Memory ops and dots first get identity converts
   on their tensors, so that only the op itself is tied to its layout. Groups are linked by converts (soft: equal
   layouts remove the convert) and by slice relations (`tt.reduce`: result =
   slice(axis, operand); `tt.expand_dims`: operand = slice(axis, result)).
   Groups holding a `tt.dot` or a memory op (its layout chosen by coalesce), or an op this
   pass does not know, are anchors and keep their layout. Starting from the anchors (dots,
   then loads and stores, in program order), each anchor's layout floods the free groups it
   reaches through converts and slice relations. Every group is then retyped, and a convert
   is left (or put) only where two linked groups ended up disagreeing.
2. *Rematerialize.* A convert whose source is cheap index math (make_range, splat,
   constants, expand_dims, broadcast, integer/pointer elementwise ops) is replaced by a copy
   of that computation made directly in the wanted layout.
3. *Fold.* Identity converts, convert-of-convert and converts of splats / ranges /
   constants fold away (the same patterns as canonicalize); dead ops go, and CSE merges
   the copies step 2 made for different converts of one value.
A convert that remains is correct, only slower: the backend moves the data through
shared memory.
"""

from __future__ import annotations

from collections import deque

from xdsl.context import Context
from xdsl.dialects import cf, scf
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from tritium.ir import arith, tt
from tritium.ir.ttg import (
    BlockedEncodingAttr,
    ConvertLayoutOp,
    SliceEncodingAttr,
    is_distributed,
    layout_rank,
)
from tritium.ir.ttg_mma import DotOperandEncodingAttr, is_mma_v3
from tritium.ir.types import (
    PointerType,
    element_type,
    encoding_of,
    is_tensor,
    shape_of,
    with_encoding,
)
from tritium.passes.canonicalize import FoldConvertLayout
from tritium.passes.cse import cse
from tritium.passes.dce import RemoveDeadOps
from tritium.passes.utils import (
    MEMORY_OPS,
    control_flow_groups,
    insert_after,
    insert_before,
    is_elementwise,
    keep_locations,
    same_layout_values,
    set_layout,
    walk_values,
)

# Ops whose tensors may take any layout (the ones this pass knows how to retype).
_FLEXIBLE = (
    tt.SplatOp,
    tt.MakeRangeOp,
    tt.BroadcastOp,
    tt.ExpandDimsOp,
    tt.ReduceOp,
    tt.AssertOp,
    tt.PrintOp,
    arith.ConstantOp,
    ConvertLayoutOp,
    scf.ForOp,
    scf.IfOp,
    scf.WhileOp,
    scf.YieldOp,
    scf.ConditionOp,
    cf.BranchOp,
    cf.ConditionalBranchOp,
)
_DOT_PRIORITY, _MEMORY_PRIORITY, _OTHER_PRIORITY = 0, 1, 2


def _layout(v: SSAValue) -> Attribute | None:
    return encoding_of(v.type)


class _Groups:
    """Union-find over tensor SSA values with distributed layouts."""

    def __init__(self) -> None:
        self.parent: dict[SSAValue, SSAValue] = {}

    def add(self, v: SSAValue) -> None:
        self.parent.setdefault(v, v)

    def find(self, v: SSAValue) -> SSAValue:
        root = v
        while self.parent[root] is not root:
            root = self.parent[root]
        while self.parent[v] is not root:
            self.parent[v], v = root, self.parent[v]
        return root

    def union(self, values: list[SSAValue]) -> None:
        vs = [v for v in values if v in self.parent]
        for v in vs[1:]:
            a, b = self.find(vs[0]), self.find(v)
            if a is not b:
                self.parent[b] = a


class _LayoutGraph:
    def __init__(self, module: Operation):
        self.groups = _Groups()
        for v in walk_values(module):
            if is_distributed(_layout(v)):
                self.groups.add(v)
        self.converts: list[ConvertLayoutOp] = []
        self.expands: list[tt.ExpandDimsOp] = []
        self.reduces: list[tt.ReduceOp] = []
        self.scans: set[SSAValue] = set()  # groups holding a tt.scan (see assign)
        anchors: list[tuple[int, int, SSAValue]] = []
        for n, op in enumerate(module.walk()):
            self.groups.union(same_layout_values(op))
            for g in control_flow_groups(op):
                self.groups.union(g)
            if isinstance(op, tt.ReduceOp):
                self.groups.union([r for r in op.results if is_tensor(r.type)])
                if len(shape_of(op.srcs[0].type)) >= 2:
                    self.reduces.append(op)
            elif isinstance(op, ConvertLayoutOp):
                self.converts.append(op)
            elif isinstance(op, tt.ScanOp):
                self.scans.update(o for o in op.operands if o in self.groups.parent)
            elif isinstance(op, tt.ExpandDimsOp):
                self.expands.append(op)
            if isinstance(op, tt.FuncOp) and op.body.blocks:
                # a function's signature fixes its arguments' layouts
                for arg in op.body.blocks.first.args:
                    if arg in self.groups.parent:
                        anchors.append((_OTHER_PRIORITY, n, arg))
            priority = self._anchor_priority(op)
            if priority is not None:
                for v in (*op.operands, *op.results):
                    if v in self.groups.parent:
                        anchors.append((priority, n, v))
        self.scans = {self.groups.find(v) for v in self.scans}
        self.members: dict[SSAValue, list[SSAValue]] = {}
        for v in self.groups.parent:
            self.members.setdefault(self.groups.find(v), []).append(v)
        self.frozen = {
            g for g, ms in self.members.items() if any(_layout(m) != _layout(ms[0]) for m in ms)
        }
        self.anchors: list[SSAValue] = []
        self.priority: dict[SSAValue, int] = {}
        for p, _, v in sorted(anchors, key=lambda a: (a[0], a[1])):
            g = self.groups.find(v)
            if g not in self.priority:
                self.anchors.append(g)
                self.priority[g] = p

    @staticmethod
    def _anchor_priority(op: Operation) -> int | None:
        if isinstance(op, tt.DotOp):
            return _DOT_PRIORITY
        if isinstance(op, MEMORY_OPS):
            return _MEMORY_PRIORITY
        if is_elementwise(op) or isinstance(op, _FLEXIBLE) or same_layout_values(op):
            return None
        return _OTHER_PRIORITY

    def group(self, v: SSAValue) -> SSAValue | None:
        return self.groups.find(v) if v in self.groups.parent else None

    # -- step 1: choose a layout for every group

    def _neighbours(self):
        """group -> [(other group, how to derive its layout from this group's)]."""
        edges: dict[SSAValue, list] = {}

        def link(a, b, fn):
            if a is not None and b is not None and a is not b:
                edges.setdefault(a, []).append((b, fn))

        same = lambda layout: layout  # noqa: E731
        for op in self.converts:
            a, b = self.group(op.src), self.group(op.result)
            link(a, b, same)
            link(b, a, same)
        for op in self.expands:
            child, parent = self.group(op.src), self.group(op.result)
            axis = op.axis.value.data
            link(parent, child, lambda layout, ax=axis: SliceEncodingAttr(ax, layout))
            link(child, parent, lambda layout, ax=axis: _unslice(layout, ax))
        for op in self.reduces:
            parent, child = self.group(op.srcs[0]), self.group(op.results[0])
            axis = op.axis.value.data
            link(parent, child, lambda layout, ax=axis: SliceEncodingAttr(ax, layout))
            link(child, parent, lambda layout, ax=axis: _unslice(layout, ax))
        return edges

    def assign(self) -> dict[SSAValue, Attribute]:
        edges = self._neighbours()
        chosen: dict[SSAValue, Attribute | None] = {g: None for g in self.frozen}
        for a in self.anchors:
            chosen.setdefault(a, _layout(a))
        # dots flood first, then memory ops, then the rest; within a level breadth first
        # from all its anchors at once: a free group takes the layout of the nearest
        # (ties: program order), so a loop-carried pointer follows the load it feeds
        for level in sorted(set(self.priority.values())):
            queue = deque(
                a for a in self.anchors if self.priority[a] == level and chosen[a] is not None
            )
            while queue:
                g = queue.popleft()
                for other, derive in edges.get(g, ()):
                    if other in chosen:
                        continue
                    layout = derive(chosen[g])
                    rank = len(shape_of(other.type))
                    if layout is None or layout_rank(layout) != rank:
                        continue
                    if other in self.scans and not _blocked_or_slice(layout):
                        # as upstream, a scan is lowered in blocked layouts (and their
                        # slices) only: an mma layout stops at its convert
                        continue
                    if isinstance(layout, DotOperandEncodingAttr) and is_mma_v3(layout.parent):
                        # a wgmma operand is read from a shared tile: the convert stays
                        # right before the dot (optimize-dot-operands stages it), and a
                        # cast or scale of the operand is computed before it
                        continue
                    chosen[other] = layout
                    queue.append(other)
        return {g: lay for g, lay in chosen.items() if lay is not None}

    # -- step 1b: retype, then mend the links that disagree

    def rewrite(self, chosen: dict[SSAValue, Attribute]) -> None:
        for g, layout in chosen.items():
            if g in self.frozen or layout == _layout(g):
                continue
            for v in self.members[g]:
                set_layout(v, layout)
        for op in self.converts:
            if op.src.type == op.result.type:
                op.result.replace_all_uses_with(op.src)
                op.detach()
                op.erase()
        for op in self.expands:
            want = SliceEncodingAttr(op.axis.value.data, _layout(op.result))
            if _layout(op.src) != want:
                cvt = insert_before(op, ConvertLayoutOp(op.src, with_encoding(op.src.type, want)))
                op.operands[0] = cvt.result
        for op in self.reduces:
            want = SliceEncodingAttr(op.axis.value.data, _layout(op.srcs[0]))
            for r in list(op.results):
                if _layout(r) != want:
                    old = r.type
                    new = set_layout(r, want)
                    back = insert_after(op, ConvertLayoutOp(new, old))
                    new.replace_uses_with_if(
                        back.result, lambda use, b=back: use.operation is not b
                    )


def _unslice(layout: Attribute, axis: int) -> Attribute | None:
    if isinstance(layout, SliceEncodingAttr) and layout.dim == axis:
        return layout.parent
    return None


# --------------------------------------------------------------------------- step 2


_REMAT_BUDGET = 32


def _blocked_or_slice(layout: Attribute) -> bool:
    while isinstance(layout, SliceEncodingAttr):
        layout = layout.parent
    return isinstance(layout, BlockedEncodingAttr)


def _cheap(op: Operation) -> bool:
    if isinstance(op, tt.MakeRangeOp | tt.SplatOp | tt.BroadcastOp | tt.ExpandDimsOp):
        return True
    if isinstance(op, ConvertLayoutOp | arith.ConstantOp):
        return True
    if is_elementwise(op) and len(op.results) == 1:
        return isinstance(element_type(op.results[0].type), IntegerType | PointerType)
    return False


class _Rematerializer:
    """Recompute a value's cheap producers directly in another layout."""

    def __init__(self, before: Operation):
        self.before = before
        self.budget = _REMAT_BUDGET
        self.made: dict[tuple[SSAValue, Attribute], SSAValue] = {}
        self.new_ops: list[Operation] = []

    def __call__(self, value: SSAValue, layout: Attribute) -> SSAValue | None:
        if _layout(value) == layout:
            return value
        if (value, layout) in self.made:
            return self.made[(value, layout)]
        op = value.owner
        if not isinstance(op, Operation) or len(op.results) != 1 or not _cheap(op):
            return None
        if isinstance(op, ConvertLayoutOp):
            return self(op.src, layout)
        self.budget -= 1
        if self.budget < 0:
            return None
        operands = []
        for v in op.operands:
            if is_tensor(v.type):
                want = (
                    SliceEncodingAttr(op.axis.value.data, layout)
                    if isinstance(op, tt.ExpandDimsOp)
                    else layout
                )
                v = self(v, want)
                if v is None:
                    return None
            operands.append(v)
        new = op.clone()
        for i, v in enumerate(operands):
            new.operands[i] = v
        insert_before(self.before, new)
        new.location = op.location
        self.new_ops.append(new)
        result = set_layout(new.results[0], layout)
        self.made[(value, layout)] = result
        return result


def rematerialize(module: Operation) -> None:
    for op in [o for o in module.walk() if isinstance(o, ConvertLayoutOp)]:
        if op.parent is None:
            continue
        layout = _layout(op.result)
        if not is_distributed(layout):
            continue
        remat = _Rematerializer(op)
        new = remat(op.src, layout)
        if new is not None and new is not op.src:
            op.result.replace_all_uses_with(new)
            op.detach()
            op.erase()
        # on failure the copies made so far are unused; dce removes them


# --------------------------------------------------------------------------- the pass


def fold_converts(module: Operation) -> None:
    applier = GreedyRewritePatternApplier([RemoveDeadOps(), FoldConvertLayout()], dce_enabled=False)
    PatternRewriteWalker(applier, listener=keep_locations()).rewrite_region(module.regions[0])


def isolate_anchors(module: Operation) -> None:
    """Put an identity convert on every tensor operand and result of memory ops and dots,
    so their values are not tied to the anchor's layout (a store's value may be computed
    in a dot's layout and converted just before the store); unneeded ones fold away."""
    for op in list(module.walk()):
        if not isinstance(op, (*MEMORY_OPS, tt.DotOp)):
            continue
        for i, v in enumerate(op.operands):
            if is_distributed(_layout(v)):
                op.operands[i] = insert_before(op, ConvertLayoutOp(v, v.type)).result
        for r in op.results:
            if is_distributed(_layout(r)):
                back = insert_after(op, ConvertLayoutOp(r, r.type))
                r.replace_uses_with_if(back.result, lambda use, b=back: use.operation is not b)


def untie_constants(module: Operation) -> list[list[Operation]]:
    """Give each use of a tensor constant or splat its own copy, so the value does not tie
    the groups of its users together: CSE merged the increments `BLOCK_K * stride_ak`
    and `BLOCK_K * stride_bk` of a GEMM's two pointer tensors (both 128), which made B's
    loop-carried pointers take A's layout and convert through shared memory every
    iteration. Returns each constant with its copies, for `retie_constants`."""
    families = []
    for op in list(module.walk()):
        if not isinstance(op, arith.ConstantOp | tt.SplatOp) or len(op.results) != 1:
            continue
        result = op.results[0]
        if not is_distributed(_layout(result)):
            continue
        family = [op]
        for use in list(result.uses)[1:]:
            copy = insert_after(op, op.clone())
            use.operation.operands[use.index] = copy.results[0]
            family.append(copy)
        if len(family) > 1:
            families.append(family)
    return families


def retie_constants(families: list[list[Operation]]) -> None:
    """Merge the copies `untie_constants` made that ended in one layout (xDSL's CSE
    leaves functions of several blocks alone)."""
    for family in families:
        kept: list[Operation] = []
        for op in family:
            if op.parent is None:
                continue  # erased (folded, dead, or merged by CSE)
            twin = next(
                (
                    k
                    for k in kept
                    if k.result_types == op.result_types
                    and k.properties == op.properties
                    and k.operands == op.operands
                ),
                None,
            )
            if twin is None:
                kept.append(op)
            else:
                op.results[0].replace_all_uses_with(twin.results[0])
                op.detach()
                op.erase()


def remove_layout_conversions(module: Operation) -> None:
    fold_converts(module)
    families = untie_constants(module)
    isolate_anchors(module)
    graph = _LayoutGraph(module)
    graph.rewrite(graph.assign())
    rematerialize(module)
    fold_converts(module)
    cse(module)  # copies made for different converts of the same value
    retie_constants(families)


class RemoveLayoutConversionsPass(ModulePass):
    name = "remove-layout-conversions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        remove_layout_conversions(op)
