"""`tl.device_print` in the interpreter (tritium/runtime/interpreter/print_op.py) and its
frontend (tritium/frontend/builtins/debug.py): upstream's interpreter format (one line per
value: program id, prefix, the array), hex, unsigned and pointer values, prints inside
loops, upstream's prefix tidying, and the errors for a bad prefix or `hex`."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tests.runtime.interpreter_helpers import parse_module
from tritium.errors import CompilationError
from tritium.frontend.builtins.debug import print_prefix
from tritium.runtime.interpreter import interpret


@pytest.fixture(autouse=True)
def interpreter(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")


@tritium.jit
def show_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.device_print("x", x)
    tl.device_print("pid and n", tl.program_id(0), n)
    tl.device_print("hello")


def test_upstream_interpreter_format(capsys):
    show_kernel[(2,)](np.arange(6, dtype=np.int32), 6, BLOCK=4)
    assert capsys.readouterr().out.splitlines() == [
        "(0, 0, 0)  x:  [0 1 2 3]",
        "(0, 0, 0)  pid and n:  0",
        "(0, 0, 0)  pid and n:  6",
        "(0, 0, 0)  hello",
        "(1, 0, 0)  x:  [4 5 0 0]",
        "(1, 0, 0)  pid and n:  1",
        "(1, 0, 0)  pid and n:  6",
        "(1, 0, 0)  hello",
    ]


@tritium.jit
def types_kernel(x_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK) - 2
    tl.device_print("signed", i, i.to(tl.int8))
    tl.device_print("unsigned", i.to(tl.uint32))
    tl.device_print("hex", i, i.to(tl.int64), i.to(tl.float32) * 1.5, hex=True)
    tl.device_print("floats", i.to(tl.float16) / 4, i.to(tl.float64) / 3)
    tl.device_print("bool", i > 0)
    tl.device_print("ptr", x_ptr)


def test_types(capsys):
    types_kernel[(1,)](np.zeros(4, np.float32), BLOCK=4)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:8] == [
        "(0, 0, 0)  signed:  [-2 -1  0  1]",
        "(0, 0, 0)  signed:  [-2 -1  0  1]",
        "(0, 0, 0)  unsigned:  [4294967294 4294967295          0          1]",
        "(0, 0, 0)  hex:  [0xfffffffe 0xffffffff 0x00000000 0x00000001]",
        "(0, 0, 0)  hex:  [0xfffffffffffffffe 0xffffffffffffffff 0x0000000000000000",
        " 0x0000000000000001]",  # (numpy wraps long lines, as upstream's interpreter shows)
        "(0, 0, 0)  hex:  [0xc0400000 0xbfc00000 0x00000000 0x3fc00000]",
        "(0, 0, 0)  floats:  [-0.5  -0.25  0.    0.25]",
    ]
    assert lines[8] == "(0, 0, 0)  floats:  [-0.66666667 -0.33333333  0.          0.33333333]"
    assert lines[9] == "(0, 0, 0)  bool:  [False False False  True]"
    assert re.fullmatch(r"\(0, 0, 0\)  ptr:  0x[0-9a-f]+", lines[10])
    assert len(lines) == 11


@tritium.jit
def loop_kernel(n):
    for i in range(n):
        tl.device_print("i", i)
        tl.device_print("n", n)  # loop-invariant: code motion must leave it in the loop


def test_prints_in_a_loop_run_every_iteration(capsys):
    loop_kernel[(1,)](3)
    want = [line for i in range(3) for line in (f"(0, 0, 0)  i:  {i}", "(0, 0, 0)  n:  3")]
    assert capsys.readouterr().out.splitlines() == want


def test_prefix_is_tidied_as_upstream():
    assert print_prefix("x", True) == " x: "
    assert print_prefix("x:", True) == " x: "
    assert print_prefix("x ", True) == " x: "
    assert print_prefix(" x: ", True) == " x: "
    assert print_prefix("", True) == ": "
    assert print_prefix("hello", False) == " hello"
    assert print_prefix("hi", False) == "hi"  # (upstream: only prefixes of 3+ characters)


@tritium.jit
def bad_prefix_kernel(n, WHICH: tl.constexpr):
    if WHICH == 0:
        tl.device_print(n)
    elif WHICH == 1:
        tl.device_print("caf\u00e9", n)
    else:
        tl.device_print("x", n, hex=1)


@pytest.mark.parametrize(
    "which, message",
    [(0, "prefix must be a compile-time string"), (1, "not an ASCII string"), (2, "hex must be")],
)
def test_errors(which, message):
    with pytest.raises(CompilationError, match=message):
        bad_prefix_kernel[(1,)](1, WHICH=which)


def test_upstream_ttir_runs(capsys):
    text = """
    module {
      tt.func public @k(%n: i32) {
        %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
        tt.print " r: " {hex = false, isSigned = array<i32: 1>} : %r : tensor<4xi32>
        tt.print "test" { hex = false }
        tt.return
      }
    }
    """
    interpret(parse_module(text), (1, 2), [5])
    assert capsys.readouterr().out.splitlines() == [
        "(0, 0, 0)  r:  [0 1 2 3]",
        "(0, 0, 0) test",
        "(0, 1, 0)  r:  [0 1 2 3]",
        "(0, 1, 0) test",
    ]
