"""Flash attention (examples/flash_attention.py): forward and backward against float64
numpy, in the interpreter here and on the GPU there; the pipelined TTGIR run through the
shared-memory hazard model; and the shape of the forward's PTX (what attention needs of the
codegen: P in registers, K^T and V by cp.async, one barrier per iteration, no spills).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import tritium
from examples import flash_attention as fa
from tests.passes.ttgir_interpreter import shared_memory_model
from tritium.codegen import tools
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir
from tritium.runtime.interpreter import interpret

FWD_SIGNATURE = ",".join(["*fp16:16"] * 4 + ["*fp32:16", "fp32", "i32"] + ["i32:16"] * 8)


def compile_forward(d=64, block_m=128, block_n=64, warps=8, causal=False, stop="ptx", arch="sm_89"):
    consts = dict(HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal, BF16=False)
    return tritium.compile(fa.attn_fwd_kernel, FWD_SIGNATURE, consts, num_warps=warps,
                           num_stages=3, stop=stop, arch=arch)  # fmt: skip


@pytest.mark.parametrize("seq", [1, 45, 64])
@pytest.mark.parametrize("causal", [False, True])
def test_in_the_interpreter(seq, causal, monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    rng = np.random.default_rng(seq)
    fa.check_attention(rng, 2, seq, 32, causal, bf16=seq == 45, block_m=32, block_n=16)


def test_the_check_catches_a_wrong_result(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    rng = np.random.default_rng(0)
    wrong = fa.reference
    monkeypatch.setattr(fa, "reference", lambda q, k, v, do, c, s: wrong(q, k, v, do, c, s * 1.1))
    with pytest.raises(AssertionError, match="relative error"):
        fa.check_attention(rng, 1, 40, 32, False, False, block_m=32, block_n=16)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("landing", ["issue", "wait"])
def test_pipelined_forward_in_the_hazard_model(causal, landing):
    """The TTGIR the GPU runs (K^T and V rings of cp.async, P in registers), interpreted
    with copies landing as early or as late as they may: no race, the right output."""
    d, bm, bn = 32, 32, 16
    k = compile_forward(d, bm, bn, 4, causal, stop="ttgir")
    module = parse_module(k.asm["ttgir"])
    rng = np.random.default_rng(int(causal))
    heads, seq = 2, 53
    q, kk, v = (rng.standard_normal((heads, seq, d)).astype(np.float16) for _ in range(3))
    o = np.full_like(q, np.nan)
    lse = np.full((heads, seq), np.nan, np.float32)
    with shared_memory_model(landing) as model:
        interpret(module, (-(-seq // bm), heads), [q, kk, v, o, lse, 0.2, seq] + [seq * d, d] * 4)
    want = fa.reference(*(x.astype(np.float64) for x in (q, kk, v, q)), causal, 0.2)[0]
    assert fa.relative_error(o, want) < 2e-3
    assert model.copies > 0 and model.waits > 0


BWD_SIGNATURES = {
    "dkdv": ",".join(["*fp16:16"] * 6 + ["*fp32:16"] * 2 + ["fp32", "i32", "i32:16", "i32:16"]),
    "dq": ",".join(["*fp16:16"] * 5 + ["*fp32:16"] * 2 + ["fp32", "i32", "i32:16", "i32:16"]),
}


def compile_backward(which, d=64, block=64, warps=4, causal=False, stop="ptx", arch="sm_89",
                     block_n=None):  # fmt: skip
    kernel = fa.attn_bwd_dkdv_kernel if which == "dkdv" else fa.attn_bwd_dq_kernel
    consts = dict(HEAD_DIM=d, BLOCK_M=block, BLOCK_N=block_n or block, CAUSAL=causal, BF16=False)
    return tritium.compile(kernel, BWD_SIGNATURES[which], consts, num_warps=warps,
                           num_stages=3, stop=stop, arch=arch)  # fmt: skip


@pytest.mark.parametrize("which", ["dkdv", "dq"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("landing", ["issue", "wait"])
def test_pipelined_backward_in_the_hazard_model(which, causal, landing):
    """The backward's TTGIR as the GPU runs it: each loaded tile (Q and dO for dK/dV, K and
    V for dQ) copied once into a cp.async ring and read by both of its dots, directly and
    through `ttg.memdesc_trans`; interpreted with copies landing early or late, no race and
    the gradients of float64 numpy."""
    d, block = 32, 32
    module = parse_module(compile_backward(which, d, block, 4, causal, stop="ttgir").asm["ttgir"])
    loop = re.search(r"scf\.for .*?scf\.yield", print_ir(module), re.S).group(0)
    assert loop.count("ttg.async_copy_global_to_local") == 2
    # dK/dV: Q and dO each read both ways; dQ: K both ways, V only transposed (its copy
    # writes the transposed tile, no view)
    views = 2 if which == "dkdv" else 1
    assert loop.count("ttg.memdesc_trans") == views and "ttg.local_alloc" not in loop
    model = interpret_backward(module, which, d, block, causal, landing)
    assert model.copies > 0 and model.waits > 0


def interpret_backward(module, which, d, block, causal, landing):
    """Run a backward kernel's TTGIR (`block`: the rows of its program, BLOCK_N for dK/dV)
    in the shared-memory hazard model on 2 heads of 77 rows and check its gradients
    against float64 numpy; returns the model (its counts)."""
    rng = np.random.default_rng(7 + causal)
    heads, seq, scale = 2, 77, 0.3
    q, k, v, do = (rng.standard_normal((heads, seq, d)).astype(np.float16) for _ in range(4))
    o, dq_want, dk_want, dv_want = fa.reference(*(x.astype(np.float64) for x in (q, k, v, do)),
                                                causal, scale)  # fmt: skip
    s = np.einsum("hmd,hnd->hmn", q.astype(np.float64), k.astype(np.float64)) * scale
    if causal:
        s = np.where(np.tril(np.ones((seq, seq), bool)), s, -np.inf)
    top = s.max(-1, keepdims=True)
    lse = ((top[..., 0] + np.log(np.exp(s - top).sum(-1))) / np.log(2)).astype(np.float32)
    delta = (o * do.astype(np.float64)).sum(-1).astype(np.float32)
    grid = (-(-seq // block), heads)
    outs = [np.full_like(q, np.nan) for _ in range(2 if which == "dkdv" else 1)]
    with shared_memory_model(landing) as model:
        interpret(module, grid, [q, k, v, do, *outs, lse, delta, scale, seq, seq * d, d])
    wants = (dk_want, dv_want) if which == "dkdv" else (dq_want,)
    for got, want in zip(outs, wants):
        assert fa.relative_error(got, want) < 2e-3
    return model


@pytest.mark.parametrize("which", ["dkdv", "dq"])
def test_backward_stages_fit_beside_the_resident_tiles(which):
    """At D = 128 the loop-invariant operands (dK/dV's K and V, dQ's Q and dO: 16 KB each)
    stay in shared memory through the loop beside the rings (32 KB a stage): 3 stages on
    sm_90 (227 KB); on sm_89 (99 KB) dQ gets 2, and dK/dV, whose lse and delta conversions
    keep the dK store's 16.5 KB scratch apart from the ring, none (its loads stay loads,
    as before the rings). Every kernel fits the target's shared memory."""
    want = {"sm_90": "3", "sm_89": "2" if which == "dq" else None}
    for arch, stages in want.items():
        ttgir = compile_backward(which, 128, 64, 4, False, stop="ttgir", arch=arch).asm["ttgir"]
        rings = re.findall(r"ttg\.local_alloc \{[^}]*\} : \(\) -> !ttg\.memdesc<(\d)x(?:64x128|128x64)xf16", ttgir)
        assert rings == ([stages] * 2 if stages else []), arch
        limit = 232448 if arch == "sm_90" else 101376
        assert int(re.search(r"ttg\.shared = (\d+)", ttgir).group(1)) <= limit


