"""The block-pointer builtins: `tl.make_block_ptr` and `tl.advance`, with upstream's
signatures.

    p = tl.make_block_ptr(base, shape=(M, K), strides=(stride_m, 1), offsets=(0, 0),
                          block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    for k in range(0, K, BLOCK_K):
        a = tl.load(p, boundary_check=(0, 1), padding_option="zero")
        p = tl.advance(p, (0, BLOCK_K))

`tl.load` / `tl.store` (in `memory.py`) take the block pointer with `boundary_check`
and `padding_option`. The rules live in `semantic_block_ptr.py` (methods of `Semantic`).
"""

from __future__ import annotations

from tritium.frontend.builtins.base import builtin


@builtin
def make_block_ptr(
    base, shape, strides, offsets, block_shape, order, _semantic=None, _generator=None
):
    """A pointer to the `block_shape` window at `offsets` of a `shape`-sized tensor with
    `strides` (in elements) at `base` (upstream's `tl.make_block_ptr`). `block_shape` and
    `order` (the dims from fastest- to slowest-varying in memory) are compile-time."""
    return _semantic.make_block_ptr(base, shape, strides, offsets, block_shape, order)


@builtin
def advance(base, offsets, _semantic=None, _generator=None):
    """The block pointer `base` with its window moved by `offsets`, one per dim (upstream's
    `tl.advance`)."""
    return _semantic.advance(base, offsets)


advance.__tritium_must_use__ = (
    "tl.advance has no side effects: it returns the moved block pointer; "
    "assign it (`p = tl.advance(p, offsets)`)"
)


__all__ = ["advance", "make_block_ptr"]
