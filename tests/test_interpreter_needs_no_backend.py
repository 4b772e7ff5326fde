"""The interpreter path needs neither llvmlite nor cuda-python (issue 11's layering: a CPU-only
user with TRITIUM_INTERPRET=1 installs the frontend's needs only). A child process in which
importing either fails runs a kernel through `kernel[grid]` in the interpreter."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

SCRIPT = '''
import sys

class Refuse:  # importing llvmlite or cuda fails, as where they are not installed
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("llvmlite", "cuda"):
            raise ImportError(f"{name} is not installed here")
        return None

sys.meta_path.insert(0, Refuse())

import numpy as np
import tritium
import tritium.language as tl


@tritium.jit
def axpy(x_ptr, y_ptr, out_ptr, n, A: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, A * x + tl.load(y_ptr + offs, mask=m), mask=m)


x = np.arange(1000, dtype=np.float32)
y = np.ones(1000, np.float32)
out = np.full(1000, np.nan, np.float32)
axpy[(tritium.cdiv(1000, 256),)](x, y, out, 1000, A=3, BLOCK=256)
assert np.array_equal(out, 3 * x + 1), out
assert not any(m.split(".")[0] in ("llvmlite", "cuda") for m in sys.modules)
print("ok")
'''


def test_a_kernel_runs_in_the_interpreter_without_llvmlite_or_cuda_python(tmp_path):
    script = tmp_path / "interpret_only.py"  # a file: tritium compiles kernels from source
    script.write_text(SCRIPT)
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "TRITIUM_INTERPRET": "1", "TRITIUM_CACHE_DIR": str(tmp_path / "c"),
           "PYTHONPATH": str(ROOT) + (os.pathsep + path if path else "")}  # fmt: skip
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env=env)  # fmt: skip
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr
