"""The accurate f32 log / log2 / sin / cos of libm/log_sin_cos_f32.py, checked without a
GPU on many points: the very LLVM IR the backend emits is JIT-compiled for this CPU
(libm_host.py) and compared with numpy in float64, in ulps, over random inputs across the
whole f32 range and the special values. (Every other routine: test_libm_accuracy.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import tritium.codegen.lower.libm as libm
from tests.codegen.libm_host import compile_host, f32, ulps

FUNCS = {
    "log": (lambda ctx, x: libm.log_f32(ctx, x, False), np.log, 1.0),
    "log2": (lambda ctx, x: libm.log_f32(ctx, x, True), np.log2, 1.0),
    "sin": (lambda ctx, x: libm.sin_cos_f32(ctx, x, False), np.sin, 1.5),
    "cos": (lambda ctx, x: libm.sin_cos_f32(ctx, x, True), np.cos, 1.5),
}


@pytest.fixture(scope="module")
def jit():
    return lambda name: compile_host(FUNCS[name][0], [f32], f32)


def inputs(name: str) -> np.ndarray:
    rng = np.random.default_rng(3)
    if name.startswith("log"):
        parts = [np.exp(rng.uniform(-103, 88.7, 200_000)), rng.uniform(0.5, 2.0, 100_000)]
    else:
        sign = rng.choice([-1.0, 1.0], 100_000)
        parts = [rng.uniform(-100, 100, 200_000), np.exp(rng.uniform(-20, 88, 100_000)) * sign]
    return np.concatenate(parts).astype(np.float32)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_accuracy_in_ulps(jit, name):
    run = jit(name)
    _, ref_fn, bound = FUNCS[name]
    x = inputs(name)
    x = x[np.isfinite(x)]
    err = ulps(run(x), ref_fn(x.astype(np.float64)), np.float32)
    assert err.max() <= bound, (name, float(err.max()), float(x[np.argmax(err)]))


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_special_values(jit, name):
    run = jit(name)
    x = np.array(
        [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, 1e-40, 131072.0, 3.4e38],
        np.float32,
    )
    with np.errstate(all="ignore"):
        want = FUNCS[name][1](x.astype(np.float64)).astype(np.float32)
    got = run(x)
    np.testing.assert_allclose(got, want, rtol=2.5e-7, atol=0, equal_nan=True)
    assert np.array_equal(np.signbit(got[:2]), np.signbit(want[:2]))  # -0 stays -0 for sin
