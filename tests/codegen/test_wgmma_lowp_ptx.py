"""sm_90a: tf32 (k8), int8 -> int32 and fp8 e4m3 / e5m2 -> fp32 (k32) tl.dot on wgmma when
both operands are K-major (A row-major, B stored N x K): PTX that `ptxas -arch=sm_90a`
accepts without local memory, with one wgmma group in flight across the K loop and no
wait ptxas must inject; TTGIR in upstream's syntax; operands that are not K-major (wgmma
transposes 16-bit tiles only), fp8 with fp16 accumulators or a `max_num_imprecise_acc`
below K keep mma.sync; the pipelined int8 and tf32 wgmma loops computed in the
interpreter with the GPU's hazards checked."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tritium
from tests.codegen.lowp_dot_kernels import TL, lowp_matmul_kernel
from tests.codegen.test_lowp_dot_ptx import compile_lowp
from tests.passes.ttgir_interpreter import shared_memory_model
from tritium.codegen import tools
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir
from tritium.runtime.interpreter import interpret

CASES = [
    # A, B, accumulator, the wgmma (128x128x64 tile, 8 warps: two warpgroups along M)
    ("i8", "i8", "i32", "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8"),
    ("fp8e4nv", "fp8e4nv", "fp32", "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"),
    ("fp8e5", "fp8e5", "fp32", "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2"),
    ("fp8e4nv", "fp8e5", "fp32", "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e5m2"),
    ("fp32", "fp32", "fp32", "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"),
]


@pytest.mark.parametrize("a,b,out,instr", CASES)
def test_k_major_operands_go_to_wgmma(a, b, out, instr, ptxas):
    ptx = compile_lowp(a, b, out, "row", "col", warps=8, arch="sm_90a").asm["ptx"]
    assert set(re.findall(r"wgmma\.mma_async\S+", ptx)) == {instr}
    assert "mma.sync" not in ptx and "ldmatrix" not in ptx
    # per warpgroup (64 rows each): one wgmma per K step of the 64-deep tile
    k_steps = 64 // int(instr.split("k")[-1].split(".")[0])
    assert ptx.count(instr + " ") == k_steps
    assert "wgmma.wait_group.sync.aligned 1;" in ptx and "cp.async.cg.shared.global" in ptx
    usage = tools.ptxas_usage(ptx, "sm_90a")
    assert usage["local"] == 0 and usage["stack_frame"] == 0, usage["log"]
    assert usage["spill_stores"] == 0 and usage["spill_loads"] == 0, usage["log"]
    assert "(C75" not in usage["log"], usage["log"]


@pytest.mark.parametrize("a,b,out", [c[:3] for c in CASES])
@pytest.mark.parametrize("a_order,b_order", [("row", "row"), ("col", "col"), ("col", "row")])
def test_operands_that_are_not_k_major_keep_mma_sync(a, b, out, a_order, b_order, ptxas):
    ptx = compile_lowp(a, b, out, a_order, b_order, warps=8, arch="sm_90a").asm["ptx"]
    assert "wgmma" not in ptx and "mma.sync" in ptx
    assert tools.ptxas(ptx, "sm_90a")[:4] == b"\x7fELF"


def test_fp8_with_fp16_accumulators_keeps_mma_sync():
    """(on mma.sync, Hopper's fp8 operands are converted to f16: test_lowp_dot_ptx.py)"""
    ptx = compile_lowp("fp8e4nv", "fp8e4nv", "fp16", "row", "col", arch="sm_90a").asm["ptx"]
    assert "wgmma" not in ptx and "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16" in ptx
    assert "cvt.rn.f16x2.e4m3x2" in ptx


@pytest.mark.parametrize("imprecise,wgmma", [(None, True), (64, True), (32, False)])
def test_fp8_max_num_imprecise_acc(imprecise, wgmma):
    """Unset or covering the tile's K (64): wgmma accumulates in its own precision across
    K; below it (upstream splits the accumulation), mma.sync."""
    sig = "*fp8e4nv:16,*fp8e4nv:16,*fp32:16,i32,i32,i32:16,i32:16,i32:1,i32:1,i32:16,i32:16,i32:1"
    consts = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, OUT=TL["fp32"], IMPRECISE=imprecise)
    ptx = tritium.compile(lowp_matmul_kernel, signature=sig, constexprs=consts, num_warps=4,
                          arch="sm_90a", stop="ptx").asm["ptx"]  # fmt: skip
    assert ("wgmma.mma_async" in ptx) == wgmma and ("mma.sync" in ptx) != wgmma


