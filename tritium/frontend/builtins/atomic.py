"""The atomic builtins: `tl.atomic_add`, `atomic_max`, `atomic_min`, `atomic_and`,
`atomic_or`, `atomic_xor`, `atomic_xchg` and `atomic_cas`, with upstream's signatures.

    old = tl.atomic_add(pointer, val, mask=None, sem=None, scope=None)
    old = tl.atomic_cas(pointer, cmp, val, sem=None, scope=None)

Each returns the values memory held before the update (0 where `mask` is false). `sem`
is "relaxed", "acquire", "release" or "acq_rel" (the default), `scope` "gpu" (the
default), "cta" or "sys"; both must be compile-time strings. The rules live in
`semantic_atomic.py` (methods of `Semantic`).
"""

from __future__ import annotations

from tritium.frontend.builtins.base import builtin
from tritium.frontend.core import unwrap

_DOC = """Atomic {name} at `pointer` (a pointer or a block of pointers) with `val`, where
`mask` is true; returns the values memory held before (upstream's `tl.atomic_{kind}`).
`sem`: "relaxed", "acquire", "release" or "acq_rel" (default); `scope`: "gpu" (default),
"cta" or "sys"."""


def _rmw(kind: str, name: str):
    def fn(pointer, val, mask=None, sem=None, scope=None, _semantic=None, _generator=None):
        return _semantic.atomic_rmw(kind, unwrap(pointer), unwrap(val), unwrap(mask), sem, scope)

    fn.__name__ = fn.__qualname__ = f"atomic_{kind}"
    fn.__doc__ = _DOC.format(name=name, kind=kind)
    return builtin(fn)


atomic_add = _rmw("add", "add")
atomic_max = _rmw("max", "max")
atomic_min = _rmw("min", "min")
atomic_and = _rmw("and", "bitwise and")
atomic_or = _rmw("or", "bitwise or")
atomic_xor = _rmw("xor", "bitwise xor")
atomic_xchg = _rmw("xchg", "exchange")


@builtin
def atomic_cas(pointer, cmp, val, sem=None, scope=None, _semantic=None, _generator=None):
    """Atomic compare-and-swap at `pointer`: where memory holds `cmp`, write `val`; returns
    the values memory held before (upstream's `tl.atomic_cas`). `sem` and `scope` as for
    `tl.atomic_add`."""
    return _semantic.atomic_cas(unwrap(pointer), unwrap(cmp), unwrap(val), sem, scope)


__all__ = [
    "atomic_add",
    "atomic_and",
    "atomic_cas",
    "atomic_max",
    "atomic_min",
    "atomic_or",
    "atomic_xchg",
    "atomic_xor",
]
