"""Source locations on IR: from the frontend's `(file, line, col)` to xDSL location
attributes and back (for diagnostics raised by later stages and the interpreter)."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    IntAttr,
    NameLoc,
    StringAttr,
)
from xdsl.ir import Attribute, Operation

from tritium.errors import SourceLoc


def file_loc(file: str, line: int, col: int, name: str | None = None) -> Attribute:
    """`loc("file":line:col)`, or `loc("name"("file":line:col))` when a variable is named."""
    loc = FileLineColLoc(StringAttr(file), IntAttr(line), IntAttr(col))
    return NameLoc(StringAttr(name), loc) if name else loc


def to_source_loc(loc: Attribute | None) -> SourceLoc | None:
    """The file position a location attribute names (MLIR columns are 1-based)."""
    if isinstance(loc, FileLineColLoc):
        return SourceLoc(loc.filename.data, loc.line.data, loc.column.data)
    if isinstance(loc, NameLoc):
        return to_source_loc(loc.location)
    if isinstance(loc, CallSiteLoc):
        return to_source_loc(loc.caller) or to_source_loc(loc.callee)
    if isinstance(loc, FusedLoc):
        for sub in getattr(loc.locations, "data", loc.locations):
            found = to_source_loc(sub)
            if found:
                return found
    return None


def op_source_loc(op: Operation) -> SourceLoc | None:
    """The source position of `op`, looking at enclosing ops if `op` has none."""
    cur: Operation | None = op
    while cur is not None:
        found = to_source_loc(getattr(cur, "location", None))
        if found:
            return found
        cur = cur.parent_op()
    return None
