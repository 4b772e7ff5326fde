"""What a compile skips, defers or overlaps for speed: Python's cyclic GC is paused during it
and left as it was found (compiler._gc_paused), its garbage collected while ptxas runs; the
JIT's compiles stop at the cubin and disassemble it when `asm["sass"]` is read
(compiled_kernel.AsmDict); LLVM compiles the LLVM IR in a thread while the TTGIR is verified and
the TTIR and TTGIR are printed (compiler.lower, background.Background)."""

from __future__ import annotations

import gc
import threading

import pytest

import tritium
import tritium.language as tl
from examples.vector_add import add_kernel
from tritium import background, compiled_kernel, compiler
from tritium.frontend.signature import parse_signature
from tritium.options import Options

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


def test_the_jit_disassembles_the_cubin_when_sass_is_read(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(
        "tritium.codegen.tools._start_ptxas", lambda ptx, arch, extra: lambda: (b"CUBIN", "")
    )
    calls = []
    monkeypatch.setattr(
        "tritium.codegen.tools.disassemble", lambda cubin: calls.append(cubin) or "SASS"
    )
    spec = parse_signature(add_kernel, SIG, {"BLOCK_SIZE": 256})
    kernel = compiler.compile_jit(add_kernel, spec, Options(arch="sm_89"))
    assert kernel.asm["cubin"] == b"CUBIN" and "sass" not in kernel.asm and calls == []
    assert kernel.asm["sass"] == "SASS" and kernel.asm["sass"] == "SASS"
    assert calls == [b"CUBIN"]  # once


def test_sass_without_a_cubin_or_a_disassembler_is_a_key_error(monkeypatch):
    monkeypatch.setattr("tritium.codegen.tools.disassemble", lambda cubin: None)
    with pytest.raises(KeyError):
        compiled_kernel.AsmDict({"ptx": ""})["sass"]
    with pytest.raises(KeyError, match="nvdisasm"):
        compiled_kernel.AsmDict({"cubin": b"CUBIN"})["sass"]
    with pytest.raises(KeyError):
        compiled_kernel.AsmDict({"cubin": b"CUBIN"})["llir"]


def test_llvm_runs_beside_the_ttgir_print_and_the_text_is_the_same(monkeypatch):
    """The TTGIR is printed after the lowering, while LLVM runs in another thread: the
    lowering must leave the module as it found it (the text printed before it)."""
    from tritium.codegen import ptx as ptx_module

    threads = {}
    real_llvm = ptx_module.llir_to_ptx
    monkeypatch.setattr(
        ptx_module, "llir_to_ptx",
        lambda *a, **k: threads.setdefault("llvm", threading.current_thread()) and real_llvm(*a, **k),
    )  # fmt: skip
    ttgir = tritium.compile(add_kernel, SIG, {"BLOCK_SIZE": 256}, stop="ttgir").asm["ttgir"]
    kernel = tritium.compile(add_kernel, SIG, {"BLOCK_SIZE": 256}, stop="ptx")
    assert kernel.asm["ttgir"] == ttgir
    assert list(kernel.asm) == ["ttir", "ttgir", "llir", "ptx"]
    assert threads["llvm"] is not threading.main_thread()


def test_an_llvm_error_in_the_thread_reaches_the_caller(monkeypatch):
    def broken(*a, **k):
        raise RuntimeError("LLVM ERROR: broken")

    monkeypatch.setattr("tritium.codegen.ptx.llir_to_ptx", broken)
    with pytest.raises(RuntimeError, match="LLVM ERROR: broken"):
        tritium.compile(add_kernel, SIG, {"BLOCK_SIZE": 256}, stop="ptx")
    assert [t for t in threading.enumerate() if t.name == "tritium-compile"] == []


def test_the_ttgir_is_verified_once_beside_llvm_and_its_error_wins(monkeypatch):
    """Through LLVM, the TTGIR pipeline's end check runs after the lowering, beside LLVM:
    still once, and an invalid module reports the verifier's error (naming the last pass),
    not whatever its lowering raised."""
    from tritium.passes import pipeline
    from tritium.passes.pipeline import PassPipelineError

    monkeypatch.delenv("TRITIUM_DEBUG", raising=False)
    calls = []
    real_verify = pipeline._verify
    monkeypatch.setattr(pipeline, "_verify", lambda *a, **k: calls.append(a[1]) or real_verify(*a, **k))
    tritium.compile(add_kernel, SIG, {"BLOCK_SIZE": 256}, stop="ptx")
    assert calls == [pipeline.TTIR_PASSES[-1], pipeline.TTGIR_PASSES[-1]]

    class Breaks:
        def apply(self, ctx, module):
            # a store whose value has another type than its pointer points to
            store = next(op for op in module.walk() if op.name == "tt.store")
            store.operands[1] = store.operands[0]

    last, real_pass = pipeline.TTGIR_PASSES[-1], pipeline.make_pass
    monkeypatch.setattr(pipeline, "make_pass", lambda n, o: Breaks() if n == last else real_pass(n, o))
    with pytest.raises(PassPipelineError, match=f"after pass '{last}'"):
        tritium.compile(add_kernel, SIG, {"BLOCK_SIZE": 256}, stop="ptx")
    assert [t for t in threading.enumerate() if t.name == "tritium-compile"] == []


def test_the_young_garbage_is_collected_while_ptxas_runs(monkeypatch):
    """With the GC on (paused for the compile), the compile's cyclic garbage so far is
    collected after ptxas started and before it is waited for, not all at the end; a
    caller's disabled GC is left alone."""
    events = []

    def start(ptx, arch, extra):
        events.append("ptxas started")
        return lambda: events.append("ptxas waited for") or (b"CUBIN", "Used 16 registers")

    real_collect = gc.collect
    monkeypatch.setattr("tritium.codegen.tools._start_ptxas", start)
    monkeypatch.setattr(gc, "collect", lambda gen=2: events.append(f"collect {gen}") or real_collect(gen))
    kernel = tritium.compile(add_kernel, SIG, {"BLOCK_SIZE": 256}, stop="cubin")
    assert kernel.asm["cubin"] == b"CUBIN" and kernel.metadata.registers == 16
    assert events == ["ptxas started", "collect 0", "ptxas waited for"] and gc.isenabled()

    events.clear()
    gc.disable()
    try:
        tritium.compile(add_kernel, SIG, {"BLOCK_SIZE": 256}, stop="cubin")
        assert events == ["ptxas started", "ptxas waited for"] and not gc.isenabled()
    finally:
        gc.enable()


def test_the_switch_interval_is_short_beside_llvm_and_restored(monkeypatch):
    """LLVM's thread gets the GIL back promptly after each of its calls while this one
    prints (background.prompt_handoff); the interval found is restored, nested uses too."""
    import sys

    from tritium.codegen import ptx as ptx_module

    seen, real = [], ptx_module.llir_to_ptx
    monkeypatch.setattr(
        ptx_module, "llir_to_ptx", lambda *a, **k: seen.append(sys.getswitchinterval()) or real(*a, **k)
    )
    before = sys.getswitchinterval()
    with background.prompt_handoff():
        tritium.compile(add_kernel, SIG, {"BLOCK_SIZE": 256}, stop="ptx")
        assert sys.getswitchinterval() == pytest.approx(1e-4)
    assert seen == [pytest.approx(1e-4)] and sys.getswitchinterval() == before


@tritium.jit
def _names_kernel(x_ptr, _0, n):
    x_1_2 = tl.load(x_ptr + tl.arange(0, 16))  # (xDSL keeps `x_1` of it, `_0`: an empty hint)
    y_2_3 = x_1_2 + 1.0
    tl.store(x_ptr + tl.arange(0, 16), y_2_3 * _0)


def test_the_ttir_printed_beside_llvm_is_the_ttir_printed_at_once():
    """Through LLVM, asm["ttir"] is printed from a copy (compiler._snapshot) while LLVM runs:
    the same text as a compile that stops at TTIR prints, names xDSL's clone would change
    or refuse included."""
    sig = "*fp32,fp32,i32"
    at_once = tritium.compile(_names_kernel, sig, {}, stop="ttir").asm["ttir"]
    beside = tritium.compile(_names_kernel, sig, {}, stop="ptx").asm["ttir"]
    assert beside == at_once and "%x_1_2 = tt.addptr" in at_once
