"""The shared-memory allocator (tritium.analysis.allocation): one liveness-based placement of
the ops' scratch and the `ttg.local_alloc` tiles, and reading it back from the IR."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.passes.pass_helpers import run
from tritium.analysis import allocation as A
from tritium.analysis.allocation import SMALL, allocate, buffers, read_allocation
from tritium.analysis.scratch import scratch_bytes
from tritium.ir import tt
from tritium.ir.parser import parse_module
from tritium.passes.allocate_shared_memory import allocate_shared_memory

DATA = Path(__file__).resolve().parents[1] / "data" / "upstream"
HEAD = (
    '#b = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>\n'
    "#s = #ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>\n"
    "#smem = #ttg.shared_memory\n"
    'module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, '
    'ttg.target = "cuda:89", "ttg.threads-per-warp" = 32 : i32} {\n'
    "  tt.func public @k(%p: !tt.ptr<f16>, %n: i32) {\n"
    "    %c0 = arith.constant 0 : i32\n"
    "    %c1 = arith.constant 1 : i32\n"
)
TAIL = "    tt.return\n  }\n}\n"
MEM = "!ttg.memdesc<{}x64x32xf16, #s, #smem, mutable>"


def load(name: str):
    return parse_module((DATA / f"{name}.ttgir").read_text())


def reduces(module):
    return [op for op in module.walk() if isinstance(op, tt.ReduceOp)]


def allocs(module):
    return [op for op in module.walk() if op.name == "ttg.local_alloc"]


def test_reductions_get_their_own_16_bytes():
    m = load("softmax_kernel")  # 4 warps: 4 partials of f32 per reduction
    alloc = allocate(m)
    assert [alloc.offsets[op] for op in reduces(m)] == [0, 16] and alloc.total == 32


def test_single_warp_reductions_need_no_shared_memory():
    text = (DATA / "softmax_kernel.ttgir").read_text()
    text = text.replace("warpsPerCTA = [4]", "warpsPerCTA = [1]").replace(
        '"ttg.num-warps" = 4', '"ttg.num-warps" = 1'
    )
    m = parse_module(text)
    assert not any(scratch_bytes(op) for op in m.walk())
    assert allocate(m).offsets == {} and allocate(m).total == 0


def test_large_scratch_shares_one_region_after_the_small(monkeypatch):
    m = load("rms_norm_simple_kernel")
    (red,) = reduces(m)
    alloc = allocate(m)
    assert alloc.offsets == {red: 0} and alloc.total == 32  # 8 warps x f32
    # Pretend two more ops need big buffers: they overlap, after the small one.
    loads = [op for op in m.walk() if op.name == "tt.load"]
    sizes = {red: 32} | {op: 4 * SMALL for op in loads}
    monkeypatch.setattr(A, "scratch_bytes", lambda op: sizes.get(op, 0))
    alloc = allocate(m)
    assert [alloc.offsets[op] for op in loads] == [32, 32]
    assert alloc.total == 32 + 4 * SMALL


def tiles(body: str) -> str:
    return HEAD + body + TAIL


def test_tiles_by_liveness_largest_first_and_128_byte_aligned():
    # %a and %b live together; %c starts after both ended: it reuses the bytes
    m = parse_module(
        tiles(
            f"    %a = ttg.local_alloc : () -> {MEM.format(2)}\n"
            f"    %b = ttg.local_alloc : () -> {MEM.format(3)}\n"
            f"    ttg.local_dealloc %a : {MEM.format(2)}\n"
            f"    ttg.local_dealloc %b : {MEM.format(3)}\n"
            f"    %c = ttg.local_alloc : () -> {MEM.format(1)}\n"
            f"    ttg.local_dealloc %c : {MEM.format(1)}\n"
        )
    )
    a, b, c = allocs(m)
    alloc = allocate(m)
    tile = 64 * 32 * 2
    assert alloc.offsets[b] == 0 and alloc.offsets[a] == 3 * tile  # the larger one first
    assert alloc.offsets[c] == 0 and alloc.total == 5 * tile
    lives = {buf.owner: (buf.start, buf.end) for buf in buffers(m)}
    assert lives[a][1] < lives[c][0] and lives[b][1] < lives[c][0]


CONVERT = (
    "#r = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>\n"
    "#t = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>\n"
)


def with_convert(before: str, after: str) -> str:
    cvt = (
        "    %x = arith.constant dense<1.0> : tensor<32x32xf32, #r>\n"
        "    %y = ttg.convert_layout %x : tensor<32x32xf32, #r> -> tensor<32x32xf32, #t>\n"
    )
    return CONVERT + HEAD + before + cvt + after + TAIL


def test_a_tile_shares_scratch_bytes_only_when_freed_and_no_scratch_runs_in_its_life():
    alloc_a = f"    %a = ttg.local_alloc : () -> {MEM.format(1)}\n"
    free_a = f"    ttg.local_dealloc %a : {MEM.format(1)}\n"
    # (1) freed, the conversion runs after it: the tile starts at 0 like the conversion
    m = parse_module(with_convert(alloc_a + free_a, ""))
    (a,) = allocs(m)
    cvt = next(op for op in m.walk() if op.name == "ttg.convert_layout")
    alloc = allocate(m)
    assert alloc.offsets[a] == 0 and alloc.offsets[cvt] == 0
    scratch = scratch_bytes(cvt)
    assert scratch == 32 * 33 * 4  # rows padded by one element: a transpose
    # (2) the conversion runs while the tile lives: above it, 128-byte aligned
    m = parse_module(with_convert(alloc_a, free_a))
    (a,) = allocs(m)
    assert allocate(m).offsets[a] == -(-scratch // 128) * 128
    # (3) never freed: above the scratch too
    m = parse_module(with_convert(alloc_a, ""))
    assert allocate(m).offsets[allocs(m)[0]] == -(-scratch // 128) * 128


def test_operand_tiles_live_until_the_dot_and_sit_above_the_epilogue_scratch():
    from tests.passes.test_accelerate_matmul import dot_module

    passes = ["accelerate-matmul", "remove-layout-conversions", "optimize-dot-operands"]
    module, _ = run(dot_module(), passes, ttgir=True)
    alloc = allocate(module)
    cvt = next(op for op in module.walk() if op.name == "ttg.convert_layout")
    end = alloc.offsets[cvt] + alloc.sizes[cvt]  # the epilogue's mma -> blocked conversion
    a, b = allocs(module)
    assert alloc.offsets[a] >= end and alloc.offsets[b] >= end  # no local_dealloc
    assert alloc.offsets[a] != alloc.offsets[b]  # both read by the dot: disjoint
    assert alloc.total == max(alloc.offsets[a], alloc.offsets[b]) + 64 * 32 * 2


def test_read_back_from_the_ir():
    m = load("softmax_kernel")
    allocate_shared_memory(m)
    again = read_allocation(m)
    assert again.total == 32 and sorted(again.offsets.values()) == [0, 16]
    first, _ = reduces(m)
    assert A.offset_of(first) == 0 and A.shared_total(m) == 32
    del first.attributes[A.OFFSET_ATTR]
    with pytest.raises(ValueError, match="run allocate-shared-memory first"):
        read_allocation(m)
