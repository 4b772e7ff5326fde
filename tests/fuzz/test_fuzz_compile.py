"""The kernel fuzzer against the GPU code generator, without a GPU: random kernels of the
GPU profile must compile to PTX that ptxas accepts (what they compute is checked on a GPU
by test_fuzz_gpu.py, and in the interpreter by test_fuzz_interpreter.py)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings

from tritium.testing import fuzz, fuzz_ops

EXAMPLES = int(os.environ.get("TRITIUM_FUZZ_COMPILE_EXAMPLES", "40"))


@pytest.mark.parametrize("features", [(), fuzz_ops.FEATURES], ids=["base", "newer-operations"])
def test_random_kernels_compile_to_ptx_that_ptxas_accepts(ptxas, features):
    """Also with the newer operations: dots, scans, shape ops, random numbers, atomics."""
    compiled = []

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=os.environ.get("TRITIUM_FUZZ_RANDOM", "0") in ("", "0"),
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(fuzz.programs(profile="gpu", features=features, reductions=bool(features) or None))
    def run(program):
        try:
            asm = fuzz.compile_program(program, stop="cubin")
        except Exception as exc:
            raise AssertionError(
                f"{type(exc).__name__}: {exc}\n\n{fuzz.describe(program)}"
            ) from exc
        assert asm["ptx"].startswith("//") and asm.get("cubin"), fuzz.describe(program)
        compiled.append(program)

    run()
    assert len(compiled) >= min(EXAMPLES, 30)
