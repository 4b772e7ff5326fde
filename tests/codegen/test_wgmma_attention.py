"""sm_90a: flash attention (examples/flash_attention.py) on wgmma. The forward's two dots
are `ttng.warp_group_dot`s sharing the warps (all along M): Q K^T reads the Q tile and the
K ring, P @ V takes P in registers (the first accumulator cast to 16 bits is wgmma's
register-A fragment: a convert that moves no data) and V from its ring; the Q tile's
fence.proxy.async stands before each loop, not in it. The PTX assembles without local
memory or wgmma waits ptxas would inject; the TTGIR runs in the shared-memory hazard
model. The backward: dQ's three dots go to wgmma, dS in registers; dK/dV's four too
(it works on the transposed scores: S^T = K Q^T and dP^T = V dO^T read the K / V tiles
and the Q / dO ring stages through transposed views, dV += P^T dO and dK += dS^T Q take
P^T and dS^T in registers, the lse and delta loads converted into the accumulator's
layout), at the benchmarks' configurations without spills, and its TTGIR runs in the
hazard model. A block whose rows the warps cannot cover as wgmma wants (BLOCK_M = 64 on
8 warps) stays on mma.sync. On a Hopper GPU (`-m gpu`): forward and backward against
float64 numpy, the configurations the benchmarks run, with the compiled kernels checked
to be the register-A wgmma path."""

from __future__ import annotations

import re

import numpy as np
import pytest

from examples import flash_attention as fa
from tests.passes.ttgir_interpreter import shared_memory_model
from tests.test_flash_attention import (
    compile_backward,
    compile_benchmarked_backward,
    compile_forward,
    interpret_backward,
)
from tritium.codegen import tools
from tritium.ir.parser import parse_module
from tritium.runtime.interpreter import interpret

