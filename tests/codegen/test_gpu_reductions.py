"""Reductions, layout conversions and control flow on the GPU (`pytest -m gpu`), launched
through tritium's runtime (`kernel[grid](numpy arrays)`) and compared with numpy.

The same checks pass in the interpreter (test_reductions.py), so a failure here is the
backend's. Skipped where no CUDA GPU is usable.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.codegen import reduce_kernels as rk

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _on_gpu(monkeypatch):
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)


@pytest.mark.parametrize("num_warps", [1, 4, 8])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("op", ["sum", "max", "min", "argmax", "argmin", "hash", "xor"])
def test_reduce2d(op, axis, num_warps):
    rng = np.random.default_rng(11)
    dtype = np.int32 if op in ("hash", "xor") else np.float32
    for rows, cols in [(37, 45), (1, 100), (64, 1), (3, 257)]:
        rk.check_reduce2d(rng, op, axis, rows, cols, dtype, num_warps, ties=op.startswith("arg"))


@pytest.mark.parametrize("dtype", [np.float16, np.int32])
@pytest.mark.parametrize("op", ["sum", "max", "argmin"])
def test_reduce2d_dtypes(op, dtype):
    rng = np.random.default_rng(12)
    for axis in (0, 1):
        rk.check_reduce2d(rng, op, axis, 19, 70, dtype, 4)


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("shape", [(4, 8, 32), (2, 64, 4)])
def test_reduce3d(axis, shape):
    rk.check_reduce3d(np.random.default_rng(13), axis, shape)


@pytest.mark.parametrize("num_warps", [1, 4, 8])
def test_full_reduction_in_a_loop(num_warps):
    rk.check_full_reduce(np.random.default_rng(14), 5000, 1024, num_warps=num_warps)


@pytest.mark.parametrize("shape", [(32, 64), (64, 32), (128, 16), (16, 128)])
def test_transpose_through_shared_memory(shape):
    rk.check_transpose(np.random.default_rng(15), *shape)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.integers(1, 70),
    cols=st.integers(1, 150),
    op=st.sampled_from(["sum", "max", "min", "argmax", "argmin", "hash"]),
    axis=st.sampled_from([0, 1]),
    dtype=st.sampled_from([np.float32, np.float16, np.int32]),
    num_warps=st.sampled_from([1, 2, 4, 8]),
    ties=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_reductions_match_numpy(rows, cols, op, axis, dtype, num_warps, ties, seed):
    if op == "hash":
        dtype = np.int32
    rk.check_reduce2d(np.random.default_rng(seed), op, axis, rows, cols, dtype, num_warps, ties)


@pytest.mark.parametrize("n", [1, 781, 1024, 3000])
def test_softmax_sizes(n):
    import examples.softmax as sm

    x = np.random.default_rng(16).standard_normal((7, n)).astype(np.float32)
    np.testing.assert_allclose(sm.softmax(x), sm.reference(x), rtol=1e-5, atol=1e-7)


def test_every_reduction_example():
    """The examples' own checks (test_examples.py runs them too); here with other sizes."""
    import examples.causal_softmax as cs
    import examples.layer_norm as ln
    import examples.online_softmax as osm
    import examples.rms_norm as rms

    rng = np.random.default_rng(17)
    x = rng.standard_normal((2 * 128, 128)).astype(np.float32)
    np.testing.assert_allclose(
        cs.causal_softmax(x, 128), cs.reference(x, 128), rtol=1e-5, atol=1e-7
    )
    x = rng.standard_normal((5, 4096 + 100)).astype(np.float32)
    np.testing.assert_allclose(osm.online_softmax(x), osm.reference(x), rtol=1e-5, atol=1e-8)
    x = rng.standard_normal((6, 2048)).astype(np.float32)
    w = rng.standard_normal(2048).astype(np.float32)
    np.testing.assert_allclose(rms.rms_norm(x, w), rms.reference(x, w), rtol=1e-5, atol=1e-6)
    b = rng.standard_normal(2048).astype(np.float32)
    np.testing.assert_allclose(ln.layer_norm(x, w, b), ln.reference(x, w, b), rtol=1e-4, atol=1e-5)
