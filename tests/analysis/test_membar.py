"""The barrier analysis (tritium.analysis.membar): one dataflow over the ops' scratch and the
shared tiles, straight-line, in loops, through branches; which ops need a barrier before
or after them (the `membar` pass then inserts `gpu.barrier`: tests/passes/test_membar_pass.py)."""

from __future__ import annotations

from pathlib import Path

from tritium.analysis.allocation import Allocation, allocate
from tritium.analysis.membar import barriers
from tritium.ir import tt
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir

DATA = Path(__file__).resolve().parents[1] / "data" / "upstream"


def load(name: str):
    return parse_module((DATA / f"{name}.ttgir").read_text())


def func_of(module):
    return next(op for op in module.walk() if isinstance(op, tt.FuncOp))


def reduces(module):
    return [op for op in module.walk() if isinstance(op, tt.ReduceOp)]


def names(ops) -> list[str]:
    return sorted(op.name for op in ops)


# --------------------------------------------------------------------------- scratch


def test_disjoint_reductions_need_only_their_own_barriers():
    # each reduction's write -> read barrier is its own (the lowering emits it)
    for name in ("softmax_kernel", "online_softmax_kernel", "softmax_causal_simple_kernel"):
        m = load(name)
        found = barriers(func_of(m), allocate(m))
        assert found.before == set() and found.after == set(), name


def test_a_reduction_alone_in_a_loop_waits_for_the_last_trip_s_reads():
    m = load("online_softmax_kernel")  # two reductions in an scf.for: each one's
    a, b = reduces(m)  # barrier covers the other's reads before the next trip writes
    alloc = allocate(m)
    alloc.offsets.pop(b)  # one reduction alone in the loop: write after read
    assert barriers(func_of(m), alloc).before == {a}


def test_reused_bytes_need_a_write_after_read_barrier():
    m = load("softmax_kernel")
    first, second = reduces(m)
    alloc = allocate(m)
    alloc.offsets[second] = alloc.offsets[first]
    assert barriers(func_of(m), alloc).before == {second}


def test_branches_join_their_states():
    m = load("softmax_causal_simple_kernel")  # cf.cond_br: an early return
    assert len(func_of(m).body.blocks) > 1
    first, second = reduces(m)
    alloc = allocate(m)
    alloc.offsets[second] = alloc.offsets[first]
    assert barriers(func_of(m), alloc).before == {second}


# --------------------------------------------------------------------------- tiles


PIPELINED = """
#b = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#s = #ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:89", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%p: !tt.ptr<f16>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %ptrs = tt.splat %p : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>, #b>
    %buf = ttg.local_alloc : () -> !ttg.memdesc<3x64x32xf16, #s, #smem, mutable>
    %s0 = ttg.memdesc_index %buf[%c0] : !ttg.memdesc<3x64x32xf16, #s, #smem, mutable> -> !ttg.memdesc<64x32xf16, #s, #smem, mutable>
    %t0 = ttg.async_copy_global_to_local %ptrs, %s0 : tensor<64x32x!tt.ptr<f16>, #b> -> <64x32xf16, #s, #smem, mutable>
    %g0 = ttg.async_commit_group tokens %t0
    scf.for %i = %c0 to %n step %c1 : i32 {
      %w = ttg.async_wait {num = 1 : i32}
      %ins = arith.remsi %i, %c2 : i32
      %sw = ttg.memdesc_index %buf[%ins] : !ttg.memdesc<3x64x32xf16, #s, #smem, mutable> -> !ttg.memdesc<64x32xf16, #s, #smem, mutable>
      %t = ttg.async_copy_global_to_local %ptrs, %sw : tensor<64x32x!tt.ptr<f16>, #b> -> <64x32xf16, #s, #smem, mutable>
      %g = ttg.async_commit_group tokens %t
      %sr = ttg.memdesc_index %buf[%i] : !ttg.memdesc<3x64x32xf16, #s, #smem, mutable> -> !ttg.memdesc<64x32xf16, #s, #smem, mutable>
      %x = ttg.local_load %sr : !ttg.memdesc<64x32xf16, #s, #smem, mutable> -> tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
      %y = ttg.local_load %sr : !ttg.memdesc<64x32xf16, #s, #smem, mutable> -> tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
      %u = ttg.async_copy_global_to_local %ptrs, %sw : tensor<64x32x!tt.ptr<f16>, #b> -> <64x32xf16, #s, #smem, mutable>
      scf.yield
    }
    %wz = ttg.async_wait {num = 0 : i32}
    ttg.local_dealloc %buf : !ttg.memdesc<3x64x32xf16, #s, #smem, mutable>
    tt.return
  }
}
"""