REGISTER_A = r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16\.f32\.f16\.f16 \{[^}]*\}, \{"


def loops(ttgir: str) -> list[str]:
    """The bodies of the forward's two K/V loops."""
    return re.findall(r"scf\.for .*?scf\.yield", ttgir, re.S)


@pytest.mark.parametrize("d", [64, 128])
def test_forward_ttgir_has_both_dots_on_wgmma_with_p_in_registers(d):
    ttgir = compile_forward(d, 128, 64, 8, arch="sm_90a", stop="ttgir").asm["ttgir"]
    mmas = re.findall(r"^#mma\d* = #ttg\.nvidia_mma<\{(.*)\}>$", ttgir, re.M)
    # each dot its own instrShape (as upstream): N = BLOCK_N for Q K^T, D for P @ V
    want = {f"versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], instrShape = [16, {n}, 16]"
            for n in {64, d}}  # fmt: skip
    assert set(mmas) == want
    assert "tt.dot " not in ttgir
    for body in loops(ttgir):
        qk, pv = re.findall(r"ttng\.warp_group_dot %\S+, %\S+, %\S+ \{[^}]*\} : (.*?) \* ", body)
        assert qk.startswith(f"!ttg.memdesc<128x{d}xf16")  # Q's tile
        assert pv.startswith("tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma")
        p = re.search(r"ttg\.convert_layout %\S+ (\{[^}]*\} )?: tensor<128x64xf16, #mma> ", body)
        assert p and not p.group(1)  # no scratch: a register permutation
        assert "local_alloc" not in body and "ttng.fence_async_shared" not in body
        # P @ V stays in flight: the next trip's wait for Q K^T retires it (the loop's
        # accumulator goes through that wait); the copies refill the ring stages trip
        # k - 1 read once this trip's P @ V is issued (they overlap it, as upstream's),
        # after a barrier (every warpgroup has passed the wait that retired trip k - 1's)
        (wait,) = re.findall(r"ttng\.warp_group_dot_wait (.*) \{pendings = 0 : i32\}", body)
        assert wait.count("%") == 4  # S, the Q and K tiles, the accumulator
        order = re.findall(r"warp_group_dot_wait|warp_group_dot |gpu\.barrier|async_copy_global_to_local", body)
        assert order[-6:] == ["warp_group_dot ", "warp_group_dot_wait", "warp_group_dot ",
                              "gpu.barrier"] + ["async_copy_global_to_local"] * 2  # fmt: skip
    # after each loop, the last P @ V is waited for; the Q tile is stored by the threads
    # once: one fence before each loop
    assert len(re.findall(r"scf\.yield .*\n\s+\}.*\n\s+%\S+ = ttng\.warp_group_dot_wait", ttgir)) == 2
    assert len(re.findall(r"ttng\.fence_async_shared.*\n\s+%.* = scf\.for", ttgir)) == 2


def test_escape_hatch_waits_for_each_dot(monkeypatch):
    monkeypatch.setenv("TRITIUM_WGMMA_SYNC", "1")
    ttgir = compile_forward(64, 128, 64, 8, arch="sm_90a", stop="ttgir").asm["ttgir"]
    for body in loops(ttgir):
        assert body.count("ttng.warp_group_dot_wait") == body.count("ttng.warp_group_dot ") == 2


FORWARD_CONFIGS = [(64, 128, 64, 8), (64, 64, 64, 4), (128, 128, 64, 8), (128, 64, 64, 4)]


@pytest.mark.parametrize("d,block_m,block_n,warps", FORWARD_CONFIGS)
@pytest.mark.parametrize("causal", [False, True])
def test_forward_ptx_assembles_without_local_memory(d, block_m, block_n, warps, causal, ptxas):
    ptx = compile_forward(d, block_m, block_n, warps, causal, arch="sm_90a").asm["ptx"]
    assert "mma.sync" not in ptx and "ldmatrix" not in ptx
    # P @ V: one register-A wgmma per 16 keys of a block, in each of the two loops
    register_a = re.findall(REGISTER_A, ptx)
    assert register_a == [str(d)] * (2 * block_n // 16)
    usage = tools.ptxas_usage(ptx, "sm_90a")
    assert usage["local"] == 0 and usage["stack_frame"] == 0, usage["log"]
    assert usage["spill_stores"] == 0 and usage["spill_loads"] == 0, usage["log"]
    assert "(C75" not in usage["log"], usage["log"]  # no warpgroup.arrive / wait injected


def test_descriptors_come_from_the_warp_id_of_lane_0():
    """The warpgroup origin the descriptors are built from is the warp id as lane 0 holds
    it (shfl.sync.idx ..., 0), as upstream's: ptxas then knows it is one value per warp."""
    ptx = compile_forward(128, 128, 64, 8, arch="sm_90a").asm["ptx"]
    assert re.search(r"shfl\.sync\.idx\.b32\s+%r\d+, %r\d+, 0, 31, -1;", ptx)


def test_forward_loop_moves_no_register_into_a_uniform_one(ptxas):
    """In SASS (where a disassembler is installed): the forward's first loop builds its 12
    wgmmas' descriptors in uniform registers, with no R2UR move before each (from
    per-thread registers, 16 of them stood between the HGMMAs of a trip)."""
    cubin = tools.ptxas(compile_forward(128, 128, 64, 8, arch="sm_90a").asm["ptx"], "sm_90a")
    sass = tools.disassemble(cubin)
    if sass is None:
        pytest.skip("no nvdisasm / cuobjdump")
    first = sass.index("HGMMA")
    back = re.search(r"BRA `\((\.L_x_\d+)\)", sass[first:])  # the loop's backward branch
    loop = sass[sass.index(back[1] + ":") : first + back.end()]
    assert loop.count("HGMMA") == 12 and "R2UR" not in loop


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("landing", ["issue", "wait"])
def test_forward_on_wgmma_in_the_hazard_model(causal, landing):
    """The sm_90a TTGIR (the Q tile, K and V rings, P in registers) interpreted with the
    copies landing as early or as late as they may: no race, the right output."""
    d, bm, bn = 32, 64, 16
    ttgir = compile_forward(d, bm, bn, 4, causal, stop="ttgir", arch="sm_90a").asm["ttgir"]
    assert ttgir.count("ttng.warp_group_dot ") == 4
    module = parse_module(ttgir)
    rng = np.random.default_rng(int(causal))
    heads, seq = 2, 83
    q, k, v = (rng.standard_normal((heads, seq, d)).astype(np.float16) for _ in range(3))
    o = np.full_like(q, np.nan)
    lse = np.full((heads, seq), np.nan, np.float32)
    with shared_memory_model(landing) as model:
        interpret(module, (-(-seq // bm), heads), [q, k, v, o, lse, 0.2, seq] + [seq * d, d] * 4)
    want = fa.reference(*(x.astype(np.float64) for x in (q, k, v, q)), causal, 0.2)[0]
    assert fa.relative_error(o, want) < 2e-3
    assert model.copies > 0 and model.dots > model.dot_waits > 0  # P @ V retired later


@pytest.mark.parametrize("which", ["dkdv", "dq"])
def test_backward_compiles_for_sm_90a(which, ptxas):
    ptx = compile_backward(which, 64, 64, 4, arch="sm_90a").asm["ptx"]
    # dQ: S and dP from the tiles, dQ += dS K with dS in registers; dK/dV: S^T and dP^T
    # from the tiles, dV += P^T dO and dK += dS^T Q with P^T and dS^T in registers
    assert "mma.sync" not in ptx
    assert len(re.findall(REGISTER_A, ptx)) == (8 if which == "dkdv" else 4)
    usage = tools.ptxas_usage(ptx, "sm_90a")
    assert usage["local"] == 0 and usage["spill_stores"] == 0, usage["log"]


def test_dkdv_ttgir_reads_q_and_do_stages_both_ways():
    """dK/dV on wgmma: Q and dO each copied once per trip into a ring of
    `#ttg.nvmma_shared` stages, read as B directly (dV += P^T dO, dK += dS^T Q) and
    through `ttg.memdesc_trans` (S^T = K Q^T, dP^T = V dO^T: `transposed` flipped, K-major
    B); K and V tiles stored once before the loop; P^T and dS^T the register A operands."""
    ttgir = compile_backward("dkdv", 64, 64, 4, True, stop="ttgir", arch="sm_90a").asm["ttgir"]
    body = loops(ttgir)[0]
    assert "tt.dot " not in ttgir and "ttg.local_alloc" not in body
    assert body.count("ttg.async_copy_global_to_local") == 2
    views = re.findall(r"ttg\.memdesc_trans .*: (!ttg\.memdesc<.*>) -> (!ttg\.memdesc<.*>)", body)
    assert len(views) == 2
    shared = dict(re.findall(r"^(#shared\d*) = (.*)$", ttgir, re.M))
    for src, dst in views:
        src_enc, dst_enc = (shared[re.search(r"#shared\d*", t)[0]] for t in (src, dst))
        assert "transposed = false" in src_enc and "transposed = true" in dst_enc
    dots = re.findall(r"ttng\.warp_group_dot %\S+, %\S+, %\S+ \{[^}]*\} : (.*?) \* ", body)
    assert [d.split("<")[0] for d in dots] == ["!ttg.memdesc", "tensor", "!ttg.memdesc", "tensor"]


@pytest.mark.parametrize("d", [64, 128])
def test_dkdv_keeps_its_accumulating_dots_in_flight(d):
    """As upstream's: dK += dS^T Q stays in flight into the next trip (its accumulator
    goes through the wait for S^T, which retires it), the Q / dO refills follow it after
    a barrier; dV += P^T dO stays in flight until dP^T's wait at D = 64 (32 accumulator
    registers per thread), and is waited for right after it at D = 128 (64: it spilled)."""
    ttgir = compile_backward("dkdv", d, 64, 4, False, stop="ttgir", arch="sm_90a").asm["ttgir"]
    (body,) = loops(ttgir)
    order = re.findall(r"warp_group_dot_wait|warp_group_dot |gpu\.barrier|async_copy_global_to_local", body)
    dv_wait = ["warp_group_dot_wait"] if d == 128 else []
    assert order == ["gpu.barrier", "warp_group_dot ", "warp_group_dot_wait", "warp_group_dot ",
                     *dv_wait, "warp_group_dot ", "warp_group_dot_wait", "warp_group_dot ",
                     "gpu.barrier"] + ["async_copy_global_to_local"] * 2  # fmt: skip
    first = re.search(r"ttng\.warp_group_dot_wait (.*) \{pendings = 0 : i32\}", body)[1]
    assert first.count("%") == 4  # S^T, the K tile, the Q view, dK's accumulator
    # after the loop, dK's last group is waited for
    assert re.search(r"scf\.yield .*\n\s+\}.*\n\s+%\S+ = ttng\.warp_group_dot_wait %\S+ \{", ttgir)


@pytest.mark.parametrize("block_n,warps", [(64, 4), (128, 8)])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_benchmarked_backward_on_wgmma_does_not_spill(block_n, warps, d, causal, ptxas):
    """bench_attention.py's backward configurations (BWD_CONFIGS: 64x64 / 4 warps, 64x128 /
    8 warps) on sm_90a, D = 64 and 128: dK/dV all on wgmma (its M, BLOCK_N, covers the
    warps), dV's and dK's dots register-A, one per 16 queries each; dQ on wgmma at 64x64 /
    4 warps (BLOCK_M = 64 on 8 warps keeps mma.sync); no spills, no wgmma serialised by
    ptxas. bf16 compiles to the same instructions on bf16 operands."""
    for which in ("dkdv", "dq"):
        ptx = compile_benchmarked_backward(which, d, block_n, warps, causal, False, "sm_90a")
        if which == "dkdv":
            assert "mma.sync" not in ptx
            assert re.findall(REGISTER_A, ptx) == [str(d)] * (2 * 64 // 16)
        else:
            assert ("mma.sync" in ptx) == (warps == 8) != ("wgmma" in ptx)
        usage = tools.ptxas_usage(ptx, "sm_90a")
        assert usage["local"] == 0 and usage["spill_stores"] == 0, (which, usage["log"])
        assert "(C75" not in usage["log"], usage["log"]
    if d == 64 and not causal:
        bf16 = compile_benchmarked_backward("dkdv", d, block_n, warps, causal, True, "sm_90a")
        assert len(re.findall(REGISTER_A.replace(r"f16\.f16", r"bf16\.bf16"), bf16)) == 8
        assert tools.ptxas_usage(bf16, "sm_90a")["spill_stores"] == 0


@pytest.mark.parametrize("which", ["dkdv", "dq"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("landing", ["issue", "wait"])
def test_backward_on_wgmma_in_the_hazard_model(which, causal, landing):
    """The sm_90a backward TTGIR (64 rows a program on 4 warps: BLOCK_N keys for dK/dV,
    BLOCK_M queries for dQ; 32 of the others a trip, D = 32) interpreted with the copies
    landing as early or as late as they may and the accumulating dots' groups in flight
    (dV, dK; dQ): no race, the gradients of float64 numpy."""
    block_m, block_n = (32, 64) if which == "dkdv" else (64, 32)
    ttgir = compile_backward(which, 32, block_m, 4, causal, "ttgir", "sm_90a", block_n=block_n)
    model = interpret_backward(parse_module(ttgir.asm["ttgir"]), which, 32, 64, causal, landing)
    assert model.copies > 0 and model.dots > model.dot_waits > 0  # retired later


def test_warps_that_cannot_cover_the_rows_keep_mma_sync(ptxas):
    """BLOCK_M = 64 on 8 warps: wgmma would split N across warpgroups, and P would not
    be the second dot's A fragment in registers: both dots stay on mma.sync."""
    ptx = compile_forward(64, 64, 64, 8, arch="sm_90a").asm["ptx"]
    assert "wgmma" not in ptx and "mma.sync" in ptx


# --------------------------------------------------------------------------- on the GPU


def _forward_ptx(d, block_m, block_n, warps, causal):
    """The PTX the JIT builds for this GPU (sm_90a on Hopper)."""
    q = np.zeros((1, 64, d), np.float16)
    lse = np.zeros((1, 64), np.float32)
    kernel = fa.attn_fwd_kernel.warmup(
        q, q, q, q, lse, 0.1, 64, *[64 * d, d] * 4, HEAD_DIM=d, BLOCK_M=block_m,
        BLOCK_N=block_n, CAUSAL=causal, BF16=False, num_warps=warps, num_stages=3, grid=(1, 1),
    )  # fmt: skip
    return kernel.asm["ptx"]


@pytest.mark.gpu
@pytest.mark.parametrize("d,block_m,block_n,warps", FORWARD_CONFIGS)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_on_hopper(d, block_m, block_n, warps, causal, monkeypatch):
    from tritium.runtime.driver import current_arch

    if current_arch() != "sm_90":
        pytest.skip("wgmma needs a Hopper GPU (sm_90)")
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    monkeypatch.delenv("DISABLE_MMA_V3", raising=False)
    assert re.search(REGISTER_A, _forward_ptx(d, block_m, block_n, warps, causal))
    for seq, bf16 in ((block_m * 3, False), (197, True)):  # whole blocks; a masked tail
        rng = np.random.default_rng(seq + d + causal)
        fa.check_attention(rng, 2, seq, d, causal, bf16, block_m=block_m, block_n=block_n,
                           num_warps=warps)  # fmt: skip


def _dkdv_ptx(d, block_n, warps, causal, bf16):
    """The dK/dV PTX the JIT builds for this GPU (sm_90a on Hopper)."""
    x = np.zeros((1, 64, d), np.uint16 if bf16 else np.float16)
    stats = np.zeros((1, 64), np.float32)
    kernel = fa.attn_bwd_dkdv_kernel.warmup(
        x, x, x, x, x, x, stats, stats, 0.1, 64, 64 * d, d, HEAD_DIM=d, BLOCK_M=64,
        BLOCK_N=block_n, CAUSAL=causal, BF16=bf16, num_warps=warps, num_stages=3, grid=(1, 1),
    )  # fmt: skip
    return kernel.asm["ptx"]


@pytest.mark.gpu
@pytest.mark.parametrize("block_n,warps", [(64, 4), (128, 8)])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_backward_on_hopper(block_n, warps, d, causal, monkeypatch):
    """The backward at bench_attention.py's configurations (BLOCK_M = 64), with dK/dV on
    the register-A wgmma path: whole blocks (fp16) and masked tails (bf16, an odd length)
    against float64 numpy. The forward that gives it o and lse runs at 64x64 / 4 warps,
    as the benchmark's (its causal loop needs BLOCK_N to divide BLOCK_M)."""
    from tritium.runtime.driver import current_arch

    if current_arch() != "sm_90":
        pytest.skip("wgmma needs a Hopper GPU (sm_90)")
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    monkeypatch.delenv("DISABLE_MMA_V3", raising=False)
    for seq, bf16 in ((block_n * 3, False), (197, True)):
        ptx = _dkdv_ptx(d, block_n, warps, causal, bf16)
        assert "mma.sync" not in ptx and re.search(REGISTER_A.replace("f16", "bf16" if bf16 else "f16"), ptx)
        rng = np.random.default_rng(seq + d + causal)
        backward = dict(block_m=64, block_n=block_n, num_warps=warps)
        fa.check_attention(rng, 2, seq, d, causal, bf16, backward, block_m=64, block_n=64)
