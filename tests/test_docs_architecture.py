"""docs/architecture.md is generated from a real compilation by docs/gen_architecture.py;
it must match what the compiler does now (regenerate it when this fails)."""

from __future__ import annotations

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_generator():
    spec = importlib.util.spec_from_file_location(
        "gen_architecture", ROOT / "docs" / "gen_architecture.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_architecture_doc_is_current():
    gen = load_generator()
    committed = (ROOT / "docs" / "architecture.md").read_text()
    assert gen.render() == committed, (
        "docs/architecture.md is out of date: run `python3 docs/gen_architecture.py`"
    )


def test_architecture_doc_shows_every_stage():
    text = (ROOT / "docs" / "architecture.md").read_text()
    for fence in ("```python", "```mlir", "```llvm", "```ptx"):
        assert fence in text
    for marker in ("tt.func public @add_kernel", "#ttg.blocked", "define ptx_kernel void @add_kernel",
                   ".visible .entry add_kernel("):  # fmt: skip
        assert marker in text
