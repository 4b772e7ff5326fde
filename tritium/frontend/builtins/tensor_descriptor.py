"""Tensor descriptors: `tl.make_tensor_descriptor`, `desc.load` / `desc.store`,
`tl.load_tensor_descriptor`, `tl.store_tensor_descriptor` (upstream 3.6's names and rules).

    desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[32, 64])
    x = desc.load([pid_m * 32, 0])                       # zero where the box leaves [M, N)
    desc.store([pid_m * 32, 0], x + 1)                   # nothing written outside
  =>  (each access)
    %p = tt.make_tensor_ptr %x_ptr, [%M, %N], [%N, %c1_i64], [%o0, %o1]
           {order = array<i32: 1, 0>} : <tensor<32x64xf32>>
    %x = tt.load %p {boundaryCheck = array<i32: 0, 1>, padding = 1 : i32} : !tt.ptr<tensor<32x64xf32>>

Upstream lowers a descriptor to a TMA descriptor on Hopper and later, and to pointers and
masks elsewhere; tritium does the latter everywhere: each load or store is a block
pointer at its offsets with a boundary check on every dim (rewrite-tensor-pointer makes
it a pointer tensor and a mask), which gives TMA's semantics: elements outside the
tensor (also at negative offsets) read as zero (or NaN with `padding_option="nan"`) and
are not written. A descriptor is a compile-time aggregate of its base, shape (i32) and
strides (i64) values and its block shape: it can be passed to and returned from `@jit`
helpers and used in loops, and `isinstance(x, tl.tensor_descriptor)` tells it from a
pointer. Upstream's checks: 1 to 5 dims, the last stride the constant 1, at least 16
bytes in the block's last dim, block dims powers of two. Not supported: a descriptor as
a kernel argument (upstream's host-side `TensorDescriptor`), `gather` / `scatter` and
the descriptor atomics.
"""

from __future__ import annotations

from tritium.frontend import core
from tritium.frontend.builtins.base import builtin
from tritium.frontend.builtins.block_ptr import make_block_ptr
from tritium.frontend.builtins.memory import load, store
from tritium.frontend.core import tensor, unwrap
from tritium.frontend.semantic import SemanticError


def _entries(x, what: str) -> list:
    x = unwrap(x)
    if not isinstance(x, (tuple, list)):
        raise SemanticError(f"tl.make_tensor_descriptor: {what} must be a list, got {x!r}")
    return [unwrap(v) for v in x]


class tensor_descriptor:  # noqa: N801 - upstream's name
    """A descriptor of a `shape`-sized, `strides`-strided tensor at `base`, accessed in
    boxes of `block_shape` (`tl.make_tensor_descriptor`)."""

    def __init__(self, base: tensor, shape: list, strides: list, block_shape: list, padding):
        self.base = base
        self.shape = tuple(shape)
        self.strides = tuple(strides)
        self.block_shape = tuple(block_shape)
        self.padding = padding
        self.dtype = base.dtype.element_ty
        self.block_type = core.block_type(self.dtype, self.block_shape)

    def __repr__(self) -> str:
        return f"tensor_descriptor<{self.dtype}, {list(self.block_shape)}>"

    def _block_ptr(self, offsets, what: str, _semantic):
        offs = unwrap(offsets)
        offs = list(offs) if isinstance(offs, (tuple, list)) else [offs]
        if len(offs) != len(self.block_shape):
            raise SemanticError(
                f"{what}: the descriptor has {len(self.block_shape)} dims but "
                f"{len(offs)} offsets were given"
            )
        order = tuple(reversed(range(len(self.block_shape))))
        return make_block_ptr(self.base, self.shape, self.strides, offs, self.block_shape, order,
                              _semantic=_semantic)  # fmt: skip

    @builtin
    def load(self, offsets, _semantic=None, _generator=None):
        """The box at `offsets` (one per dim); elements outside the tensor read as the padding."""
        ptr = self._block_ptr(offsets, "tensor_descriptor.load", _semantic)
        dims = tuple(range(len(self.block_shape)))
        return load(ptr, boundary_check=dims, padding_option=self.padding, _semantic=_semantic)

    @builtin
    def store(self, offsets, value, _semantic=None, _generator=None):
        """Write `value` (of the block shape) at `offsets`; elements outside are not written."""
        ptr = self._block_ptr(offsets, "tensor_descriptor.store", _semantic)
        dims = tuple(range(len(self.block_shape)))
        return store(ptr, value, boundary_check=dims, _semantic=_semantic)


