"""sm_90a: a wgmma dot whose operands are computed in registers (a cast, a scale: fla's
`tl.dot((b_q * scale).to(b_k.dtype), b_k)`) compiles: remove-layout-conversions keeps the
convert to the operand layout right before the dot, so optimize-dot-operands stages the
computed value in an nvmma_shared tile, as wgmma reads it (before: "a tt.dot on
#ttg.nvidia_mma version 3 needs both operands loaded from #ttg.nvmma_shared tiles").
Checked against numpy in the interpreter and, marked `gpu`, on the GPU."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.codegen import tools


@tritium.jit
def scaled_cast_dot(a_ptr, b_ptr, c_ptr, scale, M: tl.constexpr, N: tl.constexpr,
                    K: tl.constexpr):  # fmt: skip
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])  # fp32
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])  # bf16
    acc = tl.dot((a * scale).to(b.dtype), b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc - tl.cumsum(acc, axis=0))


SHAPES = [(64, 64, 64, 4), (128, 64, 32, 8)]


@pytest.mark.parametrize("m, n, k, warps", SHAPES)
def test_computed_operands_go_to_wgmma(m, n, k, warps, ptxas):
    ck = tritium.compile(scaled_cast_dot, "*fp32:16,*bf16:16,*fp32:16,fp32",
                         {"M": m, "N": n, "K": k}, num_warps=warps, arch="sm_90a",
                         stop="ptx")  # fmt: skip
    ptx = ck.asm["ptx"]
    assert "wgmma.mma_async" in ptx and "mma.sync" not in ptx
    usage = tools.ptxas_usage(ptx, "sm_90a")
    assert usage["local"] == 0, usage["log"]


@pytest.mark.parametrize(
    "mode", ["interpreter", pytest.param("gpu", marks=pytest.mark.gpu)]
)
@pytest.mark.parametrize("m, n, k, warps", SHAPES)
def test_computed_operands_against_numpy(mode, m, n, k, warps, monkeypatch):
    torch = pytest.importorskip("torch")  # bf16 arrays
    monkeypatch.setenv("TRITIUM_INTERPRET", "1" if mode == "interpreter" else "0")
    device = "cuda" if mode == "gpu" else "cpu"
    g = torch.Generator().manual_seed(m + k)
    a = torch.randn(m, k, generator=g).to(device)
    b = torch.randn(k, n, generator=g).to(torch.bfloat16).to(device)
    c = torch.full((m, n), float("nan"), device=device)
    scaled_cast_dot[(1,)](a, b, c, 0.5, M=m, N=n, K=k, num_warps=warps)
    acc = (a * 0.5).to(torch.bfloat16).double().cpu() @ b.double().cpu()
    want = acc - acc.cumsum(0)
    np.testing.assert_allclose(c.cpu().numpy(), want.numpy(), rtol=1e-3, atol=1e-3)
