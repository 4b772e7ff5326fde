"""An autotuning sweep compiles its configs concurrently (tritium/jit/compile_pool.py): the
kernels are the ones a serial sweep compiles, go through the compiled-kernel cache, and the
sweep (timed with a fake timer here) chooses what a serial sweep chooses."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import compiled_kernel, compiler
from tritium.jit import autotune as at
from tritium.jit import compile_pool


@tritium.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * factor, mask=m)


CONFIGS = [
    tritium.Config({"BLOCK": 64}, num_warps=2),
    tritium.Config({"BLOCK": 128}, num_warps=4, num_stages=2),
    tritium.Config({"BLOCK": 256}, num_warps=8),
    tritium.Config({"BLOCK": 512}, num_warps=4),
]
GRID = lambda meta: (tritium.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731
TIMES = {64: 3.0, 128: 2.0, 256: 1.0, 512: 4.0}


@pytest.fixture
def gpu_less(monkeypatch, tmp_path):
    """A fresh cache; the launch's arch without a GPU (sm_89); runners that record the
    kernel they were given instead of launching it."""
    from tritium.runtime import driver

    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    monkeypatch.delenv("TRITIUM_COMPILE_WORKERS", raising=False)
    monkeypatch.setattr(driver, "device_arch", lambda ordinal=None: "sm_89")
    monkeypatch.setattr(at, "_DeviceView", _HostView)
    monkeypatch.setattr(
        compiled_kernel.CompiledKernel, "make_runner", lambda ck, indices, device=None: _FakeRunner(ck, device)
    )


class _HostView:
    """Stands in for a numpy argument's GPU copy: the host array by its interface."""

    def __init__(self, host):
        self.host, self.dtype = host, host.dtype

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.host.shape, "typestr": self.dtype.str, "version": 3,
                "data": (self.host.ctypes.data, False), "strides": None}  # fmt: skip

    def free(self):
        pass


class _FakeRunner:
    interpreted = False

    def __init__(self, kernel, device):
        self.kernel, self.device = kernel, device

    def __call__(self, grid, vals, stream):
        pass


def _sweep(workers: str, monkeypatch):
    """Tune a fresh copy of scale_kernel through the real launch path (bind, key, compile on
    a miss); a fake timer times what each config's BLOCK says."""
    monkeypatch.setenv("TRITIUM_COMPILE_WORKERS", workers)
    fn = tritium.jit(scale_kernel.fn)
    blocks = []
    real_run = fn.run

    def run(*args, grid, **kw):
        blocks.append(kw["BLOCK"])
        return real_run(*args, grid=grid, **kw)

    monkeypatch.setattr(fn, "run", run)
    bench = lambda call: call() or TIMES[blocks[-1]]  # noqa: E731
    tuner = tritium.autotune(CONFIGS, key=["n"], do_bench=bench)(fn)
    compiled_here = []
    real_compile = compiler.compile_jit
    monkeypatch.setattr(
        compiler, "compile_jit", lambda *a, **k: compiled_here.append(a[1]) or real_compile(*a, **k)
    )
    x = np.ones(1000, np.float32)
    args = (x, np.zeros_like(x), 1000, 2.0)
    best = tuner._tune(args, {}, tuner._named(args, {}), GRID, 0)
    monkeypatch.setattr(compiler, "compile_jit", real_compile)
    assert blocks == [c.kwargs["BLOCK"] for c in CONFIGS]  # timed one at a time, in order
    return tuner, best, fn, compiled_here


def test_parallel_sweep_compiles_what_a_serial_one_does(gpu_less, monkeypatch, tmp_path):
    serial, best_serial, fn_serial, compiled_serially = _sweep("1", monkeypatch)
    assert len(compiled_serially) == len(CONFIGS)  # one at a time, by the timed launches
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache2"))  # nothing cached
    parallel, best_parallel, fn_parallel, compiled_here = _sweep("4", monkeypatch)
    if compile_pool._forks():
        assert compiled_here == []  # every config came compiled from a worker process
    assert best_parallel == best_serial == CONFIGS[2]
    assert parallel.configs_timings == serial.configs_timings
    assert set(fn_parallel.runners) == set(fn_serial.runners)
    for key, runner in fn_parallel.runners.items():
        a, b = runner.kernel, fn_serial.runners[key].kernel
        assert a.asm["ptx"] == b.asm["ptx"] and a.asm.get("cubin") == b.asm.get("cubin")
        assert a.metadata == b.metadata and a.runtime_params == b.runtime_params
    assert 0 <= parallel.compile_time <= parallel.bench_time


def test_the_pool_reads_and_fills_the_kernel_cache(gpu_less, monkeypatch, tmp_path):
    x = np.ones(1000, np.float32)
    requests = []
    for c in CONFIGS[:3]:
        vals, opts = scale_kernel.bind((x, x, 1000, 2.0), c.all_kwargs())
        requests.append(scale_kernel.compile_request(vals, opts, False))
    first = compile_pool.compile_all(scale_kernel, requests, workers=3)
    assert all(k is not None and k.module is None for k in first)
    cache_files = sorted(p for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert cache_files  # the workers stored their kernels
    calls = []
    real = compiler.lower
    monkeypatch.setattr(compiler, "lower", lambda *a, **k: calls.append(1) or real(*a, **k))
    again = compile_pool.compile_all(scale_kernel, requests, workers=1)  # in this process
    assert calls == []  # all read back from the cache
    assert [k.asm["ptx"] for k in again] == [k.asm["ptx"] for k in first]
    direct = compiler.compile_jit(scale_kernel, *requests[1])
    assert direct.asm["ptx"] == first[1].asm["ptx"]


def test_a_failing_compile_is_left_to_the_launch(gpu_less):
    x = np.ones(8, np.float32)
    vals, opts = scale_kernel.bind((x, x, 8, 2.0), {"BLOCK": 64})
    good = scale_kernel.compile_request(vals, opts, False)
    vals, opts = scale_kernel.bind((x, x, 8, 2.0), {"BLOCK": 100})  # not a power of 2
    bad = scale_kernel.compile_request(vals, opts, False)
    kernels = compile_pool.compile_all(scale_kernel, [good, bad], workers=2)
    assert kernels[0] is not None and kernels[1] is None


def test_workers(monkeypatch):
    monkeypatch.setenv("TRITIUM_COMPILE_WORKERS", "3")
    assert compile_pool.workers_for(8) == 3 and compile_pool.workers_for(2) == 2
    monkeypatch.setenv("TRITIUM_COMPILE_WORKERS", "1")
    assert compile_pool.workers_for(8) == 1
    monkeypatch.delenv("TRITIUM_COMPILE_WORKERS")
    assert 1 <= compile_pool.workers_for(8) <= 8


def test_print_autotuning(gpu_less, monkeypatch, capsys):
    monkeypatch.setenv("TRITON_PRINT_AUTOTUNING", "1")
    tuner, best, _, _ = _sweep("2", monkeypatch)
    tuner._report((1000, "float32"), best)
    out = capsys.readouterr().out
    assert "autotuning for function scale_kernel" in out and "with key as (1000, 'float32')" in out
    assert f"best config selected: {CONFIGS[2]};" in out
    monkeypatch.delenv("TRITON_PRINT_AUTOTUNING")
    tuner._report((1000, "float32"), best)
    assert capsys.readouterr().out == ""
