"""`pipeline`: software pipelining of K loops with `cp.async` (upstream's `tritongpu-pipeline`
for sm_80 - sm_89): the tiles a `tt.dot` reads are copied into a ring of `num_stages`
shared-memory buffers `num_stages - 1` iterations ahead.

    scf.for %k = %lb to %ub step %s iter_args(%acc = %z, %p = %p0) {
      %a = tt.load %p, %m, %zero : tensor<128x32x!tt.ptr<f16>, #blocked>
      %x = ttg.convert_layout %a : ... -> tensor<128x32xf16, #ttg.dot_op<{opIdx = 0, ...}>>
      %d = tt.dot %x, ..., %acc
      %p1 = tt.addptr %p, %inc
      scf.yield %d, %p1
    }
  =>  (num_stages = 3: buffers 0, 1, 2; iterations 0 and 1 in the prologue)
    %buf = ttg.local_alloc : () -> !ttg.memdesc<3x128x32xf16, #shared, #smem, mutable>
    %s0 = ttg.memdesc_index %buf[%c0]
    %t0 = ttg.async_copy_global_to_local %p0, %s0 mask (%m & splat(%lb < %ub))
    %g0 = ttg.async_commit_group tokens %t0
    %p0' = tt.addptr %p0, %inc                                 (iteration 1: same, buffer 1)
    ...
    %r:6 = scf.for %k = %lb to %ub step %s iter_args(%acc = %z, %q = %p0'', %ins = %c1,
                                                      %ext = %c-1, %g = %g0, %h = %g1) {
      %ext1 = (%ext + 1 == 3) ? 0 : %ext + 1                 (the buffer read this trip)
      %ins1 = (%ins + 1 == 3) ? 0 : %ins + 1                 (the buffer filled this trip)
      %w = ttg.async_wait %g {num = 1 : i32}                 (iteration k's group landed;
                                                              bar.sync: and every thread is
                                                              done with trip k-1's buffer)
      %t = ttg.async_copy_global_to_local %q, %buf[%ins1] mask (%m' & splat(%k < %ub - 2*%s))
      %g2 = ttg.async_commit_group tokens %t                 (iteration k + 2)
      %x = ttg.local_load %buf[%ext1] token %w -> tensor<128x32xf16, #ttg.dot_op<...>>
      %d = tt.dot %x, ..., %acc
      scf.yield %d, tt.addptr(%q, %inc), %ins1, %ext1, %h, %g2
    }
    ttg.async_wait {num = 0 : i32}
    ttg.local_dealloc %buf

Which loads: in an `scf.for` whose body holds a `tt.dot`, a `tt.load` each of whose uses
reaches a `ttg.convert_layout` to a dot-operand layout (through single-use elementwise
ops such as a bitcast, layout conversions, and one `tt.trans`), with no `other` or a zero
one (cp.async zero-fills masked elements), whose address and mask are computed by
side-effect-free ops, and that moves at least 4 bytes per copy (cp.async's minimum).
One tile per load, whatever the number of reads: when every read transposes, the
pointers and mask are transposed (a register permutation) and the copy writes the
transposed tile, which the dot reads as is (`tl.dot(q, tl.trans(k))`); otherwise the tile
keeps the load's orientation and a transposing read goes through `ttg.memdesc_trans`
(upstream's OptimizeDotOperands fuses `tt.trans` into the shared view the same way).
The tile's swizzle is each read's own choice (`operand_buffer_type`); reads that would
choose different ones leave the load alone (upstream's
`getSharedEncIfAllUsersAreDotEnc`). Attention's backward reads Q and dO (dK/dV) or K (dQ)
both ways:

    %q = tt.load %p, %m, %zero : tensor<64x64x!tt.ptr<f16>, #blocked>
    %a = ttg.convert_layout %q : ... -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, ...}>>
    %t = tt.trans %q1 {order = array<i32: 1, 0>} : ... (%q1: %q converted)
    %b = ttg.convert_layout %t : ... -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, ...}>>
  =>
    %s = ttg.memdesc_index %buf[%ext1]                                (after the copies)
    %a = ttg.local_load %s token %w -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, ...}>>
    %v = ttg.memdesc_trans %s {order = array<i32: 1, 0>}    (#shared, order [1, 0] ->
                                                               #shared1, order [0, 1])
    %b = ttg.local_load %v token %w -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, ...}>> Its address/mask computation (the
backward slice inside the body, through loop-carried values: the pointer increments)
is stage 0, run `num_stages - 1` iterations ahead: cloned into the prologue for
iterations 0 .. num_stages - 2 and into the loop for iteration k + num_stages - 1, on
its own copies of the loop-carried values it needs. Everything else stays in place
(stage `num_stages - 1`); loop-carried values only stage 0 needs are dropped. Copies of
iterations past the end are masked off (predication, no epilogue loop), as upstream.
A loop's own `tt.num_stages` (`tl.range(..., num_stages=)`) replaces the kernel's
`num_stages` for that loop, as upstream (below 2: not pipelined).

Where this differs from upstream 3.6: upstream allocates `num_stages - 1` buffers and
issues the copies after the dot, into the buffer the dot just read, so its membar adds a
second `bar.sync` per iteration (before the copies). Here the ring has `num_stages`
buffers and the copies go into the buffer read one trip ago: the wait's `bar.sync` is
the only barrier of the iteration. One commit group per iteration (upstream: one per
load).

Where the copies go: first, right after the wait (above), so they have one more trip of
compute to land; but in a loop of chained mma.sync dots whose results take at most
`REFILL_LAST_REGISTERS` (64) registers per thread, with unmasked loads and three stages
or more (attention's forward at D = 64), after the trip's last dot:

    %w = ttg.async_wait %g {num = 1 : i32}            (bar.sync)
    %k = ttg.local_load %buf[%ext1] {ring = "read"}   ... tt.dot ... tt.dot
    %t = ttg.async_copy_global_to_local %q, %buf[%ins1] {ring = "refill"} ...
    %g2 = ttg.async_commit_group tokens %t

The first dot's ldmatrix reads then issue right after the barrier instead of queueing
behind the copies, and ptxas interleaves the copies with the second dot (on the H100,
64x64 blocks, 4 warps, S = 4096: 272 against 255 TFLOP/s, causal 231 against 222;
upstream on mma.sync 279 / 240; benchmarks/RESULTS.md). The stage filled is not
the one read (`ins1` is `ext1 + num_stages - 1` modulo `num_stages`): the views' `ring`
tags say so to membar (analysis/membar.py), which then adds no barrier before the copies.
Elsewhere this order measured slower: the copy addresses and masks computed while the
accumulators are live cost registers (D = 128 attention, 96 result registers per thread:
spills and 14% slower causal; a masked loop: 172 registers against 145, two programs per
SM instead of three), a single dot's trip gains nothing from it (GEMMs 1-6% slower), and
with two stages the copies would have no time to land. The stage
count is lowered until the ring fits the target's shared memory beside the operand
tiles resident through the loop (`resident_tile_bytes`) and, when an op with scratch
runs in the loop, the kernel's scratch (upstream fails at
launch instead). The tile is swizzled as optimize-dot-operands would (`#shared`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free
from xdsl.transforms.dead_code_elimination import would_be_trivially_dead

from tritium.analysis.allocation import SMALL
from tritium.analysis.membar import RING_ATTR, RING_READ, RING_REFILL
from tritium.analysis.scratch import scratch_bytes
from tritium.ir import arith, tt
from tritium.ir.arith import constant_value
from tritium.ir.layouts import elements_per_thread
from tritium.ir.shared_layout import memdesc_tile
from tritium.ir.ttg import BlockedEncodingAttr, ConvertLayoutOp
from tritium.ir.ttg_memory import (
    AsyncCommitGroupOp,
    AsyncCopyGlobalToLocalOp,
    AsyncWaitOp,
    LocalAllocOp,
    LocalDeallocOp,
    LocalLoadOp,
    MemDescIndexOp,
    MemDescTransOp,
    transposed_memdesc,
)
from tritium.ir.ttg_mma import (
    DotOperandEncodingAttr,
    MemDescType,
    NvidiaMmaEncodingAttr,
    is_mma_to_dot_shortcut,
    memdesc_bytes,
)
from tritium.ir.types import bitwidth, element_type, encoding_of, i1, i32, shape_of, with_element
from tritium.passes.accelerate_matmul import compute_capability
from tritium.passes.convert_triton_to_tritongpu import transposed_operand_layout
from tritium.passes.dce import has_volatile_access
from tritium.passes.optimize_dot_operands import operand_buffer_type
from tritium.passes.utils import is_elementwise, make_constant, set_type

# Largest dynamic shared memory per block (bytes) by compute capability (opt-in maximum).
SMEM_LIMIT = {80: 166912, 86: 101376, 87: 166912, 89: 101376, 90: 232448}


def smem_limit(capability: int) -> int:
    if capability in SMEM_LIMIT:
        return SMEM_LIMIT[capability]
    return 232448 if capability >= 90 else 101376


# --------------------------------------------------------------------------- analysis


@dataclass
class OperandRead:
    """One use of a pipelined load: chain (elementwise, converts, at most one trans) ->
    convert_layout to a dot-operand layout."""

    chain: list[Operation]
    convert: ConvertLayoutOp
    transposed: bool  # a tt.trans in the chain


@dataclass
class PipelinedLoad:
    """A load feeding dot operands: one read per use, all from one tile."""

    load: tt.LoadOp
    reads: list[OperandRead]
    buffer: MemDescType  # one stage
    transposed: bool = False  # every read transposes: the tile holds the transpose


@dataclass
class LoopPlan:
    loop: scf.ForOp
    loads: list[PipelinedLoad]
    stage0: list[Operation]  # body ops of the loads' address/mask slice, in body order
    stage0_args: list[int]  # iter_arg indices that slice reads
    keep_args: list[int] = field(default_factory=list)  # iter_args the rest needs
    keep_ops: list[Operation] = field(default_factory=list)  # body ops the rest needs


def _body_op(v: SSAValue, block: Block) -> Operation | None:
    """The top-level op of `block` defining `v`, or None (block argument, outer value)."""
    owner = v.owner
    return owner if isinstance(owner, Operation) and owner.parent_block() is block else None


def _iter_arg_index(v: SSAValue, block: Block) -> int | None:
    """k if `v` is the body's block argument of iter_arg k (not the induction variable)."""
    if isinstance(v.owner, Block) and v.owner is block and v.index > 0:
        return v.index - 1
    return None


