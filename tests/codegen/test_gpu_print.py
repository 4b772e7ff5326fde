"""`tl.device_print` on the GPU (`pytest -m gpu`): the kernels of print_kernels.py launched
on a 2x2 grid in a process of their own (CUDA's printf output reaches that process's
stdout when the launch is synchronized), every line compared with upstream's format.
test_print_lowering.py checks the same lines by running the LLVM IR on the host."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.codegen.print_kernels import CASES

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
GRID = (2, 2, 1)

# Launch one case and print (on stderr, away from printf's stdout) the pointer it used.
SCRIPT = f"""
import sys
import numpy as np
import tritium
from tritium.runtime import driver
from tests.codegen.print_kernels import CASES

case = CASES[sys.argv[1]]
args = list(case.args)
buf = None
if "p_ptr" in case.signature:
    buf = tritium.empty((4,), np.float32)
    args[0] = buf
kernel = case.kernel
kernel[{GRID}](*args, **case.constexprs, num_warps=case.num_warps)
driver.synchronize()
print("POINTER", buf.ptr if buf is not None else 0, file=sys.stderr)
"""


def run_case(name: str) -> tuple[list[str], int]:
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    env.pop("TRITIUM_INTERPRET", None)
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, name],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    pointer = int(re.search(r"POINTER (\d+)", proc.stderr).group(1))
    return proc.stdout.splitlines(), pointer


def _normalize_pointer(line: str) -> str:
    # CUDA's %p: hex digits, with or without "0x"
    return re.sub(r" p: (0x)?([0-9a-fA-F]+)$", lambda m: f" p: 0x{int(m.group(2), 16):x}", line)


@pytest.mark.parametrize("name", sorted(CASES))
def test_device_print_lines(name):
    case = CASES[name]
    lines, pointer = run_case(name)
    args = list(case.args)
    if pointer:
        args[0] = pointer
    want = []
    for z in range(GRID[2]):
        for y in range(GRID[1]):
            for x in range(GRID[0]):
                want += case.expected((x, y, z), args)
    got = [_normalize_pointer(line) for line in lines if line.startswith("pid (")]
    assert len(got) == len(want)
    assert sorted(got) == sorted(want)
