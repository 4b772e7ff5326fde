"""The differential driver (tritium/testing/differential): random kernels through tritium
and upstream Triton, compared bit for bit where the language defines the result.

Upstream Triton is not installed here (it would switch on interop paths in the other
tests): these tests run the driver against stand-ins built from tritium itself (an
"upstream" that is tritium with one operation made wrong, to prove a mismatch is found,
judged, shrunk and printed as a runnable script), the worker's protocol with a fake
torch, the comparison rules, the shrinker and the model's refusals. With
TRITIUM_UPSTREAM_PYTHON naming a Python that has triton 3.6 and torch (a separate
virtualenv), the last test runs real kernels through upstream's interpreter.
"""

from __future__ import annotations

import io
import json
import linecache
import os
import pathlib
import subprocess
import sys
import types

import numpy as np
import pytest

import tritium
import tritium.language
from tritium.testing import differential, fuzz
from tritium.testing.differential import known, worker
from tritium.testing.differential import verdict as cmp
from tritium.testing.differential.defined import DefinedModel, Undefined
from tritium.testing.differential.shrink import shrink
from tritium.testing.differential.upstream import Failed, Ran, Upstream, UpstreamUnavailable
from tritium.testing.fuzz_ir import (
    Assign,
    BinOp,
    Cast,
    Input,
    Lit,
    Loop,
    Name,
    Output,
    Program,
    Scalar,
    Unary,
    render,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]
F32_TILE = Input("in0", "fp32", ("R", "C"), -2.0, 2.0, 0.0)
I32_ROW = Input("in1", "i32", ("C",), -20, 20, 0)


def _program(body, outputs, inputs=(F32_TILE, I32_ROW), scalars=()):
    return Program(4, 8, 2, 7, 5, list(inputs), list(scalars), list(body), list(outputs), seed=3)


# ------------------------------------------------------------------ stand-ins for upstream


class TritiumAsUpstream:
    """The `Upstream` interface, run by tritium's interpreter in this process on the
    triton-rendered source; `corrupt(source, outputs)` may make it wrong on purpose."""

    versions = {"triton": "tritium-stand-in", "fixed_float_args": True}
    restarts = 0

    def __init__(self, corrupt=None):
        self.corrupt = corrupt
        self.results: dict = {}
        self.sources: list[str] = []

    def submit(self, source, name, grid, args, kwargs=None, outputs=(), views=None):
        self.sources.append(source)
        assert source.startswith("import triton\nimport triton.language as tl\n")
        assert "@triton.jit" in source and "tritium" not in source
        ns: dict = {"triton": tritium, "tl": tritium.language}
        body = source.split("\n", 2)[2]  # without the two imports: `triton` is tritium here
        fname = f"<upstream-stand-in-{len(self.sources)}>"
        linecache.cache[fname] = (len(body), None, body.splitlines(True), fname)
        exec(compile(body, fname, "exec"), ns)
        kernel = ns[name]
        kernel.interpret = True
        args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        try:
            kernel[tuple(grid)](*args, **(kwargs or {}))
            outs = [args[i] for i in outputs]
            if self.corrupt:
                self.corrupt(source, outs)
            result = Ran(outs)
        except Exception as exc:
            result = Failed(f"{type(exc).__name__}: {exc}")
        rid = len(self.sources)
        self.results[rid] = result
        return rid

    def result(self, rid):
        return self.results.pop(rid)

    def run(self, source, name, grid, args, kwargs=None, outputs=(), views=None):
        return self.result(self.submit(source, name, grid, args, kwargs, outputs, views))


def _wrong_float_mod(source, outs):
    """An 'upstream' whose float % is Python's floored modulo (what upstream 3.6's
    interpreter does with float arguments): a negative dividend gives another result."""
    if " % 2.0" in source:
        for o in outs:
            if o.dtype.kind == "f":
                o[...] = np.where(o < 0, o + 2.0, o)


# ------------------------------------------------------------------ rendering


def test_a_program_renders_the_same_kernel_for_both_packages():
    p = _program([Assign("v0", BinOp("+", Name("in0"), Lit(1.5)))], [Output("v0", "fp32")])
    mine, theirs = render(p), render(p, package="triton")
    assert mine.splitlines()[:5] == ["import tritium", "import tritium.language as tl", "", "",
                                     "@tritium.jit"]  # fmt: skip
    assert theirs.splitlines()[:5] == ["import triton", "import triton.language as tl", "", "",
                                       "@triton.jit"]  # fmt: skip
    assert mine.splitlines()[5:] == theirs.splitlines()[5:]


