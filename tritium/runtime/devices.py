"""Which GPU a launch uses when its arguments do not say, and on which stream: torch's
current device and stream when the program uses torch, else the device this thread picked,
else `TRITIUM_DEVICE`.

    >>> devices.current_device()      # torch.cuda.current_device() under torch
    1
    >>> devices.current_stream(1)     # torch.cuda.current_stream(1).cuda_stream, or None
    0

A launch runs where its array arguments live (`array_kinds.arguments_device`: a torch
tensor's `get_device()`, a cupy array's `device.id`, a `DeviceArray`'s `device`, a
`__cuda_array_interface__` pointer's `CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL`); only a launch
whose arguments carry no device (scalars, numpy arrays) asks `current_device()`:

| the program ... | current device | stream of a launch with `stream=None` |
|---|---|---|
| uses torch on the GPU (`torch.cuda.is_initialized()`) | `torch._C._cuda_getDevice()` | `torch._C._cuda_getCurrentRawStream(device)` (what `torch.cuda.current_stream(device).cuda_stream` is, without building a Stream object) |
| picked a device on this thread (`driver.device(n)`) | `n` | the legacy default stream |
| neither | `TRITIUM_DEVICE` (default 0) | the legacy default stream |

torch is never imported here: it counts once the program has imported it and initialised
its CUDA state (so a program that imports torch for CPU tensors only, or runs kernels in
the interpreter, never has CUDA initialised on its behalf). Nothing here calls CUDA; the
driver (driver.py) makes contexts current and records the thread's pick through `pick`.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from tritium import config

__all__ = ["current_device", "current_stream", "pick", "picked", "stream_reader", "torch_cuda"]

_thread = threading.local()  # .ordinal: the device this thread picked (driver.device(n))


def picked() -> int | None:
    """The device this thread picked (`driver.device(n)`), or None."""
    return getattr(_thread, "ordinal", None)


def pick(ordinal: int | None) -> None:
    """Remember `ordinal` as this thread's device (the driver calls it when it makes a
    device's context current for good)."""
    _thread.ordinal = ordinal


def torch_cuda() -> Any:
    """The `torch` module when the program has initialised torch's CUDA state, else None
    (torch not imported, a CPU-only build, or CUDA not used yet)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    cuda = getattr(torch, "cuda", None)
    try:
        return torch if cuda is not None and cuda.is_initialized() else None
    except Exception:  # a half-imported torch (the import is still running)
        return None


def current_device() -> int:
    """The device a launch whose arguments carry none runs on (see the module docstring)."""
    torch = torch_cuda()
    if torch is not None:
        return int(torch._C._cuda_getDevice())
    ordinal = picked()
    return config.device() if ordinal is None else ordinal


def stream_reader() -> Callable[[int], int] | None:
    """torch's reader of its current stream, `(device ordinal) -> raw CUstream handle`, when
    the program uses torch on the GPU, else None."""
    torch = torch_cuda()
    return None if torch is None else torch_stream_reader(torch)


def torch_stream_reader(torch: Any) -> Callable[[int], int] | None:
    """`torch._C._cuda_getCurrentRawStream` (None in a CPU-only build of torch)."""
    return getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)


def current_stream(ordinal: int) -> int | None:
    """torch's current stream on device `ordinal` (a raw handle), or None (the legacy
    default stream) when the program does not use torch on the GPU."""
    reader = stream_reader()
    return None if reader is None else int(reader(ordinal))