def _operands_deep(op: Operation):
    """Operands of `op` and of the ops nested in it, that are defined outside `op`."""
    inner = {id(r) for sub in op.walk() for r in sub.results}
    for region in op.regions:
        for b in region.blocks:
            inner |= {id(a) for a in b.args}
    for sub in op.walk():
        for v in sub.operands:
            if id(v) not in inner:
                yield v


def _dot_operand_reads(load: tt.LoadOp) -> list[OperandRead] | None:
    """One read per use of `load`, each a chain to a dot operand (`_dot_operand_use`);
    None when a use is anything else."""
    reads = []
    for use in load.result.uses:
        found = _dot_operand_use(load, use.operation)
        if found is None:
            return None
        chain, convert = found
        reads.append(OperandRead(chain, convert, any(isinstance(c, tt.TransOp) for c in chain)))
    return reads or None


def _dot_operand_use(
    load: tt.LoadOp, user: Operation
) -> tuple[list[Operation], ConvertLayoutOp] | None:
    """The single-use chain from `load` through its use by `user` to a convert into a
    dot-operand layout: unary elementwise ops, converts between distributed layouts and at
    most one 2D `tt.trans` (`tl.trans(k)` of attention's q @ k^T)."""
    chain: list[Operation] = []
    v: SSAValue = load.result
    while True:
        if chain:
            uses = list(v.uses)
            if len(uses) != 1:
                return None
            user = uses[0].operation
        if user.parent_block() is not load.parent_block():
            return None
        if isinstance(user, ConvertLayoutOp):
            if isinstance(encoding_of(user.result.type), DotOperandEncodingAttr):
                return chain, user
        elif isinstance(user, tt.TransOp):
            if user.order_list != [1, 0] or any(isinstance(c, tt.TransOp) for c in chain):
                return None
        elif not is_elementwise(user) or len(user.operands) != 1 or len(user.results) != 1:
            return None
        elif shape_of(user.results[0].type) != shape_of(v.type):
            return None
        chain.append(user)
        v = user.results[0]


