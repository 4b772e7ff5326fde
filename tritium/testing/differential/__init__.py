"""Differential testing: the fuzzer's random kernels through tritium and upstream Triton.

    from tritium.testing import differential
    from tritium.testing.differential.upstream import Upstream

    programs = differential.generate(2000, seed=1)               # fuzz.programs(upstream=True)
    with Upstream("/work/venv-upstream/bin/python", mode="interpret") as up:
        report = differential.run(programs, up, mode="interpret", out_dir="diff-out")
    print(report.text())

Upstream Triton 3.6 is a second, independent implementation of the language. Each random
kernel (tritium/testing/fuzz.py) is rendered twice (`import tritium` / `import triton`),
run on the same inputs by tritium (its interpreter, or compiled on the GPU with mode
"gpu") and by upstream in a worker process of another Python (`upstream.py`,
`worker.py`: upstream's interpreter, TRITON_INTERPRET=1, or its compiler on the GPU), and
the outputs are compared (`compare.py`): bit for bit where the language defines the
result exactly, within the numpy model's bounds elsewhere. The model is the referee
that says which side is off (`defined.py` also refuses kernels whose result is
undefined). A mismatch is classified (`known.py`); a new one is shrunk (`shrink.py`) and
written as a runnable script that runs the kernel with either implementation
(`repro_script`). `scripts/differential.py` is the command line.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tritium.testing import fuzz, fuzz_ops
from tritium.testing.differential.defined import DefinedModel, Undefined
from tritium.testing.differential.known import Known, classify
from tritium.testing.differential.shrink import shrink
from tritium.testing.differential.verdict import Verdict, compare
from tritium.testing.fuzz_ir import NP_DTYPE, Program
from tritium.testing.fuzz_model import SENTINEL

__all__ = ["Finding", "Report", "evaluate", "generate", "repro_script", "run"]

MODES = ("interpret", "gpu")


# ------------------------------------------------------------------ programs


def generate(n: int, seed: int, gpu: bool = False, max_statements: int = 12,
             features: tuple = fuzz_ops.FEATURES) -> list[Program]:  # fmt: skip
    """`n` random kernels (reductions and the newer operations included; math in fp32,
    which upstream accepts), the same ones for the same seed."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seed_of

    out: list[Program] = []
    profile = "gpu" if gpu else "cpu"

    @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @seed_of(seed)
    @given(fuzz.programs(profile=profile, max_statements=max_statements, reductions=True,
                         upstream=True, features=tuple(features)))  # fmt: skip
    def draw(p):
        out.append(p)

    draw()
    return out[:n]


def _error(exc: BaseException) -> str:
    lines = [ln for ln in f"{type(exc).__name__}: {exc}".splitlines() if ln.strip()]
    return "\n".join(lines[:12])


def _run_tritium(p: Program, data: dict, mode: str):
    """tritium's outputs (numpy arrays), or the error's text."""
    try:
        kernel = fuzz.build_kernel(p, interpret=mode == "interpret")
        return fuzz.launch(p, kernel, data)
    except Exception as exc:
        return _error(exc)


def _submit(up, p: Program, data: dict) -> int:
    args, outs = fuzz._arguments(p, data)
    first = len(p.inputs)
    return up.submit(_triton_source(p), "fuzz_kernel", (p.grid,), args, {"R": p.R, "C": p.C},
                     outputs=range(first, first + len(outs)))  # fmt: skip


def _triton_source(p: Program) -> str:
    from tritium.testing.fuzz_ir import render

    return render(p, package="triton")


def _upstream_result(up, ticket: int):
    from tritium.testing.differential.upstream import Failed

    r = up.result(ticket)
    return r.error if isinstance(r, Failed) else r.outputs


def _expected(p: Program, data: dict, mode: str):
    """The model's outputs; `tl.randn` bit for bit on the GPU when tritium links
    libdevice as upstream does (TRITIUM_LIBDEVICE=auto), within a bound otherwise."""
    from tritium import config

    same_libm = mode == "gpu" and config.libdevice() is not None
    return DefinedModel(p, fuzzy=mode == "gpu", exact_randn=same_libm).run(data)


def evaluate(p: Program, up, mode: str) -> Verdict:
    """Run `p` through both implementations now; kind "undefined" if the model refuses it."""
    data = fuzz.make_data(p)
    try:
        expected = _expected(p, data, mode)
    except Undefined as exc:
        return Verdict("undefined", error=str(exc))
    ticket = _submit(up, p, data)
    mine = _run_tritium(p, data, mode)
    return compare(p, mine, _upstream_result(up, ticket), expected)


# ------------------------------------------------------------------ findings and reports


