"""Liger-Kernel and flash-linear-attention, unchanged, on the GPU through
`tritium.install_as_triton()`: every op of scripts/run_liger.py / scripts/run_fla.py,
forward and backward, against the drivers' references (torch's ops; fla's own naive
recurrences), float32 and bf16. Marker `gpu`; skipped where torch or the library is not
installed (`pip install --no-deps liger-kernel fla-core einops`). Each driver runs in its
own process: the library's `import triton` must meet the alias first, never an upstream
triton this process may hold. Results at LLM shapes: benchmarks/RESULTS.md.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize(
    "script, package", [("run_liger.py", "liger_kernel"), ("run_fla.py", "fla")]
)
def test_library_ops_match_their_references(script, package, dtype):
    for needed in ("torch", package):
        if importlib.util.find_spec(needed) is None:  # (not imported: no triton here)
            pytest.skip(f"{needed} is not installed")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    # fla refuses its gated chunked backward on Hopper for 3.4 <= triton < 3.7.1 (an
    # upstream miscompile tritium does not have): docs/triton-compat.md
    env["TRITIUM_TRITON_VERSION"] = "3.7.1"
    args = [sys.executable, str(ROOT / "scripts" / script), "--dtype", dtype]
    if package == "liger_kernel" and dtype == "bfloat16":
        # sparsemax's bf16 backward misses the bound on upstream triton alike (the
        # gradient's support moves with the input's rounding): benchmarks/RESULTS.md
        args += ["--only", ",".join(_cases_but("run_liger", "sparsemax"))]
    if package == "fla" and dtype == "float32":
        # fla's chunked DeltaNet asserts bf16 inputs
        args += ["--only", ",".join(_cases_but("run_fla", "chunk_delta_rule"))]
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=3000)
    print(r.stdout[-6000:])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def _cases_but(driver: str, name: str) -> list[str]:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        module = importlib.import_module(driver)

        class _NoTorch:  # the case list only: names, never called
            def __getattr__(self, attr):
                return self

        return [c.name for c in module.cases(_NoTorch()) if c.name != name]
    finally:
        sys.path.remove(str(ROOT / "scripts"))
