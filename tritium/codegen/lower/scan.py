"""`tt.scan`: an inclusive scan along one axis, in registers, lanes and one smem round.

    %c = "tt.scan"(%x) <{axis = 0 : i32, reverse = false}> ({ ... arith.addi ... })
        : (tensor<1024xi32, #blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4]>>)

The plan (`tritium.analysis.scan_plan`) splits the axis bits of the layout, from the lowest axis
position up, into chunk register bits, lane bits, warp bits and repetition register bits.
Then, for every chunk of contiguous elements a thread holds:

1. chunk: a sequential scan over its registers (4 elements above);
2. lanes: the chunk totals are scanned across the lanes by doubling: at lane bit k, a lane
   whose bit is set combines the running total of the last lane of the segment before it
   (`shfl.sync.idx`); one more shuffle gives each lane the total of the lanes before it;
3. warps: the last lane of each warp writes its warp's total to smem, one barrier, and
   every thread combines the totals of the warps before its own (and of all of them: the
   tile's total);
4. repetitions: tiles repeated along the axis in the same thread are chained in order;
5. every element is combined with its chunk's prefix: (repetitions, warps, lanes) before.

The combine region is always called as combine(earlier, later), so it need not be
commutative (a linear recurrence works). `reverse` runs the same steps in the mirrored
order. Registers, lanes and warps that hold copies of an element compute the same values.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.analysis.scan_plan import plan_for_scan
from tritium.analysis.shared_bytes import align, element_bytes
from tritium.codegen.lower.context import FunctionLowering, lowers, unsupported
from tritium.codegen.lower.reduce import _combiner
from tritium.codegen.lower.shared import (
    barrier,
    load_shared,
    scratch_offset,
    shuffle_idx,
    store_shared,
    sync,
)
from tritium.codegen.lower.types import i32, llvm_type

Values = tuple[ir.Value, ...]
Valid = bool | ir.Value  # known at compile time, or an i1


def _order(bits: tuple[int, ...], reverse: bool) -> list[int]:
    """Register (or id) offsets spanned by `bits`, in scan order."""
    offs = [sum(1 << b for k, b in enumerate(bits) if j >> k & 1) for j in range(1 << len(bits))]
    return offs[::-1] if reverse else offs


class _Scan:
    def __init__(self, ctx: FunctionLowering, op: Operation):
        self.ctx, self.op, self.b = ctx, op, ctx.builder
        try:
            self.plan = plan_for_scan(op)
        except NotImplementedError as e:
            raise unsupported(op, str(e)) from None
        self.combine = _combiner(ctx, op)
        self.reverse = op.is_reverse

    # ----------------------------------------------------------------- helpers
    def select(self, cond: ir.Value, a: Values, b: Values) -> Values:
        return tuple(self.b.select(cond, x, y) for x, y in zip(a, b))

    def join(self, a: Values | None, va: Valid, c: Values, vc: Valid) -> tuple[Values, Valid]:
        """(a then c) where each may be absent: `va` / `vc` say whether it is there."""
        if va is False or a is None:
            return c, vc
        if vc is False:
            return a, va
        both = self.combine(a, c)
        if va is True and vc is True:
            return both, True
        if va is True:
            return self.select(vc, both, a), True
        if vc is True:
            return self.select(va, both, c), True
        return self.select(va, self.select(vc, both, a), c), self.b.or_(va, vc)

    def const(self, v: int) -> ir.Value:
        return ir.Constant(i32, v)

    def field(self, value: ir.Value, bits: tuple[int, ...]) -> ir.Value:
        """The position an id's run of `bits` encodes."""
        return self.b.and_(
            self.b.lshr(value, self.const(bits[0])), self.const((1 << len(bits)) - 1)
        )

    # ----------------------------------------------------------------- steps
    def run(self) -> None:
        ctx, op, plan = self.ctx, self.op, self.plan
        layout = plan.layout
        free = layout.free_register_mask
        regs = [ctx.get(s) for s in op.srcs]
        vals = {r: tuple(x[r] for x in regs) for r in range(layout.num_registers) if not r & free}
        out: dict[int, Values] = {}
        totals: dict[int, Values] = {}
        for g in plan.groups:  # 1. chunks
            acc = None
            for o in _order(plan.chunk, self.reverse):
                acc = vals[g | o] if acc is None else self.combine(acc, vals[g | o])
                out[g | o] = acc
            totals[g] = acc
        incl, lane_prefix, lane_valid = self.lanes(totals)  # 2.
        warp_prefix, warp_valid, tile_totals = self.warps(incl)  # 3.
        rep_mask = sum(1 << b for b in plan.reps)
        for row in sorted({g & ~rep_mask for g in plan.groups}):  # 4. and 5.
            carry: Values | None = None
            carry_valid: Valid = False
            for rep in _order(plan.reps, self.reverse):
                g = row | rep
                prefix, valid = self.join(carry, carry_valid, warp_prefix[g], warp_valid)
                prefix, valid = self.join(prefix, valid, lane_prefix[g], lane_valid)
                for o in _order(plan.chunk, self.reverse):
                    x = out[g | o]
                    if valid is True:
                        out[g | o] = self.combine(prefix, x)
                    elif valid is not False:
                        out[g | o] = self.select(valid, self.combine(prefix, x), x)
                carry, carry_valid = self.join(carry, carry_valid, tile_totals[g], True)
        for i, res in enumerate(op.res):
            ctx.set(res, [out[r & ~free][i] for r in range(layout.num_registers)])

    def lanes(self, totals: dict[int, Values]):
        """Inclusive scan of the chunk totals across lanes; each lane's exclusive prefix."""
        plan, b, lane = self.plan, self.b, self.ctx.threads.lane
        if not plan.lanes:
            return dict(totals), {g: None for g in totals}, False
        incl = dict(totals)
        low = 0
        for bit in plan.lanes:
            m = 1 << bit
            # the lane that finishes (in scan order) the segment before mine at this level
            if self.reverse:
                src = b.and_(b.or_(lane, self.const(m)), self.const(~low & 0xFFFFFFFF))
                later = b.icmp_unsigned("==", b.and_(lane, self.const(m)), self.const(0))
            else:
                src = b.or_(b.and_(lane, self.const(~m & 0xFFFFFFFF)), self.const(low))
                later = b.icmp_unsigned("!=", b.and_(lane, self.const(m)), self.const(0))
            for g, v in incl.items():
                other = tuple(shuffle_idx(self.ctx, x, src) for x in v)
                incl[g] = self.select(later, self.combine(other, v), v)
            low |= m
        step = self.const(1 << plan.lanes[0])
        pos = self.field(lane, plan.lanes)
        if self.reverse:
            prev = b.and_(b.add(lane, step), self.const(31))
            valid = b.icmp_unsigned("!=", pos, self.const((1 << len(plan.lanes)) - 1))
        else:
            prev = b.and_(b.sub(lane, step), self.const(31))
            valid = b.icmp_unsigned("!=", pos, self.const(0))
        prefix = {g: tuple(shuffle_idx(self.ctx, x, prev) for x in v) for g, v in incl.items()}
        return incl, prefix, valid

    def warps(self, incl: dict[int, Values]):
        """Each thread's prefix over the warps before its own, and every tile's total."""
        plan, b, ctx = self.plan, self.b, self.ctx
        lane_mask = sum(1 << x for x in plan.lanes)
        if not plan.warps:
            if plan.lanes:  # the last lane's inclusive total, to everyone
                last = b.and_(ctx.threads.lane, self.const(~lane_mask & 31))
                if not self.reverse:
                    last = b.or_(last, self.const(lane_mask))
                tiles = {g: tuple(shuffle_idx(ctx, x, last) for x in v) for g, v in incl.items()}
            else:
                tiles = dict(incl)
            return {g: None for g in incl}, False, tiles
        nw, nl = plan.layout.num_warps, plan.layout.num_lanes
        warp_mask = sum(1 << x for x in plan.warps)
        lane_pos = self.field(ctx.threads.lane, plan.lanes) if plan.lanes else None
        writer = None
        if lane_pos is not None:
            last = 0 if self.reverse else (1 << len(plan.lanes)) - 1
            writer = b.icmp_unsigned("==", lane_pos, self.const(last))
        row_lane = b.and_(ctx.threads.lane, self.const(~lane_mask & 31))
        warp_rest = b.and_(ctx.threads.warp, self.const(~warp_mask & 0xFFFFFFFF))
        types = [s.type for s in self.op.srcs]
        bases, base = [], scratch_offset(self.op)
        for t in types:
            bases.append(base)
            base += align(plan.slots() * element_bytes(t))

        def address(i: int, gi: int, warp: ir.Value) -> ir.Value:
            slot = b.add(b.mul(b.add(self.const(gi * nw), warp), self.const(nl)), row_lane)
            return b.add(b.mul(slot, self.const(element_bytes(types[i]))), self.const(bases[i]))

        sync(ctx, self.op)  # the gpu.barrier before the op, if any
        for gi, g in enumerate(plan.groups):
            for i, x in enumerate(incl[g]):
                store_shared(ctx, address(i, gi, ctx.threads.warp), [x], writer)
        barrier(ctx)
        wpos = self.field(ctx.threads.warp, plan.warps)
        prefixes, valid, tiles = {}, False, {}
        order = list(range(1 << len(plan.warps)))
        order = order[::-1] if self.reverse else order
        before = {
            q: b.icmp_unsigned(">" if self.reverse else "<", self.const(q), wpos) for q in order
        }
        ltypes = [llvm_type(t) for t in types]
        for gi, g in enumerate(plan.groups):
            acc: Values | None = None
            total: Values | None = None
            valid = False  # (the same for every group: it depends on the warp only)
            for q in order:
                w = b.or_(warp_rest, self.const(q << plan.warps[0]))
                t = tuple(
                    load_shared(ctx, address(i, gi, w), ty, 1)[0] for i, ty in enumerate(ltypes)
                )
                total = t if total is None else self.combine(total, t)
                cond = before[q]
                if acc is None:
                    acc, valid = t, cond
                else:
                    acc = self.select(cond, self.select(valid, self.combine(acc, t), t), acc)
                    valid = b.or_(valid, cond)
            prefixes[g], tiles[g] = acc, total
        return prefixes, valid, tiles


@lowers("tt.scan")
def scan(ctx: FunctionLowering, op: Operation) -> None:
    _Scan(ctx, op).run()


__all__ = ["scan"]
