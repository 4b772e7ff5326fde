"""The reduction builtins: `tl.reduce`, `sum`, `max`, `min`, `argmax`, `argmin`, `xor_sum`.

    s = tl.sum(x, axis=1)              ->  %s = "tt.reduce"(%x) <{axis = 1 : i32}> ({...})
    v, i = tl.max(x, 0, return_indices=True)   (a tt.reduce of (x, arange) pairs)

A reduction builds a `tt.reduce` whose combine region is an inlined `@jit` function
(`combine.py` holds the region's builder and the standard combine functions), as
upstream.
"""

from __future__ import annotations

from xdsl.ir import Region

from tritium.frontend import core
from tritium.frontend.builtins import combine
from tritium.frontend.builtins.base import builtin, dtype_arg, int_arg
from tritium.frontend.core import block_type, tensor, unwrap
from tritium.frontend.semantic import SemanticError
from tritium.ir import tt


# ---------------------------------------------------------------------- reductions
def reduce_axis(x: tensor, axis, what: str = "reduction"):
    """`axis` normalised to [0, rank) (None stays None); `what` names the op in errors."""
    axis = unwrap(axis)
    if axis is None:
        return None
    axis = int_arg(axis, f"a {what}'s axis")
    rank = len(x.shape)
    if not -rank <= axis < rank:
        raise SemanticError(
            f"{what} axis {axis} is out of range for a tensor of rank {rank} (shape {list(x.shape)})"
        )
    return axis + rank if axis < 0 else axis


@builtin
def reduce(input, axis, combine_fn, keep_dims=False, _semantic=None, _generator=None):
    """`tl.reduce(x, axis, combine_fn)`; `input` may be a tuple of same-shape tensors."""
    inputs = unwrap(input)
    single = not isinstance(inputs, tuple)
    inputs = [_semantic.to_tensor(unwrap(i)) for i in ((inputs,) if single else inputs)]
    if any(not i.shape for i in inputs):
        raise SemanticError("cannot reduce a scalar")
    if len({i.shape for i in inputs}) != 1:
        raise SemanticError("all tensors reduced together must have the same shape")
    axis = reduce_axis(inputs[0], axis)
    keep = bool(unwrap(keep_dims))
    if axis is None:
        orig_rank = len(inputs[0].shape)
        inputs = [_semantic.reshape(i, (i.numel,), True) if len(i.shape) > 1 else i for i in inputs]
        results = reduce(
            tuple(inputs), 0, combine_fn, False, _semantic=_semantic, _generator=_generator
        )
        if keep:
            results = tuple(
                _semantic.reshape(_semantic.to_tensor(r), (1,) * orig_rank) for r in results
            )
        return results[0] if single else results
    elts = [i.dtype for i in inputs]
    block = combine.combine_block(
        elts, combine_fn, tt.ReduceReturnOp, "reduced tensors", _semantic, _generator
    )
    shape = inputs[0].shape[:axis] + inputs[0].shape[axis + 1 :]
    rtypes = [block_type(e, shape) if shape else e for e in elts]
    op = _semantic.b.insert(
        tt.ReduceOp([i.handle for i in inputs], axis, [t.to_ir() for t in rtypes], Region(block))
    )
    results = tuple(tensor(r, t) for r, t in zip(op.results, rtypes))
    if keep:
        results = tuple(_semantic.expand_dims(r, axis) for r in results)
    return results[0] if single else results


def promote_bf16(x: tensor, semantic) -> tensor:
    return semantic.cast(x, core.float32) if x.dtype.is_bf16() else x


@builtin
def sum(input, axis=None, keep_dims=False, dtype=None, _semantic=None, _generator=None):
    x = _semantic.to_tensor(unwrap(input))
    dtype = unwrap(dtype)
    if dtype is None and x.dtype.is_int() and x.dtype.int_bitwidth < 32:
        dtype = core.int32 if x.dtype.is_int_signed() else core.uint32
    if dtype is not None:
        x = _semantic.cast(x, dtype_arg(dtype))
    return reduce(
        x, axis, combine._sum_combine, keep_dims, _semantic=_semantic, _generator=_generator
    )


def _minmax(x, axis, return_indices, tie_break_left, keep_dims, is_max, semantic, generator):
    x = promote_bf16(semantic.to_tensor(unwrap(x)), semantic)
    if unwrap(return_indices):
        if is_max:
            fn = (
                combine._argmax_combine_tie_break_left
                if unwrap(tie_break_left)
                else combine._argmax_combine_tie_break_fast
            )
        else:
            fn = (
                combine._argmin_combine_tie_break_left
                if unwrap(tie_break_left)
                else combine._argmin_combine_tie_break_fast
            )
        return _reduce_with_indices(x, axis, fn, keep_dims, semantic, generator)
    if x.dtype.primitive_bitwidth < 32:
        x = semantic.cast(x, core.float32 if x.dtype.is_floating() else core.int32)
    fn = combine._elementwise_max if is_max else combine._elementwise_min
    return reduce(x, axis, fn, keep_dims, _semantic=semantic, _generator=generator)


def _reduce_with_indices(x: tensor, axis, combine_fn, keep_dims, semantic, generator):
    ax = reduce_axis(x, axis)
    if ax is None:
        x = semantic.reshape(x, (x.numel,), True) if len(x.shape) > 1 else x
        ax = 0
    n = x.shape[ax]
    index = semantic.arange(0, n)
    if len(x.shape) > 1:
        for d in range(len(x.shape)):
            if d != ax:
                index = semantic.expand_dims(index, d)
        index = semantic.broadcast_to(index, x.shape)
    return reduce((x, index), ax, combine_fn, keep_dims, _semantic=semantic, _generator=generator)


@builtin
def max(
    input,
    axis=None,
    return_indices=False,
    return_indices_tie_break_left=True,
    keep_dims=False,
    _semantic=None,
    _generator=None,
):
    return _minmax(
        input,
        axis,
        return_indices,
        return_indices_tie_break_left,
        keep_dims,
        True,
        _semantic,
        _generator,
    )


@builtin
def min(
    input,
    axis=None,
    return_indices=False,
    return_indices_tie_break_left=True,
    keep_dims=False,
    _semantic=None,
    _generator=None,
):
    return _minmax(
        input,
        axis,
        return_indices,
        return_indices_tie_break_left,
        keep_dims,
        False,
        _semantic,
        _generator,
    )


@builtin
def argmax(input, axis, tie_break_left=True, keep_dims=False, _semantic=None, _generator=None):
    return _minmax(input, axis, True, tie_break_left, keep_dims, True, _semantic, _generator)[1]


@builtin
def argmin(input, axis, tie_break_left=True, keep_dims=False, _semantic=None, _generator=None):
    return _minmax(input, axis, True, tie_break_left, keep_dims, False, _semantic, _generator)[1]


@builtin
def xor_sum(input, axis=None, keep_dims=False, _semantic=None, _generator=None):
    x = _semantic.to_tensor(unwrap(input))
    if not x.dtype.is_int():
        raise SemanticError("tl.xor_sum needs an integer tensor")
    return reduce(
        x, axis, combine._xor_combine, keep_dims, _semantic=_semantic, _generator=_generator
    )


__all__ = ["argmax", "argmin", "max", "min", "reduce", "sum", "xor_sum"]
