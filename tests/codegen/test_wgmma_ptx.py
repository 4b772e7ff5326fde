"""sm_90a: tl.dot on wgmma compiles to PTX that `ptxas -arch=sm_90a` accepts without local
memory, with the wgmma instruction sequence (fence, mma_async per K step, commit, wait)
and descriptors; a pipelined K loop keeps one wgmma group in flight (wait 1, then the
copies refill the retired stage; wait 0 after the loop) without ptxas having to wait for
it; its TTGIR reads as upstream's Hopper TTGIR (nvidia_mma version 3, nvmma_shared tiles,
ttng.warp_group_dot / warp_group_dot_wait); ineligible dots and other targets keep
mma.sync."""

from __future__ import annotations

import re

import pytest

import tritium
from tests.codegen.dot_kernels import matmul_kernel
from tests.codegen.test_dot_ptx import signature
from tritium.codegen import tools
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir


def compile_dot(kind, a_order, b_order, block, warps, stages, arch="sm_90a", stop="ptx"):
    consts = dict(BLOCK_M=block[0], BLOCK_N=block[1], BLOCK_K=block[2], PRECISION="tf32",
                  OUT_F16=False, BF16=kind == "bf16")  # fmt: skip
    return tritium.compile(matmul_kernel, signature=signature(kind, a_order, b_order),
                           constexprs=consts, num_warps=warps, num_stages=stages, arch=arch,
                           stop=stop)  # fmt: skip


CASES = [
    # kind, orders, block, warps, stages, instruction, per K step of a tile
    ("fp16", ("row", "row"), (128, 128, 64), 8, 3, "m64n128k16.f32.f16.f16", 4),
    ("fp16", ("col", "col"), (64, 64, 32), 4, 3, "m64n64k16.f32.f16.f16", 2),
    ("fp16", ("row", "col"), (64, 128, 64), 8, 3, "m64n64k16.f32.f16.f16", 4),
    ("fp16", ("row", "row"), (128, 256, 64), 8, 3, "m64n256k16.f32.f16.f16", 4),
    ("bf16", ("col", "row"), (128, 64, 32), 4, 2, "m64n64k16.f32.bf16.bf16", 4),
    ("fp16", ("row", "row"), (64, 32, 16), 4, 1, "m64n32k16.f32.f16.f16", 1),
]


@pytest.mark.parametrize("kind,orders,block,warps,stages,instr,count", CASES)
def test_wgmma_ptx_assembles(kind, orders, block, warps, stages, instr, count, ptxas):
    ptx = compile_dot(kind, *orders, block, warps, stages).asm["ptx"]
    assert ".target sm_90a" in ptx and "mma.sync" not in ptx and "ldmatrix" not in ptx
    assert len(re.findall(rf"wgmma\.mma_async\.sync\.aligned\.{instr} ", ptx)) == count
    for step in ("wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned",
                 "wgmma.wait_group.sync.aligned 0"):  # fmt: skip
        assert step in ptx
    assert ("fence.proxy.async.shared::cta" in ptx) == (stages == 1)  # st.shared-filled tiles
    assert ("wgmma.wait_group.sync.aligned 1;" in ptx) == (stages >= 3)  # one group in flight
    usage = tools.ptxas_usage(ptx, "sm_90a")
    assert usage["local"] == 0 and usage["stack_frame"] == 0, usage["log"]
    assert usage["spill_stores"] == 0 and usage["spill_loads"] == 0, usage["log"]
    assert "(C75" not in usage["log"], usage["log"]  # no wgmma waits injected, serialized


def loop_body(ptx: str) -> str:
    """The PTX of the K loop: from the label of the (only) backward branch to it."""
    for m in re.finditer(r"bra(?:\.uni)?\s+(\$L__BB\d+_\d+);", ptx):
        head = ptx.find(m[1] + ":")
        if head < m.start():
            return ptx[head : m.end()]
    raise AssertionError("no loop in the PTX")


