"""tl.dot against numpy float64 for random shapes, dtypes, precisions and operand orders.

The property runs in the interpreter on the CPU (which validates the harness and the
reference: `TRITIUM_INTERPRET=1`); on the GPU (`-m gpu`: mma.sync / FMA code, the
software pipeline with 1 to 4 stages, masks for sizes that are not block multiples) a
fixed list of compilations each runs a few random shapes, so that compiles are shared. Tolerances are
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


def _check(kind, precision, M, N, K, a_order, b_order, block, warps, out_f16, seed, stages=3):
    rng = np.random.default_rng(seed)
    a, b = inputs(rng, M, N, K, kind)
    c = run_matmul(a, b, kind, precision, a_order, b_order, block, warps, stages, out_f16)
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


# GPU cases: (kind, precision, block, warps, A order, B order, out_f16, num_stages, shapes).
# Each case is one compilation (one specialisation) run on a few shapes of one class:
# "ragged" sizes (no multiple of 16: scalar masked loads) or "aligned" ones (multiples of
# 16, not of the block: 16-byte cp.async where the pipeliner needs 4-byte copies), so the
# whole file stays around a minute on a GPU.
RAGGED = "ragged"
ALIGNED = "aligned"
GPU_CASES = [
    ("fp16", "tf32", (16, 16, 16), 1, "row", "row", False, 3, RAGGED),
    ("fp16", "tf32", (32, 32, 32), 2, "col", "row", True, 2, ALIGNED),
    ("fp16", "tf32", (64, 64, 32), 4, "row", "col", False, 4, ALIGNED),
    ("fp16", "tf32", (64, 32, 64), 4, "col", "col", False, 3, RAGGED),
    ("bf16", "tf32", (32, 64, 16), 4, "row", "row", False, 3, ALIGNED),
    ("bf16", "tf32", (64, 64, 32), 8, "col", "col", True, 2, RAGGED),
    ("fp32", "tf32", (32, 32, 32), 4, "row", "row", False, 3, RAGGED),
    ("fp32", "tf32", (64, 32, 64), 4, "col", "row", False, 4, ALIGNED),
    ("fp32", "tf32", (16, 16, 16), 1, "row", "col", True, 1, RAGGED),
    ("fp32", "ieee", (32, 64, 16), 4, "row", "row", False, 3, RAGGED),
    ("fp32", "ieee", (64, 64, 32), 8, "col", "col", False, 2, ALIGNED),
]


def shapes(cls: str, rng, n: int = 3) -> list[tuple[int, int, int]]:
    """n (M, N, K) of one class: the first K is short (fewer trips than stages)."""
    out = []
    for i in range(n):
        if cls == ALIGNED:
            m, nn, k = (16 * int(x) for x in rng.integers(1, 12, 3))
            k = 16 if i == 0 else k * 2
        else:
            m, nn, k = (int(x) for x in rng.integers(2, 120, 3))
            m, nn, k = (x + (x % 16 == 0) for x in (m, nn, k))
            k = 3 if i == 0 else k * 2 + (k * 2 % 16 == 0)
        out.append((m, nn, k))
    return out


@pytest.mark.gpu
@pytest.mark.parametrize("case", GPU_CASES, ids=lambda c: "-".join(map(str, c[:4] + c[7:])))
def test_matmul_on_the_gpu(monkeypatch, case):
    kind, precision, block, warps, ao, bo, out_f16, stages, cls = case
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    rng = np.random.default_rng(len(GPU_CASES) * block[0] + warps)
    for M, N, K in shapes(cls, rng):
        _check(kind, precision, M, N, K, ao, bo, block, warps, out_f16, int(rng.integers(1 << 16)),
               stages)  # fmt: skip


@pytest.mark.gpu
@pytest.mark.parametrize("kind,precision", KINDS)
@pytest.mark.parametrize(
    "block,warps,orders",
    [((128, 128, 32), 8, ("row", "row")), ((128, 64, 32), 4, ("col", "col")),
     ((64, 128, 64), 4, ("row", "col"))],
)  # fmt: skip
def test_large_blocks_on_the_gpu(monkeypatch, kind, precision, block, warps, orders):
    """The benchmark's tile shapes, pipelined (fp16 / bf16 on multiples of 16, so that
    the copies are 16 bytes; fp32 on ragged sizes)."""
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    M, N, K = (272, 240, 208) if kind != "fp32" else (300, 260, 200)
    _check(kind, precision, M, N, K, *orders, block, warps, False, 7)