def test_tile_barriers():
    """Copies right after the wait need no barrier, nor do the reads after them (an async
    write is synchronised by async_wait, after which a barrier goes); a copy after reads of
    the same allocation does (WAR). A local_alloc without a source and a local_dealloc are
    barriers whatever the accesses."""
    module = parse_module(PIPELINED)
    alloc = allocate(module)
    (buf,) = [op for op in module.walk() if op.name == "ttg.local_alloc"]
    assert alloc.offsets[buf] == 0 and alloc.total == 3 * 64 * 32 * 2
    found = barriers(func_of(module), alloc)
    copies = [op for op in module.walk() if op.name == "ttg.async_copy_global_to_local"]
    assert names(found.after) == ["ttg.async_wait"] * 2
    assert found.before == {
        buf,
        copies[-1],
        *[op for op in module.walk() if op.name == "ttg.local_dealloc"],
    }


def _tagged(read: str | None, refill: str | None) -> str:
    """PIPELINED with the pipeliner's ring tags on the read view and the copies' view."""
    text = PIPELINED
    for name, role in (("%sr = ttg.memdesc_index %buf[%i]", read), ("%sw = ttg.memdesc_index %buf[%ins]", refill)):  # fmt: skip
        if role is not None:
            text = text.replace(name, f'{name} {{ring = "{role}"}}')
    return text


def test_a_refill_after_reads_of_another_stage_needs_no_barrier():
    """The pipeliner's tags (`{ring = "read"}` / `{ring = "refill"}`) say the copies of a
    trip write another stage than its reads: the copy after the reads needs no barrier.
    Untagged, or both views tagged alike, the write after read keeps its barrier."""
    copies = None
    for read, refill, barrier in (("read", "refill", False), ("read", None, True),
                                  (None, "refill", True), ("read", "read", True)):  # fmt: skip
        module = parse_module(_tagged(read, refill))
        if read is not None:
            assert f'{{ring = "{read}"}}' in print_ir(module)  # the tag survives printing
        copies = [op for op in module.walk() if op.name == "ttg.async_copy_global_to_local"]
        found = barriers(func_of(module), allocate(module))
        assert (copies[-1] in found.before) == barrier, (read, refill)


# --------------------------------------------------------------------------- both at once

MIXED = """
#b = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#r = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#t = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
#s = #ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:89", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k() {
    %x = arith.constant dense<1.0> : tensor<32x32xf32, #r>
    %h = arith.constant dense<1.0> : tensor<64x32xf16, #b>
    %m = ttg.local_alloc : () -> !ttg.memdesc<64x32xf16, #s, #smem, mutable>
    ttg.local_store %h, %m : tensor<64x32xf16, #b> -> !ttg.memdesc<64x32xf16, #s, #smem, mutable>
    %y = ttg.convert_layout %x : tensor<32x32xf32, #r> -> tensor<32x32xf32, #t>
    %l = ttg.local_load %m : !ttg.memdesc<64x32xf16, #s, #smem, mutable> -> tensor<64x32xf16, #b>
    ttg.local_store %h, %m : tensor<64x32xf16, #b> -> !ttg.memdesc<64x32xf16, #s, #smem, mutable>
    tt.return
  }
}
"""


def test_one_state_for_scratch_and_tiles():
    """The conversion's own barrier (between its scratch write and read) also orders the
    tile store before it with the tile load after it: no barrier before the load; the
    second store must wait for the load (write after read)."""
    m = parse_module(MIXED)
    alloc = allocate(m)
    tile, cvt = (
        next(op for op in m.walk() if op.name == n)
        for n in ("ttg.local_alloc", "ttg.convert_layout")
    )
    assert alloc.range_of(tile)[0] >= alloc.range_of(cvt)[1]  # the conversion runs in its life
    found = barriers(func_of(m), alloc)
    stores = [op for op in m.walk() if op.name == "ttg.local_store"]
    assert found.before == {tile, stores[1]}  # (a local_alloc without a source: always)


def test_scratch_and_tiles_on_the_same_bytes():
    """When a tile shares bytes with a conversion's scratch, the conversion's write waits
    for the tile store before it (write after write), and the next store waits for the
    tile load (write after read); the load itself is ordered by the conversion's own
    barrier."""
    m = parse_module(MIXED)
    tile, cvt = (
        next(op for op in m.walk() if op.name == n)
        for n in ("ttg.local_alloc", "ttg.convert_layout")
    )
    alloc = allocate(m)
    shared = Allocation(offsets={tile: 0, cvt: 0}, sizes=dict(alloc.sizes), total=alloc.total)
    stores = [op for op in m.walk() if op.name == "ttg.local_store"]
    assert barriers(func_of(m), shared).before == {tile, cvt, stores[1]}
