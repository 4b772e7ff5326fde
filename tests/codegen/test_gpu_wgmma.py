"""On a Hopper GPU (`-m gpu`, compute capability 9.0): `tl.dot` on wgmma (sm_90a, the
JIT's default there) against float64 numpy: fp16 / bf16 operands, odd sizes (every mask
edge), both storage orders of each operand (strides), several tile configurations,
pipelined (cp.async rings) and not (num_stages 1: tiles stored by the threads, then
fence.proxy.async), the accumulator carried across the K loop with one wgmma group in
flight (3 stages or more: `wgmma.wait_group 1` in the loop, the copies refilling the
retired stage) or none (fewer, or TRITIUM_WGMMA_SYNC=1); tf32, int8 and fp8 operands
on wgmma where both are K-major. Each case also checks that its PTX is the wgmma path
(and, with DISABLE_MMA_V3=1, the mma.sync one); fp16 results leave the accumulator
through stmatrix."""

from __future__ import annotations

import numpy as np
import pytest

from tests.codegen.dot_kernels import inputs, reference, relative_error, run_matmul, tolerance
from tests.codegen.lowp_dot_kernels import check, random_operand, run_lowp
from tests.codegen.lowp_dot_kernels import reference as lowp_reference

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _hopper(monkeypatch):
    from tritium.runtime.driver import current_arch

    if current_arch() != "sm_90":
        pytest.skip("wgmma needs a Hopper GPU (sm_90)")
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    monkeypatch.delenv("DISABLE_MMA_V3", raising=False)
    monkeypatch.delenv("TRITIUM_DISABLE_MMA_V3", raising=False)


# (kind, (BLOCK_M, BLOCK_N, BLOCK_K), num_warps, num_stages)
CONFIGS = [
    ("fp16", (128, 128, 64), 8, 3),
    ("fp16", (64, 64, 32), 4, 3),
    ("fp16", (128, 64, 32), 4, 2),
    ("fp16", (64, 128, 64), 8, 3),  # two warpgroups along N
    ("fp16", (128, 256, 64), 8, 3),  # n256
    ("fp16", (64, 32, 16), 4, 1),  # not pipelined: st.shared + fence.proxy.async
    ("bf16", (128, 128, 64), 8, 3),
    ("bf16", (64, 64, 16), 4, 4),
]
ORDERS = [("row", "row"), ("row", "col"), ("col", "row"), ("col", "col")]


def _check(kind, block, warps, stages, a_order, b_order, M, N, K, seed=0):
    rng = np.random.default_rng(seed)
    a, b = inputs(rng, M, N, K, kind)
    compiled: list = []
    c = run_matmul(a, b, kind, "tf32", a_order, b_order, block, warps, stages, False, compiled)
    err = relative_error(c, reference(a, b, kind, "tf32"))
    return err, compiled[0].asm["ptx"]


@pytest.mark.parametrize("kind,block,warps,stages", CONFIGS)
@pytest.mark.parametrize("a_order,b_order", ORDERS)
def test_wgmma_matches_numpy(kind, block, warps, stages, a_order, b_order):
    M, N, K = 272, 208, 240  # multiples of 16 (16-byte copies) but of no block
    err, ptx = _check(kind, block, warps, stages, a_order, b_order, M, N, K, seed=block[0] + warps)
    assert ".target sm_90a" in ptx and "wgmma.mma_async" in ptx and "mma.sync" not in ptx
    assert ("wgmma.wait_group.sync.aligned 1;" in ptx) == (stages >= 3)
    assert err <= tolerance(kind, "tf32"), err


@pytest.mark.parametrize("M,N,K", [(193, 161, 250), (64, 16, 16), (70, 33, 17), (300, 260, 1000)])
def test_wgmma_odd_sizes(M, N, K):
    """Sizes that are multiples of nothing: element-wise copies, masks on every edge, a
    long K loop."""
    err, ptx = _check("fp16", (64, 64, 32), 4, 3, "row", "row", M, N, K, seed=M)
    assert "wgmma.mma_async" in ptx
    assert err <= tolerance("fp16", "tf32"), err


@pytest.mark.parametrize("block,warps,stages", [((128, 128, 64), 8, 4), ((64, 64, 32), 4, 5)])
def test_wgmma_in_flight_long_loops(block, warps, stages):
    """Many trips around rings of 4 and 5 stages: every stage refilled many times while
    the wgmma of the trip before is still retiring."""
    err, ptx = _check("fp16", block, warps, stages, "row", "col", 256, 192, 4096, seed=stages)
    assert "wgmma.wait_group.sync.aligned 1;" in ptx
    assert err <= tolerance("fp16", "tf32"), err



# (kind, block, warps, stages, A order, B order, M, N, K)
F16_OUT = [
    ("fp16", (128, 256, 32), 8, 4, "row", "row", 272, 528, 160),  # the benchmark's tile
    ("fp16", (128, 128, 64), 8, 3, "row", "col", 193, 161, 250),  # every mask edge
    ("bf16", (64, 64, 32), 4, 3, "col", "row", 70, 33, 17),
    ("fp16", (64, 128, 64), 8, 3, "row", "row", 300, 260, 128),  # two warpgroups along N
]


