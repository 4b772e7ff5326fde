"""Timing device work for benchmarks (`tritium.testing.do_bench`): events around a call,
a wait for the device, and a buffer whose clearing flushes the L2 cache between runs.

    clock = timing.clock()                 # chosen once per benchmark
    start, end = clock.event(), clock.event()
    start.record(); fn(); end.record()
    clock.synchronize()
    ms = start.elapsed_time(end)
    flush = clock.flush_buffer(); clock.flush(flush)

Which clock:

| situation | events | flush buffer |
|---|---|---|
| torch imported and its CUDA available | `torch.cuda.Event(enable_timing=True)` on torch's current stream | 256 MB torch tensor, `zero_()` |
| a GPU, no torch (or `prefer_torch=False`) | CUDA events (`cuEventRecord`) on the legacy default stream, where tritium launches (or on `stream`) | 256 MB `DeviceArray`, `cuMemsetD8` |
| no GPU, or TRITIUM_INTERPRET=1 | the host's `perf_counter`: interpreted kernels finish before the call returns | none |

torch is used only when the program has imported it already (its own tensors and kernels
run on its stream); tritium never imports torch for this. Kernels launched with
`kernel[grid](...)` run on the legacy default stream unless given `stream=`: a torch
stream other than the default (`torch.cuda.set_stream`) is not followed.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from tritium import config
from tritium.runtime import driver, memory

__all__ = ["clock"]

FLUSH_BYTES = 256 * 1024 * 1024  # larger than any GPU's L2 cache (H100: 50 MB)


class _DriverEvent:
    __slots__ = ("ev", "stream")

    def __init__(self, stream: Any) -> None:
        driver.ensure_context()  # (the launch device's, when the autotuner pushed it)
        err, self.ev = driver.cuda().cuEventCreate(0)
        driver.check(err, "cuEventCreate")
        self.stream = stream

    def record(self) -> None:
        driver.check(driver.cuda().cuEventRecord(self.ev, self.stream)[0], "cuEventRecord")

    def elapsed_time(self, end: _DriverEvent) -> float:
        cu = driver.cuda()
        driver.check(cu.cuEventSynchronize(end.ev)[0], "cuEventSynchronize")
        err, ms = cu.cuEventElapsedTime(self.ev, end.ev)
        driver.check(err, "cuEventElapsedTime")
        return float(ms)

    def __del__(self) -> None:
        try:
            driver.cuda().cuEventDestroy(self.ev)
        except Exception:  # at interpreter exit, or after a lost context
            pass


class _HostEvent:
    __slots__ = ("t",)

    def __init__(self) -> None:
        self.t = 0.0

    def record(self) -> None:
        self.t = time.perf_counter()

    def elapsed_time(self, end: _HostEvent) -> float:
        return (end.t - self.t) * 1e3


class _TorchClock:
    name = "torch"

    def __init__(self, torch: Any):
        self.torch = torch

    def event(self) -> Any:
        return self.torch.cuda.Event(enable_timing=True)

    def synchronize(self) -> None:
        self.torch.cuda.synchronize()

    def flush_buffer(self) -> Any:
        return self.torch.empty(FLUSH_BYTES // 4, dtype=self.torch.int32, device="cuda")

    @staticmethod
    def flush(buf: Any) -> None:
        buf.zero_()


class _DriverClock:
    name = "cuda"

    def __init__(self, stream: Any = None):
        self.stream = driver.stream(stream)

    def event(self) -> _DriverEvent:
        return _DriverEvent(self.stream)

    @staticmethod
    def synchronize() -> None:
        driver.ensure_context()
        driver.check(driver.cuda().cuCtxSynchronize()[0], "cuCtxSynchronize")

    @staticmethod
    def flush_buffer() -> Any:
        from tritium.runtime.arrays import empty

        return empty(FLUSH_BYTES, "uint8")

    @staticmethod
    def flush(buf: Any) -> None:
        memory.memset_d8(buf.ptr, 0, buf.nbytes, None, buf.device)


class _HostClock:
    name = "host"

    @staticmethod
    def event() -> _HostEvent:
        return _HostEvent()

    @staticmethod
    def synchronize() -> None:
        pass

    @staticmethod
    def flush_buffer() -> None:
        return None

    @staticmethod
    def flush(buf: Any) -> None:
        pass


def clock(stream: Any = None, prefer_torch: bool = True) -> Any:
    """The clock a benchmark should use here (see the module docstring's table); with
    `prefer_torch=False`, CUDA events on `stream` (autotune times its own launches)."""
    if config.interpret() or not driver.gpu_available():
        return _HostClock()
    torch = sys.modules.get("torch") if prefer_torch else None
    if torch is not None and torch.cuda.is_available():
        return _TorchClock(torch)
    return _DriverClock(stream)
