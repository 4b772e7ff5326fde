"""int8, fp8 and fp16-accumulator tl.dot: the PTX for sm_89 assembles with ptxas, holds the
intended mma.sync (and ldmatrix / cp.async for the pipelined tiles) and no local memory;
the results agree with numpy in the interpreter (int8 exactly, fp8 through exact decode
tables); on sm_80 / sm_86 an fp8 dot is a located NotSupportedError."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tests.codegen.lowp_dot_kernels import (
    TL,
    check,
    lowp_matmul_kernel,
    random_operand,
    reference,
    run_lowp,
)
from tritium.codegen import tools

CASES = [
    # A, B, accumulator, the mma.sync
    ("i8", "i8", "i32", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"),
    ("fp8e4nv", "fp8e4nv", "fp32", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"),
    ("fp8e5", "fp8e5", "fp32", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32"),
    ("fp8e4nv", "fp8e5", "fp32", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32"),
    ("fp8e5", "fp8e4nv", "fp16", "mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e4m3.f16"),
    ("fp16", "fp16", "fp16", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"),
]


def compile_lowp(a, b, out, a_order="row", b_order="col", block=(128, 128, 64), warps=4,
                 arch="sm_89", stages=3):  # fmt: skip
    strides = {"row": ("i32:16", "i32:1"), "col": ("i32:1", "i32:16")}
    am, ak = strides[a_order]
    bk, bn = strides[b_order]
    sig = [f"*{a}:16", f"*{b}:16", f"*{out}:16", "i32", "i32", "i32:16", am, ak, bk, bn]
    sig += ["i32:16", "i32:1"]
    consts = dict(BLOCK_M=block[0], BLOCK_N=block[1], BLOCK_K=block[2], OUT=TL[out])
    consts["IMPRECISE"] = None
    return tritium.compile(
        lowp_matmul_kernel, signature=",".join(sig), constexprs=consts, num_warps=warps,
        num_stages=stages, arch=arch, stop="ptx",
    )  # fmt: skip


@pytest.mark.parametrize("a,b,out,mma", CASES)
@pytest.mark.parametrize("b_order", ["col", "row"])
def test_ptx_assembles_with_the_mma(ptxas, a, b, out, mma, b_order):
    k = compile_lowp(a, b, out, b_order=b_order)
    ptx = k.asm["ptx"]
    assert mma in ptx
    assert set(re.findall(r"mma\.sync\S+", ptx)) == {mma}
    assert "cp.async.cg.shared.global" in ptx  # the K loop's tiles are pipelined
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx  # A (K-contiguous)
    if b_order == "col" or a == "fp16":  # B K-contiguous (or a 16-bit .trans)
        assert ptx.count("ldmatrix") >= 2
    usage = tools.ptxas_usage(ptx, "sm_89")
    assert ".local" not in ptx and usage["local"] == 0 and usage["stack_frame"] == 0
    assert usage["spill_stores"] == 0 and usage["spill_loads"] == 0, usage


def test_ldmatrix_reads_8bit_b_that_is_k_contiguous():
    """Both operands of an int8 GEMM with B stored N x K come from ldmatrix (non-transposed:
    a matrix row is 16 K bytes, a lane's word 4 K elements, the m16n8k32 fragment)."""
    ptx = compile_lowp("i8", "i8", "i32", b_order="col").asm["ptx"]
    # per K step of a 128x128x64 tile on 4 warps: A 4 x4 and B 4 x4 per warp (2 x k32)
    assert len(re.findall(r"ldmatrix\S+ ", ptx)) >= 8
    assert not re.search(r"ld\.shared\.(u8|b8|s8)", ptx.split("mma.sync")[0])


@pytest.mark.parametrize("arch", ["sm_80", "sm_86"])
def test_fp8_dot_before_sm89_is_a_located_error(arch):
    with pytest.raises(
        tritium.NotSupportedError, match=r"lowp_dot_kernels.py:\d+:\d+: error: .*sm_89"
    ):
        compile_lowp("fp8e4nv", "fp8e4nv", "fp32", arch=arch)


def test_int8_dot_on_sm80(ptxas):
    ptx = compile_lowp("i8", "i8", "i32", arch="sm_80").asm["ptx"]
    assert "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32" in ptx
    assert tools.ptxas(ptx, "sm_80")[:4] == b"\x7fELF"


def test_fp8_dot_too_small_for_mma_promotes_to_fp32_fma():
    """K = 16 has no m16n8k32 step: the FMA dot, operands promoted with tt.fp_to_fp (as
    upstream's decomposeMixedModeDotOp)."""
    ptx = compile_lowp("fp8e4nv", "fp8e5", "fp32", block=(32, 32, 16)).asm["ptx"]
    assert "mma.sync" not in ptx and "fma.rn.f32" in ptx
    assert "cvt.rn.f16x2.e4m3x2" in ptx and "cvt.rn.f16x2.e5m2x2" in ptx


@pytest.mark.parametrize(
    "a,b,out,acc", [("fp8e4nv", "fp8e4nv", "fp32", "f32"), ("fp8e4nv", "fp8e5", "fp16", "f16")]
)
def test_fp8_dot_on_sm90_converts_each_fragment_once(ptxas, a, b, out, acc):
    """sm_90 has no fp8 mma.sync in hardware (ptxas emulates each one, converting its
    fragments every time): as upstream, the fp8 operands are promoted to f16, one
    cvt.rn.f16x2 per pair of elements a thread holds, and each m16n8k32 step is two f16
    m16n8k16 mmas. 128x128x64 on 4 warps (2 x 2, 64 x 64 each): A and B 64 x 64 fp8 per
    warp, 128 elements per thread each -> 64 + 64 cvt; 4 x 8 blocks x 2 k32 x 2 mmas."""
    ptx = compile_lowp(a, b, out, arch="sm_90").asm["ptx"]
    mma = f"mma.sync.aligned.m16n8k16.row.col.{acc}.f16.f16.{acc}"
    assert set(re.findall(r"mma\.sync\S+", ptx)) == {mma}
    assert ptx.count(mma) == 128
    fmts = {"fp8e4nv": "e4m3", "fp8e5": "e5m2"}
    assert sum(ptx.count(f"cvt.rn.f16x2.{fmts[x]}x2") for x in {a, b}) == 128
    assert ptx.count("ldmatrix") == 16
    usage = tools.ptxas_usage(ptx, "sm_90")
    assert usage["spill_stores"] == 0 and usage["spill_loads"] == 0, usage


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_fp16_accumulators_are_carried_as_f16x2_words(ptxas, arch):
    """The fp16 accumulators cross the K loop as the f16x2 words the mma reads and writes
    (codegen/lower/control_flow.py): no half moved in or out of a word at the loop edge
    (before: a PRMT per half in SASS, and on sm_90 ptxas stopped at 168 registers and
    spilled 48 bytes at 128x128x64 / 4 warps, 3 and 4 stages)."""
    for stages in (3, 4):
        ptx = compile_lowp("fp8e4nv", "fp8e4nv", "fp16", arch=arch, stages=stages).asm["ptx"]
        loop = ptx.split("$L__BB0_2:")[1].split("bra")[0]
        assert "mma.sync" in loop and not re.search(r"mov\.b32\s+\{%rs", loop)
        usage = tools.ptxas_usage(ptx, arch)
        assert usage["spill_stores"] == 0 and usage["local"] == 0, usage["log"]


def test_shared_increments_do_not_tie_the_pointer_layouts():
    """A and B advance by the same constant (BLOCK_K * 1 with both K strides 1), which CSE
    makes one value; remove-layout-conversions gives each use its own copy, so B's
    loop-carried pointers keep the layout of B's load instead of A's (before: converted
    through shared memory every iteration, 8 ld.shared + 2 barriers)."""
    k = compile_lowp("fp8e4nv", "fp8e4nv", "fp32", block=(128, 128, 128), arch="sm_90")
    loop = k.asm["ttgir"].split("scf.for")[1]
    assert "ttg.convert_layout" not in loop.split("scf.yield")[0]
    assert not re.search(r"ld\.shared\.(b64|u64)", k.asm["ptx"])


INTERP = [
    ("i8", "i8", "i32", "row", "row"),
    ("i8", "i8", "i32", "col", "col"),
    ("fp8e4nv", "fp8e4nv", "fp32", "row", "col"),
    ("fp8e5", "fp8e5", "fp32", "col", "row"),
    ("fp8e4nv", "fp8e5", "fp32", "row", "row"),
    ("fp8e5", "fp8e4nv", "fp16", "row", "col"),
    ("fp16", "fp16", "fp16", "col", "row"),
]


@pytest.mark.parametrize("a,b,out,a_order,b_order", INTERP)
def test_interpreter_matches_numpy(monkeypatch, a, b, out, a_order, b_order):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    rng = np.random.default_rng(7)
    M, N, K = 37, 45, 70  # odd sizes: every mask edge
    lim = 4.0 if out == "fp16" else np.inf
    x, y = random_operand(rng, (M, K), a, lim), random_operand(rng, (K, N), b, lim)
    c = run_lowp(x, y, a, b, out, a_order, b_order, block=(32, 32, 32))
    check(c, reference(x, y, a, b), out, K)


def test_frontend_rules():
    with pytest.raises(tritium.CompilationError, match="integer operands must be int8"):
        compile_lowp("u8", "u8", "i32")
    with pytest.raises(tritium.CompilationError, match="same element type"):
        compile_lowp("fp8e4nv", "fp16", "fp32")


def test_max_num_imprecise_acc_is_checked_against_k():
    sig = "*fp8e4nv:16,*fp8e4nv:16,*fp32:16,i32,i32,i32:16,i32:16,i32:1,i32:1,i32:16,i32:16,i32:1"
    consts = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=64, OUT=tl.float32, IMPRECISE=128)
    with pytest.raises(
        tritium.CompilationError, match=r"max_num_imprecise_acc \(128\) must be <= K"
    ):
        tritium.compile(lowp_matmul_kernel, signature=sig, constexprs=consts, stop="ttir")
    consts["IMPRECISE"] = 32  # accepted: a hint (mma.sync has no imprecise accumulation)
    assert (
        "maxNumImpreciseAcc = 32"
        in tritium.compile(lowp_matmul_kernel, signature=sig, constexprs=consts, stop="ttir").asm[
            "ttir"
        ]
    )


