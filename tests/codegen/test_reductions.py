"""Reductions and layout conversions without a GPU: every configuration lowers, its PTX
assembles with no local memory, and moves data the way its plan says (butterfly shuffles
when the axis spans lanes, one smem round with barriers when it spans warps); the GPU
checks of reduce_kernels.py pass in the interpreter (so a GPU failure is the backend's);
the reduction plans combine every element exactly once, in index order when asked."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tritium
from tests.codegen import reduce_kernels as rk
from tritium.analysis.reduce_plan import plan_for_reduce, reduce_plan
from tritium.analysis.scratch import scratch_bytes
from tritium.codegen import tools
from tritium.ir import tt
from tritium.ir.layouts import linear_layout
from tritium.ir.parser import parse_module
from tritium.ir.ttg import BlockedEncodingAttr, SliceEncodingAttr

SIG = {np.float32: "fp32", np.float16: "fp16", np.int32: "i32"}


def compile_reduce2d(op, axis, br, bc, dtype, num_warps):
    odt = rk.out_dtype(op, dtype)
    sig = f"*{SIG[dtype]}:16,*{SIG[odt]}:16,i32,i32,i32"
    consts = dict(OP=op, AXIS=axis, BR=br, BC=bc, FILL=rk.fill_value(op, dtype))
    return tritium.compile(
        rk.reduce2d_kernel, signature=sig, constexprs=consts, num_warps=num_warps, stop="ptx"
    )


def check_ptx(kernel, reduce_expected: bool = True):
    ptx = kernel.asm["ptx"]
    module = parse_module(kernel.asm["ttgir"])
    plans = [plan_for_reduce(op) for op in module.walk() if isinstance(op, tt.ReduceOp)]
    assert plans or not reduce_expected
    lanes = any(kind == "lane" for p in plans for kind, _ in p.in_warp)
    smem = kernel.metadata.shared > 0
    assert ("shfl.sync.bfly" in ptx) == lanes
    assert ("bar.sync" in ptx) == smem
    assert smem == any(scratch_bytes(op) for op in module.walk())
    usage = tools.ptxas_usage(ptx)
    if usage is not None:
        assert usage["local"] == 0 and usage["stack_frame"] == 0, usage["log"]
        assert usage["spill_stores"] == 0, usage["log"]
    return ptx


CONFIGS = [
    (op, axis, shape, nw)
    for op, axis, shape, nw in itertools.product(
        ["sum", "argmax", "hash"], [0, 1], [(32, 64), (1, 16), (64, 1), (16, 16)], [1, 4, 8]
    )
    if nw == 4 or (op == "sum" and shape != (1, 16))
]


@pytest.mark.parametrize("op,axis,shape,nw", CONFIGS, ids=lambda v: str(v))
def test_reduce2d_lowers_and_assembles(op, axis, shape, nw, ptxas):
    dtype = np.int32 if op == "hash" else np.float32
    check_ptx(compile_reduce2d(op, axis, *shape, dtype, nw))


@pytest.mark.parametrize(
    "dtype,op", [(np.float16, "max"), (np.int32, "xor"), (np.float16, "argmin")]
)
def test_reduce2d_other_dtypes(dtype, op, ptxas):
    check_ptx(compile_reduce2d(op, 1, 16, 64, dtype, 4))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_reduce3d_lowers(axis, ptxas):
    k = tritium.compile(
        rk.reduce3d_kernel,
        signature="*fp32:16,*fp32:16",
        constexprs=dict(AXIS=axis, B0=4, B1=8, B2=32),
        stop="ptx",
    )
    check_ptx(k)


def test_softmax_ptx_is_upstream_shaped(ptxas):
    """examples/softmax.py, 4 warps, BLOCK 1024: 4-wide loads, a tree of max.f32 over the 8
    registers, 5 butterfly shuffles, one smem round per reduction (two bar.sync in all;
    upstream has five: its cross-warp round takes two, plus one before reusing smem)."""
    import examples.softmax as sm

    k = tritium.compile(
        sm.softmax_kernel,
        signature="*fp32:16,*fp32:16,i32:16,i32:16,i32:16",
        constexprs={"BLOCK_SIZE": 1024},
        stop="ptx",
    )
    ptx = check_ptx(k)
    assert ptx.count("ld.global.v4.b32") == 2 and ptx.count("st.global.v4.b32") == 2
    assert ptx.count("shfl.sync.bfly.b32") == 10
    assert ptx.count("bar.sync") == 2
    assert ptx.count("ld.shared.v4.b32") == 2  # each thread reads the 4 warps' partials at once
    assert ptx.count("max.f32") == 7 + 5 + 3
    assert k.metadata.shared == 32


def test_reduction_in_a_loop_gets_a_barrier_before_reusing_smem(ptxas):
    k = tritium.compile(
        rk.full_reduce_kernel,
        signature="*fp32:16,*fp32:16,i32",
        constexprs={"BLOCK": 1024},
        stop="ptx",
    )
    ptx = check_ptx(k)
    # In the loop: bar (write-after-read of the last trip) + bar (read-after-write); then
    # max, argmax (own buffers): one bar each.
    assert ptx.count("bar.sync") == 4


@pytest.mark.parametrize("shape", [(32, 64), (64, 32), (128, 16)])
def test_transpose_goes_through_shared_memory(shape, ptxas):
    k = tritium.compile(
        rk.transpose_kernel,
        signature="*fp32:16,*fp32:16",
        constexprs=dict(R=shape[0], C=shape[1]),
        stop="ptx",
    )
    assert "ttg.convert_layout" in k.asm["ttgir"]
    ptx = check_ptx(k, reduce_expected=False)
    assert ptx.count("bar.sync") == 1
    assert k.metadata.shared >= shape[0] * shape[1] * 4


# --------------------------------------------------------------------------- interpreter


@pytest.fixture
def interpret(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")


@pytest.mark.parametrize("op", ["sum", "max", "argmax", "argmin", "hash", "xor"])
def test_gpu_checks_pass_in_the_interpreter(op, interpret):
    rng = np.random.default_rng(5)
    dtype = np.int32 if op in ("hash", "xor") else np.float32
    for axis in (0, 1):
        rk.check_reduce2d(rng, op, axis, 13, 37, dtype, ties=True)
    rk.check_reduce3d(rng, 1, (4, 8, 32))
    rk.check_full_reduce(rng, 3000, 1024)
    rk.check_transpose(rng, 32, 64)


# --------------------------------------------------------------------------- plans


def simulate(plan):
    """Run a reduction plan on symbolic data, thread by thread: each value is the tuple of
    axis coordinates it combines (combine = concatenation). Returns, per thread, the tuple
    each result register ends with."""
    src = plan.src
    lanes, warps = src.num_lanes, src.num_warps
    state = {}
    for w, l in itertools.product(range(warps), range(lanes)):
        state[w, l] = [
            {a: (src.coord(r, l, w)[plan.axis],) for a, r in enumerate(regs)}
            for _, regs in plan.groups
        ]
    for kind, bit in plan.in_warp:
        new = {}
        for (w, l), groups in state.items():
            out = []
            for g, vals in enumerate(groups):
                if kind == "reg":
                    m = 1 << bit
                    out.append({a: vals[a] + vals[a | m] for a in vals if not a & m})
                else:
                    other = state[w, l ^ (1 << bit)][g]
                    out.append({a: v + other[a] for a, v in vals.items()})
            new[w, l] = out
        state = new
    results = {}
    if plan.direct:
        for (w, l), groups in state.items():
            leader = l & ~plan.lane_mask("lane") if plan.ordered else l
            results[w, l] = [groups[g][0] for g in range(len(groups))], state[w, leader]
        return {k: [g[0] for g in v[1]] for k, v in results.items()}
    # smem round: writers put partial p of output o at slot p * n_out + lin(o)
    smem = {}
    n_out = plan.num_outputs
    for (w, l), groups in state.items():
        if l & (plan.lane_mask("lane") | src.free_lane_mask) or w & src.free_warp_mask:
            continue
        for g, (key, _) in enumerate(plan.groups):
            thread = src.thread_coord(l, w)
            o = tuple(k ^ t for k, t in zip(key, thread[: plan.axis] + thread[plan.axis + 1 :]))
            for a, v in groups[g].items():
                p = 0
                for k, (kind, bit) in enumerate(plan.smem_bits):
                    if (kind == "reg" and a >> bit & 1) or (kind == "warp" and w >> bit & 1):
                        p |= 1 << k
                slot = p * n_out + plan.out_coord_lin(o)
                assert smem.get(slot, v) == v  # duplicate writers agree
                smem[slot] = v
    out = {}
    for w, l in state:
        if plan.dst is None:
            coords = [()]
        else:
            coords = [plan.dst.coord(r, l, w) for r in range(plan.dst.num_registers)]
        out[w, l] = [
            sum((smem[p * n_out + plan.out_coord_lin(c)] for p in range(plan.partials)), ())
            for c in coords
        ]
    return out


LAYOUTS = [
    ([1], [32], [4], [0], (1024,)),
    ([4], [32], [4], [0], (1024,)),
    ([4], [32], [8], [0], (256,)),  # replicated: 256 elements on 1024 slots
    ([1, 4], [2, 16], [4, 1], [1, 0], (32, 64)),
    ([1, 1], [1, 32], [2, 2], [1, 0], (32, 64)),
    ([1, 1], [1, 32], [2, 2], [1, 0], (2, 16)),  # replicated along both dims
    ([2, 2], [4, 8], [1, 4], [0, 1], (64, 32)),
    ([1, 1, 4], [1, 4, 8], [2, 1, 2], [2, 1, 0], (4, 8, 32)),
]


@pytest.mark.parametrize("ordered", [False, True])
@pytest.mark.parametrize("spt,tpw,wpc,order,shape", LAYOUTS)
def test_plans_combine_every_element_once(spt, tpw, wpc, order, shape, ordered):
    parent = BlockedEncodingAttr(spt, tpw, wpc, order)
    src = linear_layout(parent, shape)
    for axis in range(len(shape)):
        if len(shape) == 1:
            dst = None
        else:
            dst = linear_layout(SliceEncodingAttr(axis, parent), shape[:axis] + shape[axis + 1 :])
        plan = reduce_plan(src, dst, axis, ordered)
        for thread, regs in simulate(plan).items():
            for got in regs:
                if ordered:
                    assert got == tuple(range(shape[axis])), (axis, thread)
                else:
                    assert sorted(got) == list(range(shape[axis])), (axis, thread)
