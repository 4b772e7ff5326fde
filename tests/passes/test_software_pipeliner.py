"""The software pipeliner (`pipeline` pass): upstream's structure for the seed matmul, and
pipelined kernels computing the right thing in the interpreter with every async copy's
hazards checked (ttgir_interpreter.py), for 2 to 4 stages and loops shorter than the
pipeline."""

from __future__ import annotations

import collections
import pathlib
import re

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tests.codegen.dot_kernels import matmul_kernel
from tests.passes.ttgir_interpreter import HazardError, shared_memory_model
from tritium.codegen import tools
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir
from tritium.ir.ttg_mma import MemDescType
from tritium.passes.pipeline import run_passes, run_ttgir_passes, run_ttir_passes
from tritium.runtime.interpreter import interpret

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "upstream"


def ops_in(text: str) -> collections.Counter:
    return collections.Counter(re.findall(r"= (t\w*\.[\w.]+)|^\s+(t\w*\.[\w.]+) ", text, re.M))


def count(text: str, name: str) -> int:
    return len(re.findall(rf"\b{re.escape(name)}\b", text))


def split_loop(text: str) -> tuple[str, str, str]:
    """(before the K loop, its body, after it) of a printed kernel with one scf.for."""
    start = text.index("scf.for")
    end = text.index("scf.yield", start)
    close = text.index("\n    }", end)
    return text[:start], text[start:close], text[close:]


def compile_seed(num_stages: int = 3, arch: str = "sm_89"):
    module = parse_module((DATA / "matmul_tiled_kernel.ttir").read_text())
    run_ttir_passes(module, {})
    run_ttgir_passes(module, {"num_stages": num_stages, "arch": arch})
    return module, print_ir(module)


def test_seed_matmul_is_pipelined_like_upstream():
    """Upstream's TTGIR for the seed matmul (num_stages = 3) next to ours: buffers allocated
    before the loop, a prologue of two stages of async copies, the loop waiting for the
    oldest group, reading one stage and prefetching two iterations ahead, wait 0 and
    deallocs after it. Differences (module docstring): 3 buffers instead of 2, one
    commit group per stage instead of one per load."""
    _, ours = compile_seed()
    theirs = (DATA / "matmul_tiled_kernel.ttgir").read_text()
    for text, stages, groups_per_stage, wait in ((ours, 3, 1, 1), (theirs, 2, 2, 2)):
        before, loop, after = split_loop(text)
        assert count(before, "ttg.local_alloc") == 2
        assert f"!ttg.memdesc<{stages}x64x32xf32, #shared" in before
        assert f"!ttg.memdesc<{stages}x32x64xf32, #shared" in before
        assert count(before, "ttg.async_copy_global_to_local") == 4  # 2 loads x 2 stages
        assert count(before, "ttg.async_commit_group") == 2 * groups_per_stage
        assert count(loop, "ttg.async_wait") == 1 and count(loop, "tt.dot") == 1
        assert count(loop, "ttg.async_copy_global_to_local") == 2
        assert count(loop, "ttg.async_commit_group") == groups_per_stage
        assert len(re.findall(r"ttg.local_load %\w+ token %\w+", loop)) == 2
        assert count(loop, "ttg.convert_layout") == 0 and count(loop, "ttg.local_alloc") == 0
        assert count(loop, "tt.load") == 0
        # wait for the oldest iteration's copies: the groups of the others stay in flight
        assert f"{{num = {wait} : i32}}" in loop
        assert "ttg.async_wait {num = 0 : i32}" in after
        assert count(after, "ttg.local_dealloc") == 2
    # the same swizzles as upstream
    for enc in ("vec = 4, perPhase = 1, maxPhase = 8", "vec = 8, perPhase = 1, maxPhase = 4"):
        assert f"#ttg.swizzled_shared<{{{enc}, order = [1, 0]}}>" in ours


