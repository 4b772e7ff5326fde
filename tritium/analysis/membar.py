"""Where barriers go: a dataflow analysis of the kernel's shared-memory accesses
(upstream's MembarAnalysis, lib/Analysis/Membar.cpp).

    %a = "tt.reduce"(%x) ...              w(A) | bar | r(A)
    %b = "tt.reduce"(%y) ...              w(B) | bar | r(B)     A, B disjoint: no barrier
    scf.for ... {                                               between the two
      %c = "tt.reduce"(%z) ...            on the next trip "w(C)" follows "r(C)":
    }                                     a barrier before the reduction (write after read)
    %w = ttg.async_wait {num = 1 : i32}   a barrier after it
    %t = ttg.local_load %s                r(T)

Accesses, each on the bytes of one buffer (`allocation.py`, read from the IR):

    an op with scratch                 w(S), then r(S) after a barrier of the op's own
    (reduce, scan, convert, atomic)    (its lowering emits that one: every thread writes,
                                       then reads what the others wrote)
    ttg.local_alloc %x, local_store    w(T)
    ttg.local_load                     r(T)
    tt.dot                             r(T) of each operand that is a local_load (the
                                       dot re-reads its operands' tiles)
    ttng.warp_group_dot                r(T) of its operand tiles (A may be registers)
    ttg.async_copy_global_to_local     aw(T): an asynchronous write
    ttg.async_wait                     a barrier after it: cp.async.wait_group covers the
                                       calling thread's copies only
    ttg.local_alloc (no source),       a barrier before it: such a tile may reuse bytes
    ttg.local_dealloc                  of scratch used before or after its life
    gpu.barrier                        a barrier

`T` is the whole allocation a memdesc is a view of (stage indices are dynamic), with one
exception: the software pipeliner tags its ring views `{ring = "read"}` (this trip's
stage, read by `local_load` / `tt.dot`) and `{ring = "refill"}` (the stage its copies
fill, never the one read in the same trip), so a refill after this trip's reads needs no
barrier: the stage it fills was last read in the previous trip, before the wait's
barrier. wgmma's reads are asynchronous (they can outlast a barrier) and take no tag. An access
needs a barrier first when it conflicts with one made since the last barrier on
overlapping bytes: a read after a write; a write after a read, a write or an async
write; an async write after a read or a write. A read after an async write does not:
the data of a cp.async is only visible after `async_wait`, whose barrier is the
synchronisation. So the pipeliner's order (wait + barrier, copies into the stage read one
trip ago, reads of this trip's stage) needs no other barrier, while upstream's order
(reads, then copies into the stage just read) gets one before the copies.

The state is the set of accesses since the last barrier. Control flow joins states by
union (scf.if arms, cf branches); loops iterate to a fixed point (the state entering the
body is the entry state plus the state at the end of the body). The result: the ops that
need a barrier right before them, and those that need one right after them; the `membar`
pass turns them into `gpu.barrier` ops.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.dialects import scf
from xdsl.ir import Block, Operation, Region, SSAValue

from tritium.analysis.allocation import VIEW_OPS, Allocation
from tritium.ir.ttg_mma import MemDescType

# ("r" | "w" | "aw", first byte, end byte, ring): ring is (the ring's first byte, its role)
# for an access through a stage view the software pipeliner tagged, else None
Access = tuple[str, int, int, tuple[int, str] | None]
# the pipeliner's tags on `ttg.memdesc_index` (`{ring = "read"}` / `{ring = "refill"}`):
# within one trip of its loop, the stage a refill copy writes is never the stage read
RING_ATTR, RING_READ, RING_REFILL = "ring", "read", "refill"
State = frozenset
_CONFLICTS = {"r": {"w"}, "w": {"r", "w", "aw"}, "aw": {"r", "w"}}
# ops that are barriers: before them (their bytes change hands), or after them
_BARRIER_BEFORE = ("ttg.local_dealloc",)
_BARRIER_AFTER = ("ttg.async_wait",)
# ops whose regions are scalar combine functions (no shared-memory access inside)
_COMBINERS = ("tt.reduce", "tt.scan")


def tile_alloc(v: SSAValue) -> Operation:
    """The `ttg.local_alloc` a memdesc value is (a view of: `ttg.memdesc_index`,
    `ttg.memdesc_trans`)."""
    while isinstance(v.owner, Operation) and v.owner.name in VIEW_OPS:
        v = v.owner.operands[0]
    alloc = v.owner
    if not isinstance(alloc, Operation) or alloc.name != "ttg.local_alloc":
        raise NotImplementedError(f"a shared-memory descriptor not from ttg.local_alloc: {v}")
    return alloc


def ring_role(v: SSAValue) -> str | None:
    """The pipeliner's ring tag on the `ttg.memdesc_index` a memdesc is (a view of)."""
    while isinstance(v.owner, Operation) and v.owner.name in VIEW_OPS:
        attr = v.owner.attributes.get(RING_ATTR)
        if attr is not None:
            return attr.data
        v = v.owner.operands[0]
    return None


def tile_source(v: SSAValue) -> SSAValue | None:
    """The memdesc a tensor was loaded from, when it is a `ttg.local_load` result."""
    op = v.owner
    if isinstance(op, Operation) and op.name == "ttg.local_load":
        return op.operands[0]
    return None


