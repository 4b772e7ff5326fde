"""Assembly formats parsed on first use (tritium/ir/lazy_formats.py): every format of every
dialect tritium loads parses, the ops defined after tritium.ir use the lazy program, and a
malformed format still fails, at its op's first print."""

import io

import pytest
from xdsl.irdl import IRDLOperation, irdl_op_definition, result_def
from xdsl.irdl.declarative_assembly_format import FormatProgram
from xdsl.printer import Printer
from xdsl.utils.exceptions import PyRDLOpDefinitionError

from tritium.ir import lazy_formats, tt
from tritium.ir.context import every_dialect


def _formatted_ops():
    for dialect in every_dialect():
        for op in dialect.operations:
            if issubclass(op, IRDLOperation) and op.get_irdl_definition().assembly_format:
                yield op


def test_every_format_parses():
    ops = list(_formatted_ops())
    assert len(ops) > 60  # builtin, arith, math, scf, cf, tt, ttg, ...
    for op in ops:
        op_def = op.get_irdl_definition()
        program = lazy_formats._eager_from_str(op_def.assembly_format, op_def)
        assert isinstance(program, FormatProgram), op.name


def test_tritium_ops_hold_a_lazy_program_that_prints():
    cells = [c.cell_contents for c in tt.ReturnOp.print.__closure__]
    lazy = [c for c in cells if isinstance(c, lazy_formats.LazyFormatProgram)]
    assert lazy
    out = io.StringIO()
    Printer(stream=out).print_op(tt.ReturnOp())
    assert out.getvalue() == "tt.return"
    assert isinstance(lazy[0].program, FormatProgram)


def test_a_malformed_format_fails_at_first_print():
    from xdsl.dialects.builtin import i32

    @irdl_op_definition
    class BadOp(IRDLOperation):
        name = "test.bad_format"
        res = result_def(i32)
        assembly_format = "attr-dict `:` type($no_such_result)"

        def __init__(self):
            super().__init__(result_types=[i32])

    with pytest.raises(PyRDLOpDefinitionError, match="test.bad_format"):
        Printer(stream=io.StringIO()).print_op(BadOp())
