"""`tt.join`, `tt.split`, `tt.cat`, `tt.gather`, `tt.histogram` (tritium/ir/tt_shape.py):
upstream 3.6's printed forms parse and print back unchanged (TTIR and TTGIR), and the
verifiers reject wrong shapes and types."""

from __future__ import annotations

import pytest
from xdsl.utils.exceptions import VerifyException

from tritium.ir import tt
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir

UPSTREAM = """
module {
  tt.func public @k(%a: tensor<64xf32>, %b: tensor<64xf32>, %i: tensor<128xi32>, %m: tensor<128xi1>) {
    %j = tt.join %a, %b : tensor<64xf32> -> tensor<64x2xf32>
    %l, %r = tt.split %j : tensor<64x2xf32> -> tensor<64xf32>
    %c = tt.cat %l, %r : tensor<64xf32> -> tensor<128xf32>
    %g = tt.gather %a[%i] {axis = 0 : i32} : (tensor<64xf32>, tensor<128xi32>) -> tensor<128xf32>
    %e = tt.gather %a[%i] {axis = 0 : i32, efficient_layout} : (tensor<64xf32>, tensor<128xi32>) -> tensor<128xf32>
    %h = tt.histogram %i : tensor<128xi32> -> tensor<16xi32>
    %hm = tt.histogram %i, %m : tensor<128xi32> -> tensor<16xi32>
    tt.return
  }
}
"""

TTGIR = """
#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:89", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%a: tensor<128xi32, #blocked>, %m: tensor<128xi1, #blocked>) {
    %j = tt.join %a, %a : tensor<128xi32, #blocked> -> tensor<128x2xi32, #blocked1>
    %l, %r = tt.split %j : tensor<128x2xi32, #blocked1> -> tensor<128xi32, #blocked>
    %h = tt.histogram %l, %m : tensor<128xi32, #blocked> -> tensor<32xi32, #blocked>
    tt.return
  }
}
"""


def _body(text: str) -> str:
    """The function's ops as printed (the printer adds `attributes {noinline = false}`)."""
    return "\n".join(line.strip() for line in text.splitlines() if " = tt." in line)


@pytest.mark.parametrize("text", [UPSTREAM, TTGIR], ids=["ttir", "ttgir"])
def test_upstream_syntax_round_trips(text):
    module = parse_module(text)
    module.verify()
    printed = print_ir(module)
    assert _body(printed) == _body(text)
    assert print_ir(parse_module(printed)) == printed


def test_op_classes_and_fields():
    module = parse_module(UPSTREAM)
    ops = {op.name: op for op in module.walk()}
    assert isinstance(ops["tt.join"], tt.JoinOp)
    split = ops["tt.split"]
    assert isinstance(split, tt.SplitOp) and split.outLHS.type == split.outRHS.type
    gathers = [op for op in module.walk() if isinstance(op, tt.GatherOp)]
    assert [g.axis_int for g in gathers] == [0, 0]
    assert [g.efficient_layout is not None for g in gathers] == [False, True]
    hists = [op for op in module.walk() if isinstance(op, tt.HistogramOp)]
    assert [h.mask is None for h in hists] == [True, False]


@pytest.mark.parametrize("line, message", [
    ("%x = tt.join %a, %b : tensor<64xf32> -> tensor<2x64xf32>", "tt.join: result shape"),
    ("%x = tt.join %a, %i : tensor<64xf32> -> tensor<64x2xf32>", None),
    ("%x = tt.cat %a, %b : tensor<64xf32> -> tensor<64xf32>", "tt.cat: result shape"),
    ("%x = tt.gather %a[%i] {axis = 1 : i32} : (tensor<64xf32>, tensor<128xi32>) -> tensor<128xf32>",
     "axis 1 out of range"),
    ("%x = tt.gather %a[%i] {axis = 0 : i32} : (tensor<64xf32>, tensor<128xi32>) -> tensor<64xf32>",
     "the indices' shape"),
    ("%x = tt.gather %a[%a] {axis = 0 : i32} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>",
     "indices must be integers"),
    ("%x = tt.histogram %a : tensor<64xf32> -> tensor<16xi32>", "1D integer tensor"),
    ("%x, %y = tt.split %a : tensor<64xf32> -> tensor<32xf32>", "last dim must have size 2"),
])  # fmt: skip
def test_verifier_rejects(line, message):
    text = f"""
module {{
  tt.func public @k(%a: tensor<64xf32>, %b: tensor<64xf32>, %i: tensor<128xi32>) {{
    {line}
    tt.return
  }}
}}
"""
    with pytest.raises(Exception) as info:
        parse_module(text).verify()
    if message is not None:
        assert isinstance(info.value, VerifyException)
        assert message in str(info.value)
