"""accelerate-matmul and optimize-dot-operands, each on small TTGIR (where the tiles go:
tests/analysis/test_allocation.py; their barriers: tests/analysis/test_membar.py)."""

from __future__ import annotations

import pytest

from tests.passes.pass_helpers import run
from tritium.ir import tt
from tritium.ir.ttg import BlockedEncodingAttr
from tritium.ir.ttg_mma import DotOperandEncodingAttr, NvidiaMmaEncodingAttr
from tritium.ir.types import element_type, encoding_of
from tritium.passes.accelerate_matmul import warps_per_tile

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>"


def dot_module(elem="f16", precision="tf32", target="cuda:89", acc="f32", m=64, n=64, k=32):
    t = lambda s, e: f"tensor<{s}x{e}, {BLOCKED}>"  # noqa: E731
    return f"""
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "{target}", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @k(%pa: !tt.ptr<{elem}>, %pb: !tt.ptr<{elem}>, %pc: !tt.ptr<{acc}>) {{
    %a0 = tt.splat %pa : !tt.ptr<{elem}> -> {t(f"{m}x{k}", f"!tt.ptr<{elem}>")}
    %b0 = tt.splat %pb : !tt.ptr<{elem}> -> {t(f"{k}x{n}", f"!tt.ptr<{elem}>")}
    %c0 = tt.splat %pc : !tt.ptr<{acc}> -> {t(f"{m}x{n}", f"!tt.ptr<{acc}>")}
    %a = tt.load %a0 : {t(f"{m}x{k}", f"!tt.ptr<{elem}>")}
    %b = tt.load %b0 : {t(f"{k}x{n}", f"!tt.ptr<{elem}>")}
    %z = arith.constant dense<{"0" if acc.startswith("i") else "0.0"}> : {t(f"{m}x{n}", acc)}
    %d = tt.dot %a, %b, %z, inputPrecision = {precision} : {t(f"{m}x{k}", elem)} * {t(f"{k}x{n}", elem)} -> {t(f"{m}x{n}", acc)}
    tt.store %c0, %d : {t(f"{m}x{n}", f"!tt.ptr<{acc}>")}
    tt.return
  }}
}}
"""


def the_dot(module):
    return next(op for op in module.walk() if isinstance(op, tt.DotOp))


@pytest.mark.parametrize(
    "elem,precision,target,acc,k_width",
    [
        ("f16", "tf32", "cuda:89", "f32", 2),
        ("bf16", "ieee", "cuda:80", "f32", 2),  # (precision only matters for fp32)
        ("f32", "tf32", "cuda:90", "f32", 1),
        ("f32", "ieee", "cuda:89", "f32", None),
        ("f32", "tf32x3", "cuda:89", "f32", None),
        ("f16", "tf32", "cuda:75", "f32", None),  # no mma.sync m16n8k16 before sm_80 here
        ("f16", "tf32", "cuda:89", "f16", 2),  # fp16 accumulators: m16n8k16 .f16
        ("i8", "tf32", "cuda:89", "i32", 4),  # int8: m16n8k32 .s32.s8.s8.s32
        ("i8", "tf32", "cuda:80", "i32", 4),
        ("i16", "tf32", "cuda:89", "i32", None),
        ("f8E4M3FN", "tf32", "cuda:89", "f32", 4),  # fp8: m16n8k32, sm_89 and newer
        ("f8E5M2", "tf32", "cuda:90", "f16", 4),
        ("f8E4M3FN", "tf32", "cuda:86", "f32", None),  # FMA, operands promoted
    ],
)
def test_which_dots_go_to_the_tensor_cores(elem, precision, target, acc, k_width):
    module, _ = run(dot_module(elem, precision, target, acc), ["accelerate-matmul"], ttgir=True)
    dot = the_dot(module)
    a, b, d = (encoding_of(v.type) for v in (dot.a, dot.b, dot.d))
    if k_width is None:
        assert isinstance(d, BlockedEncodingAttr)
        assert a == DotOperandEncodingAttr(0, d) and b == DotOperandEncodingAttr(1, d)
        if elem.startswith("f8"):  # no FMA on fp8: tt.fp_to_fp to the accumulator's type
            assert [v.owner.name for v in (dot.a, dot.b)] == ["tt.fp_to_fp"] * 2
            assert str(element_type(dot.a.type)) == acc
    else:
        assert isinstance(d, NvidiaMmaEncodingAttr) and d.warpsPerCTA == [2, 2]
        assert a == DotOperandEncodingAttr(0, d, k_width)
        assert b == DotOperandEncodingAttr(1, d, k_width)
        users = [u.operation.name for u in dot.d.uses]
        assert users == ["ttg.convert_layout"]  # back to the old layout for the store


