"""Every example checks itself against numpy: in the interpreter here, on the GPU there."""

from __future__ import annotations

import importlib
import pathlib

import numpy as np
import pytest

EXAMPLES = sorted(
    p.stem
    for p in (pathlib.Path(__file__).resolve().parents[1] / "examples").glob("*.py")
    if not p.stem.startswith("_")
)


def test_examples_exist():
    assert {
        "vector_add",
        "softmax",
        "causal_softmax",
        "rms_norm",
        "online_softmax",
        "layer_norm",
        "matmul",
    } <= set(EXAMPLES)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_in_interpreter(name, monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    mod = importlib.import_module(f"examples.{name}")
    assert mod.check(np.random.default_rng(1)) > 0


@pytest.mark.gpu
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_on_gpu(name, monkeypatch):
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    mod = importlib.import_module(f"examples.{name}")
    assert mod.check(np.random.default_rng(2)) > 0