@builtin
def make_tensor_descriptor(
    base, shape, strides, block_shape, padding_option="zero", _semantic=None, _generator=None
):
    """A tensor descriptor (upstream's `tl.make_tensor_descriptor`): `shape` and `strides`
    in elements (runtime or constant), `block_shape` compile-time."""
    what = "tl.make_tensor_descriptor"
    base = unwrap(base)
    if not isinstance(base, tensor) or base.shape or not base.dtype.is_ptr():
        kind = base.type if isinstance(base, tensor) else repr(base)
        raise SemanticError(f"{what}: `base` must be a scalar pointer, got {kind}")
    if base.dtype.is_block_ptr():
        raise SemanticError(f"{what}: `base` must be a pointer, not a block pointer")
    shape, strides = _entries(shape, "shape"), _entries(strides, "strides")
    block = _entries(block_shape, "block_shape")
    ndim = len(shape)
    if not 1 <= ndim <= 5:
        raise SemanticError(f"{what}: expected 1 <= ndim <= 5 but got {ndim} dimensions")
    if len(strides) != ndim or len(block) != ndim:
        raise SemanticError(
            f"{what}: shape, strides and block_shape must have the same length "
            f"(got {ndim}, {len(strides)}, {len(block)})"
        )
    if any(isinstance(b, tensor) or not isinstance(b, int) for b in block):
        raise SemanticError(f"{what}: block_shape must be tl.constexpr integers, got {block}")
    elem_bytes = base.dtype.element_ty.primitive_bitwidth // 8
    if block[-1] * elem_bytes < 16:
        raise SemanticError(
            f"{what}: descriptor block shape must have at least 16 bytes in the last "
            f"dimension, but got {block[-1]} * {elem_bytes} = {block[-1] * elem_bytes} bytes"
        )
    if isinstance(strides[-1], tensor) or strides[-1] != 1:
        last = strides[-1].type if isinstance(strides[-1], tensor) else strides[-1]
        raise SemanticError(f"{what}: tensor descriptor last dim must be 1 but got {last}")
    padding = unwrap(padding_option)
    if padding not in ("zero", "nan"):
        raise SemanticError(f'{what}: padding_option must be "zero" or "nan", got {padding!r}')
    if padding == "nan" and not base.dtype.element_ty.is_floating():
        raise SemanticError(f'{what}: padding_option="nan" needs a floating-point tensor')
    try:
        _semantic.check_shape(block)
    except SemanticError as e:
        raise SemanticError(f"{what}: block_shape: {e}") from None
    shape_v = [_scalar(_semantic, v, core.int32, f"{what}: shape") for v in shape]
    strides_v = [_scalar(_semantic, v, core.int64, f"{what}: strides") for v in strides]
    return tensor_descriptor(base, shape_v, strides_v, block, padding)


def _scalar(_semantic, v, ty: core.dtype, what: str) -> tensor:
    """An integer scalar of `ty` (upstream's `make_scalar`)."""
    if isinstance(v, tensor):
        if v.shape or not v.dtype.is_int() or v.dtype.is_bool():
            raise SemanticError(f"{what} must be integer scalars, got a value of type {v.type}")
        return _semantic.cast(v, ty)
    if isinstance(v, bool) or not isinstance(v, int):
        raise SemanticError(f"{what} must be integers, got {v!r}")
    return _semantic.scalar_constant(v, ty)


def _descriptor(desc, what: str) -> tensor_descriptor:
    d = unwrap(desc)
    if not isinstance(d, tensor_descriptor):
        raise SemanticError(
            f"{what} needs a tensor descriptor (tl.make_tensor_descriptor), got {d!r}"
        )
    return d


@builtin
def load_tensor_descriptor(desc, offsets, _semantic=None, _generator=None):
    """`desc.load(offsets)` as a function (upstream's `tl.load_tensor_descriptor`)."""
    return _descriptor(desc, "tl.load_tensor_descriptor").load(offsets, _semantic=_semantic)


@builtin
def store_tensor_descriptor(desc, offsets, value, _semantic=None, _generator=None):
    """`desc.store(offsets, value)` as a function (upstream's `tl.store_tensor_descriptor`)."""
    d = _descriptor(desc, "tl.store_tensor_descriptor")
    return d.store(offsets, value, _semantic=_semantic)


__all__ = [
    "load_tensor_descriptor",
    "make_tensor_descriptor",
    "store_tensor_descriptor",
    "tensor_descriptor",
]
