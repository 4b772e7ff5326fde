"""`tritium compile`'s back half in a process forked at start, loading beside the front half.

    back_end = BackEnd.start("sm_89")     # xDSL and the dialects loaded, then fork: the
                                          # worker imports the passes, the lowering and
                                          # llvmlite, and waits
    ...                                   # here: import the kernel's file (numpy,
                                          # tritium.language), run the frontend
    kernel = back_end.compile(module, ...)  # the frontend's TTIR to the worker: TTIR and
                                          # TTGIR passes, LLVM IR, PTX, ... back here

A fresh `tritium compile` spends most of its time importing: the kernel's file (numpy,
`tritium.language`, which loads xDSL and the frontend) and the back half of the compiler
(the TTIR and TTGIR passes, the analyses, the lowering, llvmlite and LLVM's NVPTX target).
Those are Python imports, one core each, and the first half needs none of the second; so,
where the platform forks (Linux), the CLI loads what both need (xDSL, tritium's dialects,
the compiler's module) and forks this worker before it imports the kernel's file. The
worker imports the back half and makes LLVM's target machine while this process imports
the front half (numpy, the frontend, the kernel's file) and runs the frontend; then it
receives the frontend's TTIR (`ir.portable`: the module as flat data, pickled: ~1 ms, where printing
and parsing the text cost ~20 ms), compiles it on through `compiler.compile_ttir`
exactly as this process would have (tests/test_back_end_worker.py compares every stage's
text and the metadata of every example's kernel and of random kernels of every feature),
and sends back the CompiledKernel (texts and metadata, which pickle), its stages' times
(`--time-passes`) and the count of dump files written (`--dump-dir`). On the H200
machine, 30 interleaved rounds of the vector add's `tritium compile`: median 0.353 s with
the worker, 0.381 s without it (best 0.257 / 0.302 s; docs/performance.md).

A compilation that fails in the worker, or a worker that dies, gives None: the caller
compiles on in its own process, which reports any error as it always did (the compiler is
deterministic: the same error, at the cost of importing the back half then). The worker's
warnings are dropped; the caller re-issues the one a compile gives (register spills,
`compiler.warn_spills`), as compile_pool.py's workers do. The worker ends when its one
compilation is answered, or when this process closes its end (it failed before its
compile, or ended): `close` kills it (and reaps it when it is gone).

Only a process that has not loaded the back half yet forks one (`tritium compile` in its
own process, not a caller that has the compiler loaded already), only where it is the one
thread (a fork copies no other thread, and may copy a lock one of them holds), and not
with TRITIUM_CLI_WORKER=0.
"""

from __future__ import annotations

import os
import sys
import time

# what the worker imports while the caller imports the kernel's file: the back half (the
# lowering and LLVM only for a compile that goes on past the TTGIR)
_PASSES = ("tritium.compiler", "tritium.ir.portable", "tritium.passes.pipeline",
           "tritium.analysis.pointer_writes")  # fmt: skip
_CODEGEN = ("tritium.codegen", "tritium.codegen.module", "tritium.codegen.ptx",
            "tritium.codegen.tools", "tritium.codegen.register_budget")  # fmt: skip


