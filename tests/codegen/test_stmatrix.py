"""sm_90+: a 16-bit mma accumulator goes to the conversion's buffer with `stmatrix.x4`
(tritium/codegen/lower/stmatrix.py): the plan puts every element at its slot of the
buffer (a model of the instruction: lane L addresses row L % 8 of matrix L / 8, lane
4g + t supplies word t of row g of each matrix), each matrix's 8 rows in distinct bank
groups; the GEMM epilogue's PTX uses it on sm_90a and assembles; 32-bit values, the
mma.sync (v2) buffer (unpadded rows: stmatrix would conflict) and sm_89 keep st.shared.
The values it stores are checked on a GPU (test_gpu_wgmma.py)."""

from __future__ import annotations

import re

import pytest
from xdsl.dialects.builtin import BFloat16Type, Float16Type, TensorType

import tritium
from tritium.analysis.convert_plan import convert_plan
from tritium.codegen import tools
from tritium.codegen.lower.stmatrix import stmatrix_plan
from tritium.ir.layouts import LinearLayout, layout_of
from tritium.ir.ttg import blocked_layout
from tritium.ir.ttg_mma import NvidiaMmaEncodingAttr


def placements(plan, base: int) -> dict[int, tuple[int, ...]]:
    """Byte address -> the element stored there, by the instruction's semantics, checking
    on the way that each matrix's 8 rows are 16-byte aligned and in distinct bank groups."""
    layout, x = plan.layout, plan.x

    def dot(c):
        return sum(a * s for a, s in zip(c, plan.strides))

    out: dict[int, tuple[int, ...]] = {}
    for warp in range(layout.num_warps):
        for first in range(0, layout.num_registers, plan.per_instruction):
            if first & layout.free_register_mask:
                continue
            const = dot(layout.register_coord(first))
            for j in range(x):
                rows = []
                for g in range(8):
                    row = base + 2 * (dot(plan.address.thread_coord(8 * j + g, warp)) + const)
                    assert row % 16 == 0
                    rows.append(row)
                    for t in range(4):
                        for e in range(2):
                            coord = layout.coord(first + 2 * j + e, 4 * g + t, warp)
                            assert out.setdefault(row + 4 * t + 2 * e, coord) == coord
                assert len({r // 16 % 8 for r in rows}) == 8  # no bank conflict
    return out


def check(layout: LinearLayout, strides: tuple[int, ...], x: int, base: int = 1024) -> None:
    plan = stmatrix_plan(layout, strides, 2, base)
    assert plan is not None and plan.x == x
    stored = placements(plan, base)
    want = {base + 2 * sum(c * s for c, s in zip(coord, strides)): coord
            for coord in {layout.coord(r, ln, w) for r in range(layout.num_registers)
                          for ln in range(32) for w in range(layout.num_warps)}}  # fmt: skip
    assert stored == want


@pytest.mark.parametrize("elem", [Float16Type(), BFloat16Type()])
@pytest.mark.parametrize(
    "warps,instr,shape",
    [([8, 1], [16, 256, 16], [128, 256]), ([4, 1], [16, 64, 16], [64, 64]),
     ([4, 2], [16, 64, 16], [64, 128]), ([8, 1], [16, 128, 16], [128, 128]),
     ([4, 1], [16, 16, 16], [64, 16])],
)  # fmt: skip
def test_wgmma_accumulators_store_every_element_at_its_slot(elem, warps, instr, shape):
    """The GEMM epilogue's conversion (wgmma accumulator -> coalesced 16-byte rows): the
    plan's rows (padded by 16 bytes: an odd pitch in 16-byte units) take stmatrix.x4."""
    mma = NvidiaMmaEncodingAttr(warps, instr, version_major=3)
    src_t = TensorType(elem, shape, mma)
    dst_t = TensorType(elem, shape, blocked_layout(shape, [1, 8], [1, 0], warps[0] * warps[1]))
    plan = convert_plan(src_t, dst_t)
    check(layout_of(src_t), plan.strides, 4)


def test_fewer_words_take_x2_and_x1():
    """Two or one words per thread: stmatrix.x2 / .x1 (lanes past 16 / 8 address nothing)."""
    lanes = ((0, 2), (0, 4), (1, 0), (2, 0), (4, 0))
    two = LinearLayout((64, 8), ((0, 1), (8, 0)), lanes, ((16, 0), (32, 0)))
    check(two, (24, 1), 2)
    one = LinearLayout((32, 8), ((0, 1),), lanes, ((8, 0), (16, 0)))
    check(one, (8 + 16, 1), 1)


def test_refused_where_it_would_conflict_or_cannot_place():
    mma_sync = NvidiaMmaEncodingAttr([4, 2])  # v2: the buffer's rows stay unpadded
    f16 = Float16Type()
    shape = [128, 128]
    src_t = TensorType(f16, shape, mma_sync)
    dst_t = TensorType(f16, shape, blocked_layout(shape, [1, 8], [1, 0], 8))
    plan = convert_plan(src_t, dst_t)
    src = layout_of(src_t)
    assert plan.strides == (128, 1) and stmatrix_plan(src, plan.strides, 2, 0) is None
    assert stmatrix_plan(src, (136, 1), 2, 0) is not None  # padded, it would qualify
    assert stmatrix_plan(src, (136, 1), 4, 0) is None  # 32-bit values
    assert stmatrix_plan(src, (136, 1), 2, 8) is None  # rows not 16-byte aligned
    assert stmatrix_plan(src, (1, 136), 2, 0) is None  # column-major buffer


def compile_example(kind: str, arch: str):
    import examples.matmul_fp16_grouped as ex

    e = f"*{kind}:16"
    sig = ",".join([e, e, e] + ["i32:16"] * 4 + ["i32:1", "i32:16"] * 2 + ["i32:1"])
    consts = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 32, "GROUP_M": 8}
    return tritium.compile(ex.matmul_fp16_grouped_kernel, signature=sig, constexprs=consts,
                           num_warps=8, num_stages=4, arch=arch, stop="ptx")  # fmt: skip


@pytest.mark.parametrize("kind", ["fp16", "bf16"])
def test_the_gemm_epilogue_uses_stmatrix_on_sm_90a(kind, ptxas):
    """The benchmark's GEMM (128x256x32, 8 warps): 16 stmatrix.x4 per thread where it had
    64 st.shared.b32, then the same 16 ld.shared.v4; no spills."""
    ptx = compile_example(kind, "sm_90a").asm["ptx"]
    assert len(re.findall(r"stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16 ", ptx)) == 16
    assert "st.shared" not in ptx
    assert ptx.count("ld.shared.v4.b32") == 16
    usage = tools.ptxas_usage(ptx, "sm_90a")
    assert usage["local"] == 0 and usage["spill_stores"] == 0, usage["log"]


def test_mma_sync_targets_keep_st_shared(ptxas):
    """sm_89 has no stmatrix; its epilogue (mma.sync accumulators) is unchanged."""
    ptx = compile_example("fp16", "sm_89").asm["ptx"]
    assert "stmatrix" not in ptx and "st.shared" in ptx