def _loops(ptx: str) -> list[str]:
    """The basic blocks of the kernel that issue mma.sync (the two loops' bodies)."""
    parts = re.split(r"\n\$L__BB\d+_\d+:", ptx)
    return [p for p in parts if "mma.sync" in p]


@pytest.mark.parametrize("causal", [False, True])
def test_forward_ptx_is_what_attention_needs(causal, ptxas):
    k = compile_forward(causal=causal)
    ptx, ttgir = k.asm["ptx"], k.asm["ttgir"]
    # one #mma for both dots (warps along M), P converted in registers
    assert len(set(re.findall(r"#ttg\.nvidia_mma<[^>]*>", ttgir))) == 1
    assert "warpsPerCTA = [8, 1]" in ttgir
    shortcut = re.findall(r"ttg\.convert_layout %\S+ : tensor<128x64xf16, #mma> -> ", ttgir)
    assert len(shortcut) == 2  # the unmasked and the masked loop
    loops = _loops(ptx)
    assert len(loops) == 2
    for body in loops:
        ops = re.findall(r"^\s*(?:@%p\d+ )?([a-z][\w.]*)", body, re.M)
        count = lambda prefix, ops=ops: sum(op.startswith(prefix) for op in ops)  # noqa: E731
        assert count("mma.sync") == 64  # (16 x 64 per warp: 32 for Q K^T, 32 for P V)
        assert count("bar.sync") == 1  # the wait's: no smem round trip for P or K
        assert count("st.shared") == 0 and count("ld.shared") == 0
        assert count("cp.async.cg.shared.global") == 4  # 16-byte copies of K^T and V
        # Q (re-read from its tile: 4) and K^T (16), non-transposed; V transposed
        assert count("ldmatrix.sync.aligned.m8n8.x4.shared") == 20
        assert count("ldmatrix.sync.aligned.m8n8.x4.trans.shared") == 16  # V
        assert count("ex2.approx") >= 33
    usage = tools.ptxas_usage(ptx, "sm_90")
    assert usage["spill_stores"] == 0 and usage["local"] == 0, usage["log"]


