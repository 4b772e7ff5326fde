"""xDSL operations' declarative assembly formats, parsed when an op is first printed or parsed.

    class AddPtrOp(IRDLOperation):                       # defining the class:
        assembly_format = "$ptr `,` $offset attr-dict `:` type($result) `,` type($offset)"
    # xDSL 0.74: parses the format now (FormatParser -> FormatProgram), ~0.2 ms per op
    # here:      keeps the string; the first print or parse of an AddPtrOp parses it, once

xDSL's `irdl_op_definition` turns every op class's `assembly_format` into a
`FormatProgram` when the class is defined, so importing the dialects tritium uses (xDSL's
builtin, arith, math, scf, cf and tritium's tt, ttg, ttng, ...) parses ~120 formats,
though a compile prints a dozen kinds of op, and a compile that prints nothing (a cache
hit) none. That was ~8% of `tritium compile`'s process (docs/performance.md).

`install()` (tritium/ir/__init__.py runs it, before any tritium dialect is defined) makes
`FormatProgram.from_str` return a `LazyFormatProgram` holding the string and the op
definition; its `parse` / `print` (the only two calls xDSL makes on the program: the
op's `parse` and `print` methods) parse the format on first use. A malformed format
raises xDSL's `PyRDLOpDefinitionError` then, instead of at the class definition;
tests/ir/test_lazy_formats.py parses every format of every dialect tritium loads, so
one cannot ship. Dialects imported before tritium.ir (xDSL's builtin) keep eager
formats. xdsl is pinned (pyproject.toml): this relies on 0.74's `from_str` being the one
place formats are parsed.
"""

from __future__ import annotations

import threading

from xdsl.irdl.declarative_assembly_format import FormatProgram
from xdsl.utils.exceptions import ParseError, PyRDLOpDefinitionError

_eager_from_str = FormatProgram.from_str
_lock = threading.Lock()


class LazyFormatProgram:
    """A FormatProgram parsed on its first `parse` or `print`."""

    __slots__ = ("_format", "_op_def", "_program")

    def __init__(self, format_str: str, op_def):
        self._format = format_str
        self._op_def = op_def
        self._program: FormatProgram | None = None

    @property
    def program(self) -> FormatProgram:
        program = self._program
        if program is None:
            with _lock:
                if self._program is None:
                    try:
                        self._program = _eager_from_str(self._format, self._op_def)
                    except ParseError as e:  # (as irdl_op_definition reports it)
                        raise PyRDLOpDefinitionError(
                            f"Error during the parsing of the assembly format of "
                            f"{self._op_def.name}: ",
                            e.args,
                        ) from e
                program = self._program
        return program

    def parse(self, parser, op_type):
        return self.program.parse(parser, op_type)

    def print(self, printer, op) -> None:
        return self.program.print(printer, op)


def _lazy_from_str(input: str, op_def) -> LazyFormatProgram:
    return LazyFormatProgram(input, op_def)


def install() -> None:
    """Defer the parsing of the formats of op classes defined from now on (idempotent)."""
    FormatProgram.from_str = staticmethod(_lazy_from_str)
