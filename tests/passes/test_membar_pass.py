"""The `membar` pass: barriers are `gpu.barrier` ops in the TTGIR, where the analysis
(tests/analysis/test_membar.py) says, so `--dump-dir` shows them; the backend lowers each
to one `bar.sync`; the TTGIR interpreter's race model checks their placement."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tritium
from tests.codegen import reduce_kernels as rk
from tests.codegen.dot_kernels import matmul_kernel
from tests.passes.ttgir_interpreter import HazardError
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir
from tritium.passes.membar import membar
from tritium.passes.pipeline import run_passes

OP = re.compile(r"(?:%[\w#:, %]+ = )?\"?([a-z]+\.[a-z_]+)")
DATA = Path(__file__).resolve().parents[1] / "data" / "upstream"
MATMUL_SIG = "*fp32:16,*fp32:16,*fp32:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32,i32"
MATMUL_CONSTS = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, PRECISION="ieee", OUT_F16=False,
                     BF16=False)  # fmt: skip


def lines_around(text: str, name: str) -> list[tuple[str, str]]:
    """(line before, line after) of every `gpu.barrier` in printed IR, ops only."""
    ops = [ln.strip() for ln in text.splitlines() if ln.strip()]
    out = []
    for i, ln in enumerate(ops):
        if ln == name:
            out.append((ops[i - 1], ops[i + 1]))
    return out


def dumps(tmp_path: Path, fn, **kw) -> dict[str, str]:
    tritium.compile(fn, dump_dir=tmp_path, stop="ptx", **kw)
    return {re.sub(r"^\d+-", "", p.stem): p.read_text() for p in sorted(tmp_path.iterdir())}


def test_a_reduction_in_a_loop_shows_its_barrier_in_the_dump(tmp_path):
    """The loop's reduction reuses its scratch every trip: a barrier before it (the
    previous trip's reads); its own write -> read barrier is part of the op, as
    upstream. The dump after `membar` shows the op; the PTX has one bar.sync for it."""
    d = dumps(tmp_path, rk.full_reduce_kernel, signature="*fp32:16,*fp32:16,i32",
              constexprs={"BLOCK": 1024})  # fmt: skip
    assert "gpu.barrier" not in d["allocate-shared-memory"]
    text = d["membar"]
    assert text.count("gpu.barrier") == 1
    loop = text[text.index("scf.for") : text.index("scf.yield")]
    ((_, after),) = lines_around(loop, "gpu.barrier")
    assert '"tt.reduce"' in after
    module = parse_module(text)
    barrier = next(op for op in module.walk() if op.name == "gpu.barrier")
    assert barrier.next_op.attributes["allocation.offset"].value.data == 0
    # in the loop: the barrier op + the reduction's own; max and argmax: their own one each
    assert d["ptx"].count("bar.sync") == 4


def test_a_pipelined_matmul_shows_its_barriers_in_the_dump(tmp_path):
    """One barrier after each async_wait (the loop's and the final one); the deallocs
    after the final one need no other; the rings' local_allocs get one (their bytes may
    have been scratch); the prologue's second pointer conversion reuses the first one's
    scratch (write after read). In the PTX, one bar.sync per barrier op and one inside
    each op with scratch (between its writes and its reads)."""
    d = dumps(tmp_path, matmul_kernel, signature=MATMUL_SIG, constexprs=MATMUL_CONSTS,
              num_warps=4, num_stages=3)  # fmt: skip
    text = d["membar"]
    around = lines_around(text, "gpu.barrier")
    assert text.count("ttg.async_wait") == 2
    assert sum("ttg.async_wait" in before for before, _ in around) == 2
    assert sum("ttg.local_alloc" in after for _, after in around) == 1
    ops = [m.group(1) for ln in text.splitlines() if (m := OP.match(ln.strip()))]
    last_wait = max(i for i, o in enumerate(ops) if o == "ttg.async_wait")
    assert ops[last_wait + 1 : last_wait + 4] == ["gpu.barrier"] + ["ttg.local_dealloc"] * 2
    converts = [after for _, after in around if "ttg.convert_layout" in after]
    assert len(converts) == 1
    loop = text[text.index("scf.for") : text.index("scf.yield")]
    assert loop.count("gpu.barrier") == 1  # the wait's: the loop's only barrier op
    scratch_ops = sum("allocation.offset" in ln and "ttg.local_alloc" not in ln
                      for ln in text.splitlines())  # fmt: skip
    assert d["ptx"].count("bar.sync") == text.count("gpu.barrier") + scratch_ops


def test_the_pass_is_idempotent_and_keeps_existing_barriers():
    module = parse_module((DATA / "matmul_tiled_kernel.ttgir").read_text())
    run_passes(module, ["allocate-shared-memory", "membar"], ttgir=True)
    text = print_ir(module)
    assert membar(module) == 0 and print_ir(module) == text
    # upstream's order: a barrier between this trip's reads and the copies into that stage
    loop = text[text.index("scf.for") : text.index("scf.yield")]
    around = lines_around(loop, "gpu.barrier")
    assert [("ttg.async_wait" in b, "ttg.async_copy_global_to_local" in a) for b, a in around] == [
        (True, False),
        (False, True),
    ]
    assert parse_module(text) is not None  # gpu.barrier reads back


def test_the_race_model_needs_the_barrier_after_the_wait():
    """Without the barrier after the loop's async_wait, a thread may read a stage before
    the other threads' copies into it are visible: the TTGIR interpreter flags it."""
    from tests.passes.test_software_pipeliner import run_interpreted

    k = tritium.compile(matmul_kernel, signature=MATMUL_SIG, constexprs=MATMUL_CONSTS,
                        num_warps=4, num_stages=3, stop="ttgir")  # fmt: skip
    text = k.asm["ttgir"]
    a = np.ones((32, 48), np.float32)
    b = np.ones((48, 32), np.float32)
    c, _ = run_interpreted(parse_module(text), (32, 32, 16), a, b, "wait")
    np.testing.assert_allclose(c, a @ b)
    lines = text.splitlines()
    wait = next(i for i, ln in enumerate(lines) if re.search(r"ttg.async_wait.*num = 1 ", ln))
    assert lines[wait + 1].strip().startswith("gpu.barrier")
    broken = "\n".join(lines[: wait + 1] + lines[wait + 2 :])
    with pytest.raises(HazardError, match="RAW"):
        run_interpreted(parse_module(broken), (32, 32, 16), a, b, "wait")
