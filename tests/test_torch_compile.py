"""torch.compile (inductor) with `import triton` served by tritium, on the CPU: inductor's
`cpu_backend = "triton"` generates Triton kernels for CPU tensors, tritium compiles them
(`triton.compile` for a "cpu" target) and runs them in its interpreter. The issue's five
acceptance models (scripts/run_torch_compile.py --device cpu --small) must match eager
torch forward and backward, with every kernel through tritium, and every kernel inductor
generated must also compile for the H100 (sm_90a) through ptxas. Skipped without torch;
each run is a fresh process (the alias goes in before torch imports triton)."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODELS = ["mlp_gelu_layernorm", "attention", "rmsnorm_swiglu", "cross_entropy", "adamw_step"]


def _run(args: list[str], timeout: int = 1200) -> subprocess.CompletedProcess:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("TRITIUM_INTERPRET", "TRITON_"))
    }
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *sys.path[1:]])
    env["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"  # compile for real, every time
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout
    )


@pytest.fixture(scope="module")
def table():
    """{model: (fwd, bwd, kernels, status)} of one run of the acceptance models."""
    args = ["scripts/run_torch_compile.py", "--device", "cpu", "--small"]
    assemble = True
    try:
        import llvmlite  # noqa: F401
    except ImportError:
        assemble = False
    res = _run(args + (["--assemble-for", "90"] if assemble else []))
    rows = {}
    for line in res.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0] in MODELS:
            rows[cells[0]] = cells[1:3] + [int(cells[3]), cells[5]]
    assert rows, res.stdout[-3000:] + res.stderr[-3000:]
    if assemble:
        m = re.search(r"(\d+) kernels compiled for sm_90: (\d+) failed", res.stdout)
        assert m and int(m.group(1)) > 0 and m.group(2) == "0", res.stdout[-3000:]
    return rows


@pytest.mark.parametrize("model", MODELS)
def test_acceptance_model_matches_eager_through_tritium(table, model):
    fwd, bwd, kernels, status = table[model]
    assert status == "ok", (model, table[model])
    assert kernels > 0  # inductor generated kernels, and triton.compile (tritium's) built them
    assert float(fwd) < 1e-5
    if model != "adamw_step":  # (an optimizer step has no backward)
        assert float(bwd) < 1e-5


def test_user_kernels_dynamic_shapes_and_bf16():
    res = _run(["tests/data/torch_compile/corners.py"], timeout=900)
    errors = dict(re.findall(r"^(\w+): (\S+)$", res.stdout, re.MULTILINE))
    assert set(errors) == {"user_kernel", "dynamic_shapes", "bf16"}, res.stderr[-3000:]
    assert float(errors["user_kernel"]) == 0.0
    assert float(errors["dynamic_shapes"]) < 1e-5
    assert float(errors["bf16"]) <= 2**-7  # eager's two bf16 roundings, at most