def ptx_ops(module) -> tuple[list[str], str]:
    from tritium.codegen import llir_to_ptx, lower_to_llvm

    llir, _ = lower_to_llvm(module)
    ptx = llir_to_ptx(llir, "sm_89")
    return re.findall(r"^\s+(?:@%p\d+ )?([a-z][\w.:]*)", ptx, re.M), ptx


def test_seed_matmul_ptx_has_one_barrier_per_iteration(ptxas):
    module, _ = compile_seed()
    ops, ptx = ptx_ops(module)
    c = collections.Counter(ops)
    assert c["cp.async.ca.shared.global"] == 96  # 32 floats per thread and stage, 3 stages
    assert (
        re.findall(r"cp.async.ca.shared.global \[[^]]+\], \[[^]]+\], (0x\w+)", ptx) == ["0x4"] * 96
    )
    assert c["cp.async.commit_group"] == 3 and c["cp.async.wait_group"] == 2
    assert c["ldmatrix.sync.aligned.m8n8.x4.shared.b16"] == 8
    assert c["mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"] == 32
    # the loop: wait_group 1 then its barrier, the next copies, then ldmatrix / mma
    start = ops.index("cp.async.wait_group")
    end = ops.index("cp.async.wait_group", start + 1)
    loop = ops[start:end]
    assert loop[:2] == ["cp.async.wait_group", "bar.sync"] and loop.count("bar.sync") == 1
    assert "cp.async.wait_group 1;" in ptx and "cp.async.wait_group 0;" in ptx
    assert c["bar.sync"] <= 4
    usage = tools.ptxas_usage(ptx, "sm_89")
    assert usage["local"] == 0 and usage["spill_stores"] == 0, usage["log"]


@pytest.mark.parametrize("stages", [1, 2, 4])
def test_num_stages_sets_the_ring(stages):
    _, text = compile_seed(stages)
    if stages == 1:
        assert "ttg.async_copy_global_to_local" not in text  # not pipelined
        assert count(text, "ttg.local_alloc") == 2  # optimize-dot-operands' tiles
        return
    before, loop, _ = split_loop(text)
    assert f"!ttg.memdesc<{stages}x64x32xf32" in before
    assert count(before, "ttg.async_commit_group") == stages - 1
    assert f"{{num = {stages - 2} : i32}}" in loop


def test_older_gpus_are_not_pipelined():
    _, text = compile_seed(arch="sm_75")
    assert "ttg.async_copy_global_to_local" not in text


def test_stages_shrink_to_fit_shared_memory():
    """128x128 fp32 tiles of A (128x64) and B (64x128): 64 KiB per stage. sm_89 has 99 KiB:
    one stage would not pipeline anything, so 2 is the floor... and 64 KiB x 2 > 99 KiB:
    not pipelined. sm_90's 227 KiB takes 3."""
    sig = "*fp32:16,*fp32:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1"
    consts = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, PRECISION="tf32", OUT_F16=False, BF16=False)
    for arch, stages in (("sm_89", None), ("sm_90", 3)):
        k = tritium.compile(matmul_kernel, signature=sig, constexprs=consts, num_warps=8,
                            num_stages=4, arch=arch, stop="ttgir")  # fmt: skip
        text = k.asm["ttgir"]
        if stages is None:
            assert "ttg.async_copy_global_to_local" not in text
        else:
            assert f"!ttg.memdesc<{stages}x128x64xf32" in text


# --------------------------------------------------------------------------- semantics

SIGNATURES = {
    # pointers 16-aligned, K and the leading strides multiples of 16, unit inner strides
    "fp32": "*fp32:16,*fp32:16,*fp32:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32,i32",
    # fp16 copies need 4 bytes: masks constant over pairs (N and K multiples of 16)
    "fp16": "*fp16:16,*fp16:16,*fp32:16,i32,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32,i32",
}


def pipelined_matmul(kind: str, precision: str, stages: int, block=(32, 32, 16), warps=4):
    consts = dict(BLOCK_M=block[0], BLOCK_N=block[1], BLOCK_K=block[2], PRECISION=precision,
                  OUT_F16=False, BF16=False)  # fmt: skip
    k = tritium.compile(matmul_kernel, signature=SIGNATURES[kind], constexprs=consts,
                        num_warps=warps, num_stages=stages, stop="ttgir")  # fmt: skip
    return parse_module(k.asm["ttgir"]), block


