"""Determinism and cache safety.

* Compiling a kernel twice gives byte-identical TTIR, TTGIR, LLVM IR and PTX, for every
  example's kernel (as the example launches it), in one process and across two fresh
  processes with different PYTHONHASHSEEDs (set and dict order must not leak into IR).
* A corrupted cache entry is recompiled, not loaded (end to end through compile_jit).
* Two processes compiling the same kernel at once leave one good entry.
* Cache files are user-only, and hold only text and bytes: nothing is unpickled or run.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import importlib
import json
import os
import pathlib
import stat
import subprocess
import sys

import numpy as np
import pytest

import tritium.compiler as C
from examples.vector_add import add_kernel
from tritium.jit.jit import JITFunction
from tritium.jit.specialize import build_spec
from tritium.options import Options
from tritium.runtime import cache
from tritium.runtime.cache import KernelCache

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.py") if not p.stem.startswith("_"))
STAGES = ("ttir", "ttgir", "llir", "ptx")


def example_specs() -> list:
    """(kernel, KernelSpec, options) of every launch the examples make (run in the
    interpreter, which compiles through compile_jit: we record its arguments)."""
    seen = []
    real = C.compile_jit

    def record(fn, spec, opts, interpret=False):
        seen.append((fn, spec, Options.of(opts)))
        return real(fn, spec, opts, interpret)

    old = os.environ.get("TRITIUM_INTERPRET")
    os.environ["TRITIUM_INTERPRET"] = "1"
    C.compile_jit = record
    try:
        for name in EXAMPLES:
            module = importlib.import_module(f"examples.{name}")
            for v in vars(module).values():  # launches earlier in this process are cached
                if isinstance(v, JITFunction):
                    v.runners.clear()
            module.check(np.random.default_rng(0))
    finally:
        C.compile_jit = real
        if old is None:
            os.environ.pop("TRITIUM_INTERPRET")
        else:
            os.environ["TRITIUM_INTERPRET"] = old
    return seen


def stages(fn, spec, opts) -> dict:
    """Every stage's text, compiled from scratch (no cache), for sm_89."""
    options = dataclasses.replace(opts, arch="sm_89")
    module, _ = C.make_ttir(fn, spec, options, C.Dumper(None), None)
    asm = {"ttir": C.print_ir(module, locations=True)}
    lowered, facts = C.lower(module, options, C.Dumper(None), None, stop="ptx")
    asm.update(lowered)
    asm["metadata"] = json.dumps(facts, sort_keys=True)
    return asm


def digests() -> dict:
    """sha256 of every stage of every example kernel (what a fresh process prints)."""
    return {_name(fn, spec): _digest(stages(fn, spec, opts)) for fn, spec, opts in example_specs()}


@pytest.fixture(scope="module")
def specs():
    return example_specs()


@pytest.fixture(scope="module")
def compiled(specs):
    """{kernel key: (spec, stages)} compiled once in this process."""
    return {_name(fn, spec): (fn, spec, opts, stages(fn, spec, opts)) for fn, spec, opts in specs}


def _name(fn, spec) -> str:
    return (
        f"{fn.__module__}.{fn.__name__}:{sorted((k, repr(v)) for k, v in spec.constants.items())!r}"
    )


def _digest(asm: dict) -> dict:
    return {k: hashlib.sha256(v.encode()).hexdigest() for k, v in asm.items()}


def test_every_example_is_covered(specs):
    modules = {fn.__module__.rsplit(".", 1)[-1] for fn, _, _ in specs}
    assert modules == set(EXAMPLES)


def test_compiling_twice_gives_identical_text_at_every_stage(compiled):
    for name, (fn, spec, opts, first) in compiled.items():
        second = stages(fn, spec, opts)
        for stage in (*STAGES, "metadata"):
            assert first[stage] == second[stage], f"{name}: {stage} differs between compiles"


def test_compiling_in_fresh_processes_with_other_hash_seeds_gives_the_same_bytes(compiled):
    here = {name: _digest(asm) for name, (_, _, _, asm) in compiled.items()}
    code = "import json, tests.test_robustness_determinism as t; print(json.dumps(t.digests()))"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in ("1", "2")
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert results[0] == results[1] == here


# ------------------------------------------------------------------ the cache, end to end


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


X = np.zeros(64, np.float32)


def _add_spec():
    return build_spec(add_kernel, [X, X, X, 64, 256])


def _entry(spec):
    key = C.cache_key(add_kernel, spec, Options(arch="sm_89"))
    return key, cache.cache_dir() / key[:2] / key


