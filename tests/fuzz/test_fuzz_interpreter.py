"""The kernel fuzzer in CI: random whole kernels (`tritium.testing.fuzz`) run in the
interpreter and compared with the independent numpy model, bit for bit where the model
says the result is exact.

CI runs a fixed set (derandomized, no example database) of at least 300 kernels.
Locally, `TRITIUM_FUZZ_EXAMPLES=5000 TRITIUM_FUZZ_RANDOM=1 python3 -m pytest tests/fuzz`
explores new ones; a failure prints the shrunk kernel's source.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings

from tritium.testing import fuzz

EXAMPLES = int(os.environ.get("TRITIUM_FUZZ_EXAMPLES", "320"))
RANDOM = os.environ.get("TRITIUM_FUZZ_RANDOM", "0") not in ("", "0")

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not RANDOM,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def test_interpreter_matches_the_model_on_random_kernels():
    results = []

    @FUZZ
    @given(fuzz.programs(profile="cpu"))
    def run(program):
        results.append(fuzz.check(program, interpret=True))

    run()
    assert len(results) >= min(EXAMPLES, 300), f"only {len(results)} kernels ran"
    compared = sum(r["compared"] for r in results)
    skipped = sum(r["skipped"] for r in results)
    assert compared > 5 * len(results)  # the kernels really store values we check
    assert skipped <= 0.01 * compared, (skipped, compared)


def test_interpreter_matches_the_model_on_the_newer_operations():
    """Dots, scans, shape operations, gathers, random numbers and atomics
    (`fuzz_ops.FEATURES`)."""
    from tritium.testing import fuzz_ops

    results = []

    @settings(FUZZ, max_examples=max(EXAMPLES // 3, 20))
    @given(fuzz.programs(profile="cpu", features=fuzz_ops.FEATURES))
    def run(program):
        results.append(fuzz.check(program, interpret=True))

    run()
    assert sum(r["compared"] for r in results) > 5 * len(results)
