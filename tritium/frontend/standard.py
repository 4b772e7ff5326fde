"""Library functions written in the Triton language itself, as upstream's `standard.py`.

They are `KernelSource`s (kernel_source.py): the code generator inlines them like any
user `@jit` helper. The combine functions of the reductions and scans are in `builtins/combine.py`, below the
builtins that use them.
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