def transposed_type(t: Attribute) -> Attribute:
    """A 2D tensor type with its dims swapped and its blocked layout permuted to match (so
    `tt.trans` to it moves no data)."""
    enc = transposed_operand_layout(encoding_of(t), [1, 0])
    return TensorType(element_type(t), list(reversed(shape_of(t))), enc)


def _zero_other(load: tt.LoadOp) -> bool:
    if load.other is None:
        return True
    v = constant_value(load.other)
    return v is not None and v == 0 and math.copysign(1.0, float(v)) > 0


def _slice(loop: scf.ForOp, roots: list[SSAValue]) -> tuple[set[int], set[int]] | None:
    """Body ops (ids) and iter_arg indices the values `roots` depend on; None if one of
    those ops has side effects or regions (it could not run ahead)."""
    block = loop.body.block
    ops: set[int] = set()
    args: set[int] = set()
    todo = list(roots)
    while todo:
        v = todo.pop()
        k = _iter_arg_index(v, block)
        if k is not None:
            if k not in args:
                args.add(k)
                todo.append(block.last_op.operands[k])
            continue
        op = _body_op(v, block)
        if op is None or id(op) in ops:
            continue
        if op.regions or not is_side_effect_free(op):
            return None
        ops.add(id(op))
        todo += list(op.operands)
    return ops, args


