"""How a `tt.reduce` maps onto its source layout: which bits are combined in-thread, by
warp shuffles, and through one shared-memory round (upstream's ReduceOpHelper).

    %s = "tt.reduce"(%x) <{axis = 0}> : tensor<1024xf32, #blocked(warps = 4)> -> f32
      in-thread: 8 registers -> 1;  lanes: 5 shfl.bfly;  warps: 4 partials in smem
      scratch = N_out * P * 4 bytes = 1 * 4 * 4 = 16 bytes; slot(p, o) = p * N_out + lin(o)

A reduction is planned over the *bits* of the source layout (`tritium.ir.layouts`):
register, lane and warp bits whose basis moves the reduced axis are combined (in that
order: registers in-thread, lanes by butterfly shuffles, warps through smem); bits that
move other dims tell outputs apart; bits with a zero basis hold duplicates and are
skipped (replication is never counted twice). When the combine region is not known to be
commutative, bits are combined in ascending order of their axis coordinate (the left
operand always holds the lower indices: the interpreter's pairing), and everything from
the first warp bit on (warp bits and the register bits above them) is folded by the
reader after one smem round.

Pure index maths (no LLVM): the allocator asks it for sizes (`ReducePlan.scratch_bytes`),
the lowering (codegen/lower/reduce.py) for the steps and the slots.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import Attribute, Block, Operation

from tritium.analysis.shared_bytes import align, element_bytes
from tritium.ir.layouts import Basis, LinearLayout, layout_of
from tritium.ir.types import is_tensor

# Ops whose combine is commutative: a butterfly may give the two lanes either order.
COMMUTATIVE = {
    "arith.addf", "arith.mulf", "arith.addi", "arith.muli", "arith.andi", "arith.ori",
    "arith.xori", "arith.maxnumf", "arith.minnumf", "arith.maximumf", "arith.minimumf",
    "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui",
}  # fmt: skip


def _dim(basis: Basis) -> int | None:
    """The one dim a basis moves (None for a zero basis)."""
    dims = [d for d, x in enumerate(basis) if x]
    if not dims:
        return None
    if len(dims) > 1:
        raise NotImplementedError(f"layout basis {basis} moves several dims")
    return dims[0]


def _drop(c: Sequence[int], axis: int) -> tuple[int, ...]:
    return tuple(c[:axis]) + tuple(c[axis + 1 :])


def row_major(shape: Sequence[int], c: Sequence[int]) -> int:
    out = 0
    for x, n in zip(c, shape):
        out = out * n + x
    return out


def is_commutative(region_block: Block, n_operands: int) -> bool:
    """A combine region that is one commutative op on (acc, x): `arith.addf %a, %b`."""
    ops = list(region_block.ops)
    if n_operands != 1 or len(ops) != 2:
        return False
    op, ret = ops
    args = set(region_block.args)
    return (
        op.name in COMMUTATIVE
        and len(op.operands) == 2
        and set(op.operands) == args
        and list(ret.operands) == [op.results[0]]
    )


Step = tuple[str, int]  # ("reg", k: k-th axis register bit) / ("lane", bit) / ("warp", bit)


@dataclass(frozen=True)
class ReducePlan:
    src: LinearLayout
    dst: LinearLayout | None  # None: a scalar result
    axis: int
    ordered: bool
    groups: tuple[tuple[Basis, tuple[int, ...]], ...]  # (output coord, registers by axis index)
    axis_reg_bits: tuple[int, ...]  # register-index bits along the axis, by ascending basis
    in_warp: tuple[Step, ...]  # combined before any smem round, in this order
    smem_bits: tuple[Step, ...]  # the partial index p, least significant first
    direct: bool  # no smem: result registers are the in-warp values

    @property
    def out_shape(self) -> tuple[int, ...]:
        return _drop(self.src.shape, self.axis)

    @property
    def num_outputs(self) -> int:
        return math.prod(self.out_shape)

    @property
    def partials(self) -> int:
        return 1 << len(self.smem_bits)

    def lane_mask(self, kind: str) -> int:
        """Lane (or warp) id bits along the axis."""
        bases = self.src.lane if kind == "lane" else self.src.warp
        return sum(1 << i for i, b in enumerate(bases) if _dim(b) == self.axis)

    def out_coord_lin(self, c: Sequence[int]) -> int:
        return row_major(self.out_shape, c)

    def scratch_bytes(self, operand_types: Sequence[Attribute]) -> int:
        if self.direct:
            return 0
        n = self.num_outputs * self.partials
        return sum(align(n * element_bytes(t)) for t in operand_types)

    def operand_offsets(self, operand_types: Sequence[Attribute]) -> list[int]:
        """Byte offset of each operand's partials inside the op's buffer."""
        out, off = [], 0
        for t in operand_types:
            out.append(off)
            off += align(self.num_outputs * self.partials * element_bytes(t))
        return out


def reduce_plan(
    src: LinearLayout, dst: LinearLayout | None, axis: int, ordered: bool
) -> ReducePlan:
    # Register bits: along the axis, along other dims, or duplicates.
    axis_bits, other_bits = [], []
    for i, b in enumerate(src.register):
        d = _dim(b)
        if d == axis:
            axis_bits.append(i)
        elif d is not None:
            other_bits.append(i)
    axis_bits.sort(key=lambda i: src.register[i][axis])
    groups = []
    for combo in range(1 << len(other_bits)):
        base = sum(1 << other_bits[k] for k in range(len(other_bits)) if combo >> k & 1)
        regs = []
        for a in range(1 << len(axis_bits)):
            regs.append(base | sum(1 << axis_bits[k] for k in range(len(axis_bits)) if a >> k & 1))
        groups.append((_drop(src.register_coord(base), axis), tuple(regs)))

    kinds = {"reg": 0, "lane": 1, "warp": 2}
    steps: list[tuple[str, int, int]] = [
        ("reg", k, src.register[i][axis]) for k, i in enumerate(axis_bits)
    ]
    for kind, bases in (("lane", src.lane), ("warp", src.warp)):
        steps += [(kind, i, b[axis]) for i, b in enumerate(bases) if _dim(b) == axis]
    if ordered:
        steps.sort(key=lambda s: s[2])
    else:
        steps.sort(key=lambda s: (kinds[s[0]], s[2]))
    first_warp = next((i for i, s in enumerate(steps) if s[0] == "warp"), len(steps))
    in_warp = [(k, i) for k, i, _ in steps[:first_warp]]
    # Lanes are always shuffled before the smem round (only the exotic layout whose lane
    # basis is above a warp basis along the axis loses the strict order here).
    in_warp += [(k, i) for k, i, _ in steps[first_warp:] if k == "lane"]
    smem_bits = tuple((k, i) for k, i, _ in steps[first_warp:] if k != "lane")
    direct = not smem_bits and _consistent(src, dst, axis, [g for g, _ in groups])
    return ReducePlan(
        src, dst, axis, ordered, tuple(groups), tuple(axis_bits), tuple(in_warp), smem_bits, direct
    )


def _consistent(src: LinearLayout, dst: LinearLayout | None, axis: int, keys) -> bool:
    """Whether each thread's in-warp results are exactly its result registers: the result
    layout is the source's with the axis dropped (what `#ttg.slice` gives)."""
    if dst is None:
        return True
    for s_bases, d_bases in ((src.lane, dst.lane), (src.warp, dst.warp)):
        want = [(0,) * (src.rank - 1) if _dim(b) == axis else _drop(b, axis) for b in s_bases]
        if list(d_bases) != want:
            return False
    have = set(keys)
    return all(dst.register_coord(r) in have for r in range(dst.num_registers))


def plan_for_reduce(op: Operation) -> ReducePlan:
    src_t = op.operands[0].type
    src = layout_of(src_t)
    res_t = op.results[0].type
    dst = layout_of(res_t) if is_tensor(res_t) else None
    ordered = not is_commutative(op.regions[0].block, len(op.operands))
    return reduce_plan(src, dst, op.axis.value.data, ordered)


__all__ = [
    "COMMUTATIVE",
    "ReducePlan",
    "is_commutative",
    "plan_for_reduce",
    "reduce_plan",
    "row_major",
]
