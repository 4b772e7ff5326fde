"""The fuzzer's own parts: the numpy model against hand-computed values, that a wrong
result is caught (bit-exact where the model says so), and that shrinking plus pruning
print a minimal kernel."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, find, settings

from tritium.testing import fuzz
from tritium.testing import fuzz_ir as ir
from tritium.testing.fuzz_ir import (
    Assign,
    BinOp,
    Cast,
    Compare,
    Input,
    Lit,
    Loop,
    Name,
    Output,
    Program,
    Reduce,
    Scalar,
    Where,
    Zeros,
)
from tritium.testing.fuzz_model import Model


def program(body, outputs, inputs=None, scalars=(), R=4, C=8, grid=1, n_rows=3, n_cols=5):
    inputs = inputs or [Input("in0", "i32", ("R", "C"), -20, 20, 0)]
    return Program(R, C, grid, n_rows, n_cols, list(inputs), list(scalars), body, outputs, seed=7)


def model_out(p, i=0):
    data = fuzz.make_data(p)
    return data, Model(p).run(data)[i]


def tile(p, data, name="in0"):
    return data[name].reshape(p.n_rows, p.n_cols)


def test_c_division_and_remainder():
    p = program(
        [
            Assign("q", BinOp("//", Name("in0"), Lit(3))),
            Assign("r", BinOp("%", Name("in0"), Lit(3))),
        ],
        [Output("q", "i32"), Output("r", "i32")],
    )
    data = fuzz.make_data(p)
    (q, eq), (r, er) = Model(p).run(data)
    x = tile(p, data).ravel().astype(np.int64)
    assert (x < 0).any()
    np.testing.assert_array_equal(q, np.trunc(x / 3).astype(np.int32))  # toward zero, as C
    np.testing.assert_array_equal(r, x - 3 * np.trunc(x / 3))
    assert not eq.any() and not er.any()  # exact: must match bit for bit


def test_literals_do_not_widen_and_fp16_division_is_fp32():
    inp = [Input("in0", "fp16", ("R", "C"), -2.0, 2.0, 0.0)]
    env = ir.input_env(program([], [], inp))
    assert ir.typeof(BinOp("*", Name("in0"), Lit(2.5)), env).dtype == "fp16"
    assert ir.typeof(BinOp("/", Name("in0"), Lit(2.0)), env).dtype == "fp32"
    assert ir.typeof(BinOp("+", Name("in0"), Name("pid")), env).dtype == "fp16"
    assert ir.typeof(BinOp("+", Name("rows"), Lit(3_000_000_000)), env).dtype == "i32"
    assert ir.typeof(Compare("<", Name("rows"), Name("cols")), env) == ir.Ty("i1", ("R", "C"))
    with pytest.raises(ir.TypeRuleError, match="uint32"):  # upstream and tritium: uint32
        ir.typeof(Reduce("sum", Compare("<", Name("cols"), Lit(2)), 0), env)
    assert ir.typeof(Reduce("sum", Name("in0"), 1), env).dtype == "fp16"
    assert ir.typeof(Reduce("max", Name("in0"), 1), env).dtype == "fp32"  # widened, as upstream
    # tl.minimum / tl.maximum make a literal a tensor of its own type first (upstream's
    # to_tensor): found by the differential driver, where a branch's types disagreed
    assert ir.typeof(BinOp("min", Name("in0"), Lit(0.5)), env).dtype == "fp32"
    assert ir.typeof(BinOp("max", Name("in0"), Lit(2)), env).dtype == "fp16"
    with pytest.raises(ir.TypeRuleError):  # i1 is unsigned: // with a signed int refuses
        ir.typeof(BinOp("//", Compare("<", Name("cols"), Lit(2)), Lit(3)), env)


def test_fp16_rounds_after_every_operation():
    inp = [Input("in0", "fp16", ("R", "C"), -2.0, 2.0, 0.0)]
    p = program(
        [Assign("v", BinOp("+", BinOp("*", Name("in0"), Lit(3.25)), Lit(0.5)))],
        [Output("v", "fp16")],
        inp,
    )
    data, (v, e) = model_out(p)
    x = tile(p, data).ravel()
    want = (x * np.float16(3.25)).astype(np.float16) + np.float16(0.5)
    np.testing.assert_array_equal(v, want.astype(np.float16))
    assert not e.any()


def test_broadcast_where_and_masked_tails():
    inp = [Input("in0", "fp32", ("C",), -2.0, 2.0, -2.5), Input("in1", "i32", ("R",), 0, 100, 7)]
    body = [Assign("v", Where(Compare(">", Name("in1"), Lit(50)), Name("in0"), Lit(0.0)))]
    p = program(body, [Output("v", "fp32")], inp)
    data, (v, e) = model_out(p)
    want = np.where(data["in1"][:, None] > 50, data["in0"][None, :], 0.0).astype(np.float32)
    np.testing.assert_array_equal(v.reshape(3, 5), want)


def test_reductions_see_the_loads_other_value_and_carry_an_order_bound():
    inp = [Input("in0", "fp32", ("R", "C"), -2.0, 2.0, 1.0)]
    p = program([Assign("s", Reduce("sum", Name("in0"), 1))], [Output("s", "fp32")], inp)
    data, (s, e) = model_out(p)
    padded = np.ones((3, 8))  # masked-out columns load `other`
    padded[:, :5] = tile(p, data)
    np.testing.assert_allclose(s, padded.sum(axis=1), rtol=1e-6)
    assert (e > 0).all()  # summation order is free: a bound, not bit-exactness


def test_loops_carry_accumulators():
    body = [
        Assign("acc", Zeros("i64", ("C",))),
        Loop(
            "i",
            1,
            Name("s0"),
            2,
            (Assign("acc", BinOp("+", Name("acc"), BinOp("*", Name("cols"), Name("i")))),),
        ),
    ]
    p = program(body, [Output("acc", "i64")], scalars=[Scalar("s0", 6)])
    _, (acc, _) = model_out(p)
    np.testing.assert_array_equal(acc, np.arange(5) * (1 + 3 + 5))


def test_inexact_comparisons_become_uncertain_not_wrong():
    inp = [Input("in0", "fp32", ("R", "C"), 0.0, 4.0, 0.0)]
    body = [
        Assign("s", Reduce("sum", Name("in0"), 1)),
        Assign("b", Where(Compare(">", Name("s"), Lit(2.0)), Lit(1), Lit(0))),
        Assign("t", Cast(Name("s"), "i32")),
    ]
    p = program(body, [Output("b", "i32"), Output("t", "i32")], inp)
    data = fuzz.make_data(p)
    (b, eb), (t, et) = Model(p).run(data)
    assert np.isfinite(eb).all() and np.isfinite(et).all()
    assert (et <= 2).all()  # truncation of a value known to within a few ulps moves by <= 1


def _patched_check(monkeypatch, p, old, new):
    real = ir.render

    def render(prog):
        src = real(prog)
        assert old in src
        return src.replace(old, new)

    monkeypatch.setattr(ir.Program, "source", lambda self: render(self))
    return fuzz.check(p, interpret=True)


def test_a_wrong_operator_is_caught_with_the_source(monkeypatch):
    inp = [Input("in0", "i32", ("R", "C"), -20, 20, 0), Input("in1", "i32", ("R", "C"), -20, 20, 0)]
    p = program([Assign("v", BinOp("+", Name("in0"), Name("in1")))], [Output("v", "i32")], inp)
    with pytest.raises(
        fuzz.Mismatch, match=r"(?s)interpreter disagrees.*def fuzz_kernel.*v = in0 - in1"
    ):
        _patched_check(monkeypatch, p, "v = in0 + in1", "v = in0 - in1")


def test_one_rounding_difference_is_caught(monkeypatch):
    inp = [Input("in0", "fp32", ("R", "C"), -2.0, 2.0, 0.0)]
    p = program([Assign("v", BinOp("*", Name("in0"), Lit(0.1)))], [Output("v", "fp32")], inp)
    # the same product, rounded through fp16 first: off by far less than 1e-3 relative
    wrong = "v = (in0.to(tl.float16).to(tl.float32) * 0.1)"
    with pytest.raises(fuzz.Mismatch, match="differ"):
        _patched_check(monkeypatch, p, "v = in0 * 0.1", wrong)


def test_a_failure_shrinks_to_a_small_printed_kernel():
    """`find` shrinks as a failing test would: to one loop, with nothing else left."""
    p = find(
        fuzz.programs(profile="cpu"),
        lambda p: any(isinstance(s, Loop) for s in p.body),
        settings=settings(
            max_examples=300,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        ),
    )
    src = p.source()
    body = src.split("mask = rmask[:, None] & cmask[None, :]\n")[1]
    assert "for " in body and len(body.splitlines()) <= 6, src
    assert len(p.inputs) <= 1 and len(p.outputs) == 1
