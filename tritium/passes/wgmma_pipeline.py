"""`wgmma-pipeline`: a `tt.dot` on the wgmma layout (`#ttg.nvidia_mma` version 3) reads its
operands straight from their shared tiles: `ttng.warp_group_dot` on the tiles, then
`ttng.warp_group_dot_wait`; in a K loop fed by the software pipeliner's rings, one wgmma
group stays in flight across iterations (upstream's `WGMMAPipeline` and `asyncLaunchDots`,
on tritium's pipelined loop).

    %a = ttg.local_load %sa token %w : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
    %b = ttg.local_load %sb token %w : !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>>
    %d = tt.dot %a, %b, %acc : ... -> tensor<128x128xf32, #mma>
  =>
    %d0 = ttng.warp_group_dot %sa, %sb, %acc {inputPrecision = 0 : i32, isAsync = true} : !ttg.memdesc<128x64xf16, ...> * !ttg.memdesc<64x128xf16, ...> -> tensor<128x128xf32, #mma>
    %d:3 = ttng.warp_group_dot_wait %d0, %sa, %sb {pendings = 0 : i32} : tensor<128x128xf32, #mma>, !ttg.memdesc<...>, !ttg.memdesc<...>

Runs after optimize-dot-operands, when every operand of such a dot is a `ttg.local_load`
of a `#ttg.nvmma_shared` tile (the software pipeliner's ring, or optimize-dot-operands'
`local_alloc`), or, for A, a 16-bit tensor in the A layout of a version 3 `#mma` (another
wgmma's accumulator that optimize-dot-operands left in registers: attention's P), which
wgmma reads from registers:

    %p = ttg.convert_layout %s16 : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma1, kWidth = 2}>>
    %o = ttng.warp_group_dot %p, %v_tile, %acc {...} : tensor<128x64xf16, #ttg.dot_op<...>> * !ttg.memdesc<64x128xf16, ...> -> tensor<128x128xf32, #mma1>

A tile that ordinary stores fill (`local_alloc` of a value, `local_store`) gets a
`ttng.fence_async_shared` before the dot, or before the outermost loop around the dot
that holds none of those stores (upstream's FenceInsertion: attention's Q tile, stored
once, is fenced once per loop). With the membar pass's barriers: st.shared,
fence.proxy.async, bar.sync, wgmma (a tile stored in the loop); attention, as upstream's
PTX: st.shared Q, bar.sync, fence.proxy.async, then in the loop the bar.sync after the
cp.async wait, wgmma.

One group in flight (`pendings = 1`). The pipeliner's loop, as it comes (trip k reads
stage k % S of each ring, S >= 3 stages, and refills at its top the stage trip k - 1
read, with the copies of iteration k + S - 1):

    scf.for ... iter_args(%acc = %z, ..., %ins = %c1, %ext = %c-1, ...) {
      %ext1 = (%ext + 1 == 3) ? 0 : %ext + 1 ; %ins1 = (%ins + 1 == 3) ? 0 : %ins + 1
      %w = ttg.async_wait %g {num = 1 : i32}
      %p1 = tt.addptr %p, %step                                   (the next trip's pointers)
      %t = ttg.async_copy_global_to_local %p, %ra[%ins1] ... ; %u = ... %rb[%ins1]
      %g2 = ttg.async_commit_group tokens %t, %u
      %d0 = ttng.warp_group_dot %ra[%ext1], %rb[%ext1], %acc {..., isAsync = true}
      %d:3 = ttng.warp_group_dot_wait %d0, ... {pendings = 0 : i32}
      scf.yield %d#0, %p1, ..., %ins1, %ext1, ..., %g2
    }
    ... uses of the accumulator %r#0
  =>
      %w = ttg.async_wait %g {num = 1 : i32}
      %d0 = ttng.warp_group_dot %ra[%ext1], %rb[%ext1], %acc {..., isAsync = true}
      %d:3 = ttng.warp_group_dot_wait %d0, ... {pendings = 1 : i32}   (trip k - 1's retired)
      %t = ttg.async_copy_global_to_local %p, %ra[%ins1] ...          (membar: bar.sync first)
      %g2 = ttg.async_commit_group tokens %t, %u
      %p1 = tt.addptr %p, %step                                   (after the copies)
      scf.yield %d#0, %p1, ...
    }
    %acc_done = ttng.warp_group_dot_wait %r#0 {pendings = 0 : i32}    (before the ring's dealloc)
    ... uses of %acc_done

So the tensor cores run trip k's wgmma while trip k - 1's retires, and a copy overwrites a
stage only after the wait that retired the wgmma reading it; the membar pass puts a
bar.sync between that wait and the copies (every warpgroup has retired it). The copies
have S - 2 trips and a wgmma to land. A copy's pointers (a `tt.addptr` of the iter_arg
it reads, only yielded) advance last, as upstream's: the old ones die at the copies and
ptxas adds in place (advanced before them, it kept both and copied the new ones back). When: the loop holds one `warp_group_dot`, whose
accumulator is loop-carried and used by nothing else in the loop (attention's rescaled
accumulator is not), whose tiles are stages of rings (S >= 3) that only the loop's async
copies fill, and the ring counters show the stage written is the one the previous trip
read. Otherwise, and with TRITIUM_WGMMA_SYNC=1 (`in_flight=False`), `pendings = 0`: with
two stages the copy the next trip waits for would be issued only after this trip's wgmma
(kept conservative).

A chain of two in flight (attention's loop: S = Q K^T, softmax, O = O * alpha + P @ V),
as upstream's Hopper attention: P @ V of trip k runs while trip k + 1 issues Q K^T, whose
wait retires both, the loop's accumulator going through it:

      %w = ttg.async_wait %g {num = 1 : i32}
      copies into stage %ins1 of the K and V rings ; %g2 = ttg.async_commit_group ...
      %s0 = ttng.warp_group_dot %q, %k[%ext1], %zero
      %s:3 = ttng.warp_group_dot_wait %s0, %q, %k[%ext1] {pendings = 0 : i32}
      ... softmax of %s#0 ; %o1 = %o * alpha ...
      %o2 = ttng.warp_group_dot %p, %v[%ext1], %o1
      %o3:2 = ttng.warp_group_dot_wait %o2, %v[%ext1] {pendings = 0 : i32}
      scf.yield %o3#0, ...
  =>
      %w = ttg.async_wait %g {num = 1 : i32}
      %s0 = ttng.warp_group_dot %q, %k[%ext1], %zero
      %s:4 = ttng.warp_group_dot_wait %s0, %q, %k[%ext1], %o {pendings = 0 : i32}  (P @ V of trip k - 1 retired too)
      ... softmax ; %o1 = %s#3 * alpha ...
      %o2 = ttng.warp_group_dot %p, %v[%ext1], %o1
      copies into stage %ins1 (read by trip k - 1)  (membar: bar.sync first) ; commit
      scf.yield %o2, ...
    }
    %o_done = ttng.warp_group_dot_wait %r#0 {pendings = 0 : i32}

The copies are issued while the tensor cores run P @ V, as upstream's: between the wait
and P @ V they would delay the softmax, with the tensor cores idle (one CTA per SM).

When: the loop holds two or more `warp_group_dot`s each waited for right after it; a
dot other than the first whose result goes only to the next trip as its accumulator,
which nothing reads before the first's wait, after the trip's last waited dot (P @ V);
the tiles of all the dots are tiles filled before the loop (Q) or stages of rings
(S >= 3), read directly or through `ttg.memdesc_trans`, refilled, by one commit group
before the first dot, in the stage trip k - 1 read; the first dot reads one of those
rings, so the membar pass's barrier before the moved copies (they conflict with its
read) also orders every warpgroup's retirement of P @ V of trip k - 1 (at its wait,
earlier in the trip) before them. P, wgmma's register A, is written again only after the
next trip's wait (it is computed from the wait's results). Not with TRITIUM_WGMMA_SYNC=1.

An accumulating dot with a waited dot after it in the trip stays in flight until that
dot's wait instead (its result goes through it), when nothing writes a tile in between
and its accumulator holds at most `DEFER_REGISTERS` (32) registers per thread (it stays
live, untouchable, through the dots in between: at D = 128 the dK/dV kernel spilled).
The attention backward's dK/dV loop, as upstream's (dQ's likewise: dQ += dS K in flight
to the next trip):

      %w = ttg.async_wait %g {num = 1 : i32}
      %st = ttng.warp_group_dot %k, memdesc_trans(%q[%ext1]), %zero
      %st:5 = ttng.warp_group_dot_wait %st, ..., %dk {pendings = 0}   (dK += dS^T Q of trip k - 1)
      %dv = ttng.warp_group_dot %pt, %do[%ext1], %dv_acc                (in flight: D = 64)
      %dpt = ttng.warp_group_dot %v, memdesc_trans(%do[%ext1]), %zero
      %dpt:4 = ttng.warp_group_dot_wait %dpt, ..., %dv {pendings = 0}  (dV retired with it)
      %dk = ttng.warp_group_dot %dst, %q[%ext1], %st#4                  (in flight to trip k + 1)
      copies into stage %ins1 (membar: bar.sync first) ; commit
      scf.yield %dpt#3, %dk, ...
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from tritium.analysis.membar import tile_alloc
from tritium.ir import arith, tt
from tritium.ir.arith import constant_value
from tritium.ir.layouts import elements_per_thread
from tritium.ir.ttg_memory import (
    AsyncCommitGroupOp,
    AsyncCopyGlobalToLocalOp,
    LocalLoadOp,
    MemDescIndexOp,
    MemDescTransOp,
)
from tritium.ir.ttg_mma import (
    DotOperandEncodingAttr,
    MemDescType,
    NVMMASharedEncodingAttr,
    is_mma_v3,
)
from tritium.ir.ttng import FenceAsyncSharedOp, WarpGroupDotOp, WarpGroupDotWaitOp
from tritium.ir.types import bitwidth, element_type, encoding_of
from tritium.passes.utils import insert_after, insert_before

MIN_STAGES_IN_FLIGHT = 3  # ring depth from which one wgmma group stays in flight
# the most accumulator registers per thread of a dot kept in flight to a later wait of its
# trip: its accumulator stays live, untouchable, through the dots in between (dK/dV's
# dV += P^T dO at D = 128, 64 registers, spilled at 255 registers through dP^T = V dO^T)
DEFER_REGISTERS = 32


def _tile_of(v) -> object | None:
    """The nvmma tile a dot operand was loaded from, or None."""
    load = v.owner
    if isinstance(load, LocalLoadOp) and isinstance(
        load.src.type.encoding, NVMMASharedEncodingAttr
    ):
        return load.src
    return None


def _register_a(v: SSAValue) -> SSAValue | None:
    """`v` when it is an A operand wgmma reads from registers: 16-bit, in the A layout of
    a version 3 `#mma` (optimize-dot-operands left its convert from another wgmma's
    accumulator a register permutation: attention's P), else None."""
    enc = encoding_of(v.type)
    if (
        isinstance(enc, DotOperandEncodingAttr)
        and enc.opIdx == 0
        and is_mma_v3(enc.parent)
        and enc.kWidth == 2
        and bitwidth(element_type(v.type)) == 16
    ):
        return v
    return None


def _thread_writers(tile) -> list[Operation]:
    """The ordinary stores that fill the tile (`local_alloc` of a value, `local_store`),
    which the tensor cores, another memory proxy, see only after a fence.proxy.async;
    tiles only async copies fill need none (upstream's FenceInsertion)."""
    alloc = tile_alloc(tile)
    writers = [alloc] if alloc.operands else []
    todo = [alloc.results[0]]
    while todo:
        for use in todo.pop().uses:
            if use.operation.name == "ttg.memdesc_index":
                todo.append(use.operation.results[0])
            elif use.operation.name == "ttg.local_store":
                writers.append(use.operation)
    return writers


def _fence_point(dot: Operation, writers: list[Operation]) -> Operation:
    """Where the fence goes: before the dot, or, as upstream's FenceInsertion hoists it,
    before the outermost loop around the dot that holds none of the writers (attention's
    Q, stored once before the K/V loop: one fence per loop, not per trip)."""
    anchor = dot
    while isinstance(loop := anchor.parent_op(), scf.ForOp | scf.WhileOp) and not any(
        loop.is_ancestor(w) for w in writers
    ):
        anchor = loop
    return anchor


# --------------------------------------------------------------------------- in flight


@dataclass
class _InFlight:
    """A loop where the dot's wgmma group may stay in flight (module docstring)."""

    loop: scf.ForOp
    acc: int  # the accumulator's iter_arg
    copies: list[AsyncCopyGlobalToLocalOp]  # the ring refills, in body order
    commit: AsyncCommitGroupOp


def _ring_phase(index: SSAValue, loop: scf.ForOp, stages: int) -> int | None:
    """p such that `index` is p + k mod `stages` on trip k: the pipeliner's ring counter
    `(%i + 1 >= S) ? 0 : %i + 1` of an iter_arg %i that starts at a constant and is
    yielded this value; None for any other index."""
    sel = index.owner
    if not isinstance(sel, arith.SelectOp) or constant_value(sel.lhs) != 0:
        return None
    nxt, cmp = sel.rhs.owner, sel.cond.owner
    if not isinstance(nxt, arith.AddiOp) or constant_value(nxt.rhs) != 1:
        return None
    if not isinstance(cmp, arith.CmpiOp) or cmp.predicate_name != "sge":
        return None
    if cmp.lhs is not sel.rhs or constant_value(cmp.rhs) != stages:
        return None
    arg, block = nxt.lhs, loop.body.block
    if not isinstance(arg.owner, Block) or arg.owner is not block or arg.index == 0:
        return None
    k = arg.index - 1
    start = constant_value(loop.iter_args[k])
    if block.last_op.operands[k] is not index or not isinstance(start, int):
        return None
    if not -1 <= start < stages - 1:
        return None
    return start + 1


def _ring_stage(tile: SSAValue, loop: scf.ForOp) -> tuple[Operation, int, int] | None:
    """(ring allocation, stages, phase) of a tile that is stage `phase + k` of a ring on
    trip k of `loop`, or None (a `ttg.memdesc_trans` view of such a stage is one too)."""
    view = tile.owner
    if isinstance(view, MemDescTransOp):
        view = view.src.owner
    if not isinstance(view, MemDescIndexOp) or view.parent_block() is not loop.body.block:
        return None
    alloc = tile_alloc(view.src)
    if alloc.operands or view.src is not alloc.results[0]:
        return None
    stages = alloc.results[0].type.get_shape()[0]
    phase = _ring_phase(view.index, loop, stages)
    return None if phase is None else (alloc, stages, phase)


def _in_flight(wg: WarpGroupDotOp, wait: WarpGroupDotWaitOp) -> _InFlight | None:
    """Whether `wg`'s group may stay in flight across its loop's trips (module docstring)."""
    loop = wg.parent_op()
    if not isinstance(loop, scf.ForOp) or wg.parent_block() is not loop.body.block:
        return None
    block = loop.body.block
    if sum(isinstance(op, WarpGroupDotOp) for op in loop.walk()) != 1:
        return None
    acc = wg.c
    if not isinstance(acc.owner, Block) or acc.owner is not block or acc.index == 0:
        return None
    k = acc.index - 1
    if len(list(acc.uses)) != 1 or any(r.uses for r in wait.outputs[1:]):
        return None
    uses = list(wait.outputs[0].uses)
    if len(uses) != 1 or uses[0].operation is not block.last_op or uses[0].index != k:
        return None
    rings = [_ring_stage(t, loop) for t in (wg.a, wg.b)]
    if None in rings:
        return None
    refills = _refills(loop, rings, {wg, wait}, wg)
    return None if refills is None else _InFlight(loop, k, *refills)


def _refills(
    loop: scf.ForOp, rings: list, readers: set[Operation], first: Operation
) -> tuple[list[AsyncCopyGlobalToLocalOp], AsyncCommitGroupOp] | None:
    """The loop's async copies into `rings` ((allocation, stages, phase read) each: S >= 3
    stages) and their one commit group, before `first`; None unless every other use of a
    ring in the loop (beside `readers`) is such a copy, refilling the stage trip k - 1
    read (so retiring the wgmmas of trip k - 1 frees it)."""
    block = loop.body.block
    copies: list[AsyncCopyGlobalToLocalOp] = []
    for alloc, stages, read in rings:
        if stages < MIN_STAGES_IN_FLIGHT:
            return None
        for view_use in alloc.results[0].uses:
            view = view_use.operation
            if not loop.is_ancestor(view):
                continue  # the prologue's copies, the dealloc after the loop
            if view.parent_block() is not block or not isinstance(view, MemDescIndexOp):
                return None
            for use in view.result.uses:
                op = use.operation
                if op in readers or (
                    isinstance(op, MemDescTransOp)
                    and all(u.operation in readers for u in op.result.uses)
                ):
                    continue
                if not isinstance(op, AsyncCopyGlobalToLocalOp) or op.parent_block() is not block:
                    return None
                if _ring_phase(view.index, loop, stages) != (read - 1) % stages:
                    return None  # the copy must refill the stage trip k - 1 read
                copies.append(op)
    copies.sort(key=block.get_operation_index)
    commits = {use.operation for c in copies for use in c.token.uses}
    if len(commits) != 1:
        return None
    commit = commits.pop()
    if not isinstance(commit, AsyncCommitGroupOp) or list(commit.tokens) != [
        c.token for c in copies
    ]:
        return None
    if any(u.operation is not block.last_op for u in commit.result.uses):
        return None
    if block.get_operation_index(commit) > block.get_operation_index(first):
        return None
    return copies, commit


def _keep_in_flight(plan: _InFlight, wait: WarpGroupDotWaitOp) -> None:
    """Wait for all but the latest group, then refill the retired stage; after the loop,
    wait for the last group before the accumulator is read (module docstring)."""
    wait.attributes["pendings"] = IntegerAttr(1, 32)
    _refill_after(plan, wait)


def _refill_after(plan: _InFlight | _ChainInFlight, anchor: Operation) -> None:
    """Move the loop's refills (cp.async copies and their commit) right after `anchor` (at
    or after the wait that retires the stage they overwrite), and wait for the last groups
    after the loop, before the accumulators they carry are read."""
    for op in [*plan.copies, plan.commit]:
        op.detach()
        anchor = insert_after(anchor, op)
    _advance_last(plan.copies)
    accs = plan.carried if isinstance(plan, _ChainInFlight) else [plan.acc]
    results = [plan.loop.results[k] for k in accs]
    uses = [list(r.uses) for r in results]
    done = insert_after(plan.loop, WarpGroupDotWaitOp(results, pendings=0))
    for out, result_uses in zip(done.outputs, uses, strict=True):
        for use in result_uses:
            use.operation.operands[use.index] = out


def _advance_last(copies: list[AsyncCopyGlobalToLocalOp]) -> None:
    """Move the advance of each copy's pointers (`tt.addptr` of the pointer iter_arg that
    the copy reads, only yielded) to the end of the body, after the copies, as upstream's
    loop advances them: the old pointers die at the copies, so ptxas adds in place rather
    than keep both across them and copy the new ones back (4 moves per trip at
    128x256x32: A's two 64-bit pointers)."""
    for copy in copies:
        src = copy.src
        body = copy.parent_block()
        if not isinstance(src, BlockArgument) or src.block is not body:
            continue
        end = body.last_op
        for use in list(src.uses):
            op = use.operation
            if (
                isinstance(op, tt.AddPtrOp)
                and op.ptr is src
                and op.parent_block() is body
                and all(u.operation is end for u in op.result.uses)
            ):
                op.detach()
                body.insert_op_before(op, end)


# ------------------------------------------------------ a chain's accumulating dots in flight


@dataclass
class _ChainInFlight:
    """A loop of chained wgmmas (attention: S = Q K^T, then O += P @ V; its backward's
    dK/dV: S^T, dV += P^T dO, dP^T, dK += dS^T Q) where the dots whose results only
    accumulate across trips stay in flight: to the next wait of the trip (`deferred`),
    or, past the trip's last wait (`carried`), until the first dot's wait of the next
    trip."""

    loop: scf.ForOp
    carried: list[int]  # accumulator iter_args of the dots in flight across trips
    wait1: WarpGroupDotWaitOp
    deferred: list[tuple[WarpGroupDotWaitOp, WarpGroupDotWaitOp]]  # (own wait, retired by)
    last: WarpGroupDotOp  # the trip's last dot: the refills follow it
    copies: list[AsyncCopyGlobalToLocalOp]
    commit: AsyncCommitGroupOp | None  # None: no dot in flight across trips, no refill moved


def _waited(wg: WarpGroupDotOp) -> WarpGroupDotWaitOp | None:
    wait = wg.next_op
    if isinstance(wait, WarpGroupDotWaitOp) and wait.inputs[0] is wg.d and wait.pendings == 0:
        return wait
    return None


def _accumulates(wait: WarpGroupDotWaitOp, block: Block) -> int | None:
    """k when the waited dot's result goes only to the loop's next trip, as iter_arg k."""
    if any(r.uses for r in wait.outputs[1:]):
        return None
    uses = list(wait.outputs[0].uses)
    if len(uses) != 1 or uses[0].operation is not block.last_op:
        return None
    return uses[0].index


def _writes_tiles(op: Operation) -> bool:
    return op.name in ("ttg.async_copy_global_to_local", "ttg.local_store") or (
        op.name == "ttg.local_alloc" and bool(op.operands)
    )


def _chain_in_flight(loop: scf.ForOp) -> _ChainInFlight | None:
    """Whether the loop's accumulating wgmmas may stay in flight: the loop holds two or
    more `warp_group_dot`s, each waited for right after it (`pendings = 0`); a dot other
    than the first whose result only goes to the loop's next trip (an accumulator) is
    retired by the next wait of its trip, nothing writing a tile in between and its
    accumulator at most `DEFER_REGISTERS` registers per thread, or, after
    the trip's last wait, by the first dot's wait of the next trip, its accumulator read
    by nothing before that wait. Dots in flight across trips need the tiles all dots read
    to be tiles nothing writes in the loop (Q, K, V) or stages of rings (S >= 3) refilled
    by one commit group of copies before the first dot, into the stage trip k - 1 read,
    and the first dot to read one of those rings (so the membar pass puts a bar.sync
    between its wait and the moved copies)."""
    block = loop.body.block
    wgs = [op for op in loop.walk() if isinstance(op, WarpGroupDotOp)]
    if len(wgs) < 2 or any(w.parent_block() is not block for w in wgs):
        return None
    wgs.sort(key=block.get_operation_index)
    waits = [_waited(wg) for wg in wgs]
    if None in waits:
        return None
    accs = [None] + [_accumulates(w, block) for w in waits[1:]]
    carried, deferred = [], []
    for i, k in enumerate(accs):
        if k is None:
            continue
        later = [w for w, a in zip(waits[i + 1 :], accs[i + 1 :], strict=True) if a is None]
        if not later:
            carried.append(k)
            continue
        if elements_per_thread(wgs[i].d.type) > DEFER_REGISTERS:
            continue  # waited for right after it
        span = range(block.get_operation_index(wgs[i]), block.get_operation_index(later[0]))
        if any(_writes_tiles(op) for op in block.ops if block.get_operation_index(op) in span):
            return None
        deferred.append((waits[i], later[0]))
    if not carried:
        return None if not deferred else _ChainInFlight(loop, [], waits[0], deferred, wgs[-1], [], None)
    after = block.get_operation_index(waits[0])
    for k in carried:
        for use in block.args[k + 1].uses:
            op = use.operation
            while op.parent_block() is not block:
                op = op.parent_op()
            if block.get_operation_index(op) <= after:
                return None
    rings, first_rings = [], 0
    for wg in wgs:
        for t in (wg.a, wg.b):
            if not isinstance(t.type, MemDescType):
                continue  # A in registers
            ring = _ring_stage(t, loop)
            if ring is None:
                if any(loop.is_ancestor(w) for w in [tile_alloc(t), *_thread_writers(t)]):
                    return None  # only a tile filled before the loop (Q) may be other
                continue
            first_rings += wg is wgs[0]
            if all(r[0] is not ring[0] for r in rings):
                rings.append(ring)
    if not first_rings:
        return None
    refills = _refills(loop, rings, {*wgs, *waits}, wgs[0])
    if refills is None:
        return None
    return _ChainInFlight(loop, carried, waits[0], deferred, wgs[-1], *refills)


def _keep_chain_in_flight(plan: _ChainInFlight) -> None:
    """A deferred dot's result goes through the later wait of its trip; a carried dot is
    retired by the first dot's wait of the next trip (which takes its accumulator
    through it), the refills move after the trip's last dot is issued (past that wait),
    and the carried accumulators are waited for after the loop (module docstring)."""
    current: dict[int, WarpGroupDotWaitOp] = {}  # a retiring wait -> its replacement
    for own, retiring in plan.deferred:
        later = current.get(id(retiring), retiring)
        new = insert_after(later, WarpGroupDotWaitOp([*later.inputs, own.inputs[0]], pendings=0))
        for a, b in zip(later.outputs, new.outputs, strict=False):
            a.replace_all_uses_with(b)
        own.outputs[0].replace_all_uses_with(new.outputs[-1])
        current[id(retiring)] = new
        for old in (later, own):
            old.detach()
            old.erase()
    if not plan.carried:
        return
    block = plan.loop.body.block
    accs = [block.args[k + 1] for k in plan.carried]
    old = plan.wait1
    wait1 = insert_after(old, WarpGroupDotWaitOp([*old.inputs, *accs], pendings=0))
    for a, b in zip(old.outputs, wait1.outputs, strict=False):
        a.replace_all_uses_with(b)
    old.detach()
    old.erase()
    for acc, out in zip(accs, wait1.outputs[-len(accs) :], strict=True):
        for use in list(acc.uses):
            if use.operation is not wait1:
                use.operation.operands[use.index] = out
    for k in plan.carried:
        wait = block.last_op.operands[k].owner
        wait.outputs[0].replace_all_uses_with(wait.inputs[0])
        wait.detach()
        wait.erase()
    _refill_after(plan, plan.last)


def wgmma_pipeline(module: ModuleOp, in_flight: bool = True) -> int:
    """Rewrite the wgmma dots (module docstring); returns how many. `in_flight=False`:
    every dot waits for its own group (`pendings = 0`)."""
    count = 0
    for dot in [op for op in module.walk() if isinstance(op, tt.DotOp)]:
        if not is_mma_v3(encoding_of(dot.d.type)):
            continue
        a = _tile_of(dot.a)
        a = _register_a(dot.a) if a is None else a
        if a is None or _tile_of(dot.b) is None:
            raise NotImplementedError(
                "a tt.dot on #ttg.nvidia_mma version 3 needs B (and A, unless a 16-bit "
                "accumulator of another wgmma gives it in registers) loaded from "
                "#ttg.nvmma_shared tiles (run optimize-dot-operands first)"
            )
        tiles = [t for t in (_tile_of(dot.a), _tile_of(dot.b)) if t is not None]
        loads = [t.owner for t in (dot.a, dot.b) if isinstance(t.owner, LocalLoadOp)]
        writers = [w for t in tiles for w in _thread_writers(t)]
        if writers:
            anchor = _fence_point(dot, writers)
            if not isinstance(anchor.prev_op, FenceAsyncSharedOp):
                insert_before(anchor, FenceAsyncSharedOp())
        wg = insert_before(dot, WarpGroupDotOp(a, tiles[-1], dot.c, dot.input_precision))
        wait = insert_after(wg, WarpGroupDotWaitOp([wg.d, *tiles], pendings=0))
        dot.d.replace_all_uses_with(wait.outputs[0])
        dot.detach()
        dot.erase()
        for load in loads:
            if load.parent is not None and not load.results[0].uses:
                load.detach()
                load.erase()
        plan = _in_flight(wg, wait) if in_flight else None
        if plan is not None:
            _keep_in_flight(plan, wait)
        count += 1
    loops = [op for op in module.walk() if isinstance(op, scf.ForOp)] if in_flight else []
    for loop in loops:
        chain = _chain_in_flight(loop)
        if chain is not None:
            _keep_chain_in_flight(chain)
    return count


@dataclass(frozen=True)
class WgmmaPipelinePass(ModulePass):
    name = "wgmma-pipeline"

    in_flight: bool = True  # False: TRITIUM_WGMMA_SYNC (pendings = 0 everywhere)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        wgmma_pipeline(op, self.in_flight)


__all__ = ["MIN_STAGES_IN_FLIGHT", "WgmmaPipelinePass", "wgmma_pipeline"]
