"""No stage of the compiler does super-linear work in the kernel's size.

torch.compile emits looped reductions with hundreds of elementwise ops, loads and stores
in one `scf.for`; a stage quadratic in the ops (a per-op walk of the module, an analysis
recomputed per op) turns seconds into minutes there. The work is counted, not timed:
Python function calls made by each stage (the frontend, every pass, the lowering to LLVM
IR), for a kernel of N and of 2N statements. A linear stage does about twice the work;
the bound (2.6x) leaves room for per-op work that grows with a few more constants and
layouts, and fails on anything quadratic (4x). LLVM's own passes are not counted here
(docs/performance.md: its straight-line strength reduction is quadratic in the number of
related address computations)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tritium import compiler
from tritium.passes import pipeline

SIGNATURE = "*fp32:16,*fp32:16,*fp32:16,i32,i32"
CONSTEXPRS = {"XBLOCK": 4, "RBLOCK": 256}


def looped_reduction(n: int) -> str:
    """n statements in the loop of an inductor-style reduction: loads, elementwise ops,
    stores, selects, a carried accumulator."""
    lines = [
        "import tritium",
        "import tritium.language as tl",
        "",
        "@tritium.jit",
        "def red(in_ptr0, in_ptr1, out_ptr0, xnumel, rnumel,",
        "        XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):",
        "    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]",
        "    xmask = xindex < xnumel",
        "    rbase = tl.arange(0, RBLOCK)[None, :]",
        "    bias = tl.load(in_ptr1 + xindex, xmask, other=0.0)",
        "    acc = tl.full([XBLOCK, RBLOCK], 0, tl.float32)",
        "    for roffset in range(0, rnumel, RBLOCK):",
        "        rindex = roffset + rbase",
        "        rmask = rindex < rnumel",
        "        t0 = tl.load(in_ptr0 + (rindex + rnumel * xindex), rmask & xmask, other=0.0)",
    ]
    for i in range(1, n + 1):
        prev = f"t{i - 1}"
        kind = i % 5
        if kind == 0:
            expr = f"tl.load(in_ptr0 + (rindex + {i} * rnumel * xindex), rmask & xmask, other=0.0) + {prev}"
        elif kind == 1:
            expr = f"{prev} * 1.5 + bias"
        elif kind == 2:
            expr = f"tl.where({prev} > bias, {prev}, bias)"
        elif kind == 3:
            expr = f"tl.exp({prev} - bias)"
            lines.append(f"        tl.store(out_ptr0 + (rindex + {i} * rnumel * xindex), {prev}, rmask & xmask)")
        else:
            expr = f"({prev} / (bias + 2.0)).to(tl.float16).to(tl.float32)"
        lines.append(f"        t{i} = {expr}")
    lines += [
        f"        acc = tl.where(rmask & xmask, acc + t{n}, acc)",
        "    tl.store(out_ptr0 + xindex, tl.sum(acc, 1)[:, None], xmask)",
    ]
    return "\n".join(lines) + "\n"


def _kernel(tmp_path, n: int):
    path = tmp_path / f"red_{n}.py"
    path.write_text(looped_reduction(n))
    spec = importlib.util.spec_from_file_location(f"red_{n}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.red


class _Calls:
    """Python calls made while `stage` runs, per stage name."""

    def __init__(self):
        self.counts: dict[str, int] = {}

    def count(self, stage: str, fn, *args, **kwargs):
        n = 0

        def profile(frame, event, arg):
            nonlocal n
            if event == "call":
                n += 1

        old = sys.getprofile()
        sys.setprofile(profile)
        try:
            return fn(*args, **kwargs)
        finally:
            sys.setprofile(old)
            self.counts[stage] = self.counts.get(stage, 0) + n


def _work(tmp_path, monkeypatch, n: int) -> dict[str, int]:
    calls = _Calls()
    kernel = _kernel(tmp_path, n)
    real_make_pass = pipeline.make_pass

    class Counted:  # what run_passes calls of a pass: apply
        def __init__(self, name, options):
            self.name, self.inner = name, real_make_pass(name, options)

        def apply(self, ctx, module):
            return calls.count(self.name, self.inner.apply, ctx, module)

    import tritium.codegen
    import tritium.frontend.ttir as ttir

    real_frontend, real_lower = ttir.ast_to_ttir, tritium.codegen.lower_to_llvm
    with monkeypatch.context() as m:
        m.setattr(pipeline, "make_pass", Counted)
        m.setattr(ttir, "ast_to_ttir", lambda *a, **k: calls.count("frontend", real_frontend, *a, **k))
        m.setattr(tritium.codegen, "lower_to_llvm",
                  lambda *a, **k: calls.count("lower-to-llvm", real_lower, *a, **k))  # fmt: skip
        compiler.compile(kernel, SIGNATURE, CONSTEXPRS, stop="llir")
    return calls.counts


def test_every_stage_grows_linearly_with_the_kernel(tmp_path, monkeypatch):
    small, large = _work(tmp_path, monkeypatch, 20), _work(tmp_path, monkeypatch, 40)
    assert set(small) == set(large) and "remove-layout-conversions" in small
    ratios = {stage: large[stage] / max(small[stage], 1) for stage in small}
    grown = {s: round(r, 2) for s, r in ratios.items() if r > 2.6 and large[s] > 20_000}
    assert not grown, f"super-linear stages (calls at 2N / calls at N): {grown}"
    # the counts are a measure of work: the large kernel does measurably more everywhere
    assert sum(large.values()) > 1.5 * sum(small.values())


@pytest.mark.parametrize("n", [3])
def test_the_generated_kernel_compiles_to_ptx(tmp_path, n):
    compiler.compile(_kernel(tmp_path, n), SIGNATURE, CONSTEXPRS, stop="ptx")


def test_past_the_limit_codegen_skips_llvms_quadratic_pass(tmp_path, monkeypatch):
    """Above ptx.SLSR_LIMIT address instructions the NVPTX backend runs at codegen level
    None (no straight-line strength reduction, quadratic in LLVM 22); below, as always."""
    from tritium.codegen import ptx, tools

    llir = compiler.compile(_kernel(tmp_path, 12), SIGNATURE, CONSTEXPRS, stop="llir").asm["llir"]
    levels = []
    real = ptx.target_machine
    monkeypatch.setattr(ptx, "target_machine", lambda *a: levels.append(a[2:]) or real(*a))
    default = ptx.llir_to_ptx(llir, "sm_90")
    monkeypatch.setattr(ptx, "SLSR_LIMIT", 10)
    bounded = ptx.llir_to_ptx(llir, "sm_90")
    assert [lv for lv in levels if lv] == [(3,), (0,)]  # codegen (optimize() takes the default)
    assert bounded != default and ".entry red" in bounded
    if tools.find_tool("ptxas") is not None:
        assert tools.assemble(bounded, "sm_90") is not None
