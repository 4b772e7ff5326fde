"""The software pipeliner and the backend decide with one AxisInfo: a load the pipeliner
turns into async copies (because the axis info lets each thread move at least 4 bytes at
once) becomes cp.async instructions of exactly the width the same analysis gives on the
final TTGIR, where its pointers are loop-carried run-ahead values. A disagreement would
silently leave the copies synchronous (narrower than cp.async moves) or misaligned."""

from __future__ import annotations

import pathlib
import re

import pytest

import tritium
from tests.codegen.dot_kernels import matmul_kernel
from tritium.analysis.axis_info import AxisInfoAnalysis
from tritium.codegen import llir_to_ptx, lower_to_llvm
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir
from tritium.ir.types import bitwidth, element_type
from tritium.passes.pipeline import run_ttgir_passes

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "upstream"


def _seed_ttir() -> str:
    return (DATA / "matmul_tiled_kernel.ttir").read_text()


def _matmul_ttir(sig: str, block: tuple[int, int, int], precision: str) -> str:
    consts = dict(BLOCK_M=block[0], BLOCK_N=block[1], BLOCK_K=block[2], PRECISION=precision,
                  OUT_F16=False, BF16=False)  # fmt: skip
    k = tritium.compile(matmul_kernel, signature=sig, constexprs=consts, stop="ttir")
    return k.asm["ttir"]


def _pipeline(ttir: str, stages: int):
    """(the TTGIR just before the `pipeline` pass, the final TTGIR)."""
    from tritium.passes.pipeline import run_ttir_passes

    module = parse_module(ttir)
    run_ttir_passes(module, {})
    seen: dict[str, str] = {}

    def dump(name: str, m) -> None:
        if "pipeline" not in seen:
            seen["before" if name != "pipeline" else "pipeline"] = print_ir(m)

    run_ttgir_passes(module, {"num_stages": stages, "arch": "sm_89"}, dump=dump)
    return parse_module(seen["before"]), module


def _loop_loads(module):
    return [
        op
        for op in module.walk()
        if op.name == "tt.load" and op.parent_op() is not None and op.parent_op().name == "scf.for"
    ]


CASES = {
    # fp32 seed matmul: unit strides, nothing proves alignment of a thread's run: 4 bytes
    "seed_fp32": (_seed_ttir, 3),
    # fp16, K and strides multiples of 16: 8 halves per thread and copy (16 bytes)
    "fp16": (
        lambda: _matmul_ttir(
            "*fp16:16,*fp16:16,*fp32:16,i32,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32,i32",
            (64, 64, 32),
            "tf32",
        ),
        3,
    ),
    # fp32 with aligned strides and sizes: 16-byte copies
    "fp32_aligned": (
        lambda: _matmul_ttir(
            "*fp32:16,*fp32:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
            (64, 64, 32),
            "tf32",
        ),
        2,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_pipeliner_and_backend_agree(case):
    make, stages = CASES[case]
    before, after = _pipeline(make(), stages)
    loads = _loop_loads(before)
    copies = [op for op in after.walk() if op.name == "ttg.async_copy_global_to_local"]
    assert loads and copies, "nothing was pipelined"
    assert not _loop_loads(after), "a dot operand load stayed synchronous"
    pipeliner = AxisInfoAnalysis(before)  # what the pipeliner decided with
    backend = AxisInfoAnalysis(after)  # what the lowering reads (module.py)

    def nbytes(axis, op, ptr):
        return axis.vector_width(op) * bitwidth(element_type(ptr.type).pointee) // 8

    decided = sorted({nbytes(pipeliner, op, op.ptr) for op in loads})
    emitted = sorted({nbytes(backend, op, op.src) for op in copies})
    assert decided == emitted and decided[0] >= 4, (decided, emitted)
    llir, _ = lower_to_llvm(after)
    ptx = llir_to_ptx(llir, "sm_89")
    sizes = re.findall(r"cp\.async\.c[ag]\.shared\.global \[[^]]+\], \[[^]]+\], (0x\w+)", ptx)
    assert sizes and sorted({int(s, 16) for s in sizes}) == decided