def steps(body: str) -> list[str]:
    """The loop body's synchronisation steps in order (a run of one kind counts once)."""
    kinds = ("wgmma.fence", "wgmma.mma_async", "wgmma.commit_group", "wgmma.wait_group.sync.aligned 1",
             "wgmma.wait_group.sync.aligned 0", "cp.async.commit_group", "cp.async.wait_group",
             "cp.async.cg", "cp.async.ca", "bar.sync")  # fmt: skip
    out: list[str] = []
    for line in body.split("\n"):
        kind = next((k for k in kinds if k in line), None)
        kind = "cp.async" if kind in ("cp.async.cg", "cp.async.ca") else kind
        if kind and (not out or out[-1] != kind):
            out.append(kind)
    return out


@pytest.mark.parametrize(
    "block,warps", [((128, 128, 64), 8), ((64, 64, 32), 4), ((128, 256, 64), 8)]
)
def test_loop_keeps_one_wgmma_group_in_flight(block, warps, ptxas):
    """The K loop: wait for trip k's copies (and a barrier), wgmma for trip k, commit,
    wait 1 (trip k - 1's retired), a barrier (every warpgroup's), cp.async refilling
    the stage trip k - 1 read; after the loop wait 0 before the epilogue. ptxas keeps the
    accumulators in the registers the wgmmas name (it injects no wait)."""
    ptx = compile_dot("fp16", "row", "row", block, warps, 3).asm["ptx"]
    body = loop_body(ptx)
    assert steps(body) == ["cp.async.wait_group", "bar.sync", "wgmma.fence", "wgmma.mma_async",
                           "wgmma.commit_group", "wgmma.wait_group.sync.aligned 1", "bar.sync",
                           "cp.async", "cp.async.commit_group"]  # fmt: skip
    after = ptx[ptx.index(body) + len(body) :]
    assert steps(after)[:3] == [
        "wgmma.wait_group.sync.aligned 0",
        "cp.async.wait_group",
        "bar.sync",
    ]
    log = tools.ptxas_usage(ptx, "sm_90a")["log"]
    assert "(C75" not in log, log
    # the check can fail: a read of an accumulator while its wgmma is in flight makes
    # ptxas inject a wait (C7517)
    reg = re.search(r"wgmma\.mma_async\S* \{(%r\d+),", body)[1]
    bad = ptx.replace("wgmma.commit_group.sync.aligned;",
                      f"wgmma.commit_group.sync.aligned;\n\tst.global.b32 [%rd1], {reg};", 1)  # fmt: skip
    assert "(C7517)" in tools.ptxas_usage(bad, "sm_90a")["log"]


@pytest.mark.parametrize("orders", [("row", "row"), ("col", "col")])
def test_a_group_builds_one_descriptor_per_tile(orders):
    """Between a group's wgmmas no descriptor field is rebuilt from an address (as
    upstream's): the tiles' descriptors are made once, each K step's is a 64-bit add of
    its 16-byte offset (4 K steps, 2 tiles: 2 address-to-descriptor conversions)."""
    ptx = compile_dot("bf16", *orders, (128, 256, 64), 8, 3).asm["ptx"]
    body = loop_body(ptx)
    group = body[body.index("wgmma.fence") : body.index("wgmma.commit_group")]
    assert group.count("wgmma.mma_async") == 4
    assert len(re.findall(r"cvt\.u64\.u32", group)) == 2
    assert len(re.findall(r"add\.s64\s+%rd\d+, %rd\d+, \d+;", group)) == 6  # 3 K steps x 2


@pytest.mark.parametrize(
    "block,stages,seeds", [((128, 256, 32), 4, 1 + 2), ((128, 256, 64), 3, 1 + 4)]
)
def test_copies_share_a_k_mask_per_block_of_16_rows(block, stages, seeds):
    """The loop's copies compute a mask (a cp.async source size, `selp 16, 0`) per block of
    16 K indices a thread touches, as upstream's: with K % 16 == 0, `offs_k < k_left` is
    constant on each (the axis info's constancy). A: one per thread (its 8 contiguous K);
    B (BLOCK_K x 256, a row per warp, rows w + 8i): BLOCK_K / 16. Each row its own
    compare made 2 (4) more seeds and 10 (20) more SASS instructions per trip."""
    body = loop_body(compile_dot("fp16", "row", "row", block, 8, stages).asm["ptx"])
    assert body.count("cp.async.cg") == 6 * block[2] // 32
    assert len(re.findall(r"selp\.b32\s+%r\d+, 16, 0,", body)) == seeds


