"""`tt.print` (tritium/ir/tt_print.py): upstream's syntax parses and prints back unchanged,
the verifier's checks, and the passes (DCE, CSE, loop-invariant code motion) keep every
print where it is."""

from __future__ import annotations

import pytest
from xdsl.utils.exceptions import VerifyException

from tritium.ir import tt
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir
from tritium.passes.pipeline import run_ttgir_passes, run_ttir_passes

UPSTREAM = """
module {
  tt.func public @k(%p: !tt.ptr<i8>, %y: f32, %n: i32) {
    %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    tt.print " x: " {hex = false, isSigned = array<i32: 1>} : %r : tensor<128xi32>
    tt.print " y and n: " {hex = true, isSigned = array<i32: 0, 1>} : %y, %n : f32, i32
    tt.print " p: " {hex = false, isSigned = array<i32: 0>} : %p : !tt.ptr<i8>
    tt.print " hello" {hex = false, isSigned = array<i32>}
    tt.return
  }
}
"""


def _prints(module) -> list[tt.PrintOp]:
    return [op for op in module.walk() if isinstance(op, tt.PrintOp)]


def test_upstream_syntax_round_trips():
    module = parse_module(UPSTREAM)
    module.verify()
    text = print_ir(module)
    for line in UPSTREAM.splitlines():
        if "tt.print" in line:
            assert line.strip() in text
    assert print_ir(parse_module(text)) == text
    ops = _prints(module)
    assert [op.prefix.data for op in ops] == [" x: ", " y and n: ", " p: ", " hello"]
    assert [op.is_hex for op in ops] == [False, True, False, False]
    assert ops[1].signed_list == [False, True] and len(ops[1].args) == 2


def test_older_forms_parse():
    # upstream's lit tests: no isSigned (read as all unsigned), spaces in the dict
    module = parse_module(
        'module {\n  tt.func @f(%n: i32) {\n    tt.print "test" { hex = false }\n'
        '    tt.print "n" {hex = true} : %n : i32\n    tt.return\n  }\n}\n'
    )
    a, b = _prints(module)
    assert not a.args and a.signed_list == []
    assert b.is_hex and b.signed_list == [False]
    assert 'tt.print "test" {hex = false, isSigned = array<i32>}' in print_ir(module)


def test_verifier():
    module = parse_module(UPSTREAM)
    op = _prints(module)[0]
    op.properties["isSigned"] = _prints(module)[1].isSigned  # 2 entries for 1 operand
    with pytest.raises(VerifyException, match="one entry per operand"):
        op.verify()


def test_passes_keep_every_print():
    text = """
    module {
      tt.func public @k(%n: i32) {
        %c0 = arith.constant 0 : i32
        %c1 = arith.constant 1 : i32
        scf.for %i = %c0 to %n step %c1 : i32 {
          tt.print " n: " {hex = false, isSigned = array<i32: 1>} : %n : i32
          tt.print " n: " {hex = false, isSigned = array<i32: 1>} : %n : i32
        }
        tt.return
      }
    }
    """
    module = parse_module(text)
    run_ttir_passes(module, {})
    run_ttgir_passes(module, {})
    ops = _prints(module)
    assert len(ops) == 2  # not merged (CSE) nor erased (DCE)
    assert all(op.parent_op().name == "scf.for" for op in ops)  # not hoisted (LICM)
