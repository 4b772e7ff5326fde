"""The scan and sort builtins (upstream's group): `tl.associative_scan`, `tl.cumsum`,
`tl.cumprod`, `tl.histogram`, `tl.gather` (`sort`, `topk`, `flip` are library functions
written in the language: standard.py).

    y = tl.associative_scan(x, axis, combine_fn, reverse=False)   # x: tensor or tuple
    y = tl.cumsum(x, axis=0, reverse=False, dtype=None)
    y = tl.cumprod(x, axis=0, reverse=False, dtype=None)

A scan builds one `tt.scan`: an inclusive scan along `axis` whose combine region is the
inlined `@jit` `combine_fn` (the running values, then the new elements; returns one
value per scanned tensor). `reverse=True` scans from the last element down. Results
have the operands' shapes and dtypes.

    h = tl.histogram(x, num_bins, mask=None)   # counts of 0 <= x < num_bins: int32[num_bins]
    g = tl.gather(src, index, axis)            # src[.., index[i], ..] along axis; index's shape

Types, as upstream: `cumsum` and `cumprod` compute bf16 in fp32; `cumsum` computes
integers narrower than 32 bits (bool included) in int32 / uint32 of the same signedness,
as `tl.sum`; `dtype=` casts the input to that type first (upstream's `cumprod` has no
`dtype`; tritium takes one for symmetry).
"""

from __future__ import annotations

from xdsl.ir import Region

from tritium.frontend import core
from tritium.frontend.builtins import combine
from tritium.frontend.builtins.base import builtin, dtype_arg, int_arg
from tritium.frontend.builtins.reduction import promote_bf16, reduce_axis
from tritium.frontend.core import tensor, unwrap
from tritium.frontend.semantic import SemanticError
from tritium.ir import tt


def _scan_axis(x: tensor, axis) -> int:
    if unwrap(axis) is None:
        raise SemanticError("a scan needs an axis (axis=None is only for reductions)")
    return reduce_axis(x, axis, "scan")


def _bool_arg(x, what: str) -> bool:
    v = unwrap(x)
    if isinstance(v, tensor):
        raise SemanticError(f"{what} must be a tl.constexpr bool, not a runtime value")
    return bool(v)


@builtin
def associative_scan(input, axis, combine_fn, reverse=False, _semantic=None, _generator=None):
    """`tl.associative_scan(x, axis, combine_fn, reverse=False)`: the inclusive scan of `x`
    (a tensor, or a tuple of same-shape tensors scanned together) along `axis` with the
    `@jit` function `combine_fn(left..., right...)`; returns a tensor or a tuple."""
    inputs = unwrap(input)
    single = not isinstance(inputs, tuple)
    if not single and not inputs:
        raise SemanticError("tl.associative_scan needs at least one tensor")
    inputs = [_semantic.to_tensor(unwrap(i)) for i in ((inputs,) if single else inputs)]
    if any(not i.shape for i in inputs):
        raise SemanticError("cannot scan a scalar: tl.associative_scan needs a block")
    if len({i.shape for i in inputs}) != 1:
        shapes = ", ".join(str(list(i.shape)) for i in inputs)
        raise SemanticError(f"all tensors scanned together must have the same shape, got {shapes}")
    ax = _scan_axis(inputs[0], axis)
    rev = _bool_arg(reverse, "a scan's `reverse`")
    elts = [i.dtype for i in inputs]
    if any(e.is_ptr() for e in elts):
        raise SemanticError("cannot scan pointers: scan the offsets, then add them to the pointer")
    block = combine.combine_block(
        elts, combine_fn, tt.ScanReturnOp, "scanned tensors", _semantic, _generator
    )
    op = _semantic.b.insert(tt.ScanOp([i.handle for i in inputs], ax, rev, Region(block)))
    results = tuple(tensor(r, i.type) for r, i in zip(op.results, inputs))
    return results[0] if single else results


def _scan_input(input, dtype, promote_small_ints: bool, semantic) -> tensor:
    x = semantic.to_tensor(unwrap(input))
    x = promote_bf16(x, semantic)
    dtype = unwrap(dtype)
    if dtype is None and promote_small_ints and x.dtype.is_int() and x.dtype.int_bitwidth < 32:
        dtype = core.int32 if x.dtype.is_int_signed() else core.uint32
    return semantic.cast(x, dtype_arg(dtype)) if dtype is not None else x


@builtin
def cumsum(input, axis=0, reverse=False, dtype=None, _semantic=None, _generator=None):
    """The inclusive cumulative sum of `input` along `axis` (from the end if `reverse`).
    bf16 sums in fp32 and ints narrower than 32 bits in (u)int32, as upstream; `dtype`
    casts the input first."""
    x = _scan_input(input, dtype, True, _semantic)
    return associative_scan(
        x, axis, combine._sum_combine, reverse, _semantic=_semantic, _generator=_generator
    )


@builtin
def cumprod(input, axis=0, reverse=False, dtype=None, _semantic=None, _generator=None):
    """The inclusive cumulative product of `input` along `axis` (from the end if
    `reverse`). bf16 multiplies in fp32, as upstream; other types keep theirs (small
    ints are not widened, as upstream); `dtype` (a tritium extension) casts first."""
    x = _scan_input(input, dtype, False, _semantic)
    return associative_scan(
        x, axis, combine._prod_combine, reverse, _semantic=_semantic, _generator=_generator
    )


@builtin
def histogram(input, num_bins, mask=None, _semantic=None, _generator=None):
    """Counts of the values `0 <= x < num_bins` of the 1D integer `input` (elements whose
    `mask` is false are not counted); values outside that range are not counted."""
    n = int_arg(num_bins, "tl.histogram's num_bins")
    m = unwrap(mask)
    return _semantic.histogram(unwrap(input), n, m)


@builtin
def gather(src, index, axis, _semantic=None, _generator=None):
    """`out[i] = src[i with i[axis] = index[i]]`: the result has `index`'s shape."""
    return _semantic.gather(unwrap(src), unwrap(index), int_arg(axis, "tl.gather's axis"))


__all__ = ["associative_scan", "cumprod", "cumsum", "gather", "histogram"]