def test_generated_programs_keep_to_what_upstream_accepts():
    programs = differential.generate(40, seed=7)
    assert len(programs) == 40
    for p in programs:
        src = p.source()
        assert "tl.exp(" not in src or "tl.float16" not in src.split("tl.exp(")[1].split(")")[0]
    again = differential.generate(40, seed=7)
    assert [p.source() for p in programs] == [p.source() for p in again]  # reproducible


# ------------------------------------------------------------------ comparison rules


def _verdict(t, u, want, err, dtype="fp32"):
    p = _program([], [Output("in0", dtype)])
    return cmp.compare(p, [np.array(t, dtype=np.float32 if dtype == "fp32" else np.int32)],
                       [np.array(u, dtype=np.float32 if dtype == "fp32" else np.int32)],
                       [(np.array(want), np.array(err, dtype=np.float64))])  # fmt: skip


def test_exact_elements_must_be_the_same_bits():
    assert _verdict([1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [0, 0]).kind == "agree"
    v = _verdict([0.0, 2.0], [-0.0, 2.0], [0.0, 2.0], [0, 0])  # a sign of zero is a difference
    assert v.kind == "values" and v.diffs[0].bad == 1
    assert v.diffs[0].side == "upstream-off-model"
    one_ulp = np.nextafter(np.float32(2.0), np.float32(3.0))
    v = _verdict([one_ulp], [2.0], [2.0], [0])
    assert v.kind == "values" and v.diffs[0].side == "tritium-off-model"
    assert v.signature == ("values", "tritium-off-model", "fp32")


def test_bounded_elements_may_differ_by_twice_the_bound_and_unknown_ones_are_skipped():
    v = _verdict([0.75, 5.0, 7.0], [1.25, 5.0, -3.0], [1.0, 5.0, 0.0], [0.25, 0, np.inf])
    assert v.kind == "agree" and (v.exact, v.bounded, v.skipped) == (1, 1, 1)
    v = _verdict([1.0], [1.75], [1.25], [0.25])
    assert v.kind == "values" and v.diffs[0].side == "upstream-off-model"
    v = _verdict([0.5], [2.0], [1.25], [0.25])
    assert v.kind == "values" and v.diffs[0].side == "both-off-model"


def test_errors_are_verdicts_and_their_signature_ignores_names_and_numbers():
    p = _program([], [Output("in0", "fp32")])
    a = cmp.compare(p, [np.zeros(35, np.float32)], "ValueError: got 'fp16' at 3", None)
    b = cmp.compare(p, [np.zeros(35, np.float32)], "ValueError: got 'bf16' at 12", None)
    assert a.kind == "upstream-error" and a.signature == b.signature
    assert cmp.compare(p, "x", "y", None).kind == "both-error"


# ------------------------------------------------------------------ the model's refusals


def test_the_model_refuses_what_the_language_leaves_undefined():
    p = _program([Assign("v0", BinOp("//", Name("in1"), BinOp("&", Name("in1"), Lit(0))))],
                 [Output("v0", "i32")])  # fmt: skip
    with pytest.raises(Undefined, match="by zero"):
        DefinedModel(p).run(fuzz.make_data(p))
    big = Input("in0", "fp32", ("R", "C"), 3e9, 4e9, 0.0)
    p = _program([Assign("v0", Cast(Name("in0"), "i32"))], [Output("v0", "i32")], [big])
    with pytest.raises(Undefined, match="does not fit i32"):
        DefinedModel(p).run(fuzz.make_data(p))
    p = _program([Assign("v0", Cast(Name("in0"), "i32"))], [Output("v0", "i32")])
    DefinedModel(p).run(fuzz.make_data(p))  # in range: defined


# ------------------------------------------------------------------ the driver


def test_the_driver_agrees_with_tritium_itself():
    programs = differential.generate(25, seed=11)
    report = differential.run(programs, TritiumAsUpstream(), "interpret")
    assert report.programs == 25 and report.mismatches == 0
    assert report.agree + report.undefined == 25 and report.agree >= 20
    assert report.exact > 10 * report.agree  # outputs really are compared element by element


FLOAT_MOD = _program(
    [
        Assign("v0", BinOp("*", Name("in0"), Name("s0"))),
        Assign("v1", Unary("abs", Name("in1"))),
        Loop("i2", 0, Lit(3), 1, (Assign("v1", BinOp("+", Name("v1"), Name("i2"))),)),
        Assign("v3", BinOp("%", Name("v0"), Lit(2.0))),
        Assign("v4", BinOp("-", Name("v3"), Lit(1.0))),
    ],
    [Output("v1", "i32"), Output("v4", "fp32")],
    scalars=[Scalar("s0", -1.25)],
)


def test_a_mismatch_is_judged_shrunk_and_printed_as_a_runnable_script(tmp_path):
    up = TritiumAsUpstream(_wrong_float_mod)
    report = differential.run([FLOAT_MOD], up, "interpret", out_dir=tmp_path)
    assert report.mismatches == 1 and report.classes == {"new": 1}
    (f,) = report.findings
    assert f.verdict.signature == ("values", "upstream-off-model", "fp32")
    small = f.shrunk  # the loop, the scalar, the other output and statement are gone
    assert small.body == [Assign("v4", BinOp("%", Name("in0"), Lit(2.0)))], small.source()
    assert small.outputs == [Output("v4", "fp32")] and not small.scalars
    assert (small.grid, small.R, small.C, small.n_rows, small.n_cols) == (1, 1, 1, 1, 1)
    assert f.shrunk_verdict.signature == f.verdict.signature
    # the script runs the shrunk kernel with tritium and prints what the driver compared
    script = pathlib.Path(f.script_path)
    assert script.parent == tmp_path and json.loads((tmp_path / "report.json").read_text())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(script), "tritium"], capture_output=True,
                         text=True, env=env, timeout=300, cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    data = fuzz.make_data(small)
    want = fuzz.launch(small, fuzz.build_kernel(small, True), data)
    assert out.stdout.strip() == f"out0 = {want[0].tolist()}"
    assert f"TRITON_INTERPRET=1 python {script.name} triton" in f.script


