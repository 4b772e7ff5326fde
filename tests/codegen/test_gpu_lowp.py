"""On the GPU (`-m gpu`): int8 / fp8 / fp16-accumulator tl.dot against numpy (odd sizes,
masks, both storage orders of each operand, two tile shapes), fp8 casts bit-identical to the
interpreter, and, where `import triton` works, both compared with upstream Triton running the
same kernel source on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest

from tests.codegen.fp8_cast_kernels import cast_inputs, fp8_cast_kernel, run_casts, same_codes
from tests.codegen.lowp_dot_kernels import (
    check,
    lowp_matmul_kernel,
    random_operand,
    reference,
    run_lowp,
    stored,
)
from tests.codegen.upstream_twin import upstream_twin

pytestmark = pytest.mark.gpu

DOTS = [
    ("i8", "i8", "i32"),
    ("fp8e4nv", "fp8e4nv", "fp32"),
    ("fp8e5", "fp8e5", "fp32"),
    ("fp8e4nv", "fp8e5", "fp32"),
    ("fp8e4nv", "fp8e4nv", "fp16"),
    ("fp16", "fp16", "fp16"),
]
ORDERS = [("row", "row"), ("row", "col"), ("col", "row"), ("col", "col")]
BLOCKS = [((64, 64, 64), 4, 3), ((128, 128, 64), 8, 4)]


def _operands(rng, a, b, out, M, N, K):
    lim = 4.0 if out == "fp16" else 64.0  # fp16 sums stay finite; fp8 spans 2**-16 .. 64
    return random_operand(rng, (M, K), a, lim), random_operand(rng, (K, N), b, lim)


@pytest.mark.parametrize("a,b,out", DOTS)
@pytest.mark.parametrize("a_order,b_order", ORDERS)
@pytest.mark.parametrize("block,warps,stages", BLOCKS)
def test_dot_matches_numpy(a, b, out, a_order, b_order, block, warps, stages):
    rng = np.random.default_rng(hash((a, b, out, a_order, b_order, block)) % 2**32)
    M, N, K = 193, 161, 250  # no multiple of any block: every mask edge
    x, y = _operands(rng, a, b, out, M, N, K)
    c = run_lowp(x, y, a, b, out, a_order, b_order, block, warps, stages)
    check(c, reference(x, y, a, b), out, K, tensor_cores=True)


@pytest.mark.parametrize("src", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("f8,rounding", [("fp8e4nv", None), ("fp8e5", None), ("fp8e5", "rtz")])
def test_casts_bit_identical_to_the_interpreter(monkeypatch, src, f8, rounding):
    x = cast_inputs(np.random.default_rng(3), src)
    gpu_codes, gpu_wide = run_casts(x, src, f8, rounding)
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    cpu_codes, cpu_wide = run_casts(x, src, f8, rounding)
    same = same_codes(gpu_codes, cpu_codes, f8)
    assert same.all(), list(zip(x[~same][:8], gpu_codes[~same][:8], cpu_codes[~same][:8]))
    np.testing.assert_array_equal(gpu_wide, cpu_wide)  # NaN == NaN here


# ----------------------------------------------------------------------------- upstream


def _torch_and_twin(kernel):
    torch = pytest.importorskip("torch")
    twin = upstream_twin(kernel)
    if twin is None:
        pytest.skip("upstream triton is not installed")
    import triton.language as utl

    return torch, twin, utl


@pytest.mark.parametrize("src", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("f8", ["fp8e4nv", "fp8e5"])
def test_casts_match_upstream(src, f8):
    torch, twin, utl = _torch_and_twin(fp8_cast_kernel)
    x = cast_inputs(np.random.default_rng(4), src)
    ours, ours_wide = run_casts(x, src, f8)
    n = x.size
    tdt = {"fp8e4nv": torch.float8_e4m3fn, "fp8e5": torch.float8_e5m2}[f8]
    xs = torch.from_numpy(x).cuda()
    codes = torch.empty(n, dtype=tdt, device="cuda")
    wide = torch.empty(n, dtype=torch.float32, device="cuda")
    u = {"fp32": utl.float32, "fp16": utl.float16, "bf16": utl.bfloat16}
    u |= {"fp8e4nv": utl.float8e4nv, "fp8e5": utl.float8e5}
    twin[(triton_cdiv(n, 512),)](xs, codes, wide, n, SRC=u[src], F8=u[f8], ROUNDING=None, BLOCK=512)
    theirs = codes.view(torch.uint8).cpu().numpy()
    same = same_codes(ours, theirs, f8)
    assert same.all(), list(zip(x[~same][:8], ours[~same][:8], theirs[~same][:8]))


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


@pytest.mark.parametrize("a,b,out", DOTS)
@pytest.mark.parametrize("b_order", ["row", "col"])
def test_dot_matches_upstream(a, b, out, b_order):
    torch, twin, utl = _torch_and_twin(lowp_matmul_kernel)
    rng = np.random.default_rng(5)
    M, N, K = 193, 161, 250
    x, y = _operands(rng, a, b, out, M, N, K)
    ours = run_lowp(x, y, a, b, out, "row", b_order, (64, 64, 64), 4, 3)
    tdt = {"i8": torch.int8, "fp16": torch.float16, "fp8e4nv": torch.float8_e4m3fn}
    tdt |= {"fp8e5": torch.float8_e5m2}
    odt = {"i32": torch.int32, "fp32": torch.float32, "fp16": torch.float16}[out]

    def dev(v, kind, order):
        s, r, c = stored(v, order)
        t = torch.from_numpy(s.view(np.uint8) if kind.startswith("fp8") else s).cuda()
        return (t.view(tdt[kind]) if kind.startswith("fp8") else t), r, c

    ta, sam, sak = dev(x, a, "row")
    tb, sbk, sbn = dev(y, b, b_order)
    tc = torch.empty((M, N), dtype=odt, device="cuda")
    u = {"i32": utl.int32, "fp32": utl.float32, "fp16": utl.float16}
    twin[(triton_cdiv(M, 64), triton_cdiv(N, 64))](
        ta, tb, tc, M, N, K, sam, sak, sbk, sbn, N, 1,
        BLOCK_M=64, BLOCK_N=64, BLOCK_K=64, OUT=u[out], IMPRECISE=None,
        num_warps=4, num_stages=3,
    )  # fmt: skip
    theirs = tc.cpu().numpy()
    if out == "i32":
        np.testing.assert_array_equal(ours, theirs)
        return
    diff = np.linalg.norm(ours.astype(np.float64) - theirs) / np.linalg.norm(
        theirs.astype(np.float64)
    )
    assert diff < (1e-3 if out == "fp32" else 5e-3), diff
