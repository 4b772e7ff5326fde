"""Every tl.dot configuration compiles to PTX that ptxas accepts without local memory, with
the instructions expected: mma.sync + ldmatrix on the tensor cores (fp16, bf16, tf32),
fma.rn.f32 for ieee fp32; and the TTGIR has upstream's shape (mma layouts, swizzled tiles)."""

from __future__ import annotations

import pytest

import tritium
from tests.codegen.dot_kernels import matmul_kernel
from tritium.codegen import tools

ELEM = {"fp32": "*fp32:16", "fp16": "*fp16:16", "bf16": "*i16:16"}  # bf16 bits in int16


def signature(kind: str, a_order: str, b_order: str, out_f16: bool = False) -> str:
    strides = {"row": ("i32:16", "i32:1"), "col": ("i32:1", "i32:16")}
    am, ak = strides[a_order]
    bk, bn = strides[b_order]
    c = "*fp16:16" if out_f16 else "*fp32:16"
    return ",".join(
        [ELEM[kind], ELEM[kind], c, "i32:16", "i32:16", "i32:16", am, ak, bk, bn, "i32:16", "i32:1"]
    )


def compile_dot(kind, precision, a_order="row", b_order="row", block=(64, 64, 32), warps=4,
                out_f16=False, arch="sm_89"):  # fmt: skip
    consts = dict(
        BLOCK_M=block[0], BLOCK_N=block[1], BLOCK_K=block[2], PRECISION=precision,
        OUT_F16=out_f16, BF16=kind == "bf16",
    )  # fmt: skip
    sig = signature(kind, a_order, b_order, out_f16)
    return tritium.compile(
        matmul_kernel, signature=sig, constexprs=consts, num_warps=warps, arch=arch, stop="ptx"
    )


CONFIGS = [
    # kind, precision, A order, B order, block, warps, expected instructions
    (
        "fp16",
        "tf32",
        "row",
        "row",
        (64, 64, 32),
        4,
        [
            "m16n8k16.row.col.f32.f16.f16.f32",
            "ldmatrix.sync.aligned.m8n8.x4.shared",
            "ldmatrix.sync.aligned.m8n8.x4.trans",
        ],
    ),
    (
        "fp16",
        "tf32",
        "col",
        "col",
        (128, 64, 32),
        8,
        [
            "m16n8k16.row.col.f32.f16.f16.f32",
            "ldmatrix.sync.aligned.m8n8.x4.trans",
            "ldmatrix.sync.aligned.m8n8.x4.shared",
        ],
    ),
    (
        "bf16",
        "tf32",
        "row",
        "col",
        (64, 32, 64),
        4,
        ["m16n8k16.row.col.f32.bf16.bf16.f32", "ldmatrix.sync.aligned.m8n8.x4.shared"],
    ),
    (
        "fp32",
        "tf32",
        "row",
        "row",
        (64, 64, 32),
        4,
        ["m16n8k8.row.col.f32.tf32.tf32.f32", "cvt.rna.tf32.f32", "ldmatrix", "ld.shared.b32"],
    ),
    (
        "fp32",
        "tf32",
        "col",
        "col",
        (32, 64, 16),
        4,
        ["m16n8k8.row.col.f32.tf32.tf32.f32", "ld.shared"],
    ),
    ("fp32", "ieee", "row", "row", (64, 64, 32), 4, ["fma.rn.f32", "ld.shared.v4"]),
    ("fp32", "ieee", "col", "row", (32, 32, 16), 2, ["fma.rn.f32"]),
    ("fp16", "tf32", "row", "row", (16, 16, 16), 1, ["m16n8k16", "ldmatrix"]),  # smallest tile
]


@pytest.mark.parametrize("kind,precision,a_order,b_order,block,warps,expect", CONFIGS)
def test_dot_ptx(kind, precision, a_order, b_order, block, warps, expect, ptxas):
    k = compile_dot(kind, precision, a_order, b_order, block, warps)
    ptx = k.asm["ptx"]
    for s in expect:
        assert s in ptx, s
    if precision == "ieee":
        assert "mma.sync" not in ptx and "ldmatrix" not in ptx
    # software-pipelined (3 stages): cp.async prefetch, one bar.sync per K iteration
    assert "cp.async.commit_group" in ptx and "cp.async.wait_group 1" in ptx
    loop = ptx[ptx.index("cp.async.wait_group 1") : ptx.index("cp.async.wait_group 0")]
    assert loop.count("bar.sync") == 1
    if kind != "fp32":
        assert "cp.async.cg.shared.global" in ptx  # 16-byte copies
    usage = tools.ptxas_usage(ptx, "sm_89")
    assert usage["local"] == 0 and usage["stack_frame"] == 0, usage["log"]
    assert usage["spill_stores"] == 0 and usage["spill_loads"] == 0, usage["log"]
    assert k.metadata.shared > 0