@pytest.mark.parametrize("kind,block,warps,stages,a_order,b_order,M,N,K", F16_OUT)
def test_wgmma_fp16_results_go_through_stmatrix(kind, block, warps, stages, a_order, b_order,
                                                M, N, K):  # fmt: skip
    """C in fp16: the accumulator reaches the store layout through stmatrix.x4 into the
    padded buffer (codegen/lower/stmatrix.py), then ld.shared.v4; odd sizes mask its rows
    and columns."""
    rng = np.random.default_rng(M + N)
    a, b = inputs(rng, M, N, K, kind)
    compiled: list = []
    c = run_matmul(a, b, kind, "tf32", a_order, b_order, block, warps, stages, True, compiled)
    ptx = compiled[0].asm["ptx"]
    assert "wgmma.mma_async" in ptx and "stmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
    assert not np.isnan(c).any()
    err = relative_error(c, reference(a, b, kind, "tf32"))
    assert err <= max(tolerance(kind, "tf32"), 1e-2), err

def test_wgmma_sync_escape_hatch(monkeypatch):
    """TRITIUM_WGMMA_SYNC=1 waits for each wgmma (a configuration no other test here
    launches, as below)."""
    monkeypatch.setenv("TRITIUM_WGMMA_SYNC", "1")
    err, ptx = _check("fp16", (64, 128, 32), 4, 3, "col", "row", 200, 160, 480)
    assert "wgmma.mma_async" in ptx and "wgmma.wait_group.sync.aligned 1;" not in ptx
    assert err <= tolerance("fp16", "tf32"), err


def test_disable_mma_v3_keeps_mma_sync(monkeypatch):
    """(A configuration no other test here launches: the variable is read when a kernel
    compiles, and a JITFunction keeps the kernels it compiled for its launches' keys.)"""
    monkeypatch.setenv("DISABLE_MMA_V3", "1")
    err, ptx = _check("fp16", (64, 32, 32), 4, 2, "row", "col", 128, 96, 64)
    assert ".target sm_90\n" in ptx and "mma.sync" in ptx and "wgmma" not in ptx
    assert err <= tolerance("fp16", "tf32"), err


# (A, B, accumulator, the wgmma's types), both operands K-major: A row-major, B N x K
LOWP = [
    ("i8", "i8", "i32", "s32.s8.s8"),
    ("fp8e4nv", "fp8e4nv", "fp32", "f32.e4m3.e4m3"),
    ("fp8e5", "fp8e5", "fp32", "f32.e5m2.e5m2"),
    ("fp8e4nv", "fp8e5", "fp32", "f32.e4m3.e5m2"),
]
ALIGNED, ODD = (272, 208, 1024), (193, 161, 250)
# (block, warps, stages, sizes); 128x256x128 with odd sizes would need 306 KB of shared
# memory (unpipelined tiles and the epilogue's scratch), more than the H100 has
LOWP_CONFIGS = [((64, 64, 64), 4, 3, ALIGNED), ((64, 64, 64), 4, 3, ODD),
                ((128, 128, 64), 8, 4, ALIGNED), ((128, 128, 64), 8, 4, ODD),
                ((128, 256, 128), 8, 3, ALIGNED)]  # fmt: skip


@pytest.mark.parametrize("a,b,out,types", LOWP)
@pytest.mark.parametrize("block,warps,stages,sizes", LOWP_CONFIGS)
def test_wgmma_int8_fp8_match_numpy(a, b, out, types, block, warps, stages, sizes):
    """int8 exact; fp8 within the tensor cores' accumulation (lowp_dot_kernels.check). K a
    multiple of 16: pipelined cp.async rings, one group in flight; K = 250: copies of
    single bytes cannot be cp.async, so the tiles are stored by the threads (fence)."""
    M, N, K = sizes
    rng = np.random.default_rng(hash((a, b, block, M)) % 2**32)
    x, y = random_operand(rng, (M, K), a, 64.0), random_operand(rng, (K, N), b, 64.0)
    compiled: list = []
    c = run_lowp(x, y, a, b, out, "row", "col", block, warps, stages, compiled=compiled)
    ptx = compiled[0].asm["ptx"]
    assert f"k32.{types} " in ptx and "mma.sync" not in ptx, "not on wgmma"
    check(c, lowp_reference(x, y, a, b), out, K, tensor_cores=True)


@pytest.mark.parametrize("block,warps,stages", [((64, 64, 32), 4, 3), ((128, 128, 32), 8, 4)])
def test_wgmma_tf32_matches_numpy(block, warps, stages):
    M, N, K = 272, 208, 480
    rng = np.random.default_rng(warps)
    a, b = inputs(rng, M, N, K, "fp32")
    compiled: list = []
    c = run_matmul(a, b, "fp32", "tf32", "row", "col", block, warps, stages, False, compiled)
    ptx = compiled[0].asm["ptx"]
    assert "k8.f32.tf32.tf32 " in ptx and "mma.sync" not in ptx
    assert ("wgmma.wait_group.sync.aligned 1;" in ptx) == (stages >= 3)
    assert relative_error(c, reference(a, b, "fp32", "tf32")) <= tolerance("fp32", "tf32")
