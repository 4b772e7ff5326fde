"""The kernel fuzzer on a GPU: the same random kernels, compiled to PTX and run, against
the numpy model with GPU tolerances (fma contraction, approximate division / exp).

Reductions are generated only in the second test (GPU reductions are new)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings

from tritium.testing import fuzz

EXAMPLES = int(os.environ.get("TRITIUM_FUZZ_GPU_EXAMPLES", "200"))

GPU_FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("TRITIUM_FUZZ_RANDOM", "0") in ("", "0"),
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))  # hundreds of one-offs


@pytest.mark.gpu
@pytest.mark.parametrize("reductions", [False, True], ids=["elementwise-loops", "reductions"])
def test_gpu_matches_the_model_on_random_kernels(private_cache, reductions):
    results = []

    @GPU_FUZZ
    @given(fuzz.programs(profile="gpu", reductions=reductions))
    def run(program):
        results.append(fuzz.check(program, interpret=False))

    run()
    assert len(results) >= min(EXAMPLES, 100)
    assert sum(r["compared"] for r in results) > 5 * len(results)


@pytest.mark.gpu
def test_gpu_matches_the_model_on_the_newer_operations(private_cache):
    """Dots, scans, shape operations, gathers, random numbers and atomics, compiled."""
    from tritium.testing import fuzz_ops

    results = []

    @settings(GPU_FUZZ, max_examples=max(EXAMPLES // 2, 20))
    @given(fuzz.programs(profile="gpu", reductions=True, features=fuzz_ops.FEATURES))
    def run(program):
        results.append(fuzz.check(program, interpret=False))

    run()
    assert sum(r["compared"] for r in results) > 5 * len(results)