@pytest.mark.parametrize("d, block_m, warps", [(64, 64, 4), (128, 128, 8), (128, 64, 4)])
def test_standard_configurations_do_not_spill(d, block_m, warps, ptxas):
    k = compile_forward(d, block_m, 64, warps, arch="sm_90")
    usage = tools.ptxas_usage(k.asm["ptx"], "sm_90")
    assert usage["spill_stores"] == 0 and usage["local"] == 0, usage["log"]


@pytest.mark.parametrize("causal", [False, True])
def test_forward_fits_three_programs_per_sm(causal, ptxas):
    """The best configuration on the H100 (64x64 tiles, 4 warps, D = 64): V is read with
    ldmatrix before Q K^T (local_memory._read_early), and ptxas fits the loop in at most
    168 registers, three programs per SM (182 with V read inside P V: two)."""
    k = compile_forward(64, 64, 64, 4, causal, arch="sm_90")
    usage = tools.ptxas_usage(k.asm["ptx"], "sm_90")
    assert usage["registers"] <= 168 and usage["spill_stores"] == 0, usage["log"]
    loops = _loops(k.asm["ptx"])
    assert len(loops) == 2
    for body in loops:
        before_mma = body[: body.index("mma.sync")]
        assert before_mma.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared") == 16  # all of V


def _sass_loop(sass: str) -> str:
    """The SASS of the first loop that issues HMMA (the unmasked loop): from a label to the
    backward branch to it."""
    lines = sass.splitlines()
    labels = {m.group(1): i for i, t in enumerate(lines) if (m := re.match(r"\s*(\.L_x_\d+):", t))}
    for i, t in enumerate(lines):
        m = re.search(r"BRA `\((\.L_x_\d+)\)", t)
        if m and labels.get(m.group(1), i) < i:
            body = "\n".join(lines[labels[m.group(1)] : i + 1])
            if "HMMA" in body:
                return body
    raise AssertionError("no loop with HMMA in the SASS")


