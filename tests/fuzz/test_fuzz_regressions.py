"""Kernels the fuzzer once failed on, kept as fixed cases (each runs through `fuzz.check`:
compiled, interpreted, compared with the numpy model)."""

from __future__ import annotations

import pytest

from tritium.testing import fuzz
from tritium.testing.fuzz_ir import (
    Assign,
    BinOp,
    Cast,
    Compare,
    If,
    Input,
    Lit,
    Loop,
    Name,
    Output,
    Program,
    Reduce,
    Scalar,
    Unary,
)

FP16_TILE = Input("in0", "fp16", ("R", "C"), -2.0, 2.0, 0.0)

CASES = {
    # An int argument passed as 1 is the constant 1 (no `.to`): the kernel says tl.cast.
    "cast-of-specialised-one": Program(
        4, 8, 1, 1, 1, [], [Scalar("s0", 1)],
        [Assign("v0", Cast(Name("s0"), "fp32"))],
        [Output("v0", "fp32")],
    ),
    # tl.max of fp16 is fp32 (widened first, as upstream): an fp16 block that a branch
    # updates with it needs a cast back, or the branches disagree (the model once said fp16).
    "max-of-fp16-in-a-branch": Program(
        4, 8, 2, 7, 5, [FP16_TILE], [],
        [
            Assign("v3", Unary("neg", Name("in0"))),
            If(
                Compare("<", Name("pid"), Lit(1)),
                (
                    Assign("t4", Reduce("max", Name("v3"), 0)),
                    Assign("in0", BinOp("+", Name("in0"), Cast(Name("t4"), "fp16"))),
                ),
                (Assign("in0", BinOp("+", Name("in0"), Name("cols"))),),
            ),
            Assign("m", Reduce("min", Name("in0"), 1)),
        ],
        [Output("in0", "fp16"), Output("m", "fp32")],
    ),
    # Constant-only sub-expressions are folded by Python; the loop carries an fp16 block.
    "loop-over-a-folded-divisor": Program(
        4, 8, 1, 3, 6, [FP16_TILE], [Scalar("s0", 1), Scalar("s1", 5)],
        [
            Loop("i0", 0, Name("s1"), 2, (
                Assign("t1", BinOp("%", Name("i0"), BinOp("+", BinOp("&", Name("s0"), Lit(7)), Lit(1)))),
                Assign("in0", BinOp("+", Name("in0"), Cast(Name("t1"), "fp16"))),
            )),
        ],
        [Output("in0", "fp16")],
    ),
    # tl.minimum(x_f16, 0.5) is fp32 (the literal becomes an fp32 tensor first): the model
    # once kept fp16 and rounded the product below in fp16 (found differentially: a branch
    # doing this disagreed with the other's fp16 in tritium and upstream's compiler).
    "minimum-with-a-literal-is-fp32": Program(
        4, 8, 1, 4, 8, [FP16_TILE], [],
        [Assign("v0", BinOp("*", BinOp("min", Name("in0"), Lit(0.5)), Name("in0")))],
        [Output("v0", "fp32")],
        1,  # the seed: inputs that are not all quarters, so fp16 products round
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixed_case(name):
    assert fuzz.check(CASES[name], interpret=True)["compared"] > 0