@pytest.mark.parametrize(
    "shape,warps,want",
    [
        ((64, 64), 4, [2, 2]),
        ((128, 128), 8, [4, 2]),
        ((128, 256), 8, [2, 4]),
        ((16, 128), 4, [1, 4]),
        ((256, 16), 4, [4, 1]),
        ((16, 16), 4, [1, 4]),  # more warps than 16x8 tiles: warps replicate along N
        ((32, 32), 1, [1, 1]),
    ],
)
def test_warps_per_tile_is_upstreams(shape, warps, want):
    assert warps_per_tile(None, shape, warps) == want


def test_operand_converts_become_shared_tiles():
    passes = ["accelerate-matmul", "remove-layout-conversions", "optimize-dot-operands"]
    module, _ = run(dot_module(), passes, ttgir=True)
    dot = the_dot(module)
    for v in (dot.a, dot.b):
        load = v.owner
        assert load.name == "ttg.local_load"
        alloc = load.operands[0].owner
        assert alloc.name == "ttg.local_alloc" and alloc.operands  # initialised from the load
        shared = load.operands[0].type.encoding
        assert shared.order == [1, 0] and shared.vec == 8  # 16-byte ldmatrix rows


def chained_module(m=64, n=32, d=128) -> str:
    """s = a @ b (m x n), then p = s.to(f16) @ v (m x d): attention's two dots."""
    t = lambda s, e: f"tensor<{s}x{e}, {BLOCKED}>"  # noqa: E731
    return f"""
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:89", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @k(%pa: !tt.ptr<f16>, %pb: !tt.ptr<f16>, %pv: !tt.ptr<f16>, %pc: !tt.ptr<f32>) {{
    %a0 = tt.splat %pa : !tt.ptr<f16> -> {t(f"{m}x32", "!tt.ptr<f16>")}
    %b0 = tt.splat %pb : !tt.ptr<f16> -> {t(f"32x{n}", "!tt.ptr<f16>")}
    %v0 = tt.splat %pv : !tt.ptr<f16> -> {t(f"{n}x{d}", "!tt.ptr<f16>")}
    %c0 = tt.splat %pc : !tt.ptr<f32> -> {t(f"{m}x{d}", "!tt.ptr<f32>")}
    %a = tt.load %a0 : {t(f"{m}x32", "!tt.ptr<f16>")}
    %b = tt.load %b0 : {t(f"32x{n}", "!tt.ptr<f16>")}
    %v = tt.load %v0 : {t(f"{n}x{d}", "!tt.ptr<f16>")}
    %z = arith.constant dense<0.0> : {t(f"{m}x{n}", "f32")}
    %s = tt.dot %a, %b, %z, inputPrecision = tf32 : {t(f"{m}x32", "f16")} * {t(f"32x{n}", "f16")} -> {t(f"{m}x{n}", "f32")}
    %p = arith.truncf %s : {t(f"{m}x{n}", "f32")} to {t(f"{m}x{n}", "f16")}
    %z2 = arith.constant dense<0.0> : {t(f"{m}x{d}", "f32")}
    %o = tt.dot %p, %v, %z2, inputPrecision = tf32 : {t(f"{m}x{n}", "f16")} * {t(f"{n}x{d}", "f16")} -> {t(f"{m}x{d}", "f32")}
    tt.store %c0, %o : {t(f"{m}x{d}", "!tt.ptr<f32>")}
    tt.return
  }}
}}
"""