class BackEnd:
    """A forked worker compiling one frontend TTIR on to the stage asked for."""

    def __init__(self, pid: int, requests, replies):
        self.pid, self._requests, self._replies = pid, requests, replies

    @classmethod
    def start(cls, arch: str, stop: str = "ptx") -> BackEnd | None:
        """Fork the worker for a compile to stage `stop` (its LLVM target machine made for
        `arch` when it goes past the TTGIR), or None where this process should compile
        alone: no fork on this platform, TRITIUM_CLI_WORKER=0, several threads (a fork
        copies none of them and may copy a lock one holds), or the back half already
        loaded (then a worker saves nothing)."""
        import threading

        from tritium import config

        if (
            not hasattr(os, "fork")
            or not sys.platform.startswith("linux")
            or not config.cli_worker()
            or threading.active_count() != 1
            or "tritium.passes.pipeline" in sys.modules
        ):
            return None
        # what both halves need (xDSL, tritium's dialects, the compiler's module) loads
        # here, once, before the fork; the worker then loads the back half while this
        # process loads numpy, the frontend and the kernel's file
        import tritium.compiler  # noqa: F401
        import tritium.ir.portable  # noqa: F401

        if threading.active_count() != 1:  # (should those imports have started one)
            return None
        _reap()
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # nothing buffered here is written twice
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        pid = os.fork()
        if pid == 0:  # the worker
            os.close(request_w)
            os.close(reply_r)
            code = 1
            try:
                _serve(request_r, reply_w, arch, stop)
                code = 0
            finally:
                os._exit(code)  # no atexit handlers, no flushing of the caller's buffers
        os.close(request_r)
        os.close(reply_w)
        return cls(pid, os.fdopen(request_w, "wb"), os.fdopen(reply_r, "rb"))

    def compile(self, module, name, runtime, spec, options, dumper, timings, stop):
        """The CompiledKernel of the frontend's TTIR `module`, compiled on in the worker
        (dumps numbered on from `dumper`'s count, `timings` extended with the worker's
        stages); None where the worker failed (the caller compiles on itself)."""
        import pickle

        from tritium.ir.portable import to_portable

        try:
            t0 = time.perf_counter()
            dump_dir = dumper.dir and dumper.dir.absolute()  # (this process's cwd's)
            request = (to_portable(module), name, runtime, spec, options, stop, dump_dir,
                       dumper.n, timings is not None)  # fmt: skip
            data = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
            if timings is not None:
                timings["ttir-to-worker"] = time.perf_counter() - t0
            self._requests.write(data)
            self._requests.close()
            reply = pickle.load(self._replies)
        except Exception:  # noqa: BLE001 - a worker that died mid-way, an unpicklable
            reply = None  # constant, ...: this process compiles on, and reports any error
        finally:
            self.close()
        if not reply:
            return None
        kernel, worker_timings, dumps = reply
        if timings is not None:
            timings.update(worker_timings)
        dumper.n = dumps
        return kernel

    def close(self) -> None:
        """End the worker (idempotent): once it answered, or was not asked (this process
        failed before its compile), nothing it does is wanted any more. Not waited for:
        the kernel tearing its memory down took ~3-9 ms, and `tritium compile` ends
        right after this (it is reaped then, or by the next `start`)."""
        import signal

        for f in (self._requests, self._replies):
            try:
                f.close()
            except OSError:
                pass
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _unreaped.append(self.pid)
            _reap()
            self.pid = 0


# workers killed and not reaped yet (a process calling `cli.main` again reaps them)
_unreaped: list[int] = []


def _reap() -> None:
    for pid in list(_unreaped):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _unreaped.remove(pid)


def load(arch: str, stop: str) -> None:
    """Import what compiling a frontend TTIR to `stop` needs and set up LLVM's target."""
    import importlib

    for name in _PASSES + (_CODEGEN if stop not in ("ttir", "ttgir") else ()):
        importlib.import_module(name)
    if stop in ("ttir", "ttgir"):
        return
    from tritium.codegen import ptx

    try:
        # LLVM's targets initialised, its target machines made (as optimize and llir_to_ptx
        # ask for them: functools.cache keys on the arguments as given)
        ptx.target_machine(arch, ptx.DEFAULT_PTX_VERSION)
        ptx.target_machine(arch, ptx.DEFAULT_PTX_VERSION, 3)
    except ValueError:  # an arch LLVM does not know: the compile reports it
        pass


def _serve(request_fd: int, reply_fd: int, arch: str, stop: str) -> None:
    """The worker: load the back half, wait for the one request, answer it."""
    import pickle
    import warnings

    from tritium.dataclass_bytecode import dataclass_bytecode, flush
    from tritium.gc_pause import gc_paused

    warnings.simplefilter("ignore")  # (the caller re-issues a compile's warning)
    with gc_paused(), dataclass_bytecode():
        load(arch, stop)
        flush()  # (forked inside the caller's block: this one never closes the last)
        with os.fdopen(request_fd, "rb") as requests:
            try:
                request = pickle.load(requests)
            except EOFError:  # the caller ended, or needed no compile
                return
        reply = _compile(*request)
        flush()  # (what the compile itself defined: only ever a first run's)
    with os.fdopen(reply_fd, "wb") as replies:
        pickle.dump(reply, replies, protocol=pickle.HIGHEST_PROTOCOL)


def _compile(ttir, name, runtime, spec, options, stop, dump_dir, dump_n, timed):
    """(CompiledKernel, timings, dump count) of the frontend's TTIR (`ir.portable` data),
    or None on any failure."""
    from tritium import compiler
    from tritium.codegen.libdevice_link import resolve as resolve_libdevice
    from tritium.ir.portable import from_portable

    timings: dict | None = {} if timed else None
    try:
        t0 = time.perf_counter()
        module = from_portable(ttir)
        if timings is not None:
            timings["ttir-from-parent"] = time.perf_counter() - t0
        dumper = compiler.Dumper(dump_dir)
        dumper.n = dump_n
        kernel = compiler.compile_ttir(
            module, name, runtime, spec, options, dumper, timings, stop, resolve_libdevice(),
            gc_on=False,
        )  # fmt: skip
    except Exception:  # noqa: BLE001 - the caller compiles again and reports it
        return None
    kernel.module = None
    return kernel, timings or {}, dumper.n


__all__ = ["BackEnd"]