def test_copies_advance_their_pointers_in_place_last():
    """After the copies, each of A's two 64-bit pointers a thread copies from is advanced
    in place (`add.s64 %rd, %rd, 64`: 32 fp16 along K), as upstream's loop does; advanced
    before the copies, ptxas kept old and new and copied the new back (4 more SASS moves
    per trip at 128x256x32, 94 -> 90 instructions)."""
    body = loop_body(compile_dot("fp16", "row", "row", (128, 256, 32), 8, 4).asm["ptx"])
    tail = body[body.rindex("cp.async.commit_group") :]
    advances = re.findall(r"add\.s64\s+(%rd\d+), (%rd\d+), 64;", tail)
    assert len(advances) == 2 and all(new == old for new, old in advances), tail
    assert "mov.b64" not in body


def test_escape_hatch_waits_for_each_wgmma(monkeypatch, ptxas):
    monkeypatch.setenv("TRITIUM_WGMMA_SYNC", "1")
    ptx = compile_dot("fp16", "row", "row", (128, 128, 64), 8, 3).asm["ptx"]
    assert "wgmma.wait_group.sync.aligned 1" not in ptx
    assert steps(loop_body(ptx)) == ["cp.async.wait_group", "bar.sync", "cp.async",
                                     "cp.async.commit_group", "wgmma.fence", "wgmma.mma_async",
                                     "wgmma.commit_group", "wgmma.wait_group.sync.aligned 0"]  # fmt: skip


def test_ttgir_reads_as_upstreams():
    ttgir = compile_dot("fp16", "row", "row", (128, 128, 64), 8, 3, stop="ttgir").asm["ttgir"]
    for line in (
        "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], "
        "instrShape = [16, 128, 16]}>",
        "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
        "!ttg.memdesc<3x128x64xf16, #shared, #smem, mutable>",
        "{inputPrecision = 0 : i32, isAsync = true} : !ttg.memdesc<128x64xf16, #shared, #smem, "
        "mutable> * !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<128x128xf32, #mma>",
        "{pendings = 1 : i32} : tensor<128x128xf32, #mma>, !ttg.memdesc<128x64xf16",
        "{pendings = 0 : i32} : tensor<128x128xf32, #mma> loc(",
    ):
        assert line in ttgir, line
    text = print_ir(parse_module(ttgir))  # tritium reads its own TTGIR back
    assert print_ir(parse_module(text)) == text


UPSTREAM_HOPPER = """\
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], instrShape = [16, 128, 16]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#shared1 = #ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = true, elementBitWidth = 8}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%a: !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, %b: !ttg.memdesc<64x128xf16, #shared, #smem, mutable>, %c: tensor<128x128xf32, #mma>, %x: tensor<64x128xi8, #blocked>) attributes {noinline = false} {
    %y = ttg.local_alloc %x : (tensor<64x128xi8, #blocked>) -> !ttg.memdesc<64x128xi8, #shared1, #smem>
    ttng.fence_async_shared {bCluster = false}
    %d = ttng.warp_group_dot %a, %b, %c {inputPrecision = 0 : i32, isAsync = true} : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> * !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<128x128xf32, #mma>
    %r:3 = ttng.warp_group_dot_wait %d, %a, %b {pendings = 1 : i32} : tensor<128x128xf32, #mma>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
    tt.return
  }
}
"""


def test_upstreams_hopper_ttgir_parses_and_round_trips():
    """Lines of upstream 3.6's TTGIR for the H100 (its matmul and an int8 dot)."""
    m = parse_module(UPSTREAM_HOPPER)
    m.verify()
    text = print_ir(m)
    assert print_ir(parse_module(text)) == text
    assert "ttng.warp_group_dot_wait %d, %a, %b {pendings = 1 : i32}" in text


