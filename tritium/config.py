"""Every environment variable tritium reads, in one place (the base layer: no tritium imports).

| variable | default | what it does |
|---|---|---|
| `TRITIUM_INTERPRET` | `0` | `1`: run kernels in the numpy interpreter instead of on the GPU (re-read at every launch) |
| `TRITIUM_DEBUG` | `0` | `1`: check every launch's arguments, keep tritium's own frames in tracebacks, raise internal compiler errors as they are |
| `TRITIUM_DEVICE` | `0` | the CUDA device a launch whose arguments carry none uses, when torch is not in use and the thread picked none |
| `TRITIUM_CACHE_DIR` | `$XDG_CACHE_HOME/tritium`, else `~/.cache/tritium` | where compiled kernels are cached |
| `XDG_CACHE_HOME` | `~/.cache` | the cache's parent when `TRITIUM_CACHE_DIR` is unset |
| `TRITIUM_DATACLASS_BYTECODE` | `1` | `0`: the methods `@dataclass` generates while the compiler loads are compiled in every process, not kept beside tritium's .pyc files (tritium/dataclass_bytecode.py) |
| `TRITIUM_CLI_WORKER` | `1` | `0`: `tritium compile` compiles in its own process only, without the worker it forks at start to load the compiler's back half beside the kernel's file and frontend (tritium/back_end_worker.py) |
| `TRITIUM_DUMP_DIR` | unset | JIT compilations write their source and the IR after every pass here (and skip the cache) |
| `TRITIUM_PTXAS`, `TRITIUM_NVDISASM`, `TRITIUM_CUOBJDUMP` | found on `PATH` or in `/usr/local/cuda/bin` | the NVIDIA tool binary to run |
| `TRITIUM_COMPILE_WORKERS` | one per CPU | how many processes compile an autotuning sweep's configs at once (`1`: one after another) |
| `TRITIUM_PRINT_AUTOTUNING`, `TRITON_PRINT_AUTOTUNING` | `0` | `1`: print each autotuning's key, time and chosen config, as upstream's `TRITON_PRINT_AUTOTUNING` |
| `TRITIUM_BENCH_POINTS` | unset | `tritium.testing.perf_report` measures only this many x values of each benchmark, spread evenly (to shorten long benchmarks) |
| `TRITIUM_TRITON_VERSION` | unset | when tritium serves `import triton`: the `triton.__version__` it reports instead of the upstream release it follows (3.6.0), for libraries that refuse a path on a version because of an upstream bug tritium does not have |
| `TRITIUM_LIBDEVICE` | unset | `1` / `auto`: lower math to NVIDIA's libdevice (`__nv_logf`, ...) and link `libdevice.10.bc`, for upstream's numbers bit for bit; a path: that file; unset / `0`: tritium's own math (codegen/libdevice_link.py) |
| `CUDA_HOME`, `CUDA_PATH` | unset | CUDA installations where `TRITIUM_LIBDEVICE=auto` looks for `nvvm/libdevice/libdevice.10.bc` |
| `TRITIUM_DISABLE_MMA_V3`, `DISABLE_MMA_V3` | `0` | `1`: on a Hopper GPU the JIT targets sm_90 (mma.sync) instead of sm_90a (wgmma for `tl.dot`), as upstream's `DISABLE_MMA_V3` (for like-with-like comparisons) |
| `TRITIUM_WGMMA_SYNC` | `0` | `1`: every wgmma group is waited for right after it is issued (`warp_group_dot_wait {pendings = 0}`), none kept in flight across a K loop: the escape hatch should the in-flight pipeline misbehave (part of the cache key) |
| `TRITON_INTERPRET` | unset | upstream's switch: when tritium serves `import triton` (`tritium.install_as_triton()`, `python -m tritium run`) and it is on at install, TRITIUM_INTERPRET is set to `1` |
| `TORCHINDUCTOR_COMPILE_THREADS` | unset | torch inductor's: `tritium.install_as_triton()` sets it to `1` where unset (kernels compile in the program's process, which has the alias; a compile worker process would not) |
| `TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER` | unset | torch inductor's: `tritium.install_as_triton()` sets it to `0` where unset (the static launcher loads upstream's cubin files from upstream's cache directory) |
| `OPENBLAS_NUM_THREADS` | unset | OpenBLAS's (numpy's BLAS): `tritium compile` sets it to `1` where unset, before importing the kernel's file (a BLAS thread per core would start and spin in a process that does no BLAS) |

A flag is on unless it is unset, empty or `0`. Each reader below reads `os.environ` when
called, so a variable set at run time (`os.environ["TRITIUM_DEBUG"] = "1"`,
`monkeypatch.setenv`) counts from the next call.

`TRITIUM_INTERPRET` is wanted on every `kernel[grid](...)` (tests and scripts switch it
between launches), where `os.environ.get` costs ~0.7 us when the variable is unset (it
raises and catches a KeyError inside). So `interpret()` returns a value kept current
instead: the first call reads the environment and registers an audit hook
(`sys.addaudithook`, PEP 578) that sees the `os.putenv` / `os.unsetenv` events which every
change of `os.environ` raises, and updates the value from the event's arguments. Reading
it is one attribute load (`INTERPRET.on`, ~20 ns; the launch fast path reads that
attribute itself). The hook costs every audited event one Python call (~0.1 us: `id()`,
`open`, `import`, ...; 0.3% of a vector add compile) and is only installed by the first
launch or compile that asks.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

__all__ = [
    "INTERPRET",
    "VARIABLES",
    "adopt_triton_interpret",
    "bench_points",
    "cuda_homes",
    "cache_dir",
    "dataclass_bytecode",
    "child_environment",
    "cli_worker",
    "compile_workers",
    "debug",
    "device",
    "dump_dir",
    "interpret",
    "interpreting",
    "libdevice",
    "mma_v3_disabled",
    "print_autotuning",
    "set_default",
    "tool",
    "triton_version",
    "wgmma_sync",
]

# name -> one line of documentation (docs/configuration.md shows the table above)
VARIABLES: dict[str, str] = {
    "TRITIUM_INTERPRET": "run kernels in the numpy interpreter instead of on the GPU",
    "TRITIUM_DEBUG": "argument checks on every launch, full tracebacks, internal errors raised",
    "TRITIUM_DEVICE": "the CUDA device a launch whose arguments carry none uses, when torch is not in use and the thread picked none",
    "TRITIUM_CACHE_DIR": "the compiled-kernel cache directory",
    "XDG_CACHE_HOME": "the cache's parent directory when TRITIUM_CACHE_DIR is unset",
    "TRITIUM_DATACLASS_BYTECODE": "0: do not keep the bytecode of dataclass methods beside tritium's .pyc files",
    "TRITIUM_CLI_WORKER": "0: tritium compile forks no worker for the compiler's back half",
    "TRITIUM_DUMP_DIR": "JIT compilations dump their IR here (and skip the cache)",
    "TRITIUM_PTXAS": "the ptxas binary",
    "TRITIUM_NVDISASM": "the nvdisasm binary",
    "TRITIUM_CUOBJDUMP": "the cuobjdump binary",
    "TRITIUM_COMPILE_WORKERS": "processes compiling an autotuning sweep at once (1: serially)",
    "TRITIUM_PRINT_AUTOTUNING": "print each autotuning's key, time and chosen config",
    "TRITON_PRINT_AUTOTUNING": "upstream's name for TRITIUM_PRINT_AUTOTUNING (either works)",
    "TRITIUM_BENCH_POINTS": "perf_report measures only this many x values of each benchmark",
    "TRITIUM_TRITON_VERSION": "the triton.__version__ reported when tritium serves `import triton`",
    "TRITIUM_LIBDEVICE": "1/auto or a path: math through NVIDIA's libdevice, as upstream (bit for bit)",
    "CUDA_HOME": "a CUDA installation (where TRITIUM_LIBDEVICE=auto looks for libdevice)",
    "CUDA_PATH": "a CUDA installation (where TRITIUM_LIBDEVICE=auto looks for libdevice)",
    "TRITIUM_DISABLE_MMA_V3": "the JIT targets sm_90 (mma.sync), not sm_90a (wgmma), on Hopper",
    "DISABLE_MMA_V3": "upstream's name for TRITIUM_DISABLE_MMA_V3 (either works)",
    "TRITIUM_WGMMA_SYNC": "every wgmma waits for its own group (pendings = 0), none in flight",
    "TRITON_INTERPRET": "upstream's interpreter switch, honoured when tritium serves `import triton`",
    "TORCHINDUCTOR_COMPILE_THREADS": "torch inductor's; install_as_triton() sets 1 where unset",
    "TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER": "torch inductor's; install_as_triton() sets 0 where unset",
    "OPENBLAS_NUM_THREADS": "numpy's BLAS threads; `tritium compile` sets 1 where unset",
}


def _flag(value: str | bytes | None) -> bool:
    return value not in (None, "", "0", b"", b"0")


def _get(name: str) -> str | None:
    assert name in VARIABLES, f"{name} is not in config.VARIABLES"
    return os.environ.get(name)


def debug() -> bool:
    """TRITIUM_DEBUG is on."""
    return _flag(_get("TRITIUM_DEBUG"))


def device() -> int:
    """TRITIUM_DEVICE (default 0)."""
    return int(_get("TRITIUM_DEVICE") or 0)


def cache_dir() -> Path:
    """$TRITIUM_CACHE_DIR, else $XDG_CACHE_HOME/tritium, else ~/.cache/tritium."""
    d = _get("TRITIUM_CACHE_DIR")
    if d:
        return Path(d).expanduser()
    xdg = _get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg).expanduser() / "tritium"
    return Path.home() / ".cache" / "tritium"


def dataclass_bytecode() -> bool:
    """TRITIUM_DATACLASS_BYTECODE is not `0` (on when unset)."""
    v = _get("TRITIUM_DATACLASS_BYTECODE")
    return v is None or _flag(v)


def cli_worker() -> bool:
    """TRITIUM_CLI_WORKER is not `0` (on when unset)."""
    v = _get("TRITIUM_CLI_WORKER")
    return v is None or _flag(v)


def bench_points() -> int | None:
    """TRITIUM_BENCH_POINTS, or None (every x value)."""
    v = _get("TRITIUM_BENCH_POINTS")
    return int(v) if v else None


def libdevice() -> str | None:
    """TRITIUM_LIBDEVICE when on (`1`, `auto` or a path to libdevice.10.bc); None when unset,
    empty or `0` (tritium's own math)."""
    v = _get("TRITIUM_LIBDEVICE")
    return v if _flag(v) else None


def cuda_homes() -> list[str]:
    """$CUDA_HOME and $CUDA_PATH, those set, in that order."""
    return [v for v in (_get("CUDA_HOME"), _get("CUDA_PATH")) if v]


def adopt_triton_interpret() -> None:
    """For `tritium.install_as_triton()`: a program written for upstream asks for the
    interpreter with TRITON_INTERPRET=1; when that is on and TRITIUM_INTERPRET is unset,
    set TRITIUM_INTERPRET=1 (once: later changes of TRITON_INTERPRET are not followed)."""
    if _flag(_get("TRITON_INTERPRET")) and _get("TRITIUM_INTERPRET") is None:
        os.environ["TRITIUM_INTERPRET"] = "1"


def set_default(name: str, value: str) -> bool:
    """Set another program's variable `name` to `value` where it is unset (torch
    inductor's TORCHINDUCTOR_* for `tritium.install_as_triton()`, OpenBLAS's thread count
    for `tritium compile`); whether it was set here."""
    if _get(name) is not None:
        return False
    os.environ[name] = value
    return True


def triton_version() -> str | None:
    """TRITIUM_TRITON_VERSION (a version string such as "3.7.1"), or None."""
    return _get("TRITIUM_TRITON_VERSION") or None


def dump_dir() -> str | None:
    """TRITIUM_DUMP_DIR, or None."""
    return _get("TRITIUM_DUMP_DIR") or None


def compile_workers() -> int | None:
    """TRITIUM_COMPILE_WORKERS as a number >= 1, or None (unset: one per CPU)."""
    v = _get("TRITIUM_COMPILE_WORKERS")
    return max(1, int(v)) if v else None


def print_autotuning() -> bool:
    """TRITIUM_PRINT_AUTOTUNING or TRITON_PRINT_AUTOTUNING is on."""
    return _flag(_get("TRITIUM_PRINT_AUTOTUNING")) or _flag(_get("TRITON_PRINT_AUTOTUNING"))


def mma_v3_disabled() -> bool:
    """TRITIUM_DISABLE_MMA_V3 or upstream's DISABLE_MMA_V3 is on."""
    return _flag(_get("TRITIUM_DISABLE_MMA_V3")) or _flag(_get("DISABLE_MMA_V3"))


def wgmma_sync() -> bool:
    """TRITIUM_WGMMA_SYNC is on: no wgmma group stays in flight across a K loop."""
    return _flag(_get("TRITIUM_WGMMA_SYNC"))


def child_environment(set_vars: dict[str, str] | None = None, drop: tuple = ()) -> dict[str, str]:
    """This process's environment for a subprocess, with `set_vars` set and `drop` removed
    (the differential driver's upstream worker: TRITON_INTERPRET, no PYTHONPATH)."""
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(set_vars or {})
    return env


def tool(name: str) -> str | None:
    """TRITIUM_<NAME> for an NVIDIA tool (`ptxas`, `nvdisasm`, `cuobjdump`), or None."""
    return _get(f"TRITIUM_{name.upper()}") or None


class _Watched:
    """A flag kept equal to its environment variable (see the module docstring)."""

    __slots__ = ("name", "key", "on", "_hooked")

    def __init__(self, name: str):
        assert name in VARIABLES
        self.name = name
        self.key = os.fsencode(name)
        self.on = False
        self._hooked = False

    def watch(self) -> _Watched:
        """Read the variable now and keep `on` current from here on."""
        if not self._hooked:
            self._hooked = True
            self.on = _flag(os.environ.get(self.name))
            sys.addaudithook(self._event)
        return self

    def _event(self, event: str, args: tuple) -> None:
        # raised before the change happens: take the new value from the event itself
        if event == "os.putenv":
            if args[0] == self.key or args[0] == self.name:
                self.on = _flag(args[1])
        elif event == "os.unsetenv" and (args[0] == self.key or args[0] == self.name):
            self.on = False


INTERPRET = _Watched("TRITIUM_INTERPRET")


def interpret() -> bool:
    """TRITIUM_INTERPRET is on (cheap: see the module docstring)."""
    return INTERPRET.watch().on


@contextlib.contextmanager
def interpreting(on: bool):
    """Set TRITIUM_INTERPRET to `on` for the block, then restore it (for tools that choose
    where the kernels they launch run: tritium.testing.check_kernel)."""
    old = os.environ.get("TRITIUM_INTERPRET")
    os.environ["TRITIUM_INTERPRET"] = "1" if on else "0"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TRITIUM_INTERPRET", None)
        else:
            os.environ["TRITIUM_INTERPRET"] = old