def test_chained_dots_share_one_mma_and_p_stays_in_registers():
    """The second dot (64 x 128: alone it would get warps [1, 4]) takes the first one's
    warps [4, 1], so P converts from #mma to the A operand with no shared memory."""
    passes = ["accelerate-matmul", "remove-layout-conversions", "optimize-dot-operands"]
    module, _ = run(chained_module(), passes, ttgir=True)
    first, second = [op for op in module.walk() if isinstance(op, tt.DotOp)]
    mma = encoding_of(first.d.type)
    assert isinstance(mma, NvidiaMmaEncodingAttr) and mma.warpsPerCTA == [4, 1]
    assert encoding_of(second.d.type) == mma
    p = second.a.owner
    assert p.name == "ttg.convert_layout" and encoding_of(p.operands[0].type) == mma
    from tritium.analysis.convert_plan import convert_plan

    assert convert_plan(p.operands[0].type, p.results[0].type) is None  # registers only
    # the B operands still go through swizzled tiles
    assert second.b.owner.name == "ttg.local_load" and first.b.owner.name == "ttg.local_load"


def test_the_shortcut_needs_warps_along_m_only():
    from tritium.ir.ttg_mma import is_mma_to_dot_shortcut

    along_m, split_n = NvidiaMmaEncodingAttr([4, 1]), NvidiaMmaEncodingAttr([2, 2])
    assert is_mma_to_dot_shortcut(along_m, DotOperandEncodingAttr(0, along_m, 2), 16)
    assert not is_mma_to_dot_shortcut(split_n, DotOperandEncodingAttr(0, split_n, 2), 16)
    assert not is_mma_to_dot_shortcut(along_m, DotOperandEncodingAttr(1, along_m, 2), 16)
    assert not is_mma_to_dot_shortcut(along_m, DotOperandEncodingAttr(0, along_m, 1), 32)


def v3_chain(m=64, n=32, d=128, warps=4) -> str:
    """chained_module for sm_90a on `warps` warps."""
    text = chained_module(m, n, d).replace('"cuda:89"', '"cuda:90"')
    text = text.replace('"ttg.num-warps" = 4', f'"ttg.num-warps" = {warps}')
    return text


def test_chained_dots_go_to_wgmma_together_with_p_in_registers():
    """sm_90a: both dots on mma v3 with all warps along M, each its own instrShape (N =
    32 for S, 128 for P @ V); P converts from the first #mma to the second's A operand
    with no shared memory, and stays so through optimize-dot-operands."""
    passes = ["accelerate-matmul", "remove-layout-conversions", "optimize-dot-operands"]
    module, _ = run(v3_chain(), passes, ttgir=True, arch="sm_90a")
    first, second = [op for op in module.walk() if isinstance(op, tt.DotOp)]
    s, o = encoding_of(first.d.type), encoding_of(second.d.type)
    assert (s.versionMajor, s.warpsPerCTA, s.instrShape) == (3, [4, 1], [16, 32, 16])
    assert (o.versionMajor, o.warpsPerCTA, o.instrShape) == (3, [4, 1], [16, 128, 16])
    p = second.a.owner
    assert p.name == "ttg.convert_layout" and encoding_of(p.operands[0].type) == s
    from tritium.analysis.convert_plan import convert_plan

    assert convert_plan(p.operands[0].type, p.results[0].type) is None  # registers only
    assert second.b.owner.name == "ttg.local_load" and first.a.owner.name == "ttg.local_load"


@pytest.mark.parametrize("m,warps", [(64, 8), (32, 4)])
def test_a_chain_wgmma_cannot_take_whole_stays_on_mma_sync(m, warps):
    """A chain goes to wgmma all or none: with M = 64 on 8 warps (16 * 8 rows wanted) or
    M = 32 (no m64 instruction), both dots keep mma.sync."""
    module, _ = run(v3_chain(m=m, warps=warps), ["accelerate-matmul"], ttgir=True, arch="sm_90a")
    encs = [encoding_of(op.d.type) for op in module.walk() if isinstance(op, tt.DotOp)]
    assert [e.versionMajor for e in encs] == [2, 2]


