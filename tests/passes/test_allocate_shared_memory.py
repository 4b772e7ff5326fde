"""allocate-shared-memory: offsets for every scratch buffer, `ttg.shared` on the module,
both kept through printing and parsing; and where the backend's membar analysis puts
barriers for those buffers."""

from __future__ import annotations

from pathlib import Path

from tritium.codegen.allocation import SMALL, allocate, read_allocation
from tritium.codegen.membar import barrier_points
from tritium.codegen.scratch import scratch_bytes
from tritium.ir import tt
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir
from tritium.passes.allocate_shared_memory import allocate_shared_memory
from tritium.passes.pipeline import TTGIR_PASSES

DATA = Path(__file__).resolve().parents[1] / "data" / "upstream"


def load(name: str):
    return parse_module((DATA / f"{name}.ttgir").read_text())


def reduces(module):
    return [op for op in module.walk() if isinstance(op, tt.ReduceOp)]


def test_it_is_the_last_ttgir_pass():
    # (allocate-shared-buffers then places the local_alloc buffers around this scratch)
    assert TTGIR_PASSES[-2:] == ("allocate-shared-memory", "allocate-shared-buffers")


def test_softmax_reductions_get_their_own_16_bytes():
    m = load("softmax_kernel")  # 4 warps: 4 partials of f32 per reduction
    assert allocate_shared_memory(m) == 32
    assert [op.attributes["allocation.offset"].value.data for op in reduces(m)] == [0, 16]
    text = print_ir(m)
    assert "ttg.shared = 32 : i32" in text and "allocation.offset = 16 : i32" in text
    again = read_allocation(parse_module(text))  # the annotations read back
    assert again.total == 32 and sorted(again.offsets.values()) == [0, 16]


def test_single_warp_reductions_need_no_shared_memory():
    text = (DATA / "softmax_kernel.ttgir").read_text()
    text = text.replace("warpsPerCTA = [4]", "warpsPerCTA = [1]").replace(
        '"ttg.num-warps" = 4', '"ttg.num-warps" = 1'
    )
    m = parse_module(text)
    assert allocate_shared_memory(m) == 0 and not any(scratch_bytes(op) for op in m.walk())


def test_large_buffers_share_one_region_after_the_small_ones():
    m = load("rms_norm_simple_kernel")
    (red,) = reduces(m)
    alloc = allocate(m)
    assert alloc.offsets == {red: 0} and alloc.total == 32  # 8 warps x f32
    # Pretend two more ops need big buffers: they overlap, after the small one.
    from tritium.codegen import allocation as A

    sizes = {red: 32}
    ops = [op for op in m.walk() if op.name == "tt.load"]
    for op in ops:
        sizes[op] = 4 * SMALL
    orig = A.scratch_bytes
    A.scratch_bytes = lambda op: sizes.get(op, 0)
    try:
        alloc = allocate(m)
    finally:
        A.scratch_bytes = orig
    assert [alloc.offsets[op] for op in ops] == [32, 32]
    assert alloc.total == 32 + 4 * SMALL


def test_barriers_straight_line_and_in_a_loop():
    m = load("softmax_kernel")
    func = next(op for op in m.walk() if isinstance(op, tt.FuncOp))
    first, second = reduces(m)
    points = barrier_points(func, allocate(m))
    # Disjoint buffers: only read-after-write barriers.
    assert points == {(id(first), 1), (id(second), 1)}

    m = load("online_softmax_kernel")  # two reductions in an scf.for
    func = next(op for op in m.walk() if isinstance(op, tt.FuncOp))
    a, b = reduces(m)
    assert barrier_points(func, allocate(m)) == {(id(a), 1), (id(b), 1)}  # b's RAW bar
    # covers a's reads before the next trip writes a again; likewise a's for b.

    # One reduction alone in the loop: the next trip's write must wait for this trip's reads.
    text = (DATA / "online_softmax_kernel.ttgir").read_text()
    m = parse_module(text)
    a, b = reduces(m)
    alloc = allocate(m)
    alloc.offsets.pop(b)
    func = next(op for op in m.walk() if isinstance(op, tt.FuncOp))
    assert barrier_points(func, alloc) == {(id(a), 0), (id(a), 1)}


def test_reused_bytes_need_a_write_after_read_barrier():
    m = load("softmax_kernel")
    first, second = reduces(m)
    alloc = allocate(m)
    alloc.offsets[second] = alloc.offsets[first]  # same bytes: write-after-read
    func = next(op for op in m.walk() if isinstance(op, tt.FuncOp))
    assert barrier_points(func, alloc) == {(id(first), 1), (id(second), 0), (id(second), 1)}


def test_barriers_in_a_function_with_branches():
    m = load("softmax_causal_simple_kernel")  # cf.cond_br: an early return
    func = next(op for op in m.walk() if isinstance(op, tt.FuncOp))
    assert len(func.body.blocks) > 1
    first, second = reduces(m)
    alloc = allocate(m)
    assert barrier_points(func, alloc) == {(id(first), 1), (id(second), 1)}
    alloc.offsets[second] = alloc.offsets[first]
    assert (id(second), 0) in barrier_points(func, alloc)
