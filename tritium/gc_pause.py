"""`gc_paused()`: Python's cyclic garbage collector off for a stretch of work that allocates
much and frees little, on again as it was found.

    with gc_paused():          # a compile (compiler.compile_kernel), or importing the
        ...                    # compiler's modules (tritium.__getattr__, `tritium compile`)

Both allocate hundreds of thousands of objects that live on (IR ops, xDSL's op and
attribute classes): the collector's generation-0 passes every few thousand allocations,
and its full passes over the growing heap, find nothing to free. They were 3-4% of a dot
kernel's compile and ~10% of `tritium compile`'s process (docs/performance.md).
Reference counting still frees what is dropped; cycles wait until the stretch ends.
"""

from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def gc_paused():
    """The cyclic GC off inside the block (unless already off), restored after it; yields
    whether it was on (a compile then collects its young garbage while ptxas runs)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield enabled
    finally:
        if enabled:
            gc.enable()
