"""Library functions written in the Triton language itself, as upstream's `standard.py`:
`cdiv`, `sigmoid`, `softmax`, `swizzle2d`, `interleave`, `flip`, `sort`, `topk`,
`bitonic_merge`.

Sorting and flipping work, as upstream's, on a *hypercube* view: the dim of size 2^n is
reshaped into n dims of size 2 (`[4, 8] -> [4, 2, 2, 2]` for dim 1), so each step pairs
elements that differ in one index bit; `xor_sum` over that size-2 dim gives every element
its partner (`x ^ (x0 ^ x1)`), which on the GPU is a register move or one shuffle. A
bitonic sort is log2(n) merges of compare-and-swaps; `topk` sorts runs of k and then
halves the candidates with an elementwise max of the two halves (a bitonic top-k).
Unlike upstream's (last dim only), `sort`, `topk` and `flip` take any dim of power-of-two
size.

They are `KernelSource`s (kernel_source.py): the code generator inlines them like any
user `@jit` helper. The combine functions of the reductions and scans are in `builtins/combine.py`, below the
builtins that use them.
"""

from __future__ import annotations

from tritium.frontend import builtins as tl
from tritium.frontend import core
from tritium.frontend.builtins import combine
from tritium.frontend.builtins.base import constexpr_function
from tritium.frontend.core import constexpr, unwrap
from tritium.frontend.iterators import static_range
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


@KernelSource
def interleave(a, b):
    """`a` and `b` interleaved along their last dim: `join(a, b)` reshaped to
    `a.shape[:-1] + [2 * a.shape[-1]]` (two scalars give a tensor of 2)."""
    c = tl.join(a, b)
    return tl.reshape(c, _interleaved_shape(c.shape))


# ---------------------------------------------------------------------- sort, topk, flip
def _dims(shape) -> tuple[int, ...]:
    return tuple(unwrap(s) for s in shape)


@constexpr_function
def _interleaved_shape(shape):
    shape = _dims(shape)
    return shape if len(shape) == 1 else shape[:-2] + (2 * shape[-2],)


@constexpr_function
def _log2(n):
    if n < 1 or n & (n - 1):
        raise ValueError(f"expected a power of two, got {n}")
    return n.bit_length() - 1


@constexpr_function
def get_int_dtype(bitwidth, signed):
    """Upstream's `tl.core.get_int_dtype(bitwidth, signed)`: the integer dtype of that
    width (torch inductor's sort helper bitcasts through it)."""
    name = "int1" if bitwidth == 1 else f"{'int' if signed else 'uint'}{bitwidth}"
    if name not in core.dtype.SINT + core.dtype.UINT:
        raise ValueError(f"no integer dtype of {bitwidth} bits")
    return core.dtype(name)


@constexpr_function
def _dim_of(dim, shape):
    """`dim` (None: the last) as a non-negative index into `shape`."""
    rank = len(shape)
    d = rank - 1 if dim is None else dim
    if not -rank <= d < rank:
        raise ValueError(f"dim {dim} is out of range for shape {list(shape)}")
    return d % rank


@constexpr_function
def _cube_shape(shape, dim):
    """`shape` with `dim` (of size 2^n) split into n dims of size 2."""
    shape = _dims(shape)
    return shape[:dim] + (2,) * _log2(shape[dim]) + shape[dim + 1 :]


@constexpr_function
def _with_dim(shape, dim, size):
    shape = _dims(shape)
    return shape[:dim] + (size,) + shape[dim + 1 :]


@constexpr_function
def _int_type(dt):
    """The signed integer type of `dt`'s width, for bit-exact xor swaps."""
    return {1: core.int1, 8: core.int8, 16: core.int16, 32: core.int32, 64: core.int64}[
        dt.primitive_bitwidth
    ]


@constexpr_function
def _other_axes(rank, axis):
    return tuple(d for d in range(rank) if d != axis)


@KernelSource
def _indicator(rank: constexpr, axis: constexpr):
    """0 / 1 by the index along `axis`, shaped to broadcast against a rank-`rank` tensor
    (expand_dims of a range: index math the backend recomputes in any layout)."""
    return tl.expand_dims(tl.arange(0, 2), _other_axes(rank, axis))


