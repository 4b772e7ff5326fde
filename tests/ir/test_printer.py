"""tritium's printer writes exactly what xDSL's printing would, only faster
(tritium/ir/printer.py: string literals in one write, text straight to the stream)."""

import io

from xdsl.printer import Printer

import tritium
import tritium.ir.printer as printer_module
from examples.softmax import softmax_kernel
from tritium.ir.printer import TritonPrinter, print_ir


class _XdslPrinting(TritonPrinter):
    """TritonPrinter with xDSL's own string printing, for reference."""

    print_string = Printer.print_string
    print_bytes_literal = Printer.print_bytes_literal


def test_bytes_literal_escapes_as_xdsl():
    for data in (bytes(range(256)), 'dir "x"\\ÿ\n\tkernel.py'.encode()):
        ours, xdsl = io.StringIO(), io.StringIO()
        TritonPrinter(ours, {}).print_bytes_literal(data)
        Printer(stream=xdsl).print_bytes_literal(data)
        assert ours.getvalue() == xdsl.getvalue()


def test_module_text_is_xdsl_printing(monkeypatch):
    """A TTGIR module with locations (a string literal per op), aliases and nested regions."""
    kernel = tritium.compile(
        softmax_kernel, "*fp32:16,*fp32:16,i32,i32,i32", {"BLOCK_SIZE": 256}, stop="ttgir"
    )
    from tritium.ir.parser import parse_module

    module = parse_module(kernel.asm["ttgir"])
    fast = print_ir(module, locations=True)
    monkeypatch.setattr(printer_module, "TritonPrinter", _XdslPrinting)
    assert print_ir(module, locations=True) == fast
    assert 'loc("' in fast and "#blocked" in fast