@pytest.mark.parametrize(
    "kind,block,warps,arch",
    [("fp16", (64, 64, 32), 2, "sm_90a"),  # fewer warps than a warpgroup
     ("fp16", (32, 64, 32), 4, "sm_90a"),  # M below 64
     ("fp32", (64, 64, 32), 4, "sm_90a"),  # tf32 with B N-major: wgmma transposes 16-bit tiles only
     ("fp16", (64, 64, 32), 4, "sm_90")],  # sm_90 without the "a": mma.sync
)  # fmt: skip
def test_ineligible_dots_keep_mma_sync(kind, block, warps, arch, ptxas):
    ptx = compile_dot(kind, "row", "row", block, warps, 3, arch=arch).asm["ptx"]
    assert f".target {arch}\n" in ptx and "mma.sync" in ptx and "wgmma" not in ptx
    assert tools.ptxas(ptx, arch)[:4] == b"\x7fELF"


@pytest.mark.parametrize("swizzle,shape,transposed", [(128, (64, 128), False), (64, (32, 64), True),
                                                      (32, (16, 64), False)])  # fmt: skip
def test_nvmma_tile_offsets_and_descriptor(swizzle, shape, transposed):
    """The nvmma tile (fp16) as the docstring states it: slabs of swizzle-wide rows, 16-byte
    chunks XORed with (row / perPhase) % maxPhase, every element at a distinct offset; the
    descriptor's constant fields (slab stride, 8-row stride, swizzle mode)."""
    from tritium.codegen.lower.dot_wgmma import descriptor_bits
    from tritium.ir.shared_layout import nvmma_tile
    from tritium.ir.ttg_mma import NVMMASharedEncodingAttr

    tile = nvmma_tile(NVMMASharedEncodingAttr(swizzle, transposed, 16), shape)
    width, phases = swizzle // 2, swizzle // 16
    rows = shape[1] if transposed else shape[0]
    seen = set()
    for i in range(shape[0]):
        for j in range(shape[1]):
            r, c = (j, i) if transposed else (i, j)
            chunk = (c % width) // 8 ^ (r // (8 // phases)) % phases
            want = (c // width) * rows * width + r * width + chunk * 8 + c % 8
            assert tile.offset((i, j)) == want == tile.offset_of_bits((i, j))
            seen.add(want)
    assert len(seen) == shape[0] * shape[1]
    bits = descriptor_bits(tile, 2)
    mode = {128: 1, 64: 2, 32: 3}[swizzle]
    assert bits == (rows * swizzle >> 4) << 16 | (8 * swizzle >> 4) << 32 | mode << 62


@pytest.mark.parametrize("swizzle,shape,transposed", [(128, (64, 64), False), (128, (64, 128), True),
                                                      (64, (32, 128), False), (32, (16, 64), True)])  # fmt: skip
def test_transposed_view_of_an_nvmma_tile(swizzle, shape, transposed):
    """`ttg.memdesc_trans` of an nvmma tile (the attention backward's Q and dO stages, read
    as B of S^T = K Q^T and of dV += P^T dO): `transposed` flips, the shape swaps, and
    every element of the view lies at the bytes the tile put it; the view's descriptor is
    that of a tile written in the view's orientation."""
    from tritium.codegen.lower.dot_wgmma import descriptor_bits
    from tritium.ir.shared_layout import memdesc_tile
    from tritium.ir.ttg_memory import transposed_memdesc
    from tritium.ir.ttg_mma import MemDescType, NVMMASharedEncodingAttr
    from tritium.ir.types import f16

    tile_t = MemDescType(list(shape), f16, NVMMASharedEncodingAttr(swizzle, transposed, 16))
    view_t = transposed_memdesc(tile_t, [1, 0])
    want = MemDescType(list(shape[::-1]), f16, NVMMASharedEncodingAttr(swizzle, not transposed, 16))
    assert view_t == want
    tile, view = memdesc_tile(tile_t), memdesc_tile(view_t)
    for i in range(shape[0]):
        for j in range(shape[1]):
            assert view.offset((j, i)) == tile.offset((i, j))
    assert descriptor_bits(view, 2) == descriptor_bits(tile, 2)