def accesses(op: Operation, alloc: Allocation) -> list[list[Access]]:
    """The op's accesses in phases: phase 0 happens when the op starts; each later phase
    comes after a barrier the op's lowering emits itself."""

    def tile(kind: str, v: SSAValue, synchronous: bool = True) -> Access:
        rng = alloc.range_of(tile_alloc(v))
        if rng is None:
            raise NotImplementedError(f"{op.name}: its ttg.local_alloc has no allocation.offset")
        role = ring_role(v) if synchronous else None
        return (kind, *rng, None if role is None else (rng[0], role))

    name = op.name
    if name == "ttg.local_alloc":
        return [[tile("w", op.results[0])]] if op.operands else []
    if name == "ttg.local_store":
        return [[tile("w", op.operands[1])]]
    if name == "ttg.local_load":
        return [[tile("r", op.operands[0])]]
    if name == "ttg.async_copy_global_to_local":
        return [[tile("aw", op.operands[1])]]
    if name == "tt.dot":
        srcs = [tile_source(v) for v in op.operands[:2]]
        return [[tile("r", s) for s in srcs if s is not None]]
    if name == "ttng.warp_group_dot":  # the tensor cores read both tiles (A: or registers)
        # asynchronously: a read may outlast the barriers after it, so no ring exemption
        operands = [v for v in op.operands[:2] if isinstance(v.type, MemDescType)]
        return [[tile("r", v, synchronous=False) for v in operands]]
    rng = alloc.range_of(op)
    if rng is None:
        return []
    return [[("w", *rng, None)], [("r", *rng, None)]]


def _conflicts(state: State, access: Access) -> bool:
    kind, lo, hi, ring = access
    bad = _CONFLICTS[kind]
    return any(
        k in bad and lo < h and l < hi and not _other_stage(ring, other)
        for k, l, h, other in state  # noqa: E741
    )


def _other_stage(a, b) -> bool:
    """Two accesses of one pipelined ring, a refill and a read: different stages (the
    pipeliner's invariant; every trip starts with its wait's barrier)."""
    return a is not None and b is not None and a[0] == b[0] and a[1] != b[1]


def needs_barrier_before(op: Operation) -> bool:
    """Ops that are barriers whatever the accesses: a `local_dealloc`, a `local_alloc`
    without a source (the allocator lets these tiles reuse scratch bytes)."""
    return op.name in _BARRIER_BEFORE or (op.name == "ttg.local_alloc" and not op.operands)


@dataclass
class Barriers:
    """The analysis' result: ops needing a barrier right before / right after them."""

    before: set[Operation] = field(default_factory=set)
    after: set[Operation] = field(default_factory=set)


class MembarAnalysis:
    def __init__(self, alloc: Allocation):
        self.alloc = alloc
        self.result = Barriers()

    def run(self, func: Operation) -> Barriers:
        for region in func.regions:
            self.region(region, State())
        return self.result

    def block(self, block: Block, state: State) -> State:
        for op in block.ops:
            state = self.op(op, state)
        return state

    def region(self, region: Region, state: State) -> State:
        if not region.blocks:
            return state
        if len(region.blocks) == 1:
            return self.block(region.blocks.first, state)
        return self.cfg(region, state)

    def op(self, op: Operation, state: State) -> State:
        if op.name == "gpu.barrier":
            return State()
        if needs_barrier_before(op):
            self.result.before.add(op)
            state = State()
        for k, phase in enumerate(accesses(op, self.alloc)):
            if k > 0:
                state = State()  # the op's own barrier
            elif any(_conflicts(state, a) for a in phase):
                self.result.before.add(op)
                state = State()
            state = state | set(phase)
        if op.name in _BARRIER_AFTER:
            self.result.after.add(op)
            return State()
        if isinstance(op, scf.ForOp):
            return self._loop(lambda s: self.region(op.body, s), state)
        if isinstance(op, scf.IfOp):
            then = self.region(op.true_region, state)
            other = self.region(op.false_region, state) if op.false_region.blocks else state
            return then | other
        if isinstance(op, scf.WhileOp):
            exits: list[State] = []

            def trip(s: State) -> State:
                before = self.region(op.before_region, s)
                exits.append(before)
                return self.region(op.after_region, before)

            self._loop(trip, state)
            return exits[-1]
        if op.regions and op.name not in _COMBINERS:
            for region in op.regions:
                state = state | self.region(region, state)
        return state

    @staticmethod
    def _loop(body: Callable[[State], State], entry: State) -> State:
        start = entry
        while True:
            new = start | body(start)
            if new == start:
                return start
            start = new

    def cfg(self, region: Region, entry: State) -> State:
        """A region of several blocks (cf.br / cf.cond_br): union over predecessors."""
        blocks = list(region.blocks)
        ins: dict[Block, State] = {blocks[0]: entry}
        outs: dict[Block, State] = {}
        work = [blocks[0]]
        while work:
            b = work.pop()
            out = self.block(b, ins.get(b, State()))
            if outs.get(b) == out:
                continue
            outs[b] = out
            term = b.last_op
            for succ in term.successors if term is not None else ():
                merged = ins.get(succ, State()) | out
                if merged != ins.get(succ) or succ not in outs:
                    ins[succ] = merged
                    work.append(succ)
        exits = [outs[b] for b in outs if b.last_op is None or not b.last_op.successors]
        return State().union(*exits) if exits else State()


def barriers(func: Operation, alloc: Allocation) -> Barriers:
    """Where `func` needs barriers, given the allocation of its buffers."""
    return MembarAnalysis(alloc).run(func)


__all__ = [
    "Barriers",
    "MembarAnalysis",
    "accesses",
    "barriers",
    "needs_barrier_before",
    "tile_alloc",
    "tile_source",
]
