"""`tt.reduce`: within a thread, across lanes by butterfly shuffles, across warps through
shared memory (the plan is `tritium.analysis.reduce_plan`).

    %m = "tt.reduce"(%x) <{axis = 0 : i32}> ({ ^bb0(%a: f32, %b: f32):
           %c = arith.maxnumf %a, %b : f32   tt.reduce.return %c : f32 })
         : (tensor<1024xf32, #blocked(sizePerThread = 4, warps = 4)>) -> f32
    ->  max.f32 x 7                              (the thread's 8 registers, as a tree)
        shfl.sync.bfly.b32 + max.f32 x 5         (lane masks 1, 2, 4, 8, 16)
        @p st.shared.b32 [smem + 4*warp]         (lane 0 of each warp; p = lane == 0)
        bar.sync 0
        ld.shared.v4.b32 [smem] ; max.f32 x 3    (every thread folds the 4 partials)

The combine region is lowered for every pair it combines (its ops are scalar ops, lowered
by their own lowerings). Its left operands always hold the lower indices when the order
matters (a region that is not one commutative op, e.g. argmax's (value, index) pairs):
then the butterfly's lower lane holds the right answer, the lowest lane of each group
writes the smem partials (or, with no smem round, broadcasts its result by shfl.idx),
and the partials are folded in index order. Results: a scalar in every thread, or the
result layout's registers (`#ttg.slice` of the source).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.analysis.reduce_plan import ReducePlan, plan_for_reduce, row_major
from tritium.analysis.shared_bytes import element_bytes
from tritium.codegen.lower.context import FunctionLowering, lowers
from tritium.codegen.lower.shared import (
    barrier,
    load_shared,
    offset_value,
    scratch_offset,
    shuffle_idx,
    shuffle_xor,
    store_shared,
    sync,
    thread_offset,
    vector_width,
)
from tritium.codegen.lower.types import i32, llvm_type
from tritium.ir.types import is_tensor

Values = tuple[ir.Value, ...]  # one register per operand


def _combiner(ctx: FunctionLowering, op: Operation):
    block = op.regions[0].block
    ret = block.last_op

    def combine(left: Values, right: Values) -> Values:
        for arg, v in zip(block.args, left + right):
            ctx.set(arg, [v])
        for o in block.ops:
            if o is ret:
                return tuple(ctx.get1(v) for v in o.operands)
            ctx.lower_op(o)
        raise AssertionError("combine region without tt.reduce.return")

    return combine


def _tree(combine, values: list[Values]) -> Values:
    """Fold in order as a balanced tree: adjacent pairs first (short dependency chains)."""
    while len(values) > 1:
        values = [combine(values[i], values[i + 1]) for i in range(0, len(values), 2)]
    return values[0]


@lowers("tt.reduce")
def reduce(ctx: FunctionLowering, op: Operation) -> None:
    for v in list(op.operands) + list(op.results):
        ctx.layout(v.type)  # checks the layouts fit the module's warps
    plan = plan_for_reduce(op)
    combine = _combiner(ctx, op)
    srcs = [ctx.get(v) for v in op.operands]

    # Per output group: {axis index with the combined bits cleared: operand values}.
    groups: list[dict[int, Values]] = [
        {a: tuple(s[r] for s in srcs) for a, r in enumerate(regs)} for _, regs in plan.groups
    ]
    shuffled = False
    for kind, bit in plan.in_warp:
        for g, vals in enumerate(groups):
            if kind == "reg":
                m = 1 << bit
                groups[g] = {a: combine(vals[a], vals[a | m]) for a in vals if not a & m}
            else:
                groups[g] = {
                    a: combine(v, tuple(shuffle_xor(ctx, x, 1 << bit) for x in v))
                    for a, v in vals.items()
                }
                shuffled = True

    if plan.direct:
        if plan.ordered and shuffled:  # only the group's lowest lane has it: broadcast
            leader = _leader_lane(ctx, plan.lane_mask("lane"))
            groups = [
                {a: tuple(shuffle_idx(ctx, x, leader) for x in v) for a, v in vals.items()}
                for vals in groups
            ]
        _set_direct(ctx, op, plan, [vals[0] for vals in groups])
        return
    _through_smem(ctx, op, plan, groups, combine)


def _leader_lane(ctx: FunctionLowering, axis_lanes: int) -> ir.Value:
    eb = ctx.threads.entry_builder
    lane = ctx.threads.lane
    return ctx.threads.entry_value(
        ("leader", axis_lanes), lambda: eb.and_(lane, ir.Constant(i32, 31 & ~axis_lanes))
    )


def _set_direct(ctx: FunctionLowering, op: Operation, plan: ReducePlan, finals: list[Values]):
    if plan.dst is None:
        for i, res in enumerate(op.results):
            ctx.set(res, [finals[0][i]])
        return
    by_key = {key: finals[g] for g, (key, _) in enumerate(plan.groups)}
    regs = [by_key[plan.dst.register_coord(r)] for r in range(plan.dst.num_registers)]
    for i, res in enumerate(op.results):
        ctx.set(res, [v[i] for v in regs])


# --------------------------------------------------------------------------- smem round


def _out_strides(plan: ReducePlan) -> tuple[int, ...]:
    """Row-major strides of the output shape, as strides over the source dims (axis: 0)."""
    out = []
    stride = 1
    for d in reversed(range(plan.src.rank)):
        if d == plan.axis:
            out.append(0)
        else:
            out.append(stride)
            stride *= plan.src.shape[d]
    return tuple(reversed(out))


def _writer_predicate(ctx: FunctionLowering, plan: ReducePlan) -> ir.Value | None:
    """Lane 0 of each lane group along the axis, in warps that are not duplicates."""
    mask = plan.lane_mask("lane") | plan.src.free_lane_mask | (plan.src.free_warp_mask << 5)
    if not mask:
        return None
    eb = ctx.threads.entry_builder

    def make() -> ir.Value:
        bits = eb.and_(ctx.threads.tid, ir.Constant(i32, mask))
        return eb.icmp_unsigned("==", bits, ir.Constant(i32, 0))

    return ctx.threads.entry_value(("writer", mask), make)


def _warp_partial(ctx: FunctionLowering, plan: ReducePlan) -> ir.Value | None:
    """The warp's part of the partial index p: its axis warp bits, compacted."""
    parts = [(k, bit) for k, (kind, bit) in enumerate(plan.smem_bits) if kind == "warp"]
    if not parts:
        return None

    def make() -> ir.Value:
        eb = ctx.threads.entry_builder
        total = None
        for k, bit in parts:
            v = eb.and_(ctx.threads.warp, ir.Constant(i32, 1 << bit))
            v = eb.shl(v, ir.Constant(i32, k - bit)) if k > bit else v
            v = eb.lshr(v, ir.Constant(i32, bit - k)) if bit > k else v
            total = v if total is None else eb.or_(total, v)
        return total

    return ctx.threads.entry_value(("warp-partial", plan.smem_bits), make)


