"""Global scratch memory: upstream's `triton.set_allocator`.

Upstream Triton asks the program for device memory when a kernel needs global scratch:
on Hopper and later, `tl.make_tensor_descriptor` builds its TMA descriptor in global
memory on the device, and some kernels spill to a global scratch buffer. Programs
therefore call `triton.set_allocator(fn)` with `fn(size, alignment, stream) -> buffer`
before launching such kernels (upstream tutorial 08, flash-linear-attention on TMA GPUs).

tritium's kernels need no global scratch: its tensor descriptors lower to block pointers,
then pointer arithmetic and masks (tritium/frontend/builtins/tensor_descriptor.py,
passes/rewrite_tensor_pointer.py), and nothing spills to a runtime-allocated buffer. So the allocator is kept (a later kernel kind that needs scratch
would call `current()`) and validated as upstream validates it, and no launch calls it
today. tests/runtime/test_global_scratch.py checks both: that it is accepted and that a
tensor-descriptor kernel runs without calling it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable

_allocator: contextvars.ContextVar[Callable | None] = contextvars.ContextVar(
    "tritium_global_scratch_allocator", default=None
)


def set_allocator(allocator: Callable | None) -> None:
    """Keep `allocator(size: int, alignment: int, stream: int | None) -> buffer` for kernels
    that need global scratch memory (none of tritium's do: see the module docstring).
    `None` removes it. Per context, as upstream's (a `contextvars.ContextVar`)."""
    if allocator is not None and not callable(allocator):
        raise TypeError(
            f"set_allocator takes a callable (size, alignment, stream) -> buffer, "
            f"not {type(allocator).__name__}"
        )
    _allocator.set(allocator)


def current() -> Callable | None:
    """The allocator `set_allocator` was given in this context, or None."""
    return _allocator.get()