def _find_loads(loop: scf.ForOp, axis) -> list[tuple[PipelinedLoad, set[int], set[int]]]:
    block = loop.body.block
    out = []
    for op in block.ops:
        if not isinstance(op, tt.LoadOp) or has_volatile_access(op):
            continue
        t = op.result.type
        if len(shape_of(t)) != 2 or not _zero_other(op):
            continue
        reads = _dot_operand_reads(op)
        if reads is None:
            continue
        bits = bitwidth(element_type(t))
        if axis.vector_width(op) * bits < 32:
            continue  # cp.async moves 4, 8 or 16 bytes
        transposed = all(r.transposed for r in reads)
        if any(r.transposed for r in reads) and not isinstance(
            encoding_of(t), BlockedEncodingAttr
        ):
            continue
        buffer = _shared_buffer(t, reads, transposed)
        if buffer is None or memdesc_tile(buffer).contiguous * bits < 32:
            continue
        roots = [op.ptr] + [v for v in (op.mask, op.other) if v is not None]
        sl = _slice(loop, roots)
        if sl is None:
            continue
        out.append((PipelinedLoad(op, reads, buffer, transposed), *sl))
    return out


def _shared_buffer(t, reads: list[OperandRead], transposed: bool) -> MemDescType | None:
    """The one tile every read of a load of type `t` can take its operand from (in the
    transposed orientation if `transposed`): each read's own choice (`operand_buffer_type`),
    seen from the tile's orientation, must be the same; None otherwise (upstream's
    `getSharedEncIfAllUsersAreDotEnc`)."""
    found = set()
    for r in reads:
        own = operand_buffer_type(
            transposed_type(t) if r.transposed else t, encoding_of(r.convert.result.type)
        )
        if r.transposed != transposed:
            own = transposed_memdesc(own, [1, 0])  # swizzled or nvmma (wgmma's) tiles
        found.add(own)
    return found.pop() if len(found) == 1 else None


def plan_loop(loop: scf.ForOp, axis) -> LoopPlan | None:
    """What to pipeline in `loop` (None: nothing)."""
    block = loop.body.block
    if not any(isinstance(op, tt.DotOp) for op in block.ops):
        return None
    found = _find_loads(loop, axis)
    if not found:
        return None
    loads = [f[0] for f in found]
    ops_ids: set[int] = set().union(*(f[1] for f in found))
    args: set[int] = set().union(*(f[2] for f in found))
    stage0 = [op for op in block.ops if id(op) in ops_ids]
    plan = LoopPlan(loop, loads, stage0, sorted(args))
    _rest(plan)
    return plan