def test_fp16_epilogue_and_ttgir_shape():
    k = compile_dot("fp16", "tf32", out_f16=True, block=(128, 128, 32), warps=8)
    ttgir = k.asm["ttgir"]
    assert "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 2]" in ttgir
    assert "#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>" in ttgir
    assert "#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>" in ttgir
    # the accumulator is truncated to fp16 in #mma, then converted once for the store
    assert "arith.truncf" in ttgir and ttgir.count("ttg.convert_layout") == 1
    assert "cvt.rn.f16x2.f32" in k.asm["ptx"] or "cvt.rn.f16.f32" in k.asm["ptx"]


def test_sm80_and_sm90_assemble(ptxas):
    for arch in ("sm_80", "sm_90"):
        ptx = compile_dot("fp16", "tf32", arch=arch).asm["ptx"]
        assert f".target {arch}" in ptx and "mma.sync" in ptx
        assert tools.ptxas(ptx, arch)[:4] == b"\x7fELF"


def test_the_matmul_examples_compile(ptxas):
    import examples.matmul as fp32
    import examples.matmul_fp16_grouped as fp16

    sig32 = "*fp32:16,*fp32:16,*fp32:16,i32:16,i32:16,i32:16"
    k = tritium.compile(fp32.matmul_tiled_kernel, signature=sig32, stop="ptx",
                        constexprs={"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32})  # fmt: skip
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in k.asm["ptx"]
    sig16 = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1"
    consts = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}
    k = tritium.compile(fp16.matmul_fp16_grouped_kernel, signature=sig16, constexprs=consts,
                        num_warps=8, stop="ptx")  # fmt: skip
    usage = tools.ptxas_usage(k.asm["ptx"], "sm_89")
    assert usage["local"] == 0 and usage["spill_stores"] == 0, usage["log"]
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in k.asm["ptx"]


def test_the_autotuned_example_configs_compile_for_sm_90(ptxas):
    """Each config of examples/matmul_autotune.py (the largest, 128x256x64 with 8 warps and
    3 stages, needs sm_90's shared memory) assembles without local memory."""
    import examples.matmul_autotune as ex

    sig = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16"
    for cfg in ex.CONFIGS:
        k = tritium.compile(ex.matmul_kernel, signature=sig, constexprs=cfg.kwargs,
                            num_warps=cfg.num_warps, num_stages=cfg.num_stages, arch="sm_90",
                            stop="ptx")  # fmt: skip
        ptx = k.asm["ptx"]
        assert ptx.count("cp.async.commit_group") == cfg.num_stages, cfg
        usage = tools.ptxas_usage(ptx, "sm_90")
        assert usage["local"] == 0 and usage["spill_stores"] == 0, (cfg, usage["log"])
        assert k.metadata.shared <= 232448


def test_upstreams_pipelined_ttgir_lowers_with_its_barriers(ptxas):
    """Upstream's own TTGIR for the seed matmul (2-stage cp.async pipeline, mma, ldmatrix)
    goes through this backend: the same async copies and groups as upstream's PTX, and the
    barrier upstream's membar puts between the reads of a stage and the copies that
    overwrite it in the same trip."""
    import collections
    import pathlib
    import re

    from tritium.codegen import llir_to_ptx, lower_to_llvm
    from tritium.ir.parser import parse_module
    from tritium.passes.pipeline import run_passes

    path = pathlib.Path(__file__).parents[1] / "data" / "upstream" / "matmul_tiled_kernel.ttgir"
    module = parse_module(path.read_text())
    run_passes(module, ["allocate-shared-memory", "membar"], ttgir=True)
    llir, meta = lower_to_llvm(module)
    ptx = llir_to_ptx(llir, "sm_89")
    ops = re.findall(r"^\s+(?:@%p\d+ )?([a-z][\w.:]*)", ptx, re.M)
    count = collections.Counter(ops)
    assert count["cp.async.ca.shared.global"] == 96 and count["cp.async.commit_group"] == 6
    assert count["ldmatrix.sync.aligned.m8n8.x4.shared.b16"] == 8
    assert count["mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"] == 32
    loop = [o for o in ops if o in ("bar.sync", "cp.async.wait_group", "ldmatrix.sync.aligned."
                                    "m8n8.x4.shared.b16", "cp.async.ca.shared.global")]  # fmt: skip
    first_wait = loop.index("cp.async.wait_group")
    body = loop[first_wait : first_wait + 28]
    assert body[:3] == [
        "cp.async.wait_group",
        "bar.sync",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
    ]
    assert body[10:12] == ["bar.sync", "cp.async.ca.shared.global"]  # WAR before the copies
    assert meta["shared"] >= 2 * 64 * 32 * 4 + 2 * 32 * 64 * 4
    usage = tools.ptxas_usage(ptx, "sm_89")
    assert usage["local"] == 0 and usage["spill_stores"] == 0, usage["log"]
