"""xDSL's modules loaded without importing asyncio.

    from typing_extensions import deprecated      # xDSL: builtin, parser, pattern_rewriter
    @deprecated("Please use `container_of` instead")
    def ...                                       # typing_extensions wraps it, and to ask
                                                  # "is it a coroutine function?" runs
                                                  # `import asyncio.coroutines`

Wrapping a plain function with `typing_extensions.deprecated` (4.x, before Python 3.13's
`warnings.deprecated` takes its place) imports asyncio, and with it concurrent.futures,
logging, subprocess, ssl and socket: ~25 ms of `tritium compile`'s ~350 on the 2-core
machine, more on Python 3.12 (docs/performance.md), for a question `inspect` answers.
xDSL 0.74 decorates a handful of functions with it at import time.

`light_deprecated()` is a context manager: while it is open (tritium/ir/__init__.py opens it
around loading xDSL's dialects and tritium's), `typing_extensions.deprecated` is a subclass
that wraps a plain function itself: the same wrapper (`functools.wraps`, the warning with the
same category and stack level, `__deprecated__` on both) without the import. Classes,
coroutine functions and `category=None` go to typing_extensions' own code. Nothing changes
when asyncio is already imported (no cost to save) or when typing_extensions has no such
import (Python 3.13+). Modules imported after the block, and every later use, get
typing_extensions' own `deprecated`. tests/ir/test_light_deprecated.py checks the wrapper
against typing_extensions' and that compiling a kernel does not import asyncio.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import warnings


def _light_subclass(base: type) -> type:
    class deprecated(base):  # noqa: N801  (typing_extensions' name: xDSL imports it by name)
        def __call__(self, arg):
            if (
                self.category is None
                or isinstance(arg, type)
                or not callable(arg)
                or inspect.iscoroutinefunction(arg)
                or hasattr(arg, "_is_coroutine")  # asyncio's legacy marker
            ):
                return super().__call__(arg)
            msg, category, stacklevel = self.message, self.category, self.stacklevel

            @functools.wraps(arg)
            def wrapper(*args, **kwargs):
                warnings.warn(msg, category=category, stacklevel=stacklevel + 1)
                return arg(*args, **kwargs)

            arg.__deprecated__ = wrapper.__deprecated__ = msg
            return wrapper

    deprecated.__module__ = base.__module__
    deprecated.__qualname__ = base.__qualname__
    return deprecated


@contextlib.contextmanager
def light_deprecated():
    """`typing_extensions.deprecated` without its asyncio import inside the block."""
    te = sys.modules.get("typing_extensions")
    if te is None:
        import typing_extensions as te
    base = getattr(te, "deprecated", None)
    if (
        "asyncio" in sys.modules
        or not isinstance(base, type)
        or base is getattr(warnings, "deprecated", None)
        or not all(hasattr(base, a) for a in ("__init__", "__call__"))
    ):
        yield
        return
    te.deprecated = _light_subclass(base)
    try:
        yield
    finally:
        te.deprecated = base
