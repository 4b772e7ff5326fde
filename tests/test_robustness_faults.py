"""Faults: what happens when the disk, ptxas or the user interrupts a compile.

Each fault ends in a clear error or a documented recovery, and no later run loads a bad
cache entry (docs/robustness.md, "Faults"):

* a cache directory that cannot be written (EACCES, EROFS) or read, or a disk that fills
  while an entry is stored (ENOSPC): the kernel compiles and runs, uncached;
* a process killed while it stores an entry: no entry (the rename never happened); the
  next compile recompiles and stores a whole one; the leftover is swept once stale;
* an entry whose files were truncated (a torn write): a miss, recompiled and replaced;
* ptxas missing: PTX without a cubin (the driver compiles the PTX); TRITIUM_PTXAS naming a
  missing file, or a ptxas that fails or crashes: a PtxasError saying which and why,
  nothing cached;
* KeyboardInterrupt while compiling or storing: it propagates; nothing half-made is kept
  (no entry, no runner), and the next launch compiles and runs.
* 4 processes compiling the same kernels into one cache at once: the same bytes
  everywhere, one valid entry per kernel, nothing left over.
On a GPU (`-m gpu`):
* a launch that faults (an unmasked store far out of bounds): a LaunchError naming the
  kernel and saying the context is lost; every later launch in that process fails saying
  so; the recovery is a new process, whose launches (of the same cached kernel) work;
* an allocation that does not fit: a LaunchError (CUDA_ERROR_OUT_OF_MEMORY, the size);
  not sticky: later allocations and launches work.
Threads, streams and the soak run are in tests/test_robustness_soak.py.
"""

from __future__ import annotations

import errno
import hashlib
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

import tritium
import tritium.compiler as C
import tritium.language as tl
from tritium.codegen import tools
from tritium.jit.specialize import build_spec
from tritium.options import Options
from tritium.runtime import cache
from tritium.runtime.cache import KernelCache

ROOT = pathlib.Path(__file__).resolve().parents[1]


@tritium.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0, mask=mask)


X = np.arange(100, dtype=np.float32)


def _spec():
    return build_spec(scale_kernel, [X, X, 100, 64])


def _key():
    return C.cache_key(scale_kernel, _spec(), Options(arch="sm_89"))


def _compile():
    return C.compile_jit(scale_kernel, _spec(), {"arch": "sm_89"})


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(d))
    cache.default_cache().clear_memory()
    yield d
    cache.default_cache().clear_memory()


@pytest.fixture
def reference():
    """The kernel compiled with no cache at all: what every path must give."""
    asm, _ = C.lower(
        C.make_ttir(scale_kernel, _spec(), Options(arch="sm_89"), C.Dumper(None), None)[0],
        Options(arch="sm_89"),
        C.Dumper(None),
        None,
        stop="ptx",
    )
    return asm["ptx"]


def _leftovers(d: pathlib.Path) -> list[str]:
    """Anything in the cache besides whole entries (temporary or trash directories)."""
    return sorted(p.name for p in d.rglob(".*"))