def test_a_known_difference_is_counted_under_its_name_not_shrunk_again():
    up = TritiumAsUpstream(_wrong_float_mod)
    p = FLOAT_MOD
    v = differential.evaluate(p, up, "interpret")
    assert known.classify(p, v, fixed_float_args=False).name == "interpreter-float-arguments"
    assert known.classify(p, v, fixed_float_args=True) is None  # the worker fixes it

    def fails(q):
        return differential.evaluate(q, up, "interpret").signature == v.signature

    calls = []
    shrink(p, lambda q: calls.append(1) or fails(q), budget=5)
    assert len(calls) == 5  # the budget bounds the work


def test_an_upstream_error_is_classified():
    v = cmp.Verdict(
        "upstream-error", error="ValueError(\"Expected dtype ['fp32', 'fp64'] but got fp16\")"
    )
    assert known.classify(FLOAT_MOD, v).name == "fp16-math"
    assert known.classify(FLOAT_MOD, cmp.Verdict("upstream-error", error="boom")) is None
    assert {k.cls for k in known.KNOWN} <= {"upstream-bug", "definitional", "tritium-bug"}


# ------------------------------------------------------------------ the worker


class _FakeTensor(np.ndarray):
    def cpu(self):
        return self

    def numpy(self):
        return np.asarray(self)

    def to(self, device):
        return self


