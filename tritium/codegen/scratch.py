"""Shared-memory scratch: which ops need it, how many bytes, and where each value goes.

Pure index maths on linear layouts (no LLVM), shared by the `allocate-shared-memory`
pass (sizes) and the lowering of `tt.reduce` / `ttg.convert_layout` (addresses).

    %s = "tt.reduce"(%x) <{axis = 0}> : tensor<1024xf32, #blocked(warps = 4)> -> f32
      in-thread: 8 registers -> 1;  lanes: 5 shfl.bfly;  warps: 4 partials in smem
      scratch = N_out * P * 4 bytes = 1 * 4 * 4 = 16 bytes; slot(p, o) = p * N_out + lin(o)

    %c = ttg.convert_layout %x : tensor<64x64xf32, #rows> -> tensor<64x64xf32, #cols>
      registers cannot do it (elements change threads): the tensor goes through smem,
      row-major in the destination's order, rows padded by one element when the two
      layouts' fastest dims differ (a transpose: strided accesses then hit distinct banks)

A reduction is planned over the *bits* of the source layout (`tritium.ir.layouts`):
register, lane and warp bits whose basis moves the reduced axis are combined (in that
order: registers in-thread, lanes by butterfly shuffles, warps through smem); bits that
move other dims tell outputs apart; bits with a zero basis hold duplicates and are
skipped (replication is never counted twice). When the combine region is not known to be
commutative, bits are combined in ascending order of their axis coordinate (the left
operand always holds the lower indices: the interpreter's pairing), and everything from
the first warp bit on (warp bits and the register bits above them) is folded by the
reader after one smem round.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.ir import Attribute, Block, Operation

from tritium.ir.layouts import Basis, LinearLayout, layout_of
from tritium.ir.ttg import layout_order
from tritium.ir.types import element_type, encoding_of, is_tensor

ALIGN = 16  # every buffer (and every operand's part of one) starts 16-byte aligned

# Ops whose combine is commutative: a butterfly may give the two lanes either order.
COMMUTATIVE = {
    "arith.addf", "arith.mulf", "arith.addi", "arith.muli", "arith.andi", "arith.ori",
    "arith.xori", "arith.maxnumf", "arith.minnumf", "arith.maximumf", "arith.minimumf",
    "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui",
}  # fmt: skip


def align(n: int, a: int = ALIGN) -> int:
    return (n + a - 1) // a * a


def element_bytes(t: Attribute) -> int:
    """Bytes one element of `t` takes in shared memory (i1 as a byte, pointers 8)."""
    from xdsl.dialects.builtin import IntegerType

    from tritium.ir.types import PointerType

    e = element_type(t)
    if isinstance(e, PointerType):
        return 8
    if isinstance(e, IntegerType):
        return max(1, e.width.data // 8)
    width = getattr(e, "bitwidth", None)
    if width is None:
        raise NotImplementedError(f"no shared-memory size for {e}")
    return width // 8


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


# --------------------------------------------------------------------------- registers

Coord = tuple[int, ...]


def register_map(
    src: LinearLayout, dst: LinearLayout, to_src: Callable[[Coord], Coord]
) -> list[int] | None:
    """For each register of `dst`, the register of `src` holding the same element on the
    same thread, or None when some element lives on another thread. `to_src` maps a
    coordinate of dst's shape to src's (it must be linear over XOR, as all maps here are).
    """
    for dst_bases, src_bases in ((dst.lane, src.lane), (dst.warp, src.warp)):
        if len(dst_bases) != len(src_bases):
            return None
        if any(to_src(d) != s for d, s in zip(dst_bases, src_bases)):
            return None
    where: dict[Coord, int] = {}
    for r in range(src.num_registers):
        where.setdefault(src.register_coord(r), r)
    out = []
    for r in range(dst.num_registers):
        c = to_src(dst.register_coord(r))
        if c not in where:
            return None
        out.append(where[c])
    return out


# --------------------------------------------------------------------------- reduce


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


# --------------------------------------------------------------------------- convert_layout


@dataclass(frozen=True)
class ConvertPlan:
    """A layout conversion through smem: element at coordinate c lives at
    `sum(c[d] * strides[d])` (elements)."""

    src: LinearLayout
    dst: LinearLayout
    strides: tuple[int, ...]
    size: int  # elements the buffer holds (padding included)


def convert_plan(src_t: Attribute, dst_t: Attribute) -> ConvertPlan | None:
    """None when every thread finds the values it needs in its own registers."""
    src, dst = layout_of(src_t), layout_of(dst_t)
    if register_map(src, dst, lambda c: c) is not None:
        return None
    shape = src.shape
    order = layout_order(encoding_of(dst_t))
    src_fast = layout_order(encoding_of(src_t))[0]
    pad = 1 if len(shape) > 1 and src_fast != order[0] and shape[order[0]] > 1 else 0
    strides = [0] * len(shape)
    stride = 1
    for k, d in enumerate(order):
        strides[d] = stride
        stride *= shape[d] + (pad if k == 0 else 0)
    return ConvertPlan(src, dst, tuple(strides), stride)


def atomic_broadcast_strides(op: Operation) -> tuple[int, ...] | None:
    """Row-major element strides of the smem buffer through which an atomic's old values
    reach the threads that did not perform it (its layout replicates elements across
    threads, or it is a scalar, done by thread 0); None when no such thread exists."""
    layout = layout_of(op.operands[0].type)
    if layout is None:
        return ()  # a scalar
    if not (layout.free_lane_mask or layout.free_warp_mask):
        return None
    strides, stride = [0] * len(layout.shape), 1
    for d in reversed(range(len(layout.shape))):
        strides[d], stride = stride, stride * layout.shape[d]
    return tuple(strides)


@dataclass(frozen=True)
class ScanPlan:
    """How a `tt.scan` along `axis` maps onto its layout's bits (each list in ascending
    order of the axis position it moves): `chunk` register bits (contiguous elements of
    one thread), then `lanes` (a run of lane-id bits), then `warps` (a run of warp-id
    bits), then `reps` register bits (the layout repeated along the axis). Every other
    non-free bit tells independent scans (rows) apart. `groups` are the register indexes
    with the chunk and free bits cleared: one chunk each."""

    layout: LinearLayout
    axis: int
    chunk: tuple[int, ...]
    lanes: tuple[int, ...]
    warps: tuple[int, ...]
    reps: tuple[int, ...]
    groups: tuple[int, ...]

    def slots(self) -> int:
        """Smem slots per operand: one per (group, warp, lane) when warps share the axis."""
        if not self.warps:
            return 0
        return len(self.groups) * self.layout.num_warps * self.layout.num_lanes


def _axis_bits(bases, axis: int) -> list[tuple[int, int]]:
    """[(axis value, bit)] of the bits that move `axis`; raises if a bit moves it and
    another dim at once."""
    out = []
    for bit, basis in enumerate(bases):
        if basis[axis]:
            if any(x for d, x in enumerate(basis) if d != axis):
                raise NotImplementedError(
                    f"layout basis {basis} moves the scan axis and another dim"
                )
            out.append((basis[axis], bit))
    return out


def _is_run(bits: list[int]) -> bool:
    return all(b == bits[0] + i for i, b in enumerate(bits))


def scan_plan(layout: LinearLayout, axis: int) -> ScanPlan:
    """The ScanPlan of a scan along `axis` of a tensor in `layout`; NotImplementedError
    for layouts whose bits do not follow registers < lanes < warps < registers along the
    axis (blocked layouts and their slices always do)."""
    kinds = []
    for kind, bases in (("r", layout.register), ("l", layout.lane), ("w", layout.warp)):
        kinds += [(v, kind, bit) for v, bit in _axis_bits(bases, axis)]
    kinds.sort()
    if [v for v, _, _ in kinds] != [1 << i for i in range(len(kinds))]:
        raise NotImplementedError(f"the scan axis is not laid out bit by bit in {layout}")
    pattern = "".join(k for _, k, _ in kinds)
    n_chunk = len(pattern) - len(pattern.lstrip("r"))
    rest = pattern[n_chunk:]
    n_lanes = len(rest) - len(rest.lstrip("l"))
    rest = rest[n_lanes:]
    n_warps = len(rest) - len(rest.lstrip("w"))
    if set(rest[n_warps:]) - {"r"}:
        raise NotImplementedError(
            f"scan axis bits in the order {pattern} (registers, lanes, warps)"
        )
    bits = [b for _, _, b in kinds]
    chunk = tuple(bits[:n_chunk])
    lanes = tuple(bits[n_chunk : n_chunk + n_lanes])
    warps = tuple(bits[n_chunk + n_lanes : n_chunk + n_lanes + n_warps])
    reps = tuple(bits[n_chunk + n_lanes + n_warps :])
    if not (_is_run(list(lanes)) and _is_run(list(warps))):
        raise NotImplementedError("scan axis lanes / warps are not consecutive id bits")
    cleared = layout.free_register_mask | sum(1 << b for b in chunk)
    groups = tuple(r for r in range(layout.num_registers) if not r & cleared)
    return ScanPlan(layout, axis, chunk, lanes, warps, reps, groups)


def plan_for_scan(op: Operation) -> ScanPlan:
    layout = layout_of(op.operands[0].type)
    return scan_plan(layout, op.axis.value.data)


# --------------------------------------------------------------------------- sizes


def scratch_bytes(op: Operation) -> int:
    """Bytes of shared memory `op` needs while it runs (0: none)."""
    if op.name == "tt.reduce":
        plan = plan_for_reduce(op)
        return plan.scratch_bytes([v.type for v in op.operands])
    if op.name == "ttg.convert_layout":
        plan = convert_plan(op.operands[0].type, op.results[0].type)
        return 0 if plan is None else align(plan.size * element_bytes(op.operands[0].type))
    if op.name == "tt.scan":
        slots = plan_for_scan(op).slots()
        return sum(align(slots * element_bytes(v.type)) for v in op.operands)
    if op.name in ("tt.atomic_rmw", "tt.atomic_cas") and op.results[0].uses:
        if atomic_broadcast_strides(op) is None:
            return 0
        layout = layout_of(op.operands[0].type)
        count = math.prod(layout.shape) if layout is not None else 1
        return align(count * element_bytes(op.results[0].type))
    return 0


__all__ = [
    "ConvertPlan",
    "ScanPlan",
    "atomic_broadcast_strides",
    "plan_for_scan",
    "scan_plan",
    "ReducePlan",
    "convert_plan",
    "element_bytes",
    "is_commutative",
    "plan_for_reduce",
    "reduce_plan",
    "register_map",
    "scratch_bytes",
]