def _count_lowering(monkeypatch) -> list:
    calls: list = []
    real = C.lower
    monkeypatch.setattr(C, "lower", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def _in_memory_too(d: pathlib.Path):
    """Forget the in-memory entries, as a new process would."""
    cache.default_cache().clear_memory()
    return KernelCache(d)


def _interpret(x: np.ndarray) -> np.ndarray:
    y = np.zeros_like(x)
    scale_kernel.interpret = True
    try:
        scale_kernel[(2,)](x, y, x.size, BLOCK=64)
    finally:
        scale_kernel.interpret = None
    return y


# ------------------------------------------------------------------ the cache directory


def _deny(monkeypatch, root: pathlib.Path, code: int, *, read: bool, write: bool):
    """Every file-system call under `root` that reads or writes fails with `code`."""

    top = os.path.abspath(root)

    def inside(path) -> bool:  # no resolve(): it would stat, which is patched below
        p = os.path.abspath(os.fsdecode(path))
        return p == top or p.startswith(top + os.sep)

    def fail(path):
        raise OSError(code, os.strerror(code), os.fsdecode(path))

    real_mkdtemp, real_open, real_mkdir = tempfile.mkdtemp, os.open, pathlib.Path.mkdir
    real_stat, real_read = pathlib.Path.stat, pathlib.Path.read_bytes

    if write:

        def mkdtemp(suffix=None, prefix=None, dir=None):
            if dir is not None and inside(dir):
                fail(dir)
            return real_mkdtemp(suffix, prefix, dir)

        def open_(path, flags, *a, **k):
            if flags & (os.O_WRONLY | os.O_RDWR) and inside(path):
                fail(path)
            return real_open(path, flags, *a, **k)

        def mkdir(self, *a, **k):
            if inside(self):
                fail(self)
            return real_mkdir(self, *a, **k)

        monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
        monkeypatch.setattr(os, "open", open_)
        monkeypatch.setattr(pathlib.Path, "mkdir", mkdir)
    if read:

        def stat(self, *a, **k):
            if inside(self) and os.path.abspath(self) != top:
                fail(self)
            return real_stat(self, *a, **k)

        def read_bytes(self):
            if inside(self):
                fail(self)
            return real_read(self)

        monkeypatch.setattr(pathlib.Path, "stat", stat)
        monkeypatch.setattr(pathlib.Path, "read_bytes", read_bytes)


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS, errno.ENOSPC])
def test_a_cache_directory_that_cannot_be_written_leaves_kernels_uncached(
    cache_dir, monkeypatch, reference, code
):
    _deny(monkeypatch, cache_dir, code, read=False, write=True)
    k = _compile()
    assert k.asm["ptx"] == reference
    assert not cache_dir.exists() or not any(cache_dir.rglob("*"))
    monkeypatch.undo()
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(cache_dir))
    assert KernelCache(cache_dir).get(_key()) is None  # nothing reached the disk


def test_a_cache_directory_that_cannot_be_read_is_a_miss(cache_dir, monkeypatch, reference):
    _compile()
    assert KernelCache(cache_dir).get(_key()) is not None
    cache.default_cache().clear_memory()
    _deny(monkeypatch, cache_dir, errno.EACCES, read=True, write=True)
    lowered = _count_lowering(monkeypatch)
    k = _compile()  # once raised PermissionError from get()'s Path.exists()
    assert lowered == [1] and k.asm["ptx"] == reference