def _rest(plan: LoopPlan) -> None:
    """The body ops and iter_args the loop still needs besides the stage-0 slice: a
    backward closure from effectful ops and from the results used after the loop."""
    loop = plan.loop
    block = loop.body.block
    yields = block.last_op.operands
    replaced = {id(r.convert) for p in plan.loads for r in p.reads}
    skipped = replaced | {id(p.load) for p in plan.loads}
    skipped |= {id(c) for p in plan.loads for r in p.reads for c in r.chain}
    ops: set[int] = set()
    args: set[int] = set()
    todo: list[SSAValue] = []

    def need_op(op: Operation) -> None:
        if id(op) in ops or id(op) in skipped:
            return
        ops.add(id(op))
        todo.extend(_operands_deep(op))

    def need_arg(k: int) -> None:
        if k not in args:
            args.add(k)
            todo.append(yields[k])

    for k, r in enumerate(loop.results):
        if r.uses:
            need_arg(k)
    for op in block.ops:
        if op is block.last_op or id(op) in skipped:
            continue
        if not would_be_trivially_dead(op) or has_volatile_access(op):
            need_op(op)
    while todo:
        v = todo.pop()
        k = _iter_arg_index(v, block)
        if k is not None:
            need_arg(k)
            continue
        op = _body_op(v, block)
        if op is not None:
            need_op(op)
    plan.keep_ops = [op for op in block.ops if id(op) in ops]
    plan.keep_args = sorted(args)


def choose_stages(plan: LoopPlan, num_stages: int, capability: int) -> int:
    """`num_stages`, lowered until the ring of buffers fits in shared memory beside the
    tiles that stay resident through the loop, the scratch that cannot share its bytes and
    the tiles values computed in the loop pass through (0: not even two stages fit)."""
    per_stage = sum(memdesc_bytes(p.buffer) for p in plan.loads)
    room = smem_limit(capability) - resident_tile_bytes(plan.loop) - _apart_scratch(plan)
    room -= _loop_a_tile_bytes(plan)
    stages = num_stages
    while stages >= 2 and stages * per_stage > room:
        stages -= 1
    return stages if stages >= 2 else 0


def resident_tile_bytes(loop: scf.ForOp) -> int:
    """Bytes of the shared tiles live through `loop` besides its ring: the dot operands
    converted before the loop and used inside it, which optimize-dot-operands stages in
    a tile each (attention's Q in the forward, K and V in the dK/dV backward)."""
    inside = {id(op) for op in loop.walk()}
    total, seen = 0, set()
    for op in loop.walk():
        for v in op.operands:
            cvt = v.owner
            if id(cvt) in seen or id(cvt) in inside or not isinstance(cvt, ConvertLayoutOp):
                continue
            seen.add(id(cvt))
            dst = encoding_of(cvt.result.type)
            if not isinstance(dst, DotOperandEncodingAttr) or len(shape_of(cvt.src.type)) != 2:
                continue
            if is_mma_to_dot_shortcut(encoding_of(cvt.src.type), dst, bitwidth(cvt.src.type)):
                continue
            total += memdesc_bytes(operand_buffer_type(cvt.src.type, dst))
    return total


def _loop_a_tile_bytes(plan: LoopPlan) -> int:
    """Bytes of the tiles that dot results computed in the loop will be staged in beside
    the ring: an mma accumulator converted to a dot operand without the register shortcut
    (the dQ backward's dS on 8 warps, whose #mma has its warps along N), which
    optimize-dot-operands turns into a `local_alloc` the allocator keeps apart from the
    ring (it lives while the ring does). Each is read by the dot right after it: they take
    turns in one region (the largest)."""
    gone = {id(c) for p in plan.loads for r in p.reads for c in r.chain}
    largest = 0
    for op in plan.loop.walk():
        if not isinstance(op, ConvertLayoutOp) or id(op) in gone:
            continue
        src, dst = encoding_of(op.src.type), encoding_of(op.result.type)
        if not isinstance(dst, DotOperandEncodingAttr) or not isinstance(src, NvidiaMmaEncodingAttr):
            continue  # (loaded operands: the ring's, or resident_tile_bytes')
        if is_mma_to_dot_shortcut(src, dst, bitwidth(op.src.type)):
            continue
        largest = max(largest, memdesc_bytes(operand_buffer_type(op.src.type, dst)))
    return largest


def _scratch(op: Operation) -> int:
    """The scratch bytes `op` will need once lowered (a convert to a dot operand becomes
    a tile, optimize-dot-operands, or a register permutation instead)."""
    if isinstance(op, ConvertLayoutOp) and isinstance(
        encoding_of(op.result.type), DotOperandEncodingAttr
    ):
        return 0
    return scratch_bytes(op)


