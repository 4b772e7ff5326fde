"""Axis info: what is known about the integer and pointer values of a kernel, per dim.

Not a pass: an analysis that coalesce, the software pipeliner and the backend (vector
widths of loads, stores and async copies; which mask registers are equal) read, each on
the TTGIR in front of it. For every integer or pointer SSA value (scalars count as rank 1)
and every dim d it gives

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
    add_info,
    gcd,
    join,
    pow2_divisor,
    with_hints,
)
from tritium.ir import tt
from tritium.ir.layouts import LinearLayout, layout_of
from tritium.ir.ttg import layout_order
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
        if op.name == "tt.int_to_ptr":
            info = self._int_to_ptr(op) or info
        for res in op.results:
            r = (
                info
                if info is not None and info.rank == _rank(res)
                else AxisInfo.unknown(_rank(res))
            )
            self._info[res] = with_hints(r, op.attributes)

    def _int_to_ptr(self, op: Operation) -> AxisInfo | None:
        """`tt.int_to_ptr (base + offs * size)`, size the pointee's bytes, is
        `tt.addptr (tt.int_to_ptr base), offs`: contiguous in elements where `offs` is
        (the integers themselves step by `size`, which contiguity cannot say)."""
        size = max(pointee_bits(op.results[0].type) // 8, 1)
        add = op.operands[0].owner
        if not isinstance(add, Operation) or add.name != "arith.addi":
            return None
        for base, scaled in (add.operands, add.operands[::-1]):
            mul = scaled.owner
            if not isinstance(mul, Operation) or mul.name != "arith.muli":
                continue
            for offs, k in (mul.operands, mul.operands[::-1]):
                if self[k].constant == size:
                    return add_info(self[base], self[offs], size)
        return None

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

    # -- queries: what the facts mean for one thread's registers (the backend, the pipeliner)

    def vector_width(self, op: Operation) -> int:
        """Elements one thread moves per instruction for a TTGIR `tt.load` / `tt.store` /
        `ttg.async_copy_global_to_local` (upstream's getVectorSize): the layout's
        contiguous elements per thread (`contig_per_thread`), capped by the pointers'
        contiguity and alignment (`ptr_alignment`), the mask's constancy and 128 bits.
        Registers g .. g + width - 1 (g a multiple of the width) are then one access at
        consecutive, aligned addresses under one mask value."""
        ptr = op.src if op.name == "ttg.async_copy_global_to_local" else op.ptr
        layout = layout_of(ptr.type)
        if layout is None:
            return 1
        d = register_dim(layout)
        if d is None:
            return 1
        vec = min(contig_per_thread(layout, d), self.ptr_alignment(ptr, d))
        vec = min(vec, max(1, 128 // memory_bits(ptr.type)))
        if op.mask is not None:
            vec = min(vec, self.mask_alignment(op.mask, d))
        return _pow2_floor(vec)

    def ptr_alignment(self, ptr: SSAValue, d: int | None = None) -> int:
        """Elements per vector access that `ptr`'s alignment and contiguity allow along
        dim `d` (its layout's fastest dim by default; upstream's getPtrAlignment)."""
        shape = shape_of(ptr.type)
        if not shape:
            return 1
        info = self[ptr]
        d = fastest_dim(ptr) if d is None else d
        elem_bytes = max(memory_bits(ptr.type) // 8, 1)
        return max(1, min(max(info.divisibility[d] // elem_bytes, 1), info.contiguity[d]))

    def mask_alignment(self, mask: SSAValue, d: int | None = None) -> int:
        """How many consecutive mask elements along `d` (the fastest dim by default) are
        known equal."""
        if not shape_of(mask.type):
            return 1
        return max(1, self[mask].constancy[fastest_dim(mask) if d is None else d])

    def equal_registers(self, value: SSAValue) -> list[int]:
        """For each of a thread's registers of `value`, the first register known to hold
        the same number (by constancy): `offs < n` with 4 contiguous offsets per thread
        and `n % 16 == 0` gives [0, 0, 0, 0, 4, 4, 4, 4, ...]. Two registers are equal when
        their elements lie in one constancy block along every dim. Blocks are aligned to
        their (power-of-two) size and a coordinate is the XOR of the register's part and
        the thread's: XOR-ing the thread's part maps each aligned block onto one whole
        block, the same for every register, so the register parts decide alone. (Rows w,
        w + 8 of a K mask with 8 warps along K and `k_left % 16 == 0` are one compare,
        as upstream's maybeDeduplicate finds from the CTA tile.)"""
        layout = layout_of(value.type)
        if layout is None:
            return [0]
        info = self[value]
        keep = [~(pow2_divisor(info.constancy[d]) - 1) for d in range(layout.rank)]
        first: dict[tuple[int, ...], int] = {}
        out = []
        for r in range(layout.num_registers):
            c = layout.register_coord(r)
            out.append(first.setdefault(tuple(x & m for x, m in zip(c, keep)), r))
        return out


def register_dim(layout: LinearLayout) -> int | None:
    """The dim along which a thread's consecutive registers hold consecutive elements (the
    dim of register basis 0, when it is a unit step), or None."""
    if not layout.register:
        return None
    b = layout.register[0]
    nonzero = [d for d, x in enumerate(b) if x]
    return nonzero[0] if len(nonzero) == 1 and b[nonzero[0]] == 1 else None


def contig_per_thread(layout: LinearLayout, d: int) -> int:
    """How many consecutive registers (from any multiple of that count) hold consecutive
    elements along `d`, starting at a coordinate that is a multiple of that count whatever
    the thread (upstream's getContigPerThread, on the linear layout)."""
    v = layout.contiguous_registers(d)
    n = v.bit_length() - 1
    for b in layout.register[n:]:
        v = min(v, pow2_divisor(b[d]))
    return min(v, _thread_divisibility(layout, d))


def _thread_divisibility(layout: LinearLayout, d: int) -> int:
    return min([pow2_divisor(b[d]) for b in layout.lane + layout.warp] + [MAX_DIVISOR])


def _pow2_floor(n: int) -> int:
    return 1 << (max(n, 1).bit_length() - 1)


def memory_bits(t: Attribute) -> int:
    """Bits of the pointee as it lies in memory (i1 is a byte)."""
    return max(pointee_bits(t), 8)


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