@pytest.mark.parametrize("failing_write", [1, 3])  # the first file, the manifest (the last)
def test_a_disk_that_fills_while_storing_leaves_no_entry(
    cache_dir, monkeypatch, reference, failing_write
):
    real = cache._write
    writes = []

    def write(path, data):
        writes.append(path.name)
        if len(writes) == failing_write:
            real(path, data[: len(data) // 2])  # half of it reached the disk
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, data)

    monkeypatch.setattr(cache, "_write", write)
    k = _compile()
    assert k.asm["ptx"] == reference and len(writes) == failing_write
    assert KernelCache(cache_dir).get(_key()) is None
    assert _leftovers(cache_dir) == []  # the temporary directory was removed
    monkeypatch.setattr(cache, "_write", real)
    _in_memory_too(cache_dir)
    _compile()  # the disk has room again: stored whole
    assert KernelCache(cache_dir).get(_key()) is not None


KILLED_WRITER = """
import os, signal, sys
import numpy as np
sys.path.insert(0, {tests!r})
from test_robustness_faults import _compile
from tritium.runtime import cache

real = cache._write
count = []

def write(path, data):
    count.append(1)
    if len(count) == 2:  # the second file: killed halfway through writing it
        real(path, data[: len(data) // 2])
        os.kill(os.getpid(), signal.SIGKILL)
    real(path, data)

cache._write = write
_compile()
"""


def test_a_writer_killed_while_storing_leaves_nothing_a_reader_loads(
    cache_dir, monkeypatch, reference
):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TRITIUM_CACHE_DIR": str(cache_dir)}
    script = KILLED_WRITER.format(tests=str(ROOT / "tests"))
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    entry = cache_dir / _key()[:2] / _key()
    assert not entry.exists()  # the rename onto the entry's name never happened
    left = list(entry.parent.glob(".tmp-*"))
    assert len(left) == 1  # the killed writer's half-written temporary directory
    lowered = _count_lowering(monkeypatch)
    assert _compile().asm["ptx"] == reference and lowered == [1]
    assert KernelCache(cache_dir).get(_key()) is not None
    assert left[0].exists()  # too young to be swept: its writer might still be alive
    old = time.time() - cache.STALE - 1
    os.utime(left[0], (old, old))
    cache.put(_key(), {"x": "y"})  # any later put of the key sweeps the stale leftover
    assert _leftovers(cache_dir) == []


@pytest.mark.parametrize("victim", ["asm.ptx", "asm.cubin", "metadata.json", "manifest.json"])
def test_a_truncated_entry_is_recompiled_not_loaded(cache_dir, monkeypatch, reference, victim):
    """A torn write (the rename reached the disk, the data did not: no fsync)."""
    _compile()
    path = cache_dir / _key()[:2] / _key() / victim
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    _in_memory_too(cache_dir)
    lowered = _count_lowering(monkeypatch)
    assert _compile().asm["ptx"] == reference and lowered == [1]
    assert KernelCache(cache_dir).get(_key()) is not None  # replaced by a whole entry


# ------------------------------------------------------------------ ptxas


def test_without_ptxas_a_kernel_is_ptx_for_the_driver(cache_dir, monkeypatch, reference, tmp_path):
    monkeypatch.delenv("TRITIUM_PTXAS", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(tools, "CUDA_BIN_DIRS", ())
    assert tools.find_tool("ptxas") is None
    k = _compile()
    assert k.asm["ptx"] == reference and "cubin" not in k.asm
    assert k.metadata.registers is None  # ptxas's report is absent, not invented


def _fake_ptxas(tmp_path: pathlib.Path, body: str) -> str:
    exe = tmp_path / "ptxas"
    exe.write_text("#!/bin/sh\n" + body + "\n")
    exe.chmod(0o755)
    return str(exe)


@pytest.mark.parametrize(
    "body, says",
    [
        ('echo "ptxas fatal   : Unresolved extern function foo" >&2; exit 255',
         ["exited with status 255", "Unresolved extern function foo"]),
        ("kill -SEGV $$", ["was killed by signal 11", "(no message)"]),
        ("exit 0", ["it wrote no cubin"]),
    ],
    ids=["fails", "crashes", "writes-nothing"],
)  # fmt: skip
def test_a_failing_ptxas_is_a_clear_error_and_nothing_is_cached(
    cache_dir, monkeypatch, tmp_path, body, says
):
    monkeypatch.setenv("TRITIUM_PTXAS", _fake_ptxas(tmp_path, body))
    with pytest.raises(tools.PtxasError) as info:
        _compile()
    msg = str(info.value)
    assert msg.startswith("ptxas failed for sm_89: ") and all(s in msg for s in says), msg
    assert KernelCache(cache_dir).get(_key()) is None
    monkeypatch.delenv("TRITIUM_PTXAS")
    assert "cubin" in _compile().asm  # the real ptxas: compiled and stored
    assert KernelCache(cache_dir).get(_key()) is not None


def test_TRITIUM_PTXAS_naming_a_missing_file(cache_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_PTXAS", str(tmp_path / "no-such-ptxas"))
    with pytest.raises(tools.PtxasError, match=r"cannot run ptxas \(.*no-such-ptxas\): No such"):
        _compile()  # was a bare FileNotFoundError from subprocess
    assert KernelCache(cache_dir).get(_key()) is None


# ------------------------------------------------------------------ KeyboardInterrupt


def _interrupt_once(monkeypatch, obj, name: str) -> list:
    real = getattr(obj, name)
    hits: list = []

    def interrupted(*a, **k):
        if not hits:
            hits.append(1)
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(obj, name, interrupted)
    return hits


@pytest.mark.parametrize("where", ["frontend_ttir", "lower"])
def test_keyboard_interrupt_while_compiling_keeps_nothing(cache_dir, monkeypatch, reference, where):
    hits = _interrupt_once(monkeypatch, C, where)
    with pytest.raises(KeyboardInterrupt):
        _compile()
    assert hits == [1] and not cache_dir.exists()
    assert _compile().asm["ptx"] == reference
    assert KernelCache(cache_dir).get(_key()) is not None


def test_keyboard_interrupt_while_storing_keeps_no_partial_entry(cache_dir, monkeypatch, reference):
    real = cache._write
    writes = []

    def write(path, data):
        writes.append(1)
        if len(writes) == 2:
            raise KeyboardInterrupt
        real(path, data)

    monkeypatch.setattr(cache, "_write", write)
    with pytest.raises(KeyboardInterrupt):
        _compile()
    monkeypatch.setattr(cache, "_write", real)
    assert _leftovers(cache_dir) == []
    entry = cache_dir / _key()[:2] / _key()
    assert not entry.exists()
    lowered = _count_lowering(monkeypatch)
    _in_memory_too(cache_dir)  # a new process: compiles again and stores the entry
    assert _compile().asm["ptx"] == reference and lowered == [1]
    assert KernelCache(cache_dir).get(_key()) is not None


def test_keyboard_interrupt_during_a_launch_s_compile_leaves_no_runner(monkeypatch):
    """In the interpreter: the interrupted specialisation is not remembered half-made."""
    scale_kernel.runners.clear()
    hits = _interrupt_once(monkeypatch, C, "frontend_ttir")
    with pytest.raises(KeyboardInterrupt):
        _interpret(X)
    assert hits == [1] and not scale_kernel.runners
    np.testing.assert_array_equal(_interpret(X), X * 3)


# ------------------------------------------------------------------ 4 processes, one cache

KERNELS = """
import tritium
import tritium.language as tl


@tritium.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1.0, mask=m)


@tritium.jit
def row_sum(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + tl.program_id(0), tl.sum(tl.load(x_ptr + offs, mask=m, other=0.0), axis=0))


@tritium.jit
def prefix(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.cumsum(tl.load(x_ptr + offs, mask=m, other=0), axis=0), mask=m)
"""

COMPILER = """
import hashlib, json, pathlib, sys, time
import numpy as np
import kernels
from tritium.compiler import compile_jit
from tritium.jit.specialize import build_spec
go, order = pathlib.Path(sys.argv[1]), sys.argv[2].split(",")
while not go.exists():
    time.sleep(0.001)
out = {}
for name in order:
    fn = getattr(kernels, name)
    x = np.zeros(64, np.int32 if name == "prefix" else np.float32)
    k = compile_jit(fn, build_spec(fn, [x, x, 64, 64]), {"arch": "sm_89"})
    out[name] = hashlib.sha256(k.asm["ptx"].encode() + k.asm["cubin"]).hexdigest()
print(json.dumps(out))
"""


def test_four_processes_compiling_the_same_kernels_into_one_cache(cache_dir, tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS)
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}",
           "TRITIUM_CACHE_DIR": str(cache_dir)}  # fmt: skip
    names = ["add", "row_sum", "prefix"]
    orders = [",".join(names[i:] + names[:i]) for i in range(3)] + [",".join(names)]
    procs = [
        subprocess.Popen([sys.executable, "-c", COMPILER, str(go), order], cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for order in orders
    ]  # fmt: skip
    time.sleep(0.5)
    go.touch()  # all four start compiling together
    results = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        results.append(__import__("json").loads(out))
    assert all(r == results[0] for r in results), results  # the same bytes in every process
    entries = [p for p in cache_dir.glob("*/*")]
    assert len(entries) == 3 and _leftovers(cache_dir) == []
    store = KernelCache(cache_dir)
    for e in entries:
        files = store.get(e.name)
        assert files is not None  # every entry whole
        digest = hashlib.sha256(files["asm.ptx"].encode() + files["asm.cubin"]).hexdigest()
        assert digest in results[0].values()


# ------------------------------------------------------------------ on the GPU

FAULT = """
import sys
import numpy as np
import tritium
import tritium.language as tl
from tritium.errors import LaunchError
from tritium.runtime import arrays, driver


@tritium.jit
def unmasked_store(y_ptr, FAR: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK).to(tl.int64)
    tl.store(y_ptr + offs * FAR, offs.to(tl.float32))  # no mask: far past the buffer


y = arrays.zeros(256, np.float32)
unmasked_store[(1,)](y, FAR=int(sys.argv[1]), BLOCK=256)
try:
    driver.synchronize()
    print("FIRST: no fault")
except LaunchError as exc:
    print("FIRST:", exc)
for i in range(3):
    try:
        unmasked_store[(1,)](y, FAR=1, BLOCK=256)
        driver.synchronize()
        print("LATER: ran")
    except LaunchError as exc:
        print("LATER:", exc)
"""


def _run_script(script: str, *args: str, cache_dir=None) -> subprocess.CompletedProcess:
    path = os.environ.get("PYTHONPATH")  # kept: where xdsl lives may be on it
    env = {**os.environ, "PYTHONPATH": str(ROOT) + (os.pathsep + path if path else "")}
    if cache_dir is not None:
        env["TRITIUM_CACHE_DIR"] = str(cache_dir)
    with tempfile.TemporaryDirectory() as d:  # a file: tritium compiles kernels from their source
        path = pathlib.Path(d) / "fault_script.py"
        path.write_text(script)
        return subprocess.run([sys.executable, str(path), *args], capture_output=True,
                              text=True, timeout=300, cwd=ROOT, env=env)  # fmt: skip


@pytest.mark.gpu
def test_gpu_a_faulting_launch_loses_the_context_and_a_new_process_recovers(cache_dir):
    proc = _run_script(FAULT, str(1 << 36), cache_dir=cache_dir)  # 64 GiB apart: unmapped
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    first = next(ln for ln in out.splitlines() if ln.startswith("FIRST:"))
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in first and "unmasked_store" in first, out
    assert "context is lost" in first and "restart the process" in first
    later = [ln for ln in out.splitlines() if ln.startswith("LATER:")]
    assert len(later) == 3 and all("lost earlier" in ln for ln in later), out
    # the recovery: a new process; the kernels it compiled in the cache load and run
    again = _run_script(FAULT, "1", cache_dir=cache_dir)  # in bounds this time
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == ["FIRST: no fault"] + ["LATER: ran"] * 3, again.stdout


@pytest.mark.gpu
def test_gpu_an_allocation_that_does_not_fit_is_an_error_and_not_sticky():
    from tritium.errors import LaunchError
    from tritium.runtime import arrays

    with pytest.raises(LaunchError, match="CUDA_ERROR_OUT_OF_MEMORY") as info:
        arrays.empty(1 << 42, np.float32)  # 16 TiB
    assert str(1 << 44) in str(info.value)  # the size asked for
    x = arrays.to_device(X)
    y = arrays.zeros(X.size, np.float32)
    scale_kernel[(2,)](x, y, X.size, BLOCK=64)
    np.testing.assert_array_equal(y.numpy(), X * 3)
