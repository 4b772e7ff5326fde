"""Casts and shape builtins: `tl.cast` (and `x.to`), `broadcast_to`, `broadcast`,
`expand_dims`, `reshape`, `view`, `ravel`, `permute`, `trans`, `join`, `split`.

    y = x.to(tl.float16)             ->  %y = arith.truncf %x : tensor<128xf32> to tensor<128xf16>
    r = tl.expand_dims(x, 1)         ->  %r = tt.expand_dims %x {axis = 1 : i32} : tensor<128xf32> -> tensor<128x1xf32>
    t = tl.trans(a)                  ->  %t = tt.trans %a {order = array<i32: 1, 0>} : tensor<32x64xf32> -> tensor<64x32xf32>
    c = tl.join(a, b)                ->  %c = tt.join %a, %b : tensor<64xf32> -> tensor<64x2xf32>
    l, r = tl.split(c)               ->  %l, %r = tt.split %c : tensor<64x2xf32> -> tensor<64xf32>

Shapes and axes are compile-time; the rules live in `semantic.py`.
"""

from __future__ import annotations

from tritium.frontend.builtins import combine
from tritium.frontend.builtins.base import builtin, dtype_arg, int_arg, shape_arg
from tritium.frontend.builtins.reduction import reduce
from tritium.frontend.core import unwrap
from tritium.frontend.semantic import SemanticError


@builtin
def cast(input, dtype, fp_downcast_rounding=None, bitcast=False, _semantic=None, _generator=None):
    x = _semantic.to_tensor(unwrap(input))
    dtype = dtype_arg(dtype)
    if unwrap(bitcast):
        return _semantic.bitcast(x, dtype)
    return _semantic.cast(x, dtype, unwrap(fp_downcast_rounding))


@builtin
def to(input, dtype, fp_downcast_rounding=None, bitcast=False, _semantic=None, _generator=None):
    return cast(input, dtype, fp_downcast_rounding, bitcast, _semantic=_semantic)


@builtin
def broadcast_to(input, *shape, _semantic=None, _generator=None):
    shape = shape_arg(
        shape[0] if len(shape) == 1 and isinstance(unwrap(shape[0]), (tuple, list)) else shape
    )
    return _semantic.broadcast_to(_semantic.to_tensor(unwrap(input)), shape)


@builtin
def broadcast(input, other, _semantic=None, _generator=None):
    return _semantic.broadcast_pair(
        _semantic.to_tensor(unwrap(input)), _semantic.to_tensor(unwrap(other))
    )


@builtin
def expand_dims(input, axis, _semantic=None, _generator=None):
    x = _semantic.to_tensor(unwrap(input))
    axes = unwrap(axis)
    axes = list(axes) if isinstance(axes, (tuple, list)) else [axes]
    axes = [int_arg(a, "expand_dims's axis") for a in axes]
    rank = len(x.shape) + len(axes)
    for a in axes:  # as upstream: each axis names a dimension of the result
        if not -rank <= a < rank:
            raise SemanticError(
                f"expand_dims: invalid axis {a} for a result of rank {rank} "
                f"(expected {-rank} <= axis < {rank})"
            )
    axes = sorted(a + rank if a < 0 else a for a in axes)
    if len(set(axes)) != len(axes):
        raise SemanticError(f"expand_dims received duplicate axes (normalized: {axes})")
    for a in axes:
        x = _semantic.expand_dims(x, a)
    return x


@builtin
def reshape(input, *shape, can_reorder=False, _semantic=None, _generator=None):
    shape = shape_arg(
        shape[0] if len(shape) == 1 and isinstance(unwrap(shape[0]), (tuple, list)) else shape
    )
    return _semantic.reshape(_semantic.to_tensor(unwrap(input)), shape, bool(unwrap(can_reorder)))


@builtin
def view(input, *shape, _semantic=None, _generator=None):
    return reshape(input, *shape, can_reorder=True, _semantic=_semantic)


@builtin
def ravel(x, can_reorder=False, _semantic=None, _generator=None):
    x = _semantic.to_tensor(unwrap(x))
    return _semantic.reshape(x, (x.numel,), bool(unwrap(can_reorder)))


@builtin
def permute(input, *dims, _semantic=None, _generator=None):
    dims = shape_arg(
        dims[0] if len(dims) == 1 and isinstance(unwrap(dims[0]), (tuple, list)) else dims
    )
    return _semantic.permute(_semantic.to_tensor(unwrap(input)), dims)


@builtin
def trans(input, *dims, _semantic=None, _generator=None):
    x = _semantic.to_tensor(unwrap(input))
    if not dims:
        if len(x.shape) != 2:
            raise SemanticError(
                f"tl.trans without dims needs a 2D block, got shape {list(x.shape)}"
            )
        dims = (1, 0)
    return permute(x, *dims, _semantic=_semantic)


@builtin
def join(a, b, _semantic=None, _generator=None):
    """`a` and `b` side by side along a new minor dim of size 2."""
    return _semantic.join(unwrap(a), unwrap(b))


@builtin
def split(a, _semantic=None, _generator=None):
    """The two halves of `a` along its last dim (of size 2); scalars when `a` is 1D."""
    a = _semantic.to_tensor(unwrap(a))
    rank_1 = len(a.shape) == 1
    if rank_1:
        a = _semantic.expand_dims(a, 0)
    lhs, rhs = _semantic.split(a)
    if rank_1:  # tensor<1> -> scalar, as upstream: a reduction with nothing to combine
        lhs, rhs = (
            reduce(x, 0, combine._take_first, _semantic=_semantic, _generator=_generator)
            for x in (lhs, rhs)
        )
    return lhs, rhs


__all__ = [
    "broadcast",
    "broadcast_to",
    "cast",
    "expand_dims",
    "join",
    "permute",
    "ravel",
    "reshape",
    "split",
    "to",
    "trans",
    "view",
]