def test_the_worker_protocol(monkeypatch, tmp_path):
    """worker.serve with tritium standing in for triton and a fake torch: the JSON lines,
    the .npy files, an error answer, and the versions."""
    fake_torch = types.ModuleType("torch")
    fake_torch.__version__ = "fake"
    fake_torch.from_numpy = lambda a: a.view(_FakeTensor)
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    monkeypatch.setitem(sys.modules, "triton", tritium)
    monkeypatch.setitem(sys.modules, "triton.language", tritium.language)
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    p = _program([Assign("v0", BinOp("+", Name("in0"), Lit(1.5)))], [Output("v0", "fp32")])
    data = fuzz.make_data(p)
    args, outs = fuzz._arguments(p, data)
    spec = []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            np.save(tmp_path / f"a{i}.npy", a)
            spec.append({"npy": str(tmp_path / f"a{i}.npy")})
        else:
            spec.append({"value": a})
    req = {
        "id": 5,
        "source": render(p, "triton"),
        "name": "fuzz_kernel",
        "grid": [p.grid],
        "args": spec,
        "kwargs": {"R": p.R, "C": p.C},
        "outputs": {"2": str(tmp_path / "o.npy")},
    }
    bad = dict(req, id=6, source=req["source"].replace("in0 + 1.5", "in0 + undefined_name"))
    inp = io.StringIO("\n".join(json.dumps(r) for r in ({"id": 0, "ping": True}, req, bad)))
    out = io.StringIO()
    worker.serve("interpret", inp, out)
    ping, ok, err = (json.loads(ln) for ln in out.getvalue().splitlines())
    assert ping["ok"] and ping["versions"]["torch"] == "fake" and ping["id"] == 0
    assert ok == {"id": 5, "ok": True, "seconds": ok["seconds"]}
    want = fuzz.launch(p, fuzz.build_kernel(p, True), data)[0]
    np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), want)
    assert not err["ok"] and "undefined_name" in err["error"] and err["id"] == 6


def test_an_upstream_python_without_triton_says_so():
    with pytest.raises(UpstreamUnavailable, match="torch|triton"):
        Upstream(sys.executable, "interpret", timeout=60)


UPSTREAM_PYTHON = os.environ.get("TRITIUM_UPSTREAM_PYTHON")


@pytest.mark.skipif(not UPSTREAM_PYTHON, reason="TRITIUM_UPSTREAM_PYTHON is not set")
def test_against_upstream_triton_s_interpreter():
    programs = differential.generate(int(os.environ.get("TRITIUM_DIFFERENTIAL_EXAMPLES", "40")),
                                     seed=2024)  # fmt: skip
    with Upstream(UPSTREAM_PYTHON, "interpret") as up:
        report = differential.run(programs, up, "interpret", shrink_new=1)
    assert report.programs == len(programs)
    assert report.classes.get("new", 0) == 0, report.text()


FAKE_WORKER = r'''
import json, sys, time
import numpy as np
for line in sys.stdin:
    req = json.loads(line)
    if req.get("ping"):
        reply = {"ok": True, "versions": {"triton": "fake"}}
    elif "HANG" in req["source"]:
        time.sleep(3600)
    elif "DIE" in req["source"]:
        sys.exit(3)
    else:
        for i, path in req["outputs"].items():
            np.save(path, np.load(req["args"][int(i)]["npy"]) + 1)
        reply = {"ok": True}
    reply["id"] = req["id"]
    print(json.dumps(reply), flush=True)
'''


def test_a_hung_or_dead_worker_fails_its_kernel_and_is_replaced(tmp_path):
    fake = tmp_path / "fake-python"
    (tmp_path / "fake_worker.py").write_text(FAKE_WORKER)
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} {tmp_path / 'fake_worker.py'}\n")
    fake.chmod(0o755)
    x = np.arange(4, dtype=np.int32)
    with Upstream(str(fake), "interpret", timeout=3) as up:
        assert up.versions == {"triton": "fake"}
        before = up.submit("ok", "k", (1,), [x], outputs=[0])
        hung = up.submit("HANG", "k", (1,), [x], outputs=[0])
        after = up.submit("ok again", "k", (1,), [x + 10], outputs=[0])
        assert up.result(after).outputs[0].tolist() == [11, 12, 13, 14]  # resent to a new worker
        r = up.result(hung)
        assert isinstance(r, Failed) and r.error.startswith("timeout")
        assert up.result(before).outputs[0].tolist() == [1, 2, 3, 4]
        died = up.run("DIE", "k", (1,), [x], outputs=[0])
        assert isinstance(died, Failed) and "died" in died.error
        assert up.run("fine", "k", (1,), [x], outputs=[0]).outputs[0].tolist() == [1, 2, 3, 4]
        assert up.restarts == 2
        assert not list(up.dir.glob("*.npy"))  # every exchanged file was removed


# ------------------------------------------------------------------ the newer operations