def _through_smem(ctx, op, plan: ReducePlan, groups, combine) -> None:
    b = ctx.builder
    base = scratch_offset(op)
    types = [v.type for v in op.operands]
    offsets = plan.operand_offsets(types)
    sizes = [element_bytes(t) for t in types]
    n_out, n_part = plan.num_outputs, plan.partials

    # ---- write: slot(p, o) = p * n_out + lin(o)
    sync(ctx, op)  # the gpu.barrier before the op, if any
    pred = _writer_predicate(ctx, plan)
    strides = _out_strides(plan)
    thread_lin, _ = thread_offset(ctx, plan.src, strides)
    warp_p = _warp_partial(ctx, plan)
    slot_base = thread_lin
    if warp_p is not None:
        scaled = warp_p if n_out == 1 else b.mul(warp_p, ir.Constant(i32, n_out))
        slot_base = scaled if slot_base is None else b.add(slot_base, scaled)
    for g, (key, _) in enumerate(plan.groups):
        lin = row_major(plan.out_shape, key)
        for a, vals in groups[g].items():
            p = 0
            for k, (kind, bit) in enumerate(plan.smem_bits):
                if kind == "reg" and a >> bit & 1:
                    p |= 1 << k
            for i, v in enumerate(vals):
                slot = offset_value(ctx, slot_base, p * n_out + lin)
                addr = b.add(
                    b.mul(slot, ir.Constant(i32, sizes[i])), ir.Constant(i32, base + offsets[i])
                )
                store_shared(ctx, addr, [v], pred)

    # ---- read: every thread folds the partials of each of its result registers
    barrier(ctx)
    dst = plan.dst
    if dst is None:
        consts = [0]
        dst_lin, dst_div = None, 1 << 30
    else:
        consts = [
            row_major(plan.out_shape, dst.register_coord(r)) for r in range(dst.num_registers)
        ]
        out_strides = tuple(s for d, s in enumerate(strides) if d != plan.axis)
        dst_lin, dst_div = thread_offset(ctx, dst, out_strides)
    results: list[list[ir.Value]] = [[None] * len(consts) for _ in types]
    for i, t in enumerate(types):
        ty = llvm_type(t)
        size = sizes[i]
        partials: list[list[ir.Value]] = [[None] * n_part for _ in consts]
        if n_out == 1:  # the partials are consecutive: vector loads
            v = min(n_part, 16 // size)
            for p0 in range(0, n_part, v):
                addr = ir.Constant(i32, base + offsets[i] + p0 * size)
                for k, x in enumerate(load_shared(ctx, addr, ty, v)):
                    partials[0][p0 + k] = x
            partials = [partials[0]] * len(consts)  # (any duplicate registers: the same)
        else:
            v = vector_width(consts, dst_div, max(1, min(16 // size, n_out)))
            for p in range(n_part):
                for r0 in range(0, len(consts), v):
                    slot = offset_value(ctx, dst_lin, p * n_out + consts[r0])
                    addr = b.add(
                        b.mul(slot, ir.Constant(i32, size)), ir.Constant(i32, base + offsets[i])
                    )
                    for k, x in enumerate(load_shared(ctx, addr, ty, v)):
                        partials[r0 + k][p] = x
        for r in range(len(consts)):
            results[i][r] = partials[r]
    for r in range(len(consts)):
        folded = _tree(
            combine, [tuple(results[i][r][p] for i in range(len(types))) for p in range(n_part)]
        )
        for i in range(len(types)):
            results[i][r] = folded[i]
    for i, res in enumerate(op.results):
        ctx.set(res, results[i] if is_tensor(res.type) else [results[i][0]])
