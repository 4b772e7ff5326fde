"""Where the frontend puts the ops it creates.

The builder appends ops to the current block, stamping each with the source location of
the AST node being compiled and, when the node assigns a variable, naming its results
after it (so `offs = ...` prints as `%offs`, `%offs_0`, ... as upstream's TTIR does).
"""

from __future__ import annotations

from contextlib import contextmanager

from xdsl.dialects.builtin import UnknownLoc
from xdsl.ir import Attribute, Block, Operation, SSAValue

from tritium.ir.locations import file_loc


class Builder:
    def __init__(self, options=None):
        self.block: Block | None = None
        self.loc: Attribute = UnknownLoc()
        self.name: str | None = None
        self.options = options

    def insert(self, op: Operation) -> Operation:
        assert self.block is not None, "no insertion block"
        op.location = self.loc
        if self.name:
            for r in op.results:
                if r.name_hint is None:
                    name_value(r, self.name)
        self.block.add_op(op)
        return op

    def result(self, op: Operation):
        """Insert `op` and return its single result."""
        return self.insert(op).results[0]

    @contextmanager
    def at(self, block: Block):
        saved = self.block
        self.block = block
        try:
            yield
        finally:
            self.block = saved

    @contextmanager
    def location(self, file: str, line: int, col: int):
        saved = self.loc
        self.loc = file_loc(file, line, col, self.name)
        try:
            yield
        finally:
            self.loc = saved

    @contextmanager
    def naming(self, name: str | None):
        saved = self.name
        self.name = name
        try:
            yield
        finally:
            self.name = saved


def name_value(value: SSAValue, name: str) -> None:
    """Name `value` after the Python variable `name`, as far as MLIR's value names allow.

    xDSL keeps a name without its `_<digits>` suffix (`x_1` -> `%x`, numbered when
    printed) and rejects what is not [A-Za-z0-9_$.-] (a non-ASCII identifier): a variable
    `_1` would leave an empty name, which breaks the next pass that copies it, so such a
    value stays unnamed (`%0`), as does one whose name MLIR cannot spell."""
    try:
        hint = SSAValue.extract_valid_name(name)
    except ValueError:
        hint = None
    value.name_hint = hint or None
