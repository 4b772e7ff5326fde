"""allocate-shared-memory: an offset for every scratch buffer and every `ttg.local_alloc`
tile, `ttg.shared` on the module, both kept through printing and parsing (the placement
itself: tests/analysis/test_allocation.py)."""

from __future__ import annotations

from pathlib import Path

from tritium.analysis.allocation import read_allocation
from tritium.ir import tt
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir
from tritium.passes.allocate_shared_memory import allocate_shared_memory
from tritium.passes.pipeline import TTGIR_PASSES, run_passes

DATA = Path(__file__).resolve().parents[1] / "data" / "upstream"


def load(name: str):
    return parse_module((DATA / f"{name}.ttgir").read_text())


def test_it_runs_last_but_one_before_membar():
    assert TTGIR_PASSES[-2:] == ("allocate-shared-memory", "membar")


def test_reductions_offsets_and_total_in_the_ir():
    m = load("softmax_kernel")  # 4 warps: 4 partials of f32 per reduction
    assert allocate_shared_memory(m) == 32
    reduces = [op for op in m.walk() if isinstance(op, tt.ReduceOp)]
    assert [op.attributes["allocation.offset"].value.data for op in reduces] == [0, 16]
    text = print_ir(m)
    assert "ttg.shared = 32 : i32" in text and "allocation.offset = 16 : i32" in text
    again = read_allocation(parse_module(text))  # the annotations read back
    assert again.total == 32 and sorted(again.offsets.values()) == [0, 16]


def test_tiles_and_scratch_in_one_pass():
    """Upstream's pipelined matmul: two 2-stage rings of tiles, live across the loop and
    freed after it, and the epilogue's conversion, which runs after they are freed: it
    reuses their bytes."""
    m = load("matmul_tiled_kernel")
    run_passes(m, ["allocate-shared-memory"], ttgir=True)
    tiles = [op for op in m.walk() if op.name == "ttg.local_alloc"]
    cvt = [op for op in m.walk() if op.name == "ttg.convert_layout"]
    offsets = sorted(op.attributes["allocation.offset"].value.data for op in tiles)
    assert offsets == [0, 2 * 64 * 32 * 4]  # the A ring (64x32 fp32), then B (32x64)
    assert all(op.attributes["allocation.offset"].value.data == 0 for op in cvt)
    assert m.attributes["ttg.shared"].value.data == 2 * (2 * 64 * 32 * 4)
