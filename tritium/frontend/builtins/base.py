"""What every builtin shares: the `@builtin` mark, the argument checks, `constexpr_function`.

    @builtin
    def arange(start, end, _semantic=None, _generator=None):
        return _semantic.arange(int_arg(start, "tl.arange's start"), int_arg(end, "tl.arange's end"))

A builtin is an ordinary Python function marked with `@builtin`; when a kernel calls it,
the code generator passes `_semantic` (the typing rules and op builder) and
`_generator` (to inline `@jit` helpers such as a reduction's combine function).
"""

from __future__ import annotations

from tritium.frontend import core
from tritium.frontend.core import constexpr, tensor, unwrap
from tritium.frontend.semantic import SemanticError


def builtin(fn):
    fn.__tritium_builtin__ = True
    return fn


def is_builtin(fn) -> bool:
    return getattr(fn, "__tritium_builtin__", False)


def int_arg(x, what: str) -> int:
    v = unwrap(x)
    if isinstance(v, tensor):
        raise SemanticError(f"{what} must be a tl.constexpr integer, not a runtime value")
    if not isinstance(v, int):
        raise SemanticError(f"{what} must be an integer, got {v!r}")
    return v


def shape_arg(shape) -> tuple[int, ...]:
    shape = unwrap(shape)
    if isinstance(shape, int):
        return (shape,)
    if not isinstance(shape, (tuple, list)):
        raise SemanticError(f"a shape must be a tuple of tl.constexpr integers, got {shape!r}")
    return tuple(int_arg(s, "every dimension of a shape") for s in shape)


def dtype_arg(d) -> core.dtype:
    d = unwrap(d)
    if not isinstance(d, core.dtype):
        raise SemanticError(f"expected a dtype such as tl.float32, got {d!r}")
    return d


class constexpr_function:
    """Marks a helper that runs in Python at compile time on constexpr arguments, as
    upstream's `tl.constexpr_function`: called from a kernel, it gets the arguments' values
    and its result is a constexpr (`call_in_kernel`); called on the host it is the plain
    function (`triton.cdiv(n, 256)` is an int)."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", type(self).__name__)
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def call_in_kernel(self, *args, **kwargs) -> constexpr:
        return constexpr(
            self.fn(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
        )


__all__ = ["builtin", "constexpr_function", "dtype_arg", "int_arg", "is_builtin", "shape_arg"]