def test_int8_ttgir_reads_as_upstreams():
    """The int8 GEMM's TTGIR (B stored N x K: its tile transposed, K contiguous), as
    upstream 3.6 prints it for the H100; tritium reads it back."""
    ttgir = compile_lowp("i8", "i8", "i32", "row", "col", warps=8, arch="sm_90a").asm
    text = ttgir["ttgir"]
    for line in (
        "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], "
        "instrShape = [16, 128, 32]}>",
        "#ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 8}>",
        "#ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = true, elementBitWidth = 8}>",
        "!ttg.memdesc<3x128x64xi8, #shared, #smem, mutable>",
        "-> tensor<128x128xi32, #mma>",
        "{pendings = 1 : i32} : tensor<128x128xi32, #mma>, !ttg.memdesc<128x64xi8",
    ):
        assert line in text, line
    printed = print_ir(parse_module(text))
    assert print_ir(parse_module(printed)) == printed


INTERP = [("i8", "i8", "i32", (64, 64, 64)), ("fp32", "fp32", "fp32", (64, 64, 16))]


@pytest.mark.parametrize("a,b,out,block", INTERP)
@pytest.mark.parametrize("landing", ["issue", "wait"])
def test_wgmma_loop_in_the_interpreter(a, b, out, block, landing):
    """The pipelined K loop with one wgmma group in flight (A row-major, B stored N x K),
    loops of 0, 1, 3 and 5 trips, masks on M and N: int8 exact, tf32 within its rounding;
    no copy overwrites a tile a wgmma in flight reads (tests/passes/ttgir_interpreter.py)."""
    sig = f"*{a}:16,*{b}:16,*{out}:16,i32,i32,i32:16,i32:16,i32:1,i32:1,i32:16,i32:16,i32:1"
    consts = dict(BLOCK_M=block[0], BLOCK_N=block[1], BLOCK_K=block[2], OUT=TL[out],
                  IMPRECISE=None)  # fmt: skip
    k = tritium.compile(lowp_matmul_kernel, signature=sig, constexprs=consts, num_warps=4,
                        num_stages=3, arch="sm_90a", stop="ttgir")  # fmt: skip
    text = k.asm["ttgir"]
    assert "ttng.warp_group_dot " in text and "{pendings = 1 : i32}" in text
    module = parse_module(text)
    rng = np.random.default_rng(len(a))
    for M, N, K in ((70, 48, 0), (70, 48, block[2]), (33, 96, 3 * block[2]), (5, 64, 5 * block[2])):
        if a == "i8":
            x = rng.integers(-128, 128, (M, K), dtype=np.int8)
            y = rng.integers(-128, 128, (K, N), dtype=np.int8)
        else:
            x = rng.standard_normal((M, K)).astype(np.float32)
            y = rng.standard_normal((K, N)).astype(np.float32)
        bt = np.ascontiguousarray(y.T)  # N x K: B's K contiguous
        c = np.full((M, N), -7, {"i32": np.int32, "fp32": np.float32}[out])
        grid = (-(-M // block[0]), -(-N // block[1]))
        with shared_memory_model(landing) as model:
            interpret(module, grid, [x, bt, c, M, N, K, K, K, N])
        trips = -(-K // block[2])
        assert model.dots == grid[0] * grid[1] * trips
        ref = x.astype(np.float64) @ y.astype(np.float64)
        if a == "i8":
            np.testing.assert_array_equal(c, ref.astype(np.int64).astype(np.int32))
        else:
            err = np.linalg.norm(c - ref) / max(np.linalg.norm(ref), 1e-30)
            assert err < 2e-3, err  # tf32 keeps 10 fraction bits
