"""A `tt.func` compiled for the interpreter: one closure per op over a list of SSA slots.

    tt.func @k(%x: !tt.ptr<f32>) {         Function: slot(%x) = 0, slot(%pid) = 1, ...
      %pid = tt.get_program_id x : i32      entry Block: ops = [run(get_program_id), ...]
      ...                                   call(st, args) = run_block(entry, env, st, args)

Each op's builder is found by op class in the op table (`ops.HANDLERS`); a block's last
op, when it is a terminator, in `ops.TERMINATORS`. Builders receive this object as `fc`:
`fc(value)` is a value's slot, `fc.region(region)` compiles a nested region.
"""

from __future__ import annotations

from xdsl.ir import Operation, Region, SSAValue

from tritium.errors import TritiumError
from tritium.ir.locations import op_source_loc
from tritium.ir.tt import FuncOp
from tritium.runtime.interpreter.blocks import Block, State, no_results, run_block
from tritium.runtime.interpreter.ops import HANDLERS, TERMINATORS


class Function:
    """One `tt.func` compiled to closures over a slot list (calling it is `run_block`)."""

    def __init__(self, func: FuncOp):
        self.name = func.sym_name.data
        self._slots: dict[SSAValue, int] = {}
        self.entry = self.region(func.body) if func.body.blocks else None

    def __call__(self, value: SSAValue) -> int:
        """The slot of an SSA value (builders call `slot(value)`)."""
        s = self._slots.get(value)
        if s is None:
            s = self._slots[value] = len(self._slots)
        return s

    def call(self, st: State, args) -> list:
        if self.entry is None:
            raise TritiumError(f"interpreter: tt.func {self.name} has no body")
        return run_block(self.entry, [None] * len(self._slots), st, args)

    def region(self, region: Region) -> Block | None:
        """Compile a region's blocks; returns the entry block (None for an empty region)."""
        if not region.blocks:
            return None
        shells = {b: Block() for b in region.blocks}
        for b, cb in shells.items():
            cb.args = [self(a) for a in b.args]
            ops = list(b.ops)
            last = ops[-1] if ops else None
            if last is not None and type(last) in TERMINATORS:
                ops.pop()
                cb.term = TERMINATORS[type(last)](last, self, shells)
            else:
                cb.term = no_results
            cb.ops = [self.op(o) for o in ops]
        return shells[region.blocks.first]

    def op(self, op: Operation):
        build = HANDLERS.get(type(op))
        if build is None:
            loc = op_source_loc(op)
            where = f"{loc}: " if loc else ""
            raise TritiumError(f"{where}the interpreter does not support operation '{op.name}'")
        return build(op, self)


__all__ = ["Function"]
