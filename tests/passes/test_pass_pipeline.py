"""The TTIR + TTGIR pipelines: hooks, options, and upstream's seed kernels end to end."""

from __future__ import annotations

import pathlib
import re
from collections import Counter

import pytest

from tritium.errors import ArgumentError
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir
from tritium.ir.ttg import BlockedEncodingAttr, num_warps_of
from tritium.ir.ttg_mma import DotOperandEncodingAttr, NvidiaMmaEncodingAttr
from tritium.ir.types import encoding_of
from tritium.options import Options
from tritium.passes.pipeline import (
    TTGIR_PASSES,
    TTIR_PASSES,
    PassPipelineError,
    run_passes,
    run_ttgir_passes,
    run_ttir_passes,
)
from tritium.passes.utils import walk_values

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "upstream"
TTIR_FILES = sorted(DATA.glob("*.ttir"))
# the elementwise / reduction seed kernels, whose upstream TTGIR has only blocked layouts
COMPARED = [
    "add_kernel",
    "softmax_kernel",
    "rms_norm_simple_kernel",
    "softmax_causal_simple_kernel",
    "online_softmax_kernel",
]
_PTR_OR_INT_ARG = re.compile(r"(%\w+: (?:!tt\.ptr<\w+>|i32))(?= loc|[,)])")


def with_divisibility(ttir: str) -> str:
    """Add `{tt.divisibility = 16 : i32}` to every pointer and i32 argument, as tritium's
    frontend does for 16-aligned pointers and multiples of 16."""
    return _PTR_OR_INT_ARG.sub(r"\1 {tt.divisibility = 16 : i32}", ttir)


def signature(module):
    ops = [op.name for op in module.walk() if op.name != "arith.constant"]
    constants = Counter(
        str(op.results[0].type) for op in module.walk() if op.name == "arith.constant"
    )
    layouts = {encoding_of(v.type) for v in walk_values(module) if encoding_of(v.type) is not None}
    return ops, constants, layouts


def compile_ttir(text: str, num_warps: int = 4, num_stages: int = 3):
    module = parse_module(text)
    run_ttir_passes(module, {"num_warps": num_warps}, verify=True)
    run_ttgir_passes(module, {"num_warps": num_warps, "num_stages": num_stages}, verify=True)
    return module


def test_pass_names_are_listed_in_order():
    assert TTIR_PASSES[:2] == ("rewrite-tensor-pointer", "canonicalize") and "cse" in TTIR_PASSES
    assert TTGIR_PASSES[:3] == (
        "convert-triton-to-tritongpu",
        "coalesce",
        "remove-layout-conversions",
    )


def test_options():
    """The passes take the one `tritium.options.Options` (or a dict of its fields)."""
    assert Options.of(None) == Options(4, 3, 1, 32, False, "sm_89")
    assert Options.of({"num_warps": 8}).num_warps == 8
    assert Options.of(Options(arch="sm_90")).target == "cuda:90"
    o = Options.of({"num_warps": 2, "arch": "sm_80"})
    assert (o.num_warps, o.threads_per_warp, o.target) == (2, 32, "cuda:80")
    with pytest.raises(ArgumentError, match="unknown option"):
        Options.of({"num_wraps": 2})
    with pytest.raises(ArgumentError, match="power of two"):
        Options.of({"num_warps": 3})


@pytest.mark.parametrize("name", COMPARED)
def test_same_layouts_and_ops_as_upstream(name):
    """Without divisibility hints (as upstream compiled these), our TTGIR has upstream's
    ops in upstream's order, the same constants, layouts and module attributes."""
    ref = parse_module((DATA / f"{name}.ttgir").read_text())
    ours = compile_ttir((DATA / f"{name}.ttir").read_text(), num_warps_of(ref))
    assert signature(ours) == signature(ref)
    # `ttg.shared` comes from allocate-shared-memory, which upstream runs after its TTGIR dump.
    ours_attrs = {k: v for k, v in ours.attributes.items() if k != "ttg.shared"}
    assert ours_attrs == dict(ref.attributes)
    assert "ttg.convert_layout" not in print_ir(ours)


@pytest.mark.parametrize("path", TTIR_FILES, ids=lambda p: p.stem)
@pytest.mark.parametrize("hints", [False, True], ids=["plain", "div16"])
def test_every_upstream_ttir_compiles(path, hints):
    text = path.read_text()
    if hints:
        text = with_divisibility(text)
        assert "tt.divisibility" in text
    module = compile_ttir(text)
    printed = print_ir(module)
    assert parse_module(printed) is not None  # the TTGIR reads back and verifies
    if hints and path.stem != "matmul_tiled_kernel":
        # 16-byte aligned rows: every memory op moves 4 floats per thread access
        layouts = {encoding_of(v.type) for v in walk_values(module) if encoding_of(v.type)}
        assert all(
            isinstance(lay, BlockedEncodingAttr) and lay.sizePerThread == [4] for lay in layouts
        ), layouts
        assert "ttg.convert_layout" not in printed