@dataclass
class Finding:
    """One mismatch: the program as generated and as shrunk, its verdicts, its class."""

    program: Program
    verdict: Verdict
    known: Known | None = None
    shrunk: Program | None = None
    shrunk_verdict: Verdict | None = None
    script: str = ""
    script_path: str = ""

    @property
    def cls(self) -> str:
        return self.known.cls if self.known else "new"

    def to_json(self) -> dict:
        small = self.shrunk or self.program
        return {
            "class": self.cls,
            "known": self.known.name if self.known else None,
            "signature": list(self.verdict.signature),
            "verdict": self.verdict.summary(),
            "shrunk_verdict": self.shrunk_verdict.summary() if self.shrunk_verdict else None,
            "kernel": fuzz.describe(small),
            "original": fuzz.describe(self.program) if self.shrunk is not None else None,
            "script": self.script_path,
        }


@dataclass
class Report:
    mode: str
    versions: dict = field(default_factory=dict)
    programs: int = 0
    agree: int = 0
    undefined: int = 0
    exact: int = 0
    bounded: int = 0
    skipped: int = 0
    seconds: float = 0.0
    upstream_restarts: int = 0
    kinds: Counter = field(default_factory=Counter)
    classes: Counter = field(default_factory=Counter)  # class or known name -> mismatches
    findings: list[Finding] = field(default_factory=list)
    mismatched: list[int] = field(default_factory=list)  # indices into the programs run

    @property
    def mismatches(self) -> int:
        return sum(self.classes.values())

    def to_json(self) -> dict:
        return {
            "mode": self.mode,
            "versions": self.versions,
            "programs": self.programs,
            "agree": self.agree,
            "undefined": self.undefined,
            "mismatches": self.mismatches,
            "elements": {"exact": self.exact, "bounded": self.bounded, "skipped": self.skipped},
            "kinds": dict(self.kinds),
            "classes": dict(self.classes),
            "seconds": round(self.seconds, 1),
            "upstream_restarts": self.upstream_restarts,
            "findings": [f.to_json() for f in self.findings],
            "mismatched": self.mismatched,
        }

    def text(self) -> str:
        head = (
            f"{self.programs} kernels ({self.mode}; upstream {self.versions.get('triton', '?')}"
            f"): {self.agree} agree, {self.mismatches} mismatch, {self.undefined} undefined; "
            f"{self.exact} elements compared bit for bit, {self.bounded} within bounds, "
            f"{self.skipped} not compared; {self.seconds:.0f} s"
        )
        lines = [head]
        for name, n in sorted(self.classes.items()):
            lines.append(f"  {name}: {n}")
        for f in self.findings:
            where = f" ({f.script_path})" if f.script_path else ""
            lines.append(f"\n== {f.cls}{' ' + f.known.name if f.known else ''}{where}")
            lines.append((f.shrunk_verdict or f.verdict).summary())
            lines.append(fuzz.describe(f.shrunk or f.program))
        return "\n".join(lines)


def _note(report: Report, v: Verdict) -> None:
    report.exact += v.exact
    report.bounded += v.bounded
    report.skipped += v.skipped
    report.kinds[v.kind] += 1


def run(
    programs: list[Program],
    up,
    mode: str = "interpret",
    *,
    shrink_new: int = 3,
    out_dir: str | Path | None = None,
    batch: int = 8,
    deadline: float | None = None,
    log=None,
) -> Report:
    """Run every program through both implementations (up: an `upstream.Upstream`).
    New mismatches are shrunk (the first `shrink_new` of each signature) and written as
    scripts under `out_dir`; `deadline` (time.monotonic()) stops early."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    report = Report(mode, dict(up.versions))
    fixed = bool(up.versions.get("fixed_float_args"))
    t0 = time.monotonic()
    shrunk_per_sig: Counter = Counter()
    seen_known: set = set()
    for start in range(0, len(programs), batch):
        if deadline is not None and time.monotonic() > deadline:
            break
        chunk = programs[start : start + batch]
        queued = []
        for p in chunk:  # upstream works on the whole chunk while tritium runs below
            data = fuzz.make_data(p)
            try:
                expected = _expected(p, data, mode)
            except Undefined:
                queued.append((p, data, None, None))
                continue
            queued.append((p, data, expected, _submit(up, p, data)))
        for index, (p, data, expected, ticket) in enumerate(queued, start):
            report.programs += 1
            if expected is None:
                report.undefined += 1
                report.kinds["undefined"] += 1
                continue
            mine = _run_tritium(p, data, mode)
            v = compare(p, mine, _upstream_result(up, ticket), expected)
            _note(report, v)
            if v.kind == "agree":
                report.agree += 1
                continue
            known = classify(p, v, fixed)
            report.mismatched.append(index)
            f = Finding(p, v, known)
            if known is not None:
                report.classes[known.name] += 1
                if known.name in seen_known:
                    continue
                seen_known.add(known.name)
            else:
                report.classes["new"] += 1
                if shrunk_per_sig[v.signature] >= shrink_new:
                    continue
                shrunk_per_sig[v.signature] += 1
            _shrink_finding(f, up, mode)
            if out_dir is not None:
                _write_script(f, Path(out_dir), len(report.findings), mode)
            report.findings.append(f)
            if log:
                log(f"{f.cls}: {f.shrunk_verdict.summary() if f.shrunk_verdict else v.summary()}")
        if log:
            log(f"{report.programs} kernels, {report.mismatches} mismatches, "
                f"{time.monotonic() - t0:.0f} s")  # fmt: skip
    report.seconds = time.monotonic() - t0
    report.upstream_restarts = up.restarts
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        (Path(out_dir) / "report.json").write_text(json.dumps(report.to_json(), indent=1))
    return report


def _shrink_finding(f: Finding, up, mode: str) -> None:
    sig = f.verdict.signature

    def still_fails(c: Program) -> bool:
        try:
            return evaluate(c, up, mode).signature == sig
        except Exception:  # a candidate the model or the data cannot take: not this one
            return False

    f.shrunk = shrink(f.program, still_fails)
    f.shrunk_verdict = evaluate(f.shrunk, up, mode)
    f.script = repro_script(f.shrunk, mode, f.shrunk_verdict.summary())


def _write_script(f: Finding, out_dir: Path, index: int, mode: str) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    name = f.known.name if f.known else "new-" + "-".join(str(s) for s in f.verdict.signature)
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)[:80]
    path = out_dir / f"{index:03d}-{safe}.py"
    f.script = repro_script(f.shrunk or f.program, mode,
                            (f.shrunk_verdict or f.verdict).summary(), path.name)  # fmt: skip
    path.write_text(f.script)
    f.script_path = str(path)


# ------------------------------------------------------------------ runnable scripts

_SCRIPT = '''"""A kernel on which tritium and upstream Triton disagree ({where}).

    python {name} tritium     # tritium's {mine}
    {env}python {name} triton      # upstream Triton's {theirs}