def run_interpreted(module, block, a, b, landing):
    M, K = a.shape
    N = b.shape[1]
    # row-major storage padded to a multiple of 16 columns (the leading strides are :16)
    ka, nb = -(-K // 16) * 16, -(-N // 16) * 16
    sa = np.zeros((M, ka), a.dtype)
    sa[:, :K] = a
    sb = np.zeros((K, nb), b.dtype)
    sb[:, :N] = b
    c = np.full((M, N), np.nan, np.float32)
    grid = (-(-M // block[0]), -(-N // block[1]))
    with shared_memory_model(landing) as model:
        interpret(module, grid, [sa, sb, c, M, N, K, ka, nb, N, 1])
    return c, model


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("landing", ["issue", "wait"])
def test_pipelined_matmul_in_the_interpreter(stages, landing):
    """Loops of 0, 1, 2, 3 and 5 iterations (fewer than the stages, and more), masks on
    every edge; copies landing as early or as late as the hardware may let them."""
    module, block = pipelined_matmul("fp32", "ieee", stages)
    text = print_ir(module)
    assert count(text, "ttg.async_copy_global_to_local") == 2 * stages
    rng = np.random.default_rng(stages)
    for M, N, K in ((40, 33, 0), (40, 33, 7), (17, 50, 32), (33, 9, 45), (5, 70, 80)):
        a = rng.standard_normal((M, K)).astype(np.float32)
        b = rng.standard_normal((K, N)).astype(np.float32)
        c, model = run_interpreted(module, block, a, b, landing)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)
        programs = -(-M // block[0]) * -(-N // block[1])
        trips = -(-K // block[2])
        assert model.copies == 2 * programs * (stages - 1 + trips)
        assert model.waits == programs * (trips + 1)


def test_fp16_mma_pipeline_in_the_interpreter():
    module, block = pipelined_matmul("fp16", "tf32", 3, block=(32, 64, 32), warps=4)
    text = print_ir(module)
    assert "kWidth = 2" in text and count(text, "ttg.async_copy_global_to_local") == 6
    rng = np.random.default_rng(0)
    a = rng.standard_normal((50, 112)).astype(np.float16)
    b = rng.standard_normal((112, 80)).astype(np.float16)
    c, _ = run_interpreted(module, block, a, b, "wait")
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.linalg.norm(c - ref) / np.linalg.norm(ref) < 1e-3


def test_the_checker_catches_a_missing_wait():
    """Sanity of the hazard model: with the loop's wait allowing one group too many in
    flight, the stage is read before its copy lands."""
    module, block = pipelined_matmul("fp32", "ieee", 3)
    text = print_ir(module).replace("{num = 1 : i32}", "{num = 2 : i32}")
    broken = parse_module(text)
    a = np.ones((32, 64), np.float32)
    b = np.ones((64, 32), np.float32)
    with pytest.raises(HazardError, match="RAW"):
        run_interpreted(broken, block, a, b, "wait")


# --------------------------------------------------------------------------- which loads


@tritium.jit
def _loop_kernel(a_ptr, b_ptr, c_ptr, out_ptr, idx_ptr, K, MODE: tl.constexpr):
    """A 16x16 dot over K with a pointer carried through the loop and read after it.
    MODE 1: A's masked-off elements are 1 (no zero-fill); MODE 2: A's tile is found
    through a load (its address cannot be computed ahead without reading memory)."""
    r = tl.arange(0, 16)
    a_ptrs = a_ptr + r[:, None] * K + r[None, :]
    b_ptrs = b_ptr + r[:, None] * 16 + r[None, :]
    acc = tl.zeros((16, 16), dtype=tl.float32)
    for k in range(0, K, 16):
        if MODE == 2:
            a = tl.load(a_ptrs + tl.load(idx_ptr + k // 16))
        else:
            a = tl.load(a_ptrs, mask=r[None, :] < K - k, other=MODE)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += 16
        b_ptrs += 256
    tl.store(c_ptr + r[:, None] * 16 + r[None, :], acc)
    tl.store(out_ptr + r[:, None] * 16 + r[None, :], tl.load(a_ptrs - 16))  # the last tile


def _loop_case(mode=0):
    sig = "*fp16:16,*fp16:16,*fp32:16,*fp16:16,*i32:16,i32:16"
    k = tritium.compile(_loop_kernel, signature=sig, constexprs={"MODE": mode}, num_warps=1,
                        stop="ttgir")  # fmt: skip
    return parse_module(k.asm["ttgir"])


def test_a_pointer_read_after_the_loop_keeps_its_own_copy():
    module = _loop_case()
    text = print_ir(module)
    assert count(text, "ttg.async_copy_global_to_local") == 6  # 2 loads x 3 stages
    K = 48
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, K)).astype(np.float16)
    b = rng.standard_normal((K, 16)).astype(np.float16)
    c = np.zeros((16, 16), np.float32)
    out = np.zeros((16, 16), np.float16)
    with shared_memory_model("wait"):
        interpret(module, (1,), [a, b, c, out, np.zeros(4, np.int32), K])
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-3, atol=1e-3)
    np.testing.assert_array_equal(out, a[:, K - 16 :])


@pytest.mark.parametrize("mode", [1, 2])
def test_loads_that_cannot_be_async_copies_stay(mode):
    text = print_ir(_loop_case(mode))
    assert count(text, "ttg.async_copy_global_to_local") == 3  # B only


def test_the_pass_alone_on_a_snippet():
    """run_passes(["pipeline"]) on the seed's TTGIR as it is before the pipeliner."""
    module = parse_module((DATA / "matmul_tiled_kernel.ttir").read_text())
    run_ttir_passes(module, {})
    names = [
        "convert-triton-to-tritongpu", "coalesce", "remove-layout-conversions",
        "accelerate-matmul", "remove-layout-conversions", "loop-invariant-code-motion",
        "canonicalize", "cse", "dce",
    ]  # fmt: skip
    run_passes(module, names, {}, ttgir=True)
    run_passes(module, ["pipeline"], {"num_stages": 2}, ttgir=True)
    allocs = [op for op in module.walk() if op.name == "ttg.local_alloc"]
    assert [op.results[0].type.get_shape()[0] for op in allocs] == [2, 2]
    assert all(isinstance(op.results[0].type, MemDescType) for op in allocs)


@tritium.jit
def _bitcast_kernel(a_ptr, b_ptr, c_ptr, K):
    """bf16 bits stored as int16, bitcast after the load (the chain load -> bitcast ->
    convert: the tile holds int16, the bitcast runs on the loaded fragments)."""
    r = tl.arange(0, 16)
    acc = tl.zeros((16, 16), dtype=tl.float32)
    for k in range(0, K, 16):
        a = tl.load(a_ptr + r[:, None] * K + (k + r)[None, :]).to(tl.bfloat16, bitcast=True)
        b = tl.load(b_ptr + (k + r)[:, None] * 16 + r[None, :]).to(tl.bfloat16, bitcast=True)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + r[:, None] * 16 + r[None, :], acc)


def test_a_cast_between_load_and_dot(ptxas):
    sig = "*i16:16,*i16:16,*fp32:16,i32:16"
    k = tritium.compile(_bitcast_kernel, signature=sig, num_warps=1, stop="ptx")
    text = k.asm["ttgir"]
    assert count(text, "ttg.async_copy_global_to_local") == 6
    assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in k.asm["ptx"]
    usage = tools.ptxas_usage(k.asm["ptx"], "sm_89")
    assert usage["local"] == 0, usage["log"]

    def bits(x):  # bf16-exact float32 -> its bf16 bits as int16
        return (x.view(np.uint32) >> 16).astype(np.uint16).view(np.int16)

    rng = np.random.default_rng(3)
    K = 64
    a = rng.integers(-8, 8, (16, K)).astype(np.float32)
    b = rng.integers(-8, 8, (K, 16)).astype(np.float32)
    c = np.zeros((16, 16), np.float32)
    with shared_memory_model("wait"):
        interpret(parse_module(text), (1,), [bits(a), bits(b), c, K])
    np.testing.assert_array_equal(c, a @ b)


# --------------------------------------------------------------------------- per loop


@tritium.jit
def _stages_kernel(a_ptr, b_ptr, c_ptr, K, STAGES: tl.constexpr):
    """_loop_kernel's dot loop with its own `tl.range(..., num_stages=STAGES)`."""
    r = tl.arange(0, 16)
    a_ptrs = a_ptr + r[:, None] * K + r[None, :]
    b_ptrs = b_ptr + r[:, None] * 16 + r[None, :]
    acc = tl.zeros((16, 16), dtype=tl.float32)
    for _ in tl.range(0, K, 16, num_stages=STAGES):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += 16
        b_ptrs += 256
    tl.store(c_ptr + r[:, None] * 16 + r[None, :], acc)


@pytest.mark.parametrize("loop, kernel", [(1, 3), (2, 3), (4, 1), (3, 1)])
def test_a_loops_num_stages_replaces_the_kernels(loop, kernel):
    """As upstream: `tl.range(num_stages=)` decides for its loop, whatever `num_stages` the
    launch gives (1: the loop is not pipelined)."""
    k = tritium.compile(_stages_kernel, signature="*fp16:16,*fp16:16,*fp32:16,i32:16",
                        constexprs={"STAGES": loop}, num_warps=1, num_stages=kernel,
                        stop="ttgir")  # fmt: skip
    text = k.asm["ttgir"]
    copies = count(text, "ttg.async_copy_global_to_local")
    assert copies == (0 if loop < 2 else 2 * loop), text


# --------------------------------------------------------------------------- one tile, two reads


@tritium.jit
def _two_reads_kernel(x_ptr, y_ptr, o1_ptr, o2_ptr, x_out_ptr, K, EXTRA_USE: tl.constexpr):
    """Each trip loads a 32x32 tile X and feeds two dots: Y @ X and Y @ X^T (attention
    backward's Q and dO, read as dK's B operand and, transposed, as the scores' one).
    EXTRA_USE: X is also stored (not a dot operand: the load stays a load)."""
    r = tl.arange(0, 32)
    y = tl.load(y_ptr + r[:, None] * 32 + r[None, :])
    acc1 = tl.zeros((32, 32), dtype=tl.float32)
    acc2 = tl.zeros((32, 32), dtype=tl.float32)
    for k in range(0, K, 32):
        x = tl.load(x_ptr + (k + r)[:, None] * 32 + r[None, :])
        acc1 = tl.dot(y, x, acc1)
        acc2 = tl.dot(y, tl.trans(x), acc2)
        if EXTRA_USE:
            tl.store(x_out_ptr + (k + r)[:, None] * 32 + r[None, :], x)
    tl.store(o1_ptr + r[:, None] * 32 + r[None, :], acc1)
    tl.store(o2_ptr + r[:, None] * 32 + r[None, :], acc2)


def _two_reads(extra_use=False, stop="ttgir"):
    sig = "*fp16:16,*fp16:16,*fp32:16,*fp32:16,*fp16:16,i32:16"
    k = tritium.compile(_two_reads_kernel, signature=sig, constexprs={"EXTRA_USE": extra_use},
                        num_warps=4, stop=stop)  # fmt: skip
    return k


def test_a_tile_read_by_two_dots_is_copied_once():
    """Before the pass, X reaches its dots through two converts (one after a tt.trans):

        %x = tt.load %p : tensor<32x32x!tt.ptr<f16>, #blocked>
        %b = ttg.convert_layout %x : ... -> tensor<32x32xf16, #ttg.dot_op<{opIdx = 1, ...}>>
        %t = tt.trans %x1 {order = array<i32: 1, 0>} ...
        %bt = ttg.convert_layout %t : ... -> tensor<32x32xf16, #ttg.dot_op<{opIdx = 1, ...}>>

    after it, one ring of X tiles, one copy per trip, and both operands read from the
    same stage, the second through a transposed view:

        %s = ttg.memdesc_index %ring[%i] : !ttg.memdesc<3x32x32xf16, #shared, ...> -> ...
        %b = ttg.local_load %s token %w : ... -> tensor<32x32xf16, #ttg.dot_op<{opIdx = 1, ...}>>
        %v = ttg.memdesc_trans %s {order = array<i32: 1, 0>} : !ttg.memdesc<32x32xf16, #shared, ...>
                                                               -> !ttg.memdesc<32x32xf16, #shared1, ...>
        %bt = ttg.local_load %v token %w : ... -> tensor<32x32xf16, #ttg.dot_op<{opIdx = 1, ...}>>
    """
    text = _two_reads().asm["ttgir"]
    _, body, _ = split_loop(text)
    shared = dict(re.findall(r"^(#shared\d*) = (#ttg\.swizzled_shared<.*>)$", text, re.M))
    rings = re.findall(r"ttg\.local_alloc \{[^}]*\} : \(\) -> !ttg\.memdesc<3x32x32xf16, (#shared\d*)", text)
    assert len(rings) == 1  # X only (Y is loaded before the loop)
    assert count(body, "ttg.async_copy_global_to_local") == 1
    assert count(body, "ttg.local_alloc") == 0 and count(body, "tt.trans") == 0
    assert count(body, "ttg.convert_layout") == 0 and count(body, "tt.load") == 0
    loads = re.findall(r"= ttg\.local_load (%\w+) token", body)
    assert len(loads) == 2
    trans = re.search(r"(%\w+) = ttg\.memdesc_trans (%\w+) \{order = array<i32: 1, 0>\} : "
                      r"!ttg\.memdesc<32x32xf16, (#shared\d*), #smem, mutable> -> "
                      r"!ttg\.memdesc<32x32xf16, (#shared\d*), #smem, mutable>", body)  # fmt: skip
    assert trans is not None and trans.group(1) in loads
    assert trans.group(3) == rings[0]
    # the view's shared order is the ring's, permuted: the same bytes
    ring_enc, view_enc = shared[trans.group(3)], shared[trans.group(4)]
    assert "order = [1, 0]" in ring_enc and ring_enc.replace("[1, 0]", "[0, 1]") == view_enc


@pytest.mark.parametrize("landing", ["issue", "wait"])
def test_a_tile_read_by_two_dots_in_the_interpreter(landing):
    module = parse_module(_two_reads().asm["ttgir"])
    rng = np.random.default_rng(3)
    for K in (0, 32, 96, 160):
        x = rng.standard_normal((max(K, 1), 32)).astype(np.float16)
        y = rng.standard_normal((32, 32)).astype(np.float16)
        o1, o2 = (np.full((32, 32), np.nan, np.float32) for _ in range(2))
        with shared_memory_model(landing) as model:
            interpret(module, (1,), [x, y, o1, o2, np.zeros_like(x), K])
        x64, y64 = x.astype(np.float64)[:K], y.astype(np.float64)
        tiles = [x64[k : k + 32] for k in range(0, K, 32)]
        want1 = sum((y64 @ t for t in tiles), np.zeros((32, 32)))
        want2 = sum((y64 @ t.T for t in tiles), np.zeros((32, 32)))
        np.testing.assert_allclose(o1, want1, rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(o2, want2, rtol=1e-3, atol=1e-3)
        assert model.copies == 2 + K // 32  # the prologue's two, then one per trip


def test_a_tile_read_by_two_dots_in_ptx(ptxas):
    """Both reads are ldmatrix from the one stage (B row-major: .trans; its transposed
    view: K contiguous, plain), no shared-memory round trip, one barrier per trip."""
    ptx = _two_reads(stop="ptx").asm["ptx"]
    loops = [p for p in re.split(r"\n\$L__BB\d+_\d+:", ptx) if "mma.sync" in p]
    assert len(loops) == 1
    body = loops[0]
    assert body.count("st.shared") == 0 and body.count("ld.shared") == 0
    assert body.count("bar.sync") == 1
    assert body.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared") > 0
    assert body.count("ldmatrix.sync.aligned.m8n8.x4.shared") > 0


def test_a_tile_with_a_use_that_is_no_dot_operand_stays_a_load():
    _, body, _ = split_loop(_two_reads(extra_use=True).asm["ttgir"])
    assert count(body, "ttg.async_copy_global_to_local") == 0
    assert count(body, "tt.load") == 1 and count(body, "ttg.memdesc_trans") == 0


# --------------------------------------------------------------------------- where the copies go


def _attention_ttgir(causal: bool, seq_sig: str = "i32:16", d: int = 64) -> str:
    import examples.flash_attention as fa

    sig = ",".join(["*fp16:16"] * 4 + ["*fp32:16", "fp32", seq_sig] + ["i32:16"] * 8)
    consts = dict(HEAD_DIM=d, BLOCK_M=64, BLOCK_N=64, CAUSAL=causal, BF16=False)
    return tritium.compile(fa.attn_fwd_kernel, sig, consts, num_warps=4, num_stages=3,
                           stop="ttgir").asm["ttgir"]  # fmt: skip


def _loop_bodies(text: str) -> list[str]:
    bodies, start = [], 0
    while (start := text.find("scf.for", start)) >= 0:
        end = text.index("scf.yield", start)
        bodies.append(text[start:end])
        start = end
    return bodies


def test_attention_refills_after_its_last_dot():
    """Attention's unmasked loop (two chained dots, 64 result registers per thread) issues
    the trip's copies after P @ V, into the stage read one trip ago (tagged: no barrier
    before them); its masked loop, the matmul and the D = 128 loop (96 registers) issue
    them right after the wait."""

    def order(body: str) -> list[str]:
        return re.findall(r"(tt\.dot|ttg\.async_copy_global_to_local|gpu\.barrier)", body)

    unmasked, masked = _loop_bodies(_attention_ttgir(False))
    assert order(unmasked) == ["gpu.barrier", "tt.dot", "tt.dot"] + ["ttg.async_copy_global_to_local"] * 2  # fmt: skip
    assert unmasked.count('{ring = "refill"}') == 2 and unmasked.count('{ring = "read"}') == 2
    assert order(masked)[:3] == ["gpu.barrier"] + ["ttg.async_copy_global_to_local"] * 2
    (d128, _) = _loop_bodies(_attention_ttgir(False, d=128))
    assert order(d128)[:3] == ["gpu.barrier"] + ["ttg.async_copy_global_to_local"] * 2
    matmul, _ = pipelined_matmul("fp16", "tf32", 3, block=(32, 64, 32), warps=4)
    _, body, _ = split_loop(print_ir(matmul))
    assert order(body)[:2] == ["gpu.barrier", "ttg.async_copy_global_to_local"]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("landing", ["issue", "wait"])
def test_attention_refilling_last_in_the_interpreter(causal, landing):
    """The forward with its copies after the last dot, every copy's hazards checked: 0 to
    3 unmasked trips and a partial last block."""
    import examples.flash_attention as fa

    module = parse_module(_attention_ttgir(causal, seq_sig="i32"))
    rng = np.random.default_rng(int(causal))
    for seq in (50, 64, 200):
        q, k, v = (rng.standard_normal((1, seq, 64)).astype(np.float16) for _ in range(3))
        o = np.full_like(q, np.nan)
        lse = np.full((1, seq), np.nan, np.float32)
        scale = 0.125
        with shared_memory_model(landing):
            interpret(module, (-(-seq // 64), 1), [q, k, v, o, lse, scale, seq] + [seq * 64, 64] * 4)
        want = fa.reference(*(x.astype(np.float64) for x in (q, k, v, q)), causal, scale)[0]
        assert fa.relative_error(o, want) < 2e-3, seq
