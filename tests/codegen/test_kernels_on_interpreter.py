"""The GPU tests' own checks, run on the CPU interpreter instead of a GPU.

This tests the test kernels (their TTGIR and their numpy references), not the backend:
a GPU failure of test_gpu_elementwise.py then points at the backend, not at the test.
"""

from __future__ import annotations

import pytest

import tests.codegen.kernels_control  # noqa: F401  (registers its cases)
import tests.codegen.kernels_dtypes  # noqa: F401
import tests.codegen.kernels_reduce  # noqa: F401
from tests.codegen.kernels import CASES
from tritium.ir.parser import parse_module
from tritium.runtime.interpreter import interpret


class InterpreterAsGpu:
    # The interpreter's arith.maximumf is np.maximum, which does not order -0 < +0.
    signed_zero_min_max = False

    def run(self, ttgir: str, grid, args) -> None:
        interpret(parse_module(ttgir), tuple(grid), args)


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.check is not None))
def test_gpu_check_passes_on_interpreter(name):
    CASES[name].check(InterpreterAsGpu())