Each run prints every output; compare the two. Found by tritium's differential driver
(tritium/testing/differential). What the driver saw:

{summary}
"""

import sys

import numpy as np

GPU = {gpu}
WHICH = sys.argv[1] if len(sys.argv) > 1 else "tritium"
if WHICH == "triton":
    import torch
    import triton
    import triton.language as tl

    if not GPU and not triton.knobs.runtime.interpret:
        sys.exit("run upstream's interpreter: TRITON_INTERPRET=1 python {name} triton")
    jit = triton.jit

    def arg(a):
        t = torch.from_numpy(a)
        return t.cuda() if GPU else t

    def back(t):
        return t.cpu().numpy()

else:
    import tritium
    import tritium.language as tl

    jit = tritium.jit

    def arg(a):
        return a  # numpy arrays: run in place, or staged to the GPU and back

    def back(a):
        return a


@jit
{kernel}


if WHICH == "tritium":
    fuzz_kernel.interpret = not GPU
{inputs}
outs = [{outputs}]
fuzz_kernel[({grid},)](*ins, *outs, {scalars}R={R}, C={C})
for i, o in enumerate(outs):
    print(f"out{{i}} =", back(o).tolist())
'''


def repro_script(p: Program, mode: str, summary: str = "", name: str = "repro.py") -> str:
    """A standalone script running `p` on its inputs with tritium or upstream Triton."""
    src = _triton_source(p).splitlines()
    start = next(i for i, ln in enumerate(src) if ln.startswith("def fuzz_kernel"))
    data = fuzz.make_data(p)
    args, outs = fuzz._arguments(p, data)
    ins = (
        "ins = [\n"
        + "".join(
            f"    arg(np.array({data[x.name].tolist()!r}, dtype=np.{NP_DTYPE[x.dtype]})),\n"
            for x in p.inputs
        )
        + "]"
    )
    outputs = ", ".join(
        [f"arg(np.full({o.size}, {SENTINEL[out.dtype]!r}, dtype=np.{NP_DTYPE[out.dtype]}))"
         for o, out in zip(outs, p.outputs)]
        + [f"arg(np.array({data[a.buf].tolist()!r}, dtype=np.{data[a.buf].dtype}))"
           for a in p.atomics()]  # the atomic statements' buffers, as they start
    )  # fmt: skip
    scalars = "".join(f"{a!r}, " for a in args[len(p.inputs) + len(outs) :])
    gpu = mode == "gpu"
    body = "\n".join(summary.splitlines()) if summary else "(not recorded)"
    return _SCRIPT.format(
        name=name,
        env="" if gpu else "TRITON_INTERPRET=1 ",
        where="on the GPU" if gpu else "interpreters",
        mine="compiled kernel on the GPU" if gpu else "interpreter",
        theirs="compiled kernel on the GPU" if gpu else "interpreter",
        summary=body.replace('"""', "'''"),
        gpu=gpu,
        kernel="\n".join(src[start:]).replace("@triton.jit", "@jit"),
        inputs=ins,
        outputs=outputs,
        grid=p.grid,
        scalars=scalars,
        R=p.R,
        C=p.C,
    )