def test_a_transposed_p_keeps_the_chain_on_mma_sync():
    """P^T as the second dot's A (the attention backward's dV += P^T dO) is not the first
    accumulator's fragment: both dots stay on mma.sync."""
    text = v3_chain(m=64, n=64, d=64)
    t = lambda s, e: f"tensor<{s}x{e}, {BLOCKED}>"  # noqa: E731
    text = text.replace(
        "%o = tt.dot %p,",
        f"%pt = tt.trans %p {{order = array<i32: 1, 0>}} : {t('64x64', 'f16')} -> {t('64x64', 'f16')}\n"
        "    %o = tt.dot %pt,",
    )
    module, _ = run(text, ["accelerate-matmul"], ttgir=True, arch="sm_90a")
    encs = [encoding_of(op.d.type) for op in module.walk() if isinstance(op, tt.DotOp)]
    assert [e.versionMajor for e in encs] == [2, 2]


def test_a_loaded_value_joining_p_keeps_the_chain_on_wgmma():
    """P computed from S and a value loaded apart from the chain (the attention backward's
    `s_t * scale - lse[None, :]`, dS^T = P^T * (dP^T - delta)): the load does not depend
    on the chain's dots, so it is converted into the accumulator's layout and P stays the
    register-A operand of the second wgmma. A load computed from S would not be."""
    t = lambda s, e: f"tensor<{s}x{e}, {BLOCKED}>"  # noqa: E731
    text = v3_chain(m=64, n=64, d=64).replace(
        "%p = arith.truncf %s :",
        f"%w0 = tt.splat %pc : !tt.ptr<f32> -> {t('64x64', '!tt.ptr<f32>')}\n"
        f"    %w = tt.load %w0 : {t('64x64', '!tt.ptr<f32>')}\n"
        f"    %sw = arith.subf %s, %w : {t('64x64', 'f32')}\n"
        "    %p = arith.truncf %sw :",
    )
    module, _ = run(text, ["accelerate-matmul"], ttgir=True, arch="sm_90a")
    encs = [encoding_of(op.d.type) for op in module.walk() if isinstance(op, tt.DotOp)]
    assert [e.versionMajor for e in encs] == [3, 3]
    # a load whose pointers come from S (a gather through the scores): not elementwise
    # on the chain's results, so both dots stay on mma.sync
    gather = text.replace(
        f"%w = tt.load %w0 : {t('64x64', '!tt.ptr<f32>')}",
        f"%si = arith.fptosi %s : {t('64x64', 'f32')} to {t('64x64', 'i32')}\n"
        f"    %w1 = tt.addptr %w0, %si : {t('64x64', '!tt.ptr<f32>')}, {t('64x64', 'i32')}\n"
        f"    %w = tt.load %w1 : {t('64x64', '!tt.ptr<f32>')}",
    )
    module, _ = run(gather, ["accelerate-matmul"], ttgir=True, arch="sm_90a")
    encs = [encoding_of(op.d.type) for op in module.walk() if isinstance(op, tt.DotOp)]
    assert [e.versionMajor for e in encs] == [2, 2]


def test_the_shortcut_to_another_wgmma_layout_needs_the_same_warps():
    from tritium.ir.ttg_mma import is_mma_to_dot_shortcut

    s = NvidiaMmaEncodingAttr([8, 1], [16, 64, 16], version_major=3)
    o = NvidiaMmaEncodingAttr([8, 1], [16, 128, 16], version_major=3)
    split = NvidiaMmaEncodingAttr([4, 2], [16, 64, 16], version_major=3)
    assert is_mma_to_dot_shortcut(s, DotOperandEncodingAttr(0, o, 2), 16)
    assert not is_mma_to_dot_shortcut(s, DotOperandEncodingAttr(0, split, 2), 16)
    assert not is_mma_to_dot_shortcut(split, DotOperandEncodingAttr(0, split, 2), 16)
    assert not is_mma_to_dot_shortcut(s, DotOperandEncodingAttr(0, NvidiaMmaEncodingAttr([8, 1]), 2), 16)
