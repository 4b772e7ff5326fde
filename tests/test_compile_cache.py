"""The compiled-kernel cache key (tritium.compiler.cache_key): a kernel's code by its
KernelSource fingerprint (its source, the `@jit` functions and constants it reaches), the
KernelSpec, the Options and tritium's own source; and the JIT's use of the cache."""

from __future__ import annotations

import numpy as np

import tritium
import tritium.language as tl
from tritium.compiler import cache_key, compile_jit
from tritium.jit.specialize import build_spec
from tritium.options import Options
from tritium.runtime import cache

LIMIT = 100


@tritium.jit
def _twice(x):
    return x * 2


@tritium.jit
def _scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, _twice(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)


@tritium.jit
def _limited(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.cdiv(LIMIT, 7), mask=offs < LIMIT)


def _spec(n=100, block=128, dtype=np.float32):
    return build_spec(_scale_kernel, [np.zeros(4, dtype), n, block])


def test_cache_key_covers_what_changes_the_code():
    k = cache_key(_scale_kernel, _spec(), Options())
    assert k is not None and k == cache_key(_scale_kernel, _spec(), Options())
    assert k == cache_key(_scale_kernel, _spec(n=200), Options())  # same specialization
    others = [
        cache_key(_scale_kernel, _spec(n=96), Options()),  # n divisible by 16
        cache_key(_scale_kernel, _spec(block=256), Options()),
        cache_key(_scale_kernel, _spec(dtype=np.float16), Options()),
        cache_key(_scale_kernel, _spec(), Options(num_warps=8)),
        cache_key(_scale_kernel, _spec(), Options(arch="sm_90")),
    ]
    assert len({k, *others}) == 6


def test_fingerprint_includes_called_jit_functions_and_constants(monkeypatch):
    sources: dict = {}
    _scale_kernel._sources(sources)
    assert any(name.endswith("_twice") for name in sources)
    assert "return x * 2" in "".join(sources.values())
    sources = {}
    _limited._sources(sources)
    assert any(name.endswith(".cdiv") for name in sources)  # tl.cdiv: one attribute deep
    assert any(name.endswith(":LIMIT") and text == "100" for name, text in sources.items())
    before = _limited.fingerprint()
    monkeypatch.setitem(_limited.globals, "LIMIT", 101)
    assert _limited.fingerprint() != before


def test_unstable_constant_means_no_caching():
    spec = _spec()
    spec.constants["BLOCK"] = object()  # no stable key form
    assert cache_key(_scale_kernel, spec, Options()) is None


def test_compile_jit_uses_the_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    k1 = compile_jit(_scale_kernel, _spec(), {"arch": "sm_89"})
    cache.default_cache().clear_memory()
    calls = []
    monkeypatch.setattr("tritium.compiler.lower", lambda *a: calls.append(a))
    k2 = compile_jit(_scale_kernel, _spec(), {"arch": "sm_89"})  # from disk: nothing lowered
    assert not calls
    assert k2.asm == k1.asm and k2.metadata == k1.metadata