@pytest.mark.parametrize("victim", ["asm.ptx", "metadata.json", "manifest.json"])
def test_a_corrupted_entry_is_recompiled_not_loaded(cache_dir, monkeypatch, victim):
    spec = _add_spec()
    good = C.compile_jit(add_kernel, spec, {"arch": "sm_89"})
    key, entry = _entry(spec)
    path = entry / victim
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01  # one flipped bit, same size
    path.write_bytes(bytes(data))
    cache.default_cache().clear_memory()  # a new process: only the disk
    lowered = []
    real_lower = C.lower
    monkeypatch.setattr(C, "lower", lambda *a, **k: lowered.append(1) or real_lower(*a, **k))
    again = C.compile_jit(add_kernel, spec, {"arch": "sm_89"})
    assert lowered == [1], "the damaged entry must be recompiled"
    assert again.asm["ptx"] == good.asm["ptx"] and again.metadata == good.metadata
    assert KernelCache(cache_dir).get(key) is not None  # and replaced by a good one


RACE = """
import os, sys, time, hashlib, pathlib
import numpy as np
from examples.vector_add import add_kernel
from tritium.compiler import compile_jit
from tritium.jit.jit import JITFunction
from tritium.jit.specialize import build_spec
go = pathlib.Path(sys.argv[1])
while not go.exists():
    time.sleep(0.001)
x = np.zeros(64, np.float32)
k = compile_jit(add_kernel, build_spec(add_kernel, [x, x, x, 64, 256]), {"arch": "sm_89"})
print(hashlib.sha256(k.asm["ptx"].encode()).hexdigest())
"""


def test_two_processes_compiling_the_same_kernel_leave_one_good_entry(cache_dir, tmp_path):
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TRITIUM_CACHE_DIR": str(cache_dir)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACE, str(go)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    go.touch()  # both start compiling as soon as they are up
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        outs.append(out.strip())
    key, entry = _entry(_add_spec())
    files = KernelCache(cache_dir).get(key)
    assert files is not None
    assert outs[0] == outs[1] == hashlib.sha256(files["asm.ptx"].encode()).hexdigest()
    shard = entry.parent
    assert [p.name for p in shard.iterdir()] == [key]  # no temporary or trash directories


def test_cache_files_are_user_only_and_hold_only_data(cache_dir):
    C.compile_jit(add_kernel, _add_spec(), {"arch": "sm_89"})
    paths = list(cache_dir.rglob("*"))
    assert paths
    for p in [cache_dir, *paths]:
        mode = stat.S_IMODE(p.stat().st_mode)
        assert mode & (0o077 if p.is_dir() else 0o177) == 0, (p, oct(mode))
    names = {p.name for p in paths if p.is_file()}
    assert "manifest.json" in names and "metadata.json" in names
    assert all(n.startswith("asm.") or n.endswith(".json") for n in names), names
    cache.default_cache().clear_memory()
    key, _ = _entry(_add_spec())
    loaded = cache.load_kernel(key)
    assert all(isinstance(v, str | bytes) for v in loaded["asm"].values())


def test_the_cache_never_unpickles_or_executes():
    tree = ast.parse((ROOT / "tritium" / "runtime" / "cache.py").read_text())
    imported = {
        a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    }
    imported |= {
        n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
    }
    assert not imported & {"pickle", "marshal", "shelve", "dill", "importlib", "runpy"}, imported
    calls = [n.func for n in ast.walk(tree) if isinstance(n, ast.Call)]
    builtins = {f.id for f in calls if isinstance(f, ast.Name)}
    assert not builtins & {"eval", "exec", "compile", "__import__", "open"}, builtins
    decoders = {
        (f.value.id, f.attr)
        for f in calls
        if isinstance(f, ast.Attribute)
        and isinstance(f.value, ast.Name)
        and f.attr.startswith("load")
    }
    assert decoders == {("json", "loads")}, (
        decoders
    )  # the manifest and metadata; the rest is str / bytes


def test_a_manifest_cannot_turn_bytes_into_objects(cache_dir):
    k = cache.key(name="hostile")
    KernelCache(cache_dir).put(k, {"asm.ptx": "text", "blob": b"\x80\x04K\x01."})  # a pickle of 1
    entry = cache_dir / k[:2] / k
    manifest = json.loads((entry / "manifest.json").read_text())
    manifest["files"]["blob"]["kind"] = "pickle"
    (entry / "manifest.json").write_text(json.dumps(manifest))
    got = KernelCache(cache_dir).get(k)
    assert got["blob"] == b"\x80\x04K\x01." and isinstance(got["blob"], bytes)