def _apart_scratch(plan: LoopPlan) -> int:
    """The kernel's scratch bytes when they cannot share the ring's: the allocator lets a
    tile share bytes with scratch only when no op with scratch runs while it lives
    (analysis/allocation.py), so an op with scratch in the loop (the dK/dV backward's lse
    and delta conversions) puts them all beside the ring: each small one, and the largest
    of the others (they share one region). The pipelined loads' conversions go away."""
    loop = plan.loop
    gone = {id(c) for p in plan.loads for r in p.reads for c in r.chain}
    if not any(_scratch(op) for op in loop.walk() if id(op) not in gone):
        return 0
    func = loop
    while func.parent_op() is not None and not isinstance(func, tt.FuncOp):
        func = func.parent_op()
    sizes = [b for b in (_scratch(op) for op in func.walk() if id(op) not in gone) if b]
    return sum(b for b in sizes if b <= SMALL) + max((b for b in sizes if b > SMALL), default=0)


# --------------------------------------------------------------------------- rewriting


class _Emitter:
    """Appends ops at an insertion point, giving them the loop's location."""

    def __init__(self, point: InsertPoint, loc):
        self.point, self.loc = point, loc

    def __call__(self, op: Operation) -> Operation:
        op.location = self.loc
        Rewriter.insert_op(op, self.point)
        return op

    def const(self, value: int, type_=i32) -> SSAValue:
        return self(make_constant(value, type_)).results[0]


def ring_view(buf: SSAValue, index: SSAValue, role: str | None) -> MemDescIndexOp:
    """`ttg.memdesc_index %buf[%index]`, tagged `{ring = role}` when `role` is given."""
    view = MemDescIndexOp(buf, index)
    if role is not None:
        view.attributes[RING_ATTR] = StringAttr(role)
    return view


def _wrap_increment(emit: _Emitter, v: SSAValue, one, stages, zero) -> SSAValue:
    """`(v + 1 >= stages) ? 0 : v + 1` (upstream's ring-index update)."""
    nxt = emit(arith.AddiOp(v, one)).result
    wrap = emit(arith.CmpiOp(nxt, stages, "sge")).result
    return emit(arith.SelectOp(wrap, zero, nxt)).result


def _issue(
    emit: _Emitter, plan: LoopPlan, mapping, bufs, index: SSAValue, pred: SSAValue, role=None
):
    """Clone the stage-0 slice under `mapping`, then one async copy per load into stage
    `index` of its buffer (mask ANDed with `pred`), then one commit group. `role`: the
    views' ring role (`ring_view`), for the copies in the loop."""
    for op in plan.stage0:
        new = emit(op.clone(value_mapper=mapping))
        for old, res in zip(op.results, new.results):
            mapping[old] = res
    tokens = []
    for p, buf in zip(plan.loads, bufs):
        view = emit(ring_view(buf, index, role)).result
        ptr = mapping.get(p.load.ptr, p.load.ptr)
        mask_type = with_element(ptr.type, i1)
        mask = emit(tt.SplatOp(pred, mask_type)).result
        if p.load.mask is not None:
            mask = emit(arith.AndIOp(mask, mapping.get(p.load.mask, p.load.mask))).result
        if p.transposed:  # the copy writes the transposed tile (a register permutation)
            ptr = emit(tt.TransOp(ptr, [1, 0], transposed_type(ptr.type))).result
            mask = emit(tt.TransOp(mask, [1, 0], transposed_type(mask.type))).result
        copy = AsyncCopyGlobalToLocalOp(ptr, view, mask)
        for prop in ("cache", "evict"):
            if getattr(p.load, prop) is not None:
                copy.properties[prop] = getattr(p.load, prop)
        tokens.append(emit(copy).token)
    return emit(AsyncCommitGroupOp(tokens)).result


def _stage0_iter_values(plan: LoopPlan, mapping) -> list[SSAValue]:
    """The stage-0 iter_args' next values, as `mapping` computes them."""
    yields = plan.loop.body.block.last_op.operands
    return [mapping.get(yields[k], yields[k]) for k in plan.stage0_args]