@pytest.mark.parametrize("causal", [False, True])
def test_refills_add_a_64_bit_offset(causal, ptxas):
    """lower/refill_offset.py: at D = 64 the unmasked loop's K / V refill addresses add one
    sign-extended 64-bit offset (an inline cvt, no mul.wide), so ptxas moves no uniform
    register into a vector one per address; the masked loop and D = 128 keep mul.wide."""
    k = compile_forward(64, 64, 64, 4, causal, stop="sass", arch="sm_90")
    unmasked, masked = _loops(k.asm["ptx"])
    assert unmasked.count("cvt.s64.s32 %") == 2  # K's offset and V's
    assert "mul.wide.s32" not in unmasked
    assert "cvt.s64.s32 %" not in masked and "mul.wide.s32" in masked
    if "sass" in k.asm:  # nvdisasm or cuobjdump installed
        loop = _sass_loop(k.asm["sass"])
        assert loop.count("LDGSTS") == 8
        # uniform -> vector moves: the ring slot's only (9 before: one per refill address)
        assert len(re.findall(r"(?:MOV|IMAD\.U32) R\d+, (?:RZ, RZ, )?UR\d+ ;", loop)) <= 1
    for body in _loops(compile_forward(128, 64, 64, 4, causal, arch="sm_90").asm["ptx"]):
        assert "cvt.s64.s32 %" not in body  # D = 128: its offsets are vector registers


