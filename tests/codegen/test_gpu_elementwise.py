"""Run the hand-written TTGIR kernels on a GPU and compare with numpy (`pytest -m gpu`).

Every kernel of kernels*.py with a `check` is compiled by the backend
(TTGIR -> LLVM IR -> PTX for the device's arch) and launched through cuda-python's driver
API (cuda_launch.py). Skipped where no CUDA GPU is usable.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tests.codegen.kernels_control  # noqa: F401  (registers its cases)
import tests.codegen.kernels_dtypes  # noqa: F401
import tests.codegen.kernels_reduce  # noqa: F401
from tests.codegen.kernels import CASES

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gpu():
    from tests.codegen.cuda_launch import Gpu

    return Gpu()


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.check is not None))
def test_kernel_matches_numpy(gpu, name):
    CASES[name].check(gpu)


def test_assert_passes_when_condition_holds(gpu):
    x = np.linspace(0.5, 2.0, 1024, dtype=np.float32)
    gpu.run(CASES["assert"].ttgir, (1,), [x])  # raises if the launch failed


def test_assert_fails_the_launch():
    # A device-side assert poisons the CUDA context: run it in a process of its own.
    script = (
        "import numpy as np\n"
        "from tests.codegen.cuda_launch import Gpu, CudaError\n"
        "import tests.codegen.kernels_control, tests.codegen.kernels_dtypes\n"
        "from tests.codegen.kernels import CASES\n"
        "x = np.ones(1024, np.float32); x[77] = -1.0\n"
        "try:\n"
        "    Gpu().run(CASES['assert'].ttgir, (1,), [x])\n"
        "    print('NO ERROR')\n"
        "except CudaError as e:\n"
        "    print(e.name)\n"
    )
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # (The driver also prints "Assertion `x must be positive` failed." with the thread.)
    assert "CUDA_ERROR_ASSERT" in proc.stdout, proc.stdout + proc.stderr
