"""Exceptions tritium raises at users.

Every error a user can cause derives from `TritiumError`. Compile errors carry the
kernel source location and print as

    kernel.py:12:17: error: tl.arange's arguments must be powers of two, got 0 and 1000
        offs = tl.arange(0, 1000)
                    ^

with no traceback from inside tritium unless `TRITIUM_DEBUG=1`.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLoc:
    """A place in a user's source file (1-based line and column)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def format_diagnostic(loc: SourceLoc | None, message: str, kind: str = "error") -> str:
    """`FILE:LINE:COL: error: MESSAGE`, then the source line and a caret under COL."""
    if loc is None:
        return f"{kind}: {message}"
    text = f"{loc}: {kind}: {message}"
    line = linecache.getline(loc.file, loc.line).rstrip("\n")
    if line:
        text += f"\n{line}\n{' ' * max(loc.col - 1, 0)}^"
    return text


class TritiumError(Exception):
    """Base class of every error tritium reports to a user."""


class CompilationError(TritiumError):
    """A kernel cannot be compiled: the message names the source line and why."""

    def __init__(self, message: str, loc: SourceLoc | None = None):
        self.message = message
        self.loc = loc
        super().__init__(format_diagnostic(loc, message))


class NotSupportedError(CompilationError, NotImplementedError):
    """The kernel is valid Triton, but tritium cannot compile it (yet, or for this target):
    an op, type or layout the backend does not have, e.g. a bf16 atomic add before sm_90."""


class UnsupportedSyntaxError(CompilationError):
    """The kernel uses Python that the Triton language does not have (try, lambda, ...)."""


class ArgumentError(TritiumError, TypeError):
    """A launch or `tritium.compile` call got arguments that do not fit the kernel."""


class OutOfBoundsError(TritiumError, IndexError):
    """The interpreter caught an unmasked access outside an argument's buffer."""

    def __init__(self, message: str, loc: SourceLoc | None = None):
        self.message = message
        self.loc = loc
        super().__init__(format_diagnostic(loc, message))


class KernelAssertionError(TritiumError, AssertionError):
    """A `tl.device_assert` / debug overflow check failed while the kernel ran."""

    def __init__(self, message: str, loc: SourceLoc | None = None):
        self.message = message
        self.loc = loc
        super().__init__(format_diagnostic(loc, message))


class LaunchError(TritiumError, RuntimeError):
    """The CUDA driver refused or failed a launch; the message names the CUDA error."""


class OutOfResources(LaunchError):
    """A kernel needs more of a per-block resource (shared memory, threads for its
    registers) than the GPU has; upstream's `triton.runtime.autotuner.OutOfResources`, with
    its fields. The autotuner times such a config as infinitely slow."""

    def __init__(self, message: str, required: int = 0, limit: int = 0, name: str = ""):
        self.required, self.limit, self.name = required, limit, name
        super().__init__(message)


class NoGPUError(TritiumError, RuntimeError):
    """No CUDA driver or device is available on this machine."""