def pipeline_loop(plan: LoopPlan, stages: int) -> scf.ForOp:
    """Rewrite `plan.loop` (see the module docstring); returns the new loop."""
    loop = plan.loop
    block = loop.body.block
    iv = block.args[0]
    dist = stages - 1
    at_end = refill_last(loop, stages) and all(p.load.mask is None for p in plan.loads)
    before = _Emitter(InsertPoint.before(loop), loop.location)
    ity = iv.type

    bufs = []
    for p in plan.loads:
        t = p.buffer
        ring = MemDescType((stages, *t.get_shape()), t.element_type, t.encoding)
        alloc = before(LocalAllocOp(ring))
        alloc.location = p.load.location
        bufs.append(alloc.result)

    # prologue: iterations 0 .. dist - 1
    inits = {k: loop.iter_args[k] for k in plan.stage0_args}
    groups = []
    for j in range(dist):
        it = loop.lb
        if j:
            off = before(arith.MuliOp(loop.step, before.const(j, ity))).result
            it = before(arith.AddiOp(loop.lb, off)).result
        pred = before(arith.CmpiOp(it, loop.ub, "slt")).result
        mapping: dict[SSAValue, SSAValue] = {iv: it}
        mapping |= {block.args[k + 1]: v for k, v in inits.items()}
        groups.append(_issue(before, plan, mapping, bufs, before.const(j), pred))
        vals = _stage0_iter_values(plan, mapping)
        inits = dict(zip(plan.stage0_args, vals))
    ahead = before(arith.MuliOp(loop.step, before.const(dist, ity))).result
    last = before(arith.SubiOp(loop.ub, ahead)).result

    # the new loop: kept iter_args, stage-0 copies, insert / extract indices, groups
    keep, s0 = plan.keep_args, plan.stage0_args
    types = [iv.type] + [block.args[k + 1].type for k in keep]
    types += [block.args[k + 1].type for k in s0] + [i32, i32] + [g.type for g in groups]
    new_block = Block(arg_types=types)
    n_keep, n_s0 = len(keep), len(s0)
    nargs = new_block.args
    new_iv = nargs[0]
    kept = dict(zip(keep, nargs[1 : 1 + n_keep]))
    shifted = dict(zip(s0, nargs[1 + n_keep : 1 + n_keep + n_s0]))
    ins, ext = nargs[1 + n_keep + n_s0], nargs[2 + n_keep + n_s0]
    toks = list(nargs[3 + n_keep + n_s0 :])
    new_iv.name_hint = iv.name_hint
    for k, a in (*kept.items(), *shifted.items()):
        a.name_hint = block.args[k + 1].name_hint
    init_vals = [loop.iter_args[k] for k in keep] + [inits[k] for k in s0]
    init_vals += [before.const(dist - 1), before.const(-1)] + groups

    ring = (before.const(1), before.const(stages), before.const(0))
    body = _Emitter(InsertPoint.at_end(new_block), loop.location)
    ext1 = _wrap_increment(body, ext, *ring)
    ins1 = _wrap_increment(body, ins, *ring)
    wait = body(AsyncWaitOp(dist - 1, [toks[0]])).result
    it = body(arith.AddiOp(new_iv, ahead)).result
    pred = body(arith.CmpiOp(new_iv, last, "slt")).result
    mapping = {iv: it} | {block.args[k + 1]: v for k, v in shifted.items()}
    first_issue = new_block.last_op
    group = _issue(body, plan, mapping, bufs, ins1, pred, RING_REFILL)
    next_s0 = _stage0_iter_values(plan, mapping)
    refill = []  # the refill's ops, moved after the body's when `at_end`
    op = first_issue.next_op
    while op is not None:
        refill.append(op)
        op = op.next_op

    # stage num_stages - 1: the body as it was, each convert read from the ring
    iv.replace_all_uses_with(new_iv)
    for k, a in kept.items():
        block.args[k + 1].replace_all_uses_with(a)
    reads = {id(r.convert): (p, r, buf) for p, buf in zip(plan.loads, bufs) for r in p.reads}
    keep_ids = {id(op) for op in plan.keep_ops}
    for op in list(block.ops):
        if id(op) in reads:
            p, r, buf = reads[id(op)]
            _read_stage(body, p, r, buf, ext1, wait)
        elif id(op) in keep_ids:
            op.detach()
            body(op).location = op.location
    if at_end:
        for op in refill:
            op.detach()
            body(op)
    old_yield = block.last_op.operands
    body(scf.YieldOp(*[old_yield[k] for k in keep], *next_s0, ins1, ext1, *toks[1:], group))

    new_loop = scf.ForOp(loop.lb, loop.ub, loop.step, init_vals, new_block)
    new_loop.location = loop.location
    Rewriter.insert_op(new_loop, InsertPoint.before(loop))
    for i, k in enumerate(keep):
        loop.results[k].replace_all_uses_with(new_loop.results[i])
    after = _Emitter(InsertPoint.after(new_loop), loop.location)
    after(AsyncWaitOp(0))
    for buf in reversed(bufs):
        after(LocalDeallocOp(buf))
    loop.detach()
    loop.erase(safe_erase=False)
    return new_loop


