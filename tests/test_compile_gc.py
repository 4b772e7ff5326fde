"""A compile pauses Python's cyclic GC and leaves it as it found it (compiler._gc_paused)."""

from __future__ import annotations

import gc

import pytest

import tritium
from examples.vector_add import add_kernel
from tritium import compiler

SIG = "*fp32:16,*fp32:16,*fp32:16,i32"


def test_gc_is_off_during_a_compile_and_on_after(monkeypatch):
    seen = []
    real = compiler.lower
    monkeypatch.setattr(compiler, "lower", lambda *a, **k: seen.append(gc.isenabled()) or real(*a, **k))
    assert gc.isenabled()
    tritium.compile(add_kernel, SIG, {"BLOCK_SIZE": 256}, stop="llir")
    assert seen == [False] and gc.isenabled()


def test_gc_is_on_again_after_a_failing_compile():
    with pytest.raises(tritium.ArgumentError):
        tritium.compile(add_kernel, SIG, {"BLOCK_SIZE": 256}, stop="llir", arch="sm_70")
    assert gc.isenabled()


def test_gc_the_caller_turned_off_stays_off():
    gc.disable()
    try:
        tritium.compile(add_kernel, SIG, {"BLOCK_SIZE": 256}, stop="ttir")
        assert not gc.isenabled()
    finally:
        gc.enable()
