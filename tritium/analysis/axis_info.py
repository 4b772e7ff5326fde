"""Axis info: what is known about the integer and pointer values of a kernel, per dim.

Not a pass: an analysis the coalesce pass (and the load/store lowering) reads. For every
integer or pointer SSA value (scalars count as rank 1) and every dim d it gives

* contiguity[d]:   the value runs in blocks of that many consecutive integers along d
                   (`tt.make_range 0..1024` -> 1024; `offs * 2` -> 1);
* divisibility[d]: the largest power of two dividing the first element of each block
                   (in elements for integers, in bytes for pointers, as upstream);
* constancy[d]:    the value repeats in blocks of that many equal elements along d
                   (`tt.splat` -> the whole dim);
* constant:        the value itself when it is a known integer (a splat counts).

    %p: !tt.ptr<f32> {tt.divisibility = 16 : i32}      div 16 (bytes)
    %offs = tt.make_range {end = 1024, start = 0}      contig 1024, div 2^62, const 1
    %b = tt.splat %base (= pid * 1024)                 contig 1, div 1024, const 1024
    %o = arith.addi %b, %offs                          contig 1024, div 1024, const 1
    %ptrs = tt.addptr (tt.splat %p), %o                contig 1024, div 16, const 1
    %mask = arith.cmpi slt, %o, (splat %n, div 16)     const 16

Seeds: `tt.divisibility` / `tt.contiguity` / `tt.constancy` on function arguments (and as
op attributes, which override), `tt.make_range`, integer constants, `scf.for` induction
variables (gcd of the lower bound's and step's divisibility). Loop-carried values are
joined with what the body yields until nothing changes; other block arguments know nothing.
The rules follow upstream Triton's AxisInfo analysis (lib/Analysis/AxisInfo.cpp).
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.ir import Attribute, Block, Operation, SSAValue

from tritium.analysis.axis_info_rules import (
    MAX_DIVISOR,
    RULES,
    AxisInfo,
    gcd,
    join,
    pow2_divisor,
    with_hints,
)
from tritium.ir import tt
from tritium.ir.ttg import layout_order, layout_size_per_thread
from tritium.ir.types import PointerType, bitwidth, element_type, encoding_of, shape_of

__all__ = [
    "MAX_DIVISOR",
    "AxisInfo",
    "AxisInfoAnalysis",
    "join",
    "order_from_contiguity",
    "pow2_divisor",
]

# --------------------------------------------------------------------------- the analysis


def _rank(value: SSAValue) -> int:
    return max(len(shape_of(value.type)), 1)


class AxisInfoAnalysis:
    """Axis info of every value under `root` (a module or a `tt.func`).

    `analysis[value]` returns the `AxisInfo` of any SSA value (unknown for values it
    does not describe, such as floats).
    """

    MAX_LOOP_ITERATIONS = 8

    def __init__(self, root: Operation):
        self._info: dict[SSAValue, AxisInfo] = {}
        for op in root.walk():
            if isinstance(op, tt.FuncOp):
                self._visit_func(op)

    def __getitem__(self, value: SSAValue) -> AxisInfo:
        info = self._info.get(value)
        return info if info is not None else AxisInfo.unknown(_rank(value))

    # -- traversal

    def _visit_func(self, func: tt.FuncOp) -> None:
        if not func.body.blocks:
            return
        for i, arg in enumerate(func.body.blocks.first.args):
            hints = {}
            if func.arg_attrs is not None:
                hints = dict(func.arg_attrs.data[i].data)
            self._info[arg] = with_hints(AxisInfo.unknown(_rank(arg)), hints)
        self._visit_region_blocks(func.body.blocks)

    def _visit_region_blocks(self, blocks) -> None:
        for block in blocks:
            self._visit_block(block)

    def _visit_block(self, block: Block) -> None:
        for op in block.ops:
            self._visit_op(op)

    def _visit_op(self, op: Operation) -> None:
        if isinstance(op, scf.ForOp):
            self._visit_for(op)
            return
        if op.regions:
            for region in op.regions:
                for block in region.blocks:
                    for arg in block.args:
                        self._info[arg] = AxisInfo.unknown(_rank(arg))
                    self._visit_block(block)
            if isinstance(op, scf.IfOp) and op.false_region.blocks:
                ys = [r.block.last_op for r in (op.true_region, op.false_region)]
                for i, res in enumerate(op.output):
                    self._info[res] = join(self[ys[0].operands[i]], self[ys[1].operands[i]])
                return
            for res in op.results:
                self._info[res] = AxisInfo.unknown(_rank(res))
            return
        rule = RULES.get(op.name)
        info = None
        if rule is not None and len(op.results) == 1:
            try:
                info = rule(op, [self[v] for v in op.operands])
            except (TypeError, ValueError, IndexError):
                info = None
        for res in op.results:
            r = (
                info
                if info is not None and info.rank == _rank(res)
                else AxisInfo.unknown(_rank(res))
            )
            self._info[res] = with_hints(r, op.attributes)

    def _visit_for(self, op: scf.ForOp) -> None:
        body = op.body.block
        lb, step = self[op.lb], self[op.step]
        self._info[body.args[0]] = AxisInfo(
            (1,), (gcd(lb.divisibility[0], step.divisibility[0]),), (1,)
        )
        carried = [self[v] for v in op.iter_args]
        for _ in range(self.MAX_LOOP_ITERATIONS):
            for arg, info in zip(body.args[1:], carried):
                self._info[arg] = info
            self._visit_block(body)
            yields = body.last_op.operands if isinstance(body.last_op, scf.YieldOp) else ()
            new = [join(c, self[y]) for c, y in zip(carried, yields)]
            if new == carried:
                break
            carried = new
        else:
            carried = [AxisInfo.unknown(i.rank) for i in carried]
            for arg, info in zip(body.args[1:], carried):
                self._info[arg] = info
            self._visit_block(body)
        for res, info in zip(op.res, carried):
            self._info[res] = info

    # -- queries the backend asks

    def ptr_alignment(self, ptr: SSAValue) -> int:
        """Elements per vector access that `ptr`'s alignment and contiguity allow along its
        layout's fastest dim (upstream's getPtrAlignment)."""
        shape = shape_of(ptr.type)
        if not shape:
            return 1
        info = self[ptr]
        d = fastest_dim(ptr)
        elem_bytes = max(pointee_bits(ptr.type) // 8, 1)
        return max(1, min(max(info.divisibility[d] // elem_bytes, 1), info.contiguity[d]))

    def mask_alignment(self, mask: SSAValue) -> int:
        """How many consecutive mask elements along the fastest dim are known equal."""
        if not shape_of(mask.type):
            return 1
        return max(1, self[mask].constancy[fastest_dim(mask)])

    def vector_width(self, op: Operation) -> int:
        """Elements one thread can move in one access for a TTGIR `tt.load` / `tt.store`:
        its layout's elements per thread along the fastest dim, capped by the pointer's
        alignment, the mask's constancy and 128 bits (upstream's load/store lowering)."""
        ptr = op.ptr
        layout = encoding_of(ptr.type)
        if layout is None:
            return 1
        d = fastest_dim(ptr)
        vec = min(layout_size_per_thread(layout)[d], self.ptr_alignment(ptr))
        vec = min(vec, max(1, 128 // max(pointee_bits(ptr.type), 1)))
        if op.mask is not None:
            vec = min(vec, self.mask_alignment(op.mask))
        return max(vec, 1)


def pointee_bits(t: Attribute) -> int:
    e = element_type(t)
    if isinstance(e, PointerType):
        return bitwidth(e.pointee)
    return bitwidth(e)


def order_from_contiguity(contiguity: tuple[int, ...]) -> list[int]:
    """Dims by decreasing contiguity, ties broken last-dim-first (upstream's
    getOrderFromContiguity): `[1, 64]` -> `[1, 0]`, `[1, 1]` -> `[1, 0]`."""
    dims = list(range(len(contiguity) - 1, -1, -1))
    return sorted(dims, key=lambda d: -contiguity[d])


def fastest_dim(value: SSAValue) -> int:
    """The layout's fastest-varying dim (the last dim when there is no layout)."""
    layout = encoding_of(value.type)
    if layout is not None:
        try:
            return layout_order(layout)[0]
        except TypeError:
            pass
    return max(len(shape_of(value.type)) - 1, 0)