def test_matmul_dot_goes_to_the_tensor_cores():
    """As upstream for cuda:89 without pipelining (num_stages = 1): tt.dot on #mma with
    dot-operand operands read from swizzled shared memory, the accumulator in #mma across
    the loop, one convert (mma -> blocked) before the store. (The pipelined loop:
    test_software_pipeliner.py.)"""
    module = compile_ttir((DATA / "matmul_tiled_kernel.ttir").read_text(), num_stages=1)
    text = print_ir(module)
    dot = next(op for op in module.walk() if op.name == "tt.dot")
    assert isinstance(encoding_of(dot.d.type), NvidiaMmaEncodingAttr)
    assert encoding_of(dot.d.type).warpsPerCTA == [2, 2]  # as upstream's #mma
    assert all(isinstance(encoding_of(v.type), DotOperandEncodingAttr) for v in (dot.a, dot.b))
    loop = text[text.index("scf.for") : text.index("scf.yield")]
    assert "ttg.convert_layout" not in loop
    assert loop.count("ttg.local_alloc") == 2 and loop.count("ttg.local_load") == 2
    assert "#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>" in text
    assert text.count("ttg.convert_layout") == 1


def test_matmul_with_ieee_precision_stays_on_fma():
    text = (DATA / "matmul_tiled_kernel.ttir").read_text()
    module = compile_ttir(text.replace("inputPrecision = tf32", "inputPrecision = ieee"))
    dot = next(op for op in module.walk() if op.name == "tt.dot")
    parent = encoding_of(dot.d.type)
    assert isinstance(parent, BlockedEncodingAttr)
    assert encoding_of(dot.a.type) == DotOperandEncodingAttr(0, parent)
    assert encoding_of(dot.b.type) == DotOperandEncodingAttr(1, parent)


def test_hooks_dump_timings_verify():
    text = (DATA / "add_kernel.ttir").read_text()
    module = parse_module(text)
    dumped: list[tuple[str, str]] = []
    timings: dict = {}
    run_ttir_passes(module, dump=lambda n, m: dumped.append((n, print_ir(m))), timings=timings)
    run_ttgir_passes(module, dump=lambda n, m: dumped.append((n, print_ir(m))), timings=timings)
    assert [n for n, _ in dumped] == list(TTIR_PASSES) + list(TTGIR_PASSES)
    assert set(timings) == set(TTIR_PASSES) | set(TTGIR_PASSES) | {"verify"}
    assert all(t >= 0 for t in timings.values())
    assert "#blocked" not in dumped[len(TTIR_PASSES) - 1][1]
    assert '"ttg.num-warps" = 4 : i32' in dumped[len(TTIR_PASSES)][1]


def test_verify_names_the_pass_that_broke_the_ir(monkeypatch):
    from tritium.passes import pipeline

    class Breaks:
        def apply(self, ctx, module):
            # a store whose value has another type than its pointer points to
            store = next(op for op in module.walk() if op.name == "tt.store")
            store.operands[1] = store.operands[0]

    real = pipeline.make_pass
    monkeypatch.setattr(pipeline, "make_pass", lambda n, o: Breaks() if n == "cse" else real(n, o))
    module = parse_module((DATA / "add_kernel.ttir").read_text())
    with pytest.raises(PassPipelineError, match="after pass 'cse'"):
        run_ttir_passes(module)
    module = parse_module((DATA / "add_kernel.ttir").read_text())
    run_passes(module, ["canonicalize"], verify=False)  # verify=False: no check, no error
    # verify="end" (tritium.compile without TRITIUM_DEBUG): caught after the last pass
    module = parse_module((DATA / "add_kernel.ttir").read_text())
    with pytest.raises(PassPipelineError, match="after pass 'dce'.*TRITIUM_DEBUG=1"):
        run_ttir_passes(module, verify="end")


def test_compile_verifies_once_unless_debugging(monkeypatch):
    """tritium.compile verifies each pipeline once at its end; TRITIUM_DEBUG=1 after every pass."""
    from tritium import compiler
    from tritium.passes import pipeline

    calls = []
    real = pipeline._verify
    monkeypatch.setattr(pipeline, "_verify", lambda *a, **k: (calls.append(a[1]), real(*a, **k)))
    from examples.vector_add import add_kernel

    sig, consts = "*fp32:16,*fp32:16,*fp32:16,i32", {"BLOCK_SIZE": 1024}
    monkeypatch.delenv("TRITIUM_DEBUG", raising=False)
    compiler.compile(add_kernel, sig, consts, stop="ttgir")
    assert calls == [TTIR_PASSES[-1], TTGIR_PASSES[-1]]
    calls.clear()
    monkeypatch.setenv("TRITIUM_DEBUG", "1")
    compiler.compile(add_kernel, sig, consts, stop="ttgir")
    assert calls == list(TTIR_PASSES) + list(TTGIR_PASSES)


def test_ttgir_layout_check_catches_a_missing_layout():
    module = parse_module((DATA / "add_kernel.ttir").read_text())
    with pytest.raises(PassPipelineError, match="tensor without a layout"):
        run_passes(module, ["canonicalize"], ttgir=True)