def test_mma_instruction_table():
    from xdsl.dialects.builtin import IntegerType

    from tritium.codegen.lower.dot_mma import mma_instruction
    from tritium.ir import types as t

    def name(a, b, c):
        got = mma_instruction(a, b, c)
        return None if got is None else got.text.split(" ")[0].removeprefix("mma.sync.aligned.")

    assert name(t.i8, t.i8, t.i32) == "m16n8k32.row.col.s32.s8.s8.s32"
    assert name(t.f8E4M3FN, t.f8E5M2, t.f32) == "m16n8k32.row.col.f32.e4m3.e5m2.f32"
    assert name(t.f8E5M2, t.f8E5M2, t.f16) == "m16n8k32.row.col.f16.e5m2.e5m2.f16"
    assert name(t.f16, t.f16, t.f16) == "m16n8k16.row.col.f16.f16.f16.f16"
    assert name(t.f16, t.f16, t.f32) == "m16n8k16.row.col.f32.f16.f16.f32"
    assert mma_instruction(t.f16, t.f16, t.f16).acc_regs == 2  # two f16x2 words
    for bad in [(t.bf16, t.bf16, t.f16), (t.i8, t.f8E4M3FN, t.f32), (t.i8, t.i8, IntegerType(16)),
                (IntegerType(16), IntegerType(16), t.i32), (t.f16, t.bf16, t.f32)]:  # fmt: skip
        assert mma_instruction(*bad) is None, bad