@KernelSource
def _partner(x, axis: constexpr):
    """Every element's partner along the size-2 `axis` (bit-exact: an integer xor swap)."""
    ix = x.to(_int_type(x.dtype), bitcast=True)
    return (ix ^ tl.xor_sum(ix, axis, True)).to(x.dtype, bitcast=True)


@KernelSource
def _compare_and_swap(x, flip, axis: constexpr):
    """One bitonic step across `axis` (size 2): the lower element keeps the min where
    `flip` is 0 (the max where 1)."""
    y = _partner(x, axis)
    is_right = _indicator(len(x.shape), axis)
    return tl.where((x > y) != (flip ^ is_right), y, x)


@KernelSource
def _bitonic_merge_cube(x, dim: constexpr, bits: constexpr, stage: constexpr, order: constexpr):
    """Merges bitonic runs of 2^stage along the cube dims dim .. dim + bits - 1 (index bit
    j of the sorted dim is cube dim `dim + bits - 1 - j`). order: 0 ascending, 1
    descending, 2 alternating by index bit `stage`."""
    if order == 2:
        flip = _indicator(len(x.shape), dim + bits - 1 - stage)
    else:
        flip = order
    for i in static_range(stage):
        x = _compare_and_swap(x, flip, dim + bits - stage + i)
    return x


@KernelSource
def _sort_impl(x, k: constexpr, dim: constexpr, descending: constexpr):
    _dim: constexpr = _dim_of(dim, x.shape)
    log_n: constexpr = _log2(x.shape[_dim])
    log_k: constexpr = log_n if k is None else _log2(k)
    h = tl.reshape(x, _cube_shape(x.shape, _dim))
    for i in static_range(1, log_k + 1):
        h = _bitonic_merge_cube(h, _dim, log_n, i, 2 if i < log_n else descending)
    # bitonic top-k: runs of k are sorted alternately; keep the better half of each pair
    for i in static_range(log_k + 1, log_n + 1):
        if descending:
            h = tl.reduce(h, _dim + log_n - i, combine._elementwise_max)
        else:
            h = tl.reduce(h, _dim + log_n - i, combine._elementwise_min)
        h = _bitonic_merge_cube(h, _dim, log_n - i + log_k, log_k, 2 if i < log_n else descending)
    return tl.reshape(h, _with_dim(x.shape, _dim, 1 << log_k))


@KernelSource
def sort(x, dim: constexpr = None, descending: constexpr = 0):
    """`x` sorted along `dim` (None: the last), whose size must be a power of two."""
    return _sort_impl(x, None, dim, descending)


@KernelSource
def topk(x, k: constexpr, dim: constexpr = None):
    """The `k` largest elements along `dim` (None: the last), largest first; `k` and the
    dim's size are powers of two."""
    return _sort_impl(x, k, dim, True)


@KernelSource
def bitonic_merge(x, dim: constexpr = None, descending: constexpr = 0):
    """Sorts `x` along `dim` when it is bitonic there (one merge: log2(n) compare-and-swap
    steps)."""
    _dim: constexpr = _dim_of(dim, x.shape)
    log_n: constexpr = _log2(x.shape[_dim])
    h = tl.reshape(x, _cube_shape(x.shape, _dim))
    h = _bitonic_merge_cube(h, _dim, log_n, log_n, descending)
    return tl.reshape(h, x.shape)


@KernelSource
def flip(x, dim: constexpr = None):
    """`x` reversed along `dim` (None: the last), whose size must be a power of two:
    swapping the halves of every level of the hypercube reverses the index bits' sense."""
    _dim: constexpr = _dim_of(dim, x.shape)
    steps: constexpr = _log2(x.shape[_dim])
    y = tl.reshape(x.to(_int_type(x.dtype), bitcast=True), _cube_shape(x.shape, _dim))
    for i in static_range(steps):
        y = y ^ tl.xor_sum(y, _dim + i, True)
    return tl.reshape(y, x.shape).to(x.dtype, bitcast=True)
