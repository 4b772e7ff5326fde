"""Every `tt.gather` of the GPU shape-op tests, checked without a GPU: the kernel is
compiled to TTGIR as for a launch, and the LLVM IR gather.py emits for its gather runs on
this CPU for every thread (gather_host.py: shuffles and shared memory emulated as the
hardware does them). For each result register and every index value along the axis, the
element it receives must be the source element at the result's coordinate with the axis
replaced by the index, whichever path (warp shuffles or shared memory) the plan chose."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tests.codegen.gather_host import HostGather
from tests.codegen.test_gpu_shape_ops import (
    GATHER_1D,
    GATHER_2D,
    gather_1d_kernel,
    gather_2d_kernel,
)
from tritium.analysis.gather_plan import warp_local
from tritium.ir.parser import parse_module


def compiled_gather(fn, signature: str, constants: dict, warps: int) -> HostGather:
    """The gather of `fn` as `fn[grid](..., num_warps=warps)` compiles it, on the host."""
    ck = tritium.compile(fn, signature, constants, num_warps=warps, stop="ttgir")
    module = parse_module(ck.asm["ttgir"])
    (op,) = [o for o in module.walk() if o.name == "tt.gather"]
    shared = module.attributes["ttg.shared"].value.data
    return HostGather(op, warps, shared)


def check_every_index(g: HostGather, seed: int = 0) -> None:
    """Round t gives result element c the index (t + offset[c]) % n: over n rounds every
    element reads every source position, and neighbours read different ones."""
    n = g.src.shape[g.axis]
    coords = g.result_coords()  # [thread, register, dim]
    offset = np.random.default_rng(seed).integers(0, n, g.dst.shape)
    offset = offset[tuple(np.moveaxis(coords, -1, 0))]
    idx = (np.arange(n)[:, None, None] + offset[None]) % n  # [round, thread, register]
    got = g.source_coords(g.run(idx))  # [round, thread, register, dim]
    want = np.broadcast_to(coords, got.shape).copy()
    want[..., g.axis] = idx
    wrong = (got != want).any(-1)
    if wrong.any():
        t, tid, r = np.argwhere(wrong)[0]
        pytest.fail(
            f"{int(wrong.sum())} of {wrong.size} (index, result element) pairs read the wrong "
            f"element; e.g. thread {tid} register {r} (result {coords[tid, r].tolist()}, index "
            f"{idx[t, tid, r]}) got source {got[t, tid, r].tolist()}, wants "
            f"{want[t, tid, r].tolist()} (warp-local: {warp_local(g.op)})"
        )


@pytest.mark.parametrize("R, C, IR, IC, axis, warps", GATHER_2D)
def test_gather_2d_reads_the_right_elements(R, C, IR, IC, axis, warps):
    consts = {"R": R, "C": C, "IR": IR, "IC": IC, "AXIS": axis}
    check_every_index(compiled_gather(gather_2d_kernel, "*fp32,*i64,*fp32", consts, warps))


@pytest.mark.parametrize("dt, it", [(tl.float32, tl.int32), (tl.float64, tl.int64)])
@pytest.mark.parametrize("S, s, M, m, warps", GATHER_1D)
def test_gather_1d_reads_the_right_elements(S, s, M, m, warps, dt, it):
    sig = f"*{it},*i32,*{it},i32,i32".replace("int", "i")
    consts = {"S": S, "M": M, "DT": dt, "IT": it}
    check_every_index(compiled_gather(gather_1d_kernel, sig, consts, warps))
