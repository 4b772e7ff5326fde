"""Compile several specialisations of a kernel at once: an autotuning sweep's configs.

    kernels = compile_all(fn, [(spec, options), ...])   # [CompiledKernel | None, ...]

Compiling is mostly Python (the frontend, the passes, the lowering: one core, the GIL),
then LLVM and ptxas (outside the GIL). Threads would overlap only the last part, so where
the platform forks (Linux), each compilation runs in a child process forked from this
one: it inherits the kernel's source and everything imported, gets the index of its task,
and sends back the CompiledKernel (its texts and metadata, which pickle). Elsewhere threads
compile. The result of each compilation is exactly the serial one (same function, same
inputs), and it goes through the compiled-kernel cache as a serial compile does
(`compiler.compile_jit`): a kernel compiled before is read back, a new one is stored.

A compilation that fails gives None: the caller's serial path compiles it again and
reports the error where it always did. A worker's warnings are dropped and the parent
re-issues the one a compile can give (register spills, `compiler.warn_spills`), so each
appears once, located at the kernel.

`TRITIUM_COMPILE_WORKERS` (tritium/config.py) caps the workers: `1` compiles serially;
unset, one per CPU this process may run on.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence

from tritium import compiler, config

# The tasks of the sweep being compiled, read by forked workers (set before they fork).
_TASKS: list = []


def workers_for(n_tasks: int) -> int:
    """How many workers compile `n_tasks` kernels: TRITIUM_COMPILE_WORKERS, else one per
    CPU this process may use, never more than the tasks."""
    cap = config.compile_workers()
    if cap is None:
        try:
            cap = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            cap = os.cpu_count() or 1
    return max(1, min(cap, n_tasks))


def _compile(i: int):
    source, spec, options = _TASKS[i]
    try:
        kernel = compiler.compile_jit(source, spec, options)
    except Exception:  # noqa: BLE001 - the serial path reports it
        return None
    kernel.module = None  # the TTIR module (interpreter only) stays behind
    return kernel


def _compile_quietly(i: int):
    """_compile in a forked worker: its warnings dropped (the parent re-issues them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _compile(i)


def _forks() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def compile_all(source, requests: Sequence[tuple], workers: int | None = None) -> list:
    """Compile `source` for each `(KernelSpec, Options)` of `requests`, concurrently;
    the CompiledKernels in order (None where a compilation failed)."""
    global _TASKS
    if workers is None:
        workers = workers_for(len(requests))
    if workers <= 1 or len(requests) <= 1:
        _TASKS = [(source, spec, options) for spec, options in requests]
        try:
            return [_compile(i) for i in range(len(requests))]
        finally:
            _TASKS = []
    import multiprocessing  # (here: `@tritium.autotune` at import time needs neither)
    from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

    _TASKS = [(source, spec, options) for spec, options in requests]
    forks = _forks()
    try:
        if forks:
            compiler.load_stages()  # imported once here, not in every child (and no
            # child imports while another thread of this process holds the import lock)
            with warnings.catch_warnings():
                # Python 3.12+ warns that forking a process with threads may deadlock
                # the child; the child only compiles (no CUDA, no other thread's locks)
                warnings.simplefilter("ignore", DeprecationWarning)
                ctx = multiprocessing.get_context("fork")
                with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
                    kernels = list(pool.map(_compile_quietly, range(len(requests))))
        else:
            with ThreadPoolExecutor(workers) as pool:
                kernels = list(pool.map(_compile, range(len(requests))))
    except Exception:  # noqa: BLE001 - a broken pool: the serial path compiles
        kernels = [None] * len(requests)
    finally:
        _TASKS = []
    if forks:
        for kernel in kernels:
            if kernel is not None:
                compiler.warn_spills(source, kernel.metadata)
    return kernels


__all__ = ["compile_all", "workers_for"]
