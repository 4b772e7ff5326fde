"""Where `bar.sync` goes: a dataflow analysis over the kernel's shared-memory accesses.

Each op with scratch (allocation.py) accesses its buffer twice: every thread writes, then
every thread reads what others wrote. A barrier is needed before an access that may
conflict with an access some other thread made since the last barrier: a read after a
write (RAW), or a write after a read or write (WAR, WAW) of overlapping bytes.

    %a = tt.reduce ...   write A | bar | read A
    %b = tt.reduce ...   write B | bar | read B        (A and B disjoint: no barrier between)
    scf.for { %c = tt.reduce ... }                     write C | bar | read C, and on the
                                                       next trip "write C" follows "read C":
                                                       bar | write C | bar | read C

The state is the set of accesses since the last barrier. Control flow joins states by
union (scf.if arms, cf branches); loops iterate to a fixed point (the state entering the
body is the entry state plus the state at the end of the body). The result is the set of
(op, access index) pairs that need a barrier first, which the lowering of the op asks for
(`FunctionLowering.sync`).
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.ir import Block, Operation, Region

from tritium.codegen.allocation import Allocation

Access = tuple[str, int, int]  # ("r" | "w", first byte, end byte)
State = frozenset


def op_accesses(op: Operation, alloc: Allocation) -> list[Access]:
    """The accesses an op makes, in order (every scratch op: write all, then read all)."""
    rng = alloc.range_of(op)
    if rng is None:
        return []
    return [("w", *rng), ("r", *rng)]


def _conflicts(state: State, access: Access) -> bool:
    kind, lo, hi = access
    return any(
        (kind == "w" or k == "w") and lo < h and l < hi  # noqa: E741
        for k, l, h in state  # noqa: E741
    )


class Membar:
    def __init__(self, alloc: Allocation):
        self.alloc = alloc
        self.needs: set[tuple[int, int]] = set()  # (id(op), access index)

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
        for k, access in enumerate(op_accesses(op, self.alloc)):
            if _conflicts(state, access):
                self.needs.add((id(op), k))
                state = State()
            state = state | {access}
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
        if op.regions and op.name != "tt.reduce":  # (a reduction's combine is scalar)
            for region in op.regions:
                state = state | self.region(region, state)
        return state

    @staticmethod
    def _loop(body, entry: State) -> State:
        start = entry
        while True:
            end = body(start)
            new = start | end
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


def barrier_points(func: Operation, alloc: Allocation) -> set[tuple[int, int]]:
    """(id(op), access index) of every access that must be preceded by a barrier."""
    if not alloc.offsets:
        return set()
    m = Membar(alloc)
    m.region(func.regions[0], State())
    return m.needs


__all__ = ["barrier_points", "op_accesses"]
