"""tritium's printer writes exactly what xDSL's printing would, only faster
(tritium/ir/printer.py: string literals in one write, text straight to the stream, splat
dense constants told by their bytes)."""

import io
import math

import pytest
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.printer import Printer

import tritium
import tritium.ir.printer as printer_module
from examples.softmax import softmax_kernel
from tritium.ir.printer import TritonPrinter, print_ir


class _XdslPrinting(TritonPrinter):
    """TritonPrinter with xDSL's own string printing, for reference."""

    print_string = Printer.print_string
    print_bytes_literal = Printer.print_bytes_literal

    def _print_splat(self, attr):
        return False


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


@pytest.mark.parametrize(
    "element, values",
    [
        (f32, [0.0] * 16384),  # a GEMM's accumulator
        (f16, [1.5] * 64),
        (bf16, [-2.0] * 64),
        (f64, [1e-300] * 8),
        (f32, [-math.inf] * 64),
        (f32, [math.nan] * 64),  # NaN equals no NaN: xDSL prints the bytes, not a splat
        (f32, [0.0, -0.0] * 32),  # equal values, different bytes: a splat to xDSL
        (f32, [float(i) for i in range(64)]),  # not a splat
        (f32, [float(i) for i in range(256)]),  # not a splat, printed as hex
        (f32, [3.0]),  # one element
        (i32, [32] * 4096),
        (i64, [-1] * 16),
        (i8, [-128] * 16),
        (i1, [1] * 64),
        (i1, [0] * 64),
    ],
)
def test_dense_constants_as_xdsl(element, values):
    attr = DenseIntOrFPElementsAttr.from_list(TensorType(element, [len(values)]), values)
    ours, xdsl = io.StringIO(), io.StringIO()
    TritonPrinter(ours, {}).print_attribute(attr)
    _XdslPrinting(xdsl, {}).print_attribute(attr)
    assert ours.getvalue() == xdsl.getvalue()
