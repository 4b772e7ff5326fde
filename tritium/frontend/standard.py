"""Library functions written in the Triton language itself, as upstream's `standard.py`.

They are `KernelSource`s (kernel_source.py): the code generator inlines them like any
user `@jit` helper.
"""

from __future__ import annotations

from tritium.frontend import builtins as tl
from tritium.frontend.core import constexpr
from tritium.frontend.kernel_source import KernelSource


@KernelSource
def cdiv(x, div):
    """Ceiling division: `(x + div - 1) // div`."""
    return (x + div - 1) // div


@KernelSource
def sigmoid(x):
    return 1 / (1 + tl.exp(-x))


@KernelSource
def softmax(
    x, dim: constexpr = None, keep_dims: constexpr = False, ieee_rounding: constexpr = False
):
    _dim: constexpr = 0 if dim is None else dim
    z = x - tl.max(x, _dim, keep_dims=True)
    num = tl.exp(z)
    den = tl.sum(num, _dim, keep_dims=True)
    return tl.fdiv(num, den, ieee_rounding)


@KernelSource
def _sum_combine(a, b):
    return a + b


@KernelSource
def _xor_combine(a, b):
    return a ^ b


@KernelSource
def _elementwise_max(a, b):
    return tl.maximum(a, b)


@KernelSource
def _elementwise_min(a, b):
    return tl.minimum(a, b)


@KernelSource
def _argmax_combine(value1, index1, value2, index2, tie_break_left: constexpr):
    if tie_break_left:
        tie = value1 == value2 and index1 < index2
    else:
        tie = False
    gt = value1 > value2 or tie
    v_ret = tl.where(gt, value1, value2)
    i_ret = tl.where(gt, index1, index2)
    return v_ret, i_ret


@KernelSource
def _argmax_combine_tie_break_left(value1, index1, value2, index2):
    return _argmax_combine(value1, index1, value2, index2, True)


@KernelSource
def _argmax_combine_tie_break_fast(value1, index1, value2, index2):
    return _argmax_combine(value1, index1, value2, index2, False)


@KernelSource
def _argmin_combine(value1, index1, value2, index2, tie_break_left: constexpr):
    if tie_break_left:
        tie = value1 == value2 and index1 < index2
    else:
        tie = False
    lt = value1 < value2 or tie
    value_ret = tl.where(lt, value1, value2)
    index_ret = tl.where(lt, index1, index2)
    return value_ret, index_ret


@KernelSource
def _argmin_combine_tie_break_left(value1, index1, value2, index2):
    return _argmin_combine(value1, index1, value2, index2, True)


@KernelSource
def _argmin_combine_tie_break_fast(value1, index1, value2, index2):
    return _argmin_combine(value1, index1, value2, index2, False)


@KernelSource
def swizzle2d(i, j, size_i, size_j, size_g):
    """Map (i, j) of a size_i x size_j grid to grouped order (groups of size_g rows)."""
    ij = i * size_j + j
    size_gj = size_g * size_j
    group_id = ij // size_gj
    off_i = group_id * size_g
    size_g = tl.minimum(size_i - off_i, size_g)
    ij = ij % size_gj
    new_i = off_i + ij % size_g
    new_j = ij // size_g
    return new_i, new_j