def test_generated_programs_cover_the_newer_operations():
    sources = [p.source() for p in differential.generate(300, seed=3)]
    for needle in ("tl.dot(", "tl.cumsum(", "tl.associative_scan(", "tl.join(", "tl.gather(",
                   "tl.trans(", "tl.reshape(", "tl.rand", "tl.atomic_", "tl.atomic_cas("):  # fmt: skip
        assert any(needle in s for s in sources), needle


def test_the_driver_agrees_with_tritium_itself_on_the_newer_operations():
    programs = [p for p in differential.generate(60, seed=5) if p.atomics() or "tl.dot(" in
                p.source() or "tl.rand" in p.source()]  # fmt: skip
    report = differential.run(programs, TritiumAsUpstream(), "interpret")
    assert report.mismatches == 0, report.text()
    assert report.agree >= 0.9 * len(programs) and report.exact > 0


def _atomic_program(value, dtype="i32"):
    from tritium.testing.fuzz_ir import Atomic

    a = Name("s0") if dtype == "i32" else Cast(Name("s0"), dtype)
    return _program([Atomic("old0", "at0", "xchg", a)], [Output("in1", "i32")],
                    scalars=[Scalar("s0", value)])  # fmt: skip


def test_the_newer_upstream_interpreter_bugs_are_classified():
    from tritium.testing.fuzz_ir import Dot

    v = cmp.Verdict("upstream-error", error="InterpreterError: ValueError('Unsupported data type')")
    assert known.classify(_atomic_program(0.5, "fp32"), v).name == "interpreter-float-atomic-xchg"
    assert known.classify(_atomic_program(3_000_000_000), v).name == "interpreter-u32-atomic-argument"
    assert known.classify(_atomic_program(5), v) is None  # int32 xchg runs there: new
    square = Input("in0", "fp32", ("R", "C"), -2.0, 2.0, 0.0)
    p = Program(16, 16, 1, 1, 1, [square], [], [Assign("v0", Dot("bf16", Name("in0"),
                Name("in0")))], [Output("v0", "fp32")])  # fmt: skip
    diff = cmp.OutputDiff(0, "v0", "fp32", 1, 1, side="upstream-off-model")
    assert known.classify(p, cmp.Verdict("values", [diff])).name == "interpreter-bf16-dot"
    diff.side = "tritium-off-model"
    assert known.classify(p, cmp.Verdict("values", [diff])) is None
    nested = ("InterpreterError: InterpreterError('InterpreterError(\\'AttributeError(\"\\\\\\'int"
              "\\\\\\' object has no attribute \\\\\\'to\\\\\\'\")\\')')")  # a call nests them
    assert known.classify(p, cmp.Verdict("upstream-error", error=nested)).name == (
        "interpreter-loop-variable")
    from tritium.testing.fuzz_ir import Atomic, Scan

    body = [Atomic("old0", "at0", "add", Scan("cummax", Name("in1"), 0, True))]
    q = _program(body, [Output("in1", "i32")], inputs=[I32_ROW])
    diff = cmp.OutputDiff(1, "at0", "i32", 1, 5, side="upstream-off-model")
    assert known.classify(q, cmp.Verdict("values", [diff])).name == (
        "interpreter-atomic-of-a-view")
    cas = _program([Atomic("old0", "at0", "cas", Cast(Name("s0"), "i64"), Lit(-1))],
                   [Output("in1", "i32")], scalars=[Scalar("s0", 96)])  # fmt: skip
    diff = cmp.OutputDiff(1, "at0", "i64", 1, 2, side="upstream-off-model")
    assert known.classify(cas, cmp.Verdict("values", [diff])).name == (
        "interpreter-cas-narrow-compare")
    cas.body.insert(0, Assign("v9", Scan("cumsum", Name("in0"), 0, True)))  # a view elsewhere
    assert known.classify(cas, cmp.Verdict("values", [diff])).name == (
        "interpreter-cas-narrow-compare")  # the view does not reach an atomic
    v = cmp.Verdict("upstream-error", error="InterpreterError: AssertionError()")
    i8 = Program(16, 16, 1, 1, 1, [Input("in1", "i32", ("R", "C"), -5, 5, 0)], [],
                 [Assign("v0", Dot("i8", Name("in1"), Name("in1"), Name("in1")))],
                 [Output("v0", "i32")])  # fmt: skip
    assert "out_dtype=tl.int32" in i8.source()  # what upstream needs: the generator writes it
    assert known.classify(i8, v) is None