# dot-result registers per thread up to which a chained-dot loop refills last
REFILL_LAST_REGISTERS = 64


def refill_last(loop: scf.ForOp, stages: int) -> bool:
    """Whether the trip's copies go after its last dot rather than right after the wait
    (the module docstring, "Where the copies go"): a loop of chained mma.sync dots
    (attention's two) whose results take at most REFILL_LAST_REGISTERS registers per
    thread, in a ring of three stages or more."""
    dots = [op for op in loop.body.walk() if isinstance(op, tt.DotOp)]
    encs = [encoding_of(d.results[0].type) for d in dots]
    if stages < 3 or len(dots) < 2:
        return False
    if not all(isinstance(e, NvidiaMmaEncodingAttr) and e.version_major.data == 2 for e in encs):
        return False  # wgmma: wgmma-pipeline places the copies
    return sum(elements_per_thread(d.results[0].type) for d in dots) <= REFILL_LAST_REGISTERS


def _read_stage(emit: _Emitter, p: PipelinedLoad, r: OperandRead, buf, index, token) -> None:
    """Replace the read's convert (and the chain before it) by a local_load of the stage,
    through a `ttg.memdesc_trans` view when the read's orientation is not the tile's; the
    chain's elementwise ops follow in the dot-operand layout (its converts and trans are
    done: the view is in the operand's orientation)."""
    view = emit(ring_view(buf, index, RING_READ)).result
    if r.transposed != p.transposed:
        view = emit(MemDescTransOp(view, [1, 0])).result
    operand = r.convert.result.type
    ld = LocalLoadOp(view, with_element(operand, element_type(p.load.result.type)), token)
    ld.location = p.load.location
    value = emit(ld).result
    for op in r.chain:
        if isinstance(op, ConvertLayoutOp | tt.TransOp):
            continue
        new = emit(op.clone(value_mapper={op.operands[0]: value}))
        value = set_type(new.results[0], with_element(operand, element_type(op.results[0].type)))
    r.convert.result.replace_all_uses_with(value)


# --------------------------------------------------------------------------- the pass


def loop_stages(loop: scf.ForOp, num_stages: int) -> int:
    """The stages asked for `loop`: its own `tt.num_stages` (`tl.range(..., num_stages=)`),
    as upstream, else the kernel's `num_stages`."""
    attr = loop.attributes.get("tt.num_stages")
    return attr.value.data if isinstance(attr, IntegerAttr) else num_stages


def software_pipeline(module: ModuleOp, num_stages: int = 3) -> int:
    """Pipeline every eligible loop of `module` in place; returns how many were."""
    loops = [op for op in module.walk() if isinstance(op, scf.ForOp)]
    if all(loop_stages(loop, num_stages) < 2 for loop in loops):
        return 0
    if compute_capability(module) < 80:
        return 0
    from tritium.analysis.axis_info import AxisInfoAnalysis

    axis = AxisInfoAnalysis(module)
    capability = compute_capability(module)
    plans = []
    for op in loops:
        if loop_stages(op, num_stages) >= 2:
            plan = plan_loop(op, axis)
            if plan is not None:
                plans.append(plan)
    done = 0
    for plan in plans:
        stages = choose_stages(plan, loop_stages(plan.loop, num_stages), capability)
        if stages:
            pipeline_loop(plan, stages)
            done += 1
    return done


@dataclass(frozen=True)
class SoftwarePipelinePass(ModulePass):
    name = "pipeline"

    num_stages: int = 3

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        software_pipeline(op, self.num_stages)


__all__ = [
    "LoopPlan",
    "OperandRead",
    "PipelinedLoad",
    "SoftwarePipelinePass",
    "choose_stages",
    "pipeline_loop",
    "plan_loop",
    "smem_limit",
    "software_pipeline",
]
