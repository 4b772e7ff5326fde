"""wgmma-pipeline keeps one wgmma group in flight across a pipelined K loop (sm_90a): the
TTGIR before and after the pass (where the waits stand, their pendings, which ring stage
the copies refill), the fallbacks to `pendings = 0`, and pipelined wgmma kernels run in
the interpreter with the GPU's hazards checked (tests/passes/ttgir_interpreter.py: a copy
into a tile an unretired wgmma reads, or one no barrier separates from its retirement,
raises)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.dialects import scf

import tritium
import tritium.language as tl
from tests.codegen.dot_kernels import matmul_kernel
from tests.codegen.test_wgmma_ptx import compile_dot
from tests.passes.test_software_pipeliner import SIGNATURES, run_interpreted, split_loop
from tests.passes.ttgir_interpreter import HazardError
from tritium.ir import arith, tt
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir
from tritium.ir.ttg_memory import AsyncCommitGroupOp, AsyncCopyGlobalToLocalOp, LocalLoadOp
from tritium.ir.ttng import WarpGroupDotOp
from tritium.passes.pipeline import TTGIR_PASSES, run_passes
from tritium.passes.wgmma_pipeline import _ring_phase, wgmma_pipeline

BEFORE = TTGIR_PASSES[: TTGIR_PASSES.index("wgmma-pipeline")]
AFTER = TTGIR_PASSES[TTGIR_PASSES.index("wgmma-pipeline") :]


def ttir(stages, block=(64, 64, 32), warps=4, kind="fp16"):
    return compile_dot(kind, "row", "row", block, warps, stages, stop="ttir").asm["ttir"]


def before_pass(stages, block=(64, 64, 32), warps=4, source=None):
    """The sm_90a TTGIR the wgmma-pipeline pass receives (and the options for the rest)."""
    opts = {"num_warps": warps, "num_stages": stages, "arch": "sm_90a"}
    module = parse_module(source or ttir(stages, block, warps))
    run_passes(module, BEFORE, opts, ttgir=True)
    return module, opts


def through(module, opts, passes=AFTER):
    run_passes(module, passes, opts, ttgir=True)
    return print_ir(module)


def body_ops(loop_text: str) -> list[str]:
    """The op names of a loop body, in order (no arith)."""
    names = re.findall(
        r"^\s+(?:%[\w:#]+(?:, %[\w:#]+)* = )?((?:ttg|ttng|gpu|scf)\.\w+)", loop_text, re.M
    )
    return [n for n in names if n != "scf.for"]


def wait_pendings(text: str) -> list[int]:
    return [
        int(p) for p in re.findall(r"ttng.warp_group_dot_wait .*\{pendings = (\d+) : i32\}", text)
    ]


@pytest.mark.parametrize("stages", [3, 4])
def test_one_group_in_flight(stages):
    """Before: the pipeliner's loop (refill at the top, then the dot); after: the dot, a
    wait leaving one group in flight, a barrier (membar), the refill; after the loop a
    wait for the last group before the ring is given back and the accumulator stored."""
    module, opts = before_pass(stages)
    pre, loop, post = split_loop(print_ir(module))
    assert body_ops(loop) == ["ttg.async_wait", "ttg.memdesc_index", "ttg.async_copy_global_to_local",
                              "ttg.memdesc_index", "ttg.async_copy_global_to_local",
                              "ttg.async_commit_group", "ttg.memdesc_index", "ttg.local_load",
                              "ttg.memdesc_index", "ttg.local_load", "scf.yield"]  # fmt: skip
    text = through(module, opts)
    pre, loop, post = split_loop(text)
    ops = [n for n in body_ops(loop) if n != "ttg.memdesc_index"]
    assert ops == ["ttg.async_wait", "gpu.barrier", "ttng.warp_group_dot", "ttng.warp_group_dot_wait",
                   "gpu.barrier", "ttg.async_copy_global_to_local", "ttg.async_copy_global_to_local",
                   "ttg.async_commit_group", "scf.yield"]  # fmt: skip
    assert wait_pendings(loop) == [1]
    after = [
        n
        for n in body_ops(post)
        if n in ("ttng.warp_group_dot_wait", "ttg.async_wait", "ttg.local_dealloc")
    ]
    assert after == [
        "ttng.warp_group_dot_wait",
        "ttg.async_wait",
        "ttg.local_dealloc",
        "ttg.local_dealloc",
    ]
    assert wait_pendings(post) == [0]
    # the accumulator after the loop is read only through the final wait
    final = re.search(r"(%\w+) = ttng.warp_group_dot_wait (%[\w#]+) \{pendings = 0", post)
    assert final and len(re.findall(rf"{re.escape(final[2])}\b", post)) == 1
    assert len(re.findall(rf"{re.escape(final[1])}\b", post)) == 2  # defined, then stored
    assert pre.rsplit("\n", 1)[-1].strip().startswith(final[2] + ", ")  # the loop's acc

    # the stages: trip k's dot reads stage k % S, its copies refill stage (k - 1) % S
    loop_op = next(op for op in module.walk() if isinstance(op, scf.ForOp))
    wg = next(op for op in module.walk() if isinstance(op, WarpGroupDotOp))
    copies = [op for op in module.walk() if isinstance(op, AsyncCopyGlobalToLocalOp)
              and op.parent_op() is loop_op]  # fmt: skip
    assert [_ring_phase(t.owner.index, loop_op, stages) for t in (wg.a, wg.b)] == [0, 0]
    assert [_ring_phase(c.result_buf.owner.index, loop_op, stages) for c in copies] == [
        stages - 1
    ] * 2
    # each copy's pointers advance after the commit, as upstream's: the old ones die at
    # the copy (ptxas adds in place instead of copying the new ones back)
    body = loop_op.body.block
    (commit,) = [op for op in body.ops if isinstance(op, AsyncCommitGroupOp)]
    for c in copies:
        (advance,) = [u.operation for u in c.src.uses if isinstance(u.operation, tt.AddPtrOp)]
        assert body.get_operation_index(advance) > body.get_operation_index(commit)


def test_pendings_in_flight_for_two_warpgroups_and_n256():
    for block, warps in (((128, 128, 64), 8), ((64, 128, 64), 8), ((128, 256, 64), 8)):
        text = compile_dot("fp16", "row", "row", block, warps, 3, stop="ttgir").asm["ttgir"]
        _, loop, post = split_loop(text)
        assert wait_pendings(loop) == [1] and wait_pendings(post) == [0], block


@pytest.mark.parametrize("stages", [1, 2])
def test_fewer_than_three_stages_wait_for_each_dot(stages):
    """Two stages: the copy the next trip waits for would go out after this trip's wgmma;
    one: no loop pipelining (tiles stored by the threads, then fence.proxy.async)."""
    text = compile_dot("fp16", "row", "row", (64, 64, 32), 4, stages, stop="ttgir").asm["ttgir"]
    assert wait_pendings(text) == [0]
    _, loop, _ = split_loop(text)
    ops = body_ops(loop)
    assert ops.index("ttng.warp_group_dot_wait") == len(ops) - 2  # right before the yield
    assert ("ttng.fence_async_shared" in ops) == (stages == 1)


def test_escape_hatch_restores_pendings_0(monkeypatch):
    monkeypatch.setenv("TRITIUM_WGMMA_SYNC", "1")
    module, opts = before_pass(3)
    text = through(module, opts)
    assert wait_pendings(text) == [0]
    _, loop, _ = split_loop(text)
    assert body_ops(loop).index("ttg.async_copy_global_to_local") < body_ops(loop).index(
        "ttng.warp_group_dot"
    )
    monkeypatch.setenv("TRITIUM_WGMMA_SYNC", "0")
    module, opts = before_pass(3)
    assert wait_pendings(through(module, opts)) == [1, 0]


def test_escape_hatch_is_part_of_the_cache_key(monkeypatch):
    from examples.vector_add import add_kernel
    from tritium.compiler import cache_key
    from tritium.jit.specialize import build_spec
    from tritium.options import Options

    x = np.zeros(64, np.float32)
    spec = build_spec(add_kernel, [x, x, x, 64, 256])
    monkeypatch.delenv("TRITIUM_WGMMA_SYNC", raising=False)
    default = cache_key(add_kernel, spec, Options(arch="sm_90a"))
    monkeypatch.setenv("TRITIUM_WGMMA_SYNC", "1")
    assert None is not cache_key(add_kernel, spec, Options(arch="sm_90a")) != default
    monkeypatch.setenv("TRITIUM_WGMMA_SYNC", "0")
    assert cache_key(add_kernel, spec, Options(arch="sm_90a")) == default


def test_copies_into_the_stage_being_read_stay_in_order():
    """The ring counters decide: made to refill the stage this trip reads (the copy's
    counter started where the dot's does), the loop is left at pendings = 0."""
    module, opts = before_pass(3)
    loop = next(op for op in module.walk() if isinstance(op, scf.ForOp))
    block = loop.body.block
    copy = next(op for op in block.ops if isinstance(op, AsyncCopyGlobalToLocalOp))
    load = next(op for op in block.ops if isinstance(op, LocalLoadOp))

    def counter(view_index) -> int:
        sel = view_index.owner
        assert isinstance(sel, arith.SelectOp)
        return sel.rhs.owner.lhs.index - 1

    k_copy, k_read = counter(copy.result_buf.owner.index), counter(load.src.owner.index)
    loop.operands[3 + k_copy] = loop.iter_args[k_read]
    text = through(module, opts)
    assert wait_pendings(text) == [0]


@tritium.jit
def _scaled_acc_kernel(a_ptr, b_ptr, c_ptr, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr):  # fmt: skip
    """The accumulator is read by more than the dot inside the loop."""
    rm, rn, rk = tl.arange(0, BLOCK_M), tl.arange(0, BLOCK_N), tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BLOCK_N + rn[None, :])
        acc = tl.dot(a, b, acc * 0.5)
    tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], acc)


