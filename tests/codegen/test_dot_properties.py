"""tl.dot against numpy float64 for random shapes, dtypes, precisions and operand orders.

The same property runs twice: in the interpreter on the CPU (which validates the harness
and the reference: `TRITIUM_INTERPRET=1`) and on the GPU (`-m gpu`: mma.sync / FMA code,
shared-memory staging, masks for sizes that are not block multiples). Tolerances are
relative (Frobenius) errors: 1e-5 for ieee fp32, 5e-3 for tf32, 1e-2 for fp16 / bf16.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.codegen.dot_kernels import inputs, reference, relative_error, run_matmul, tolerance

KINDS = [("fp16", "tf32"), ("bf16", "tf32"), ("fp32", "tf32"), ("fp32", "ieee")]
BLOCKS = [(16, 16, 16), (32, 32, 32), (64, 64, 32), (64, 32, 64), (32, 64, 16)]


def _check(kind, precision, M, N, K, a_order, b_order, block, warps, out_f16, seed):
    rng = np.random.default_rng(seed)
    a, b = inputs(rng, M, N, K, kind)
    c = run_matmul(a, b, kind, precision, a_order, b_order, block, warps, out_f16=out_f16)
    ref = reference(a, b, kind, precision)
    tol = max(tolerance(kind, precision), 1e-2 if out_f16 else 0)
    err = relative_error(c, ref)
    assert err <= tol, (err, tol)


case = st.tuples(
    st.sampled_from(KINDS),
    st.integers(1, 100),
    st.integers(1, 100),
    st.integers(1, 100),
    st.sampled_from(["row", "col"]),
    st.sampled_from(["row", "col"]),
    st.sampled_from(BLOCKS),
    st.sampled_from([1, 2, 4, 8]),
    st.booleans(),
    st.integers(0, 2**16),
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case)
def test_matmul_in_the_interpreter(monkeypatch, args):
    (kind, precision), M, N, K, ao, bo, block, warps, out_f16, seed = args
    with monkeypatch.context() as m:
        m.setenv("TRITIUM_INTERPRET", "1")
        _check(kind, precision, M, N, K, ao, bo, (32, 32, 32), 4, out_f16, seed)


@pytest.mark.gpu
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case)
def test_matmul_on_the_gpu(monkeypatch, args):
    (kind, precision), M, N, K, ao, bo, block, warps, out_f16, seed = args
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    _check(kind, precision, M, N, K, ao, bo, block, warps, out_f16, seed)


@pytest.mark.gpu
@pytest.mark.parametrize("kind,precision", KINDS)
@pytest.mark.parametrize(
    "block,warps", [((128, 128, 32), 8), ((128, 64, 32), 4), ((64, 128, 64), 4), ((16, 16, 16), 1)]
)
def test_large_blocks_on_the_gpu(monkeypatch, kind, precision, block, warps):
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    for ao, bo in (("row", "row"), ("col", "col")):
        _check(kind, precision, 300, 260, 200, ao, bo, block, warps, False, 7)