@pytest.mark.parametrize("which", ["dkdv", "dq"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_backward_loops_read_each_tile_once(which, d, causal, ptxas):
    """The benchmark's backward configuration (64x64 tiles, 4 warps): the loaded operands
    come by cp.async (16-byte copies: D / 64 * 4 per tensor) and are read by ldmatrix from
    their ring, both ways, with no shared-memory round trip; only dK/dV's lse and delta
    (1D, not dot operands) still go through shared memory (one st.shared, one barrier
    each). The far operands stay read step by step (_read_early's budget). No spills,
    but at D = 128 in dK/dV (104-108 bytes with ptxas 13; 404 before; upstream 3.6 spills
    too: docs/performance.md)."""
    k = compile_backward(which, d, 64, 4, causal, arch="sm_90")
    loops = _loops(k.asm["ptx"])
    assert len(loops) == 1
    ops = re.findall(r"^\s*(?:@%p\d+ )?([a-z][\w.]*)", loops[0], re.M)
    count = lambda prefix: sum(op.startswith(prefix) for op in ops)  # noqa: E731
    per_dot = d // 64 * 32  # mma.sync per 64x64xD dot and warp, D / 64 * 32
    assert count("mma.sync") == (4 if which == "dkdv" else 3) * per_dot
    assert count("cp.async.cg.shared.global") == 2 * d // 64 * 4
    assert count("ldmatrix.sync.aligned.m8n8.x4") == (72 if which == "dkdv" else 56) * d // 64
    assert count("st.shared") == (2 if which == "dkdv" else 0)
    assert count("bar.sync") == (3 if which == "dkdv" else 1)
    usage = tools.ptxas_usage(k.asm["ptx"], "sm_90")
    if which == "dkdv" and d == 128:
        assert usage["spill_stores"] <= 120, usage["log"]  # see the docstring
    else:
        assert usage["spill_stores"] == 0 and usage["local"] == 0, usage["log"]


@pytest.mark.parametrize("arch", ["sm_90", "sm_89"])
@pytest.mark.parametrize("block_n,warps", [(64, 4), (128, 8)])
@pytest.mark.parametrize("causal", [False, True])
def test_benchmarked_backward_configurations_do_not_spill(arch, block_n, warps, causal, ptxas):
    """benchmarks/bench_attention.py's backward configurations (BWD_CONFIGS: 64x64 / 4 warps
    and 64x128 / 8 warps, 3 stages, D = 64, fp16) as its launches specialise them
    (seq_len 4096: divisible by 16), on the mma.sync path: no spills in either kernel.
    The causal dK/dV at 64x64 / 4 warps spilled 4 bytes at 255 registers until its lse
    and delta conversions moved down to their uses (passes/reorder_instructions.py).
    tests/codegen/test_wgmma_attention.py checks the same on wgmma (sm_90a)."""
    for which in ("dkdv", "dq"):
        ptx = compile_benchmarked_backward(which, 64, block_n, warps, causal, False, arch)
        usage = tools.ptxas_usage(ptx, arch)
        assert usage["spill_stores"] == 0 and usage["local"] == 0, (which, usage["log"])


def compile_benchmarked_backward(which, d, block_n, warps, causal, bf16, arch):
    """The PTX of a backward kernel as bench_attention.py launches it (BLOCK_M = 64,
    seq_len divisible by 16, 3 stages)."""
    kernel = fa.attn_bwd_dkdv_kernel if which == "dkdv" else fa.attn_bwd_dq_kernel
    consts = dict(HEAD_DIM=d, BLOCK_M=64, BLOCK_N=block_n, CAUSAL=causal, BF16=bf16)
    sig = BWD_SIGNATURES[which].replace("fp32,i32,", "fp32,i32:16,")
    k = tritium.compile(kernel, sig, consts, num_warps=warps, num_stages=3, stop="ptx",
                        arch=arch)  # fmt: skip
    return k.asm["ptx"]


def test_backward_converts_lse_and_delta_where_they_are_used():
    """dK/dV's loop loads lse and delta (one register per thread) at its top and converts
    them to the accumulator's column slice (16 registers each) right before their first
    uses: lse after the first dot, delta after the third, not through all four dots."""
    ttgir = compile_backward("dkdv", 64, 64, 4, True, stop="ttgir", arch="sm_90").asm["ttgir"]
    loop = re.search(r"scf\.for .*?scf\.yield", ttgir, re.S).group(0)
    dots_before = []
    for i, line in enumerate(loop.splitlines()):
        if "ttg.convert_layout" in line and "-> tensor<64xf32, #ttg.slice<{dim = 0" in line:
            dots_before.append(sum(" = tt.dot " in x for x in loop.splitlines()[:i]))
    assert dots_before == [1, 3], dots_before


@pytest.mark.gpu
@pytest.mark.parametrize("seq", [1, 67, 250, 513])
@pytest.mark.parametrize("bf16", [False, True], ids=["fp16", "bf16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_on_gpu(seq, bf16, causal):
    rng = np.random.default_rng(seq)
    fa.check_attention(rng, 3, seq, 64, causal, bf16, block_m=128, block_n=64, num_warps=8)


@pytest.mark.gpu
@pytest.mark.parametrize("seq", [77, 300])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_on_gpu_head_dim_128(seq, causal):
    rng = np.random.default_rng(seq)
    fa.check_attention(rng, 2, seq, 128, causal, seq == 77, block_m=64, block_n=64, num_warps=4)


@pytest.mark.gpu
@pytest.mark.parametrize("seq", [45, 130, 4096])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_on_gpu_64x64_tiles(seq, causal):
    """The configuration whose V is read early (_read_early): odd and block-multiple
    lengths, fp16 and bf16, forward and backward against float64 numpy."""
    rng = np.random.default_rng(seq + causal)
    fa.check_attention(rng, 2, seq, 64, causal, seq == 45, block_m=64, block_n=64, num_warps=4)


@pytest.mark.parametrize("arch", ["sm_90", "sm_90a"])
def test_dq_stages_leave_room_for_the_ds_tile(arch):
    """dQ at D = 128, 64x128 on 8 warps: its #mma has the warps along N, so dS reaches the
    dQ dot through a shared tile (optimize-dot-operands) beside the K / V ring. The ring's
    stages count it (software_pipeliner `_loop_a_tile_bytes`): two stages of 64 KiB, not
    three, so the kernel fits an H100 / H200's 227 KiB (three asked 240 KiB: OutOfResources
    at launch)."""
    text = compile_backward("dq", 128, 64, 8, stop="ttgir", arch=arch, block_n=128).asm["ttgir"]
    shared = int(re.search(r"ttg.shared = (\d+)", text).group(1))
    assert shared <= 232448, shared
    assert "!ttg.memdesc<2x128x128xf16" in text and "!ttg.memdesc<3x128x128xf16" not in text
    assert re.search(r"ttg.local_alloc %\w+ .*: \(tensor<64x128xf16, #mma", text)  # (dS's tile)