def test_accumulator_read_in_the_loop_waits_for_each_dot():
    k = tritium.compile(_scaled_acc_kernel, signature="*fp16:16,*fp16:16,*fp32:16,i32:16",
                        constexprs=dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32), num_warps=4,
                        num_stages=3, arch="sm_90a", stop="ttgir")  # fmt: skip
    text = k.asm["ttgir"]
    assert "ttng.warp_group_dot " in text and wait_pendings(text) == [0]


# --------------------------------------------------------------------------- interpreted


def interpreted_wgmma(stages, block=(64, 64, 32), warps=4, stop="ttgir"):
    """TTGIR (or TTIR) of the matmul with run_interpreted's signature (N, K multiples of
    16)."""
    consts = dict(BLOCK_M=block[0], BLOCK_N=block[1], BLOCK_K=block[2], PRECISION="tf32",
                  OUT_F16=False, BF16=False)  # fmt: skip
    k = tritium.compile(matmul_kernel, signature=SIGNATURES["fp16"], constexprs=consts,
                        num_warps=warps, num_stages=stages, arch="sm_90a", stop=stop)  # fmt: skip
    return k.asm[stop], block


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("landing", ["issue", "wait"])
def test_wgmma_loop_in_the_interpreter(stages, landing):
    """Loops of 0, 1, 2, 3 and 5 trips (fewer than the stages, and more), masks on every edge; no
    copy overwrites a tile an unretired wgmma reads, with and without a barrier between."""
    text, block = interpreted_wgmma(stages)
    in_flight = stages >= 3
    assert wait_pendings(text) == ([1, 0] if in_flight else [0])
    module = parse_module(text)
    rng = np.random.default_rng(stages)
    for M, N, K in ((70, 48, 0), (70, 48, 16), (33, 32, 64), (65, 16, 96), (5, 64, 160)):
        a = rng.standard_normal((M, K)).astype(np.float16)
        b = rng.standard_normal((K, N)).astype(np.float16)
        c, model = run_interpreted(module, block, a, b, landing)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)
        programs = -(-M // block[0]) * -(-N // block[1])
        trips = -(-K // block[2])
        assert model.dots == programs * trips
        assert model.dot_waits == programs * (trips + in_flight)


def _run_small(text, block=(64, 64, 32)):
    a = np.ones((64, 96), np.float16)
    b = np.ones((96, 64), np.float16)
    return run_interpreted(parse_module(text), block, a, b, "wait")


def test_the_checker_catches_a_refill_before_the_wgmma_retires():
    """Sanity of the hazard model on wgmma: pendings = 1 with the pipeliner's order (the
    copies at the top refill the stage the wgmma in flight reads), and the in-flight
    order without the barrier between the wait and the copies, both race."""
    text, _ = interpreted_wgmma(3)
    ordered = text.replace("{pendings = 1 : i32}", "{pendings = 0 : i32}")  # a control
    _run_small(ordered)
    # the pipeliner's order (pendings 0, copies first) made to keep one group in flight
    module, opts = before_pass(3, source=interpreted_wgmma(3, stop="ttir")[0])
    wgmma_pipeline(module, in_flight=False)
    early = print_ir(module).replace("{pendings = 0 : i32}", "{pendings = 1 : i32}")
    early_module = parse_module(early)
    run_passes(early_module, AFTER[1:], opts, ttgir=True)
    with pytest.raises(HazardError, match="wgmma in flight reads"):
        _run_small(print_ir(early_module))
    # the in-flight order without its second barrier
    pre, loop, post = split_loop(text)
    lines = loop.split("\n")
    at = next(i for i, ln in enumerate(lines) if "pendings = 1" in ln)
    assert "gpu.barrier" in lines[at + 1]
    no_barrier = pre + "\n".join(lines[: at + 1] + lines[at + 2 :]) + post
    with pytest.raises(HazardError, match="WAR"):
        _run_small(no_barrier)


def test_the_checker_catches_a_missing_final_wait():
    text, _ = interpreted_wgmma(3)
    pre, loop, post = split_loop(text)
    line = next(ln for ln in post.split("\n") if "pendings = 0" in ln)
    name, value = re.match(r"\s+(%[\w#]+) = ttng.warp_group_dot_wait (%[\w#]+) ", line).groups()
    post = re.sub(rf"{re.escape(name)}\b", value, post.replace(line + "\n", ""))
    with pytest.raises(HazardError, match="wgmma in flight"):
        _run_small(pre + loop + post)
