"""codegen/register_budget.py: loops of chained mma.sync dots get ptxas's register budget
up to the top of their occupancy bracket (a second ptxas run, `.maxnreg` in the PTX)."""

from __future__ import annotations

import pytest

import tritium
from examples import flash_attention as fa
from examples import matmul as mm
from tritium.codegen import register_budget as rb
from tritium.codegen import tools
from tritium.ir.parser import parse_module

FWD_SIGNATURE = ",".join(["*fp16:16"] * 4 + ["*fp32:16", "fp32", "i32"] + ["i32:16"] * 8)
FWD_CONSTS = dict(HEAD_DIM=64, BLOCK_M=64, BLOCK_N=64, CAUSAL=False, BF16=False)


def _forward(stop, causal=False):
    consts = {**FWD_CONSTS, "CAUSAL": causal}
    return tritium.compile(fa.attn_fwd_kernel, FWD_SIGNATURE, consts, num_warps=4,
                           num_stages=3, stop=stop, arch="sm_90")  # fmt: skip


@pytest.mark.parametrize(
    "registers, warps, arch, top",
    [
        (152, 4, "sm_90", 168),  # 3 CTAs of 4 warps: 65536 / 384 = 170 -> 168
        (146, 4, "sm_90", 168),
        (168, 4, "sm_90", 168),  # already at the top
        (150, 8, "sm_90", 255),  # one CTA of 8 warps either way
        (32, 4, "sm_90", 32),  # 16 CTAs: the SM's 64 warps
        (40, 4, "sm_90", 40),  # 12 CTAs: 65536 / (12 * 128) = 42 -> 40
        (40, 4, "sm_89", 40),  # Ada's 48 warps: 12 CTAs too
        (64, 4, "sm_89", 64),  # 8 CTAs
        (255, 4, "sm_90a", 255),
    ],
)
def test_occupancy_ceiling(registers, warps, arch, top):
    assert rb.occupancy_ceiling(registers, warps, arch) == top


def test_maxnreg_goes_before_reqntid_once():
    ptx = ".visible .entry k(\n)\n.reqntid 128\n{\n}\n"
    wide = rb.with_maxnreg(ptx, 168)
    assert ".maxnreg 168\n.reqntid 128" in wide
    assert rb.with_maxnreg(wide, 200) == wide


def test_attention_chains_dots_a_matmul_does_not(monkeypatch):
    monkeypatch.setenv("DISABLE_MMA_V3", "1")
    assert rb.chains_mma_dots(parse_module(_forward("ttgir").asm["ttgir"]))
    k = tritium.compile(mm.matmul_tiled_kernel, "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32",
                        dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32), num_warps=4, stop="ttgir",
                        arch="sm_90")  # fmt: skip
    module = parse_module(k.asm["ttgir"])
    assert "tt.dot" in k.asm["ttgir"] and not rb.chains_mma_dots(module)


def _fake_assemble(registers, spills):
    def assemble(ptx, arch):
        return b"cubin", {"registers": registers, "spill_stores": spills}

    return assemble


def test_widen_keeps_the_first_assembly_when_the_budget_spills_more():
    ptx = ".reqntid 128\n"
    first = (b"first", {"registers": 152, "spill_stores": 0})
    assert rb.widen(ptx, first, 4, "sm_90", _fake_assemble(168, 8)) == (ptx, first)
    wide, res = rb.widen(ptx, first, 4, "sm_90", _fake_assemble(164, 0))
    assert wide.startswith(".maxnreg 168\n") and res[1]["registers"] == 164

    def refuses(ptx, arch):
        raise tools.PtxasError("ptxas failed")

    assert rb.widen(ptx, first, 4, "sm_90", refuses) == (ptx, first)
    at_top = (b"first", {"registers": 168, "spill_stores": 0})
    assert rb.widen(ptx, at_top, 4, "sm_90", _fake_assemble(1, 0)) == (ptx, at_top)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_forward_uses_its_bracket(causal, ptxas, monkeypatch):
    """The benchmark's D = 64 forward (64x64 tiles, 4 warps, mma.sync on sm_90): ptxas alone
    gives 146-152 registers; with `.maxnreg 168` more of them, still three programs per SM
    and no spills (the loop's static stall cycles, ptxas 13: 918 -> 744 per trip)."""
    monkeypatch.setenv("DISABLE_MMA_V3", "1")
    k = _forward("sass", causal)
    ptx = k.asm["ptx"]
    assert ".maxnreg 168\n.reqntid 128" in ptx
    alone = tools.ptxas_usage(ptx.replace(".maxnreg 168\n", ""), "sm_90")
    assert alone["registers"] < k.metadata.registers <= 168
    assert k.metadata.spill_stores == 0


def test_the_dump_holds_the_ptx_ptxas_assembled(ptxas, monkeypatch, tmp_path):
    """--dump-dir writes LLVM's PTX, then the one with the budget that ptxas assembled."""
    monkeypatch.setenv("DISABLE_MMA_V3", "1")
    consts = {**FWD_CONSTS, "CAUSAL": False}
    k = tritium.compile(fa.attn_fwd_kernel, FWD_SIGNATURE, consts, num_warps=4, num_stages=3,
                        arch="sm_90", dump_dir=str(tmp_path))  # fmt: skip
    (budget,) = tmp_path.rglob("*-ptx-register-budget.ptx")
    (first,) = [p for p in tmp_path.rglob("*-ptx.ptx")]
    assert budget.read_text() == k.asm["ptx"] and ".maxnreg 168" in k.asm["ptx"]
    assert ".maxnreg" not in first.read_text()
