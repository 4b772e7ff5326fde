"""The interpreter's compiled blocks and the state a running program sees.

A region compiles (`function.Function.region`) to a chain of `Block`s: argument slots,
one closure per op, and a terminator closure that names the next block or ends the
region with its results:

    ^bb0(%i: i32):                     Block(args=[slot(%i)],
      %x = arith.addi %i, %c : i32           ops=[run(addi)],
      scf.yield %x : i32                     term=-> (None, [env[slot(%x)]]))

`run_block` runs such a chain over a list of SSA slots (`env`). The op builders of
control flow, `tt.reduce` and `tt.scan` call it to run their regions; none of them needs
the op table (`ops.py`), which imports them.
"""

from __future__ import annotations

import numpy as np

from tritium.runtime.interpreter.memory import AddressSpace


class State:
    """What a running program sees besides its SSA values."""

    __slots__ = ("mem", "funcs", "grid", "pid")

    def __init__(self, mem: AddressSpace, funcs: dict, dims: tuple[int, int, int]):
        self.mem = mem
        self.funcs = funcs
        self.grid = tuple(np.int32(d) for d in dims)
        self.pid = (np.int32(0),) * 3


class Block:
    """A compiled block: argument slots, op closures, and a terminator closure that
    returns `(next block, its arguments)` or `(None, the region's results)`."""

    __slots__ = ("args", "ops", "term")


def run_block(block: Block, env: list, st: State, args) -> list:
    while True:
        for s, v in zip(block.args, args):
            env[s] = v
        for f in block.ops:
            f(env, st)
        block, args = block.term(env, st)
        if block is None:
            return args


def no_results(env, st):
    """The terminator of a block that ends without one (an empty region's results)."""
    return None, ()


__all__ = ["Block", "State", "no_results", "run_block"]