def test_an_atomic_buffer_is_compared_and_a_wrong_one_is_found():
    """The atomic statements' buffers are results: an 'upstream' whose buffer is off is a
    mismatch, judged against the model."""
    from tritium.testing.fuzz_ir import Atomic

    body = [Atomic("old0", "at0", "add", Name("in1"), None, True),
            Assign("v1", BinOp("+", Name("old0"), Lit(0)))]  # fmt: skip
    p = _program(body, [Output("in1", "i32")], inputs=[I32_ROW])
    assert "tl.atomic_add(at0_ptr + cols, in1, mask=cmask)" in p.source()
    assert [o.name for o in fuzz.results(p)] == ["in1", "at0"]
    assert differential.evaluate(p, TritiumAsUpstream(), "interpret").kind == "agree"

    def off_by_one(source, outs):
        outs[-1][...] += 1

    v = differential.evaluate(p, TritiumAsUpstream(off_by_one), "interpret")
    assert v.kind == "values" and v.diffs[0].name == "at0"
    assert v.diffs[0].side == "upstream-off-model"


# ------------------------------------------------------------------ examples, replayed


def test_examples_are_recorded_and_replayed_on_a_stand_in_upstream(monkeypatch):
    from examples import dropout, matmul, vector_add
    from tritium.testing.differential import replay

    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    with replay.Recorder(per_kernel=1) as rec:
        for m in (vector_add, dropout):
            rec.where = m.__name__
            m.check(np.random.default_rng(0))
    assert [(x.name, x.where) for x in rec.launches] == [
        ("add_kernel", "examples.vector_add"), ("seeded_dropout_kernel", "examples.dropout")]
    src = replay.upstream_source(vector_add.add_kernel)
    assert src.startswith("import triton\nimport triton.language as tl\n")
    assert "@triton.jit" in src and "tritium" not in src and "numpy" not in src
    rows = [replay.replay(x, TritiumAsUpstream()) for x in rec.launches]
    assert [r.result for r in rows] == ["agree", "agree"], rows

    def wrong(source, outs):
        outs[-1][:3] += 1.0

    assert replay.replay(rec.launches[0], TritiumAsUpstream(wrong)).result == "differ (values)"
    text = replay.table(rows)
    assert "| `add_kernel` | examples.vector_add | agree |" in text and "2 agree" in text
    assert "@triton.jit" in replay.upstream_source(matmul.matmul_tiled_kernel)


def test_the_shrinker_never_makes_an_atomic_of_a_type_it_has_no_buffer_for():
    """Replacing an atomic's value by its operand may leave a comparison (i1) or a
    constant: such a candidate does not render (found by a run that crashed making its
    data)."""
    from tritium.testing.differential.shrink import renders
    from tritium.testing.fuzz_ir import Atomic, Compare

    ok = _program([Atomic("old0", "at0", "max", Name("in1"))], [Output("in1", "i32")])
    assert renders(ok)
    for bad in (Compare("<", Name("in1"), Lit(0)), Lit(3), Name("in0")):  # i1, constant, fp32
        assert not renders(_program([Atomic("old0", "at0", "max", bad)], [Output("in1", "i32")]))


def test_an_int8_dot_below_k32_that_upstream_refuses_on_the_gpu_is_definitional():
    from tritium.testing.fuzz_ir import Dot

    def program(n, dtype):
        square = Input("in1", "i32", ("R", "C"), -5, 5, 0)
        body = [Assign("v0", Dot(dtype, Name("in1"), Name("in1")))]
        return Program(n, n, 1, 1, 1, [square], [], body, [Output("v0", "i32")])

    error = ("CompilationError: at 9:9:\n    v0 = tl.dot(...)\n         ^\n"
             "Input shapes should have M >= 1, N >= 1 and K >= 32")  # fmt: skip
    v = cmp.Verdict("upstream-error", error=error)
    assert known.classify(program(16, "i8"), v).name == "int8-dot-k-below-32"
    assert known.classify(program(32, "i8"), v) is None  # K = 32: upstream takes it
    assert known.classify(program(16, "i8"), cmp.Verdict("upstream-error", error="boom")) is None

