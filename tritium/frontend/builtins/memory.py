"""`tl.load` and `tl.store`, with upstream's signatures.

    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0, cache_modifier=".cg")
    tl.store(out_ptr + offs, x, mask=offs < n)

Through a pointer or a block of pointers (`mask` / `other`), or through a block pointer
(`boundary_check` / `padding_option`, see block_ptr.py). The rules live in
`semantic_memory.py` and `semantic_block_ptr.py`.
"""

from __future__ import annotations

from tritium.frontend.builtins.base import builtin
from tritium.frontend.core import unwrap
from tritium.frontend.semantic import SemanticError

_CACHE_MODIFIERS = {
    "": "none",
    ".ca": "ca",
    ".cg": "cg",
    ".cv": "cv",
    ".wb": "wb",
    ".cs": "cs",
    ".wt": "wt",
}
_EVICTION = {
    "": "evict_normal",
    "evict_normal": "evict_normal",
    "evict_first": "evict_first",
    "evict_last": "evict_last",
}


@builtin
def load(
    pointer,
    mask=None,
    other=None,
    boundary_check=(),
    padding_option="",
    cache_modifier="",
    eviction_policy="",
    volatile=False,
    _semantic=None,
    _generator=None,
):
    cache = _CACHE_MODIFIERS.get(unwrap(cache_modifier))
    evict = _EVICTION.get(unwrap(eviction_policy))
    if cache is None:
        raise SemanticError(
            f"unknown cache_modifier {unwrap(cache_modifier)!r}; use one of {sorted(k for k in _CACHE_MODIFIERS if k)}"
        )
    if evict is None:
        raise SemanticError(f"unknown eviction_policy {unwrap(eviction_policy)!r}")
    padding = unwrap(padding_option)
    if padding not in ("", None, "zero", "nan"):
        raise SemanticError(f'unknown padding_option {padding!r}; use "zero" or "nan"')
    return _semantic.load(
        unwrap(pointer),
        unwrap(mask),
        unwrap(other),
        cache,
        evict,
        bool(unwrap(volatile)),
        unwrap(boundary_check),
        padding or "",
    )


@builtin
def store(
    pointer,
    value,
    mask=None,
    boundary_check=(),
    cache_modifier="",
    eviction_policy="",
    _semantic=None,
    _generator=None,
):
    cache = _CACHE_MODIFIERS.get(unwrap(cache_modifier))
    evict = _EVICTION.get(unwrap(eviction_policy))
    if cache is None or evict is None:
        raise SemanticError("unknown cache_modifier or eviction_policy")
    _semantic.store(
        unwrap(pointer), unwrap(value), unwrap(mask), cache, evict, unwrap(boundary_check)
    )


__all__ = ["load", "store"]
