"""Triton's block-pointer rules (`tl.make_block_ptr`, `tl.advance`, and `tl.load` /
`tl.store` through a block pointer), turned into `tt.make_tensor_ptr` / `tt.advance` and
block-pointer `tt.load` / `tt.store`.

    p = tl.make_block_ptr(a_ptr, (M, K), (stride_m, 1), (pid * 32, 0), (32, 64), (1, 0))
    p = tl.advance(p, (0, 64))
    a = tl.load(p, boundary_check=(1, 0), padding_option="zero")
  =>
    %p = tt.make_tensor_ptr %a_ptr, [%M, %K], [%sm, %c1_i64], [%om, %c0_i32]
           {order = array<i32: 1, 0>} : <tensor<32x64xf16>>
    %q = tt.advance %p, [%c0_i32, %c64_i32] : <tensor<32x64xf16>>
    %a = tt.load %q {boundaryCheck = array<i32: 0, 1>, padding = 1 : i32}
           : !tt.ptr<tensor<32x64xf16>>

The rules are upstream's: `shape` and `strides` become i64 (Python ints, or integer
scalars extended by their signedness), `offsets` i32 (an int64 scalar is refused: cast it
with `.to(tl.int32)`); `block_shape` is compile-time powers of two; `order` a permutation
of the dims; all five lists as long as each other. A block pointer's Triton type is
`pointer_type(block_type(elem, block_shape))` and its `shape` is `()`, as upstream: it is
one value (it is carried through `scf.for` / `scf.if` like a scalar). A `tl.int1` base is
treated as `tl.int8`, as upstream. Loads and stores through one take no `mask` / `other`;
`boundary_check` lists dims (in range, no duplicates; sorted); `padding_option` is
"zero" or "nan" (floats only); absent, no `padding` is printed, as upstream. A stored
value must be a scalar (broadcast) or a block of exactly `block_shape`; it is cast to the
block's element type.

`BlockPtrOps` is mixed into `Semantic` (as `semantic_memory.MemoryOps` is), whose
`load` / `store` hand block pointers to `_load_block_pointer` / `_store_block_pointer`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import BoolAttr, DenseArrayBase, i32

from tritium.frontend import core
from tritium.frontend.core import block_type, pointer_type, tensor
from tritium.frontend.semantic_errors import SemanticError
from tritium.ir import tt
from tritium.ir.tt_block_ptr import PADDING  # (tt.load's `padding` property)
from tritium.ir.tt_common import i32_attr


def is_block_ptr(x) -> bool:
    """Whether `x` is a block pointer value (`pointer_type(block_type(...))`)."""
    return isinstance(x, tensor) and x.dtype.is_block_ptr()


def _as_list(x) -> list:
    x = core.unwrap(x)
    return list(x) if isinstance(x, (tuple, list)) else [x]


def _static_ints(x, what: str) -> list[int]:
    out = []
    for v in _as_list(x):
        v = core.unwrap(v)
        if isinstance(v, tensor):
            raise SemanticError(f"{what} must be tl.constexpr integers, not runtime values")
        if isinstance(v, bool) or not isinstance(v, int):
            raise SemanticError(f"{what} must be integers, got {v!r}")
        out.append(v)
    return out


def boundary_check_dims(boundary_check, rank: int, what: str) -> list[int]:
    """`boundary_check` as upstream canonicalises it: dims in range, no duplicates, sorted."""
    bc = core.unwrap(boundary_check)
    if bc is None or (isinstance(bc, (tuple, list)) and not bc):
        return []
    dims = _static_ints(bc, f"{what}: boundary_check")
    for d in dims:
        if not 0 <= d < rank:
            raise SemanticError(
                f"{what}: boundary_check dim {d} is out of range for a block pointer of rank {rank}"
            )
    if len(set(dims)) != len(dims):
        raise SemanticError(f"{what}: boundary_check {dims} names a dim twice")
    return sorted(dims)


def _set_boundary_check(op, dims: list[int]) -> None:
    if dims:
        op.properties["boundaryCheck"] = DenseArrayBase.from_list(i32, dims)


class BlockPtrOps:
    """Methods of `Semantic` for block pointers: `make_block_ptr`, `advance`, and the
    block-pointer halves of `load` / `store`."""

    def _block_ptr_index(self, x, to: core.dtype, what: str) -> tensor:
        """One entry of `shape` / `strides` (`to` int64) or `offsets` (`to` int32)."""
        x = core.unwrap(x)
        bits = to.int_bitwidth
        if isinstance(x, tensor):
            if x.shape or not x.dtype.is_int() or x.dtype.is_bool():
                raise SemanticError(f"{what} must be integer scalars, got a value of type {x.type}")
            if bits == 32 and x.dtype.int_bitwidth == 64:
                raise SemanticError(
                    f"{what} must be 32-bit, got a {x.dtype} value; "
                    "add a `.to(tl.int32)` or use a tensor of pointers for 64-bit offsets"
                )
            return self.cast(x, to)
        if isinstance(x, bool) or not isinstance(x, int):
            raise SemanticError(f"{what} must be integers, got {x!r}")
        if not -(2 ** (bits - 1)) <= x < 2 ** (bits - 1):
            raise SemanticError(f"{what} must fit in {bits} bits, got {x}")
        return self.scalar_constant(x, to)

    def make_block_ptr(self, base, shape, strides, offsets, block_shape, order) -> tensor:
        base = core.unwrap(base)
        if not isinstance(base, tensor) or base.shape or not base.dtype.is_ptr():
            kind = base.type if isinstance(base, tensor) else repr(base)
            raise SemanticError(f"tl.make_block_ptr: `base` must be a scalar pointer, got {kind}")
        if base.dtype.is_block_ptr():
            raise SemanticError("tl.make_block_ptr: `base` must be a pointer, not a block pointer")
        block_shape = _static_ints(block_shape, "tl.make_block_ptr: block_shape")
        if not block_shape:
            raise SemanticError(
                "tl.make_block_ptr: block_shape needs at least one dim (a 0-d block is a scalar: use a pointer)"
            )
        try:
            self.check_shape(block_shape)
        except SemanticError as e:
            raise SemanticError(f"tl.make_block_ptr: block_shape: {e}") from None
        order = _static_ints(order, "tl.make_block_ptr: order")
        rank = len(block_shape)
        lists = {
            "shape": _as_list(shape),
            "strides": _as_list(strides),
            "offsets": _as_list(offsets),
        }
        for name, vals in (*lists.items(), ("order", order)):
            if len(vals) != rank:
                raise SemanticError(
                    f"tl.make_block_ptr: block_shape has {rank} dims but {name} has {len(vals)} entries; "
                    "shape, strides, offsets, block_shape and order must have the same length"
                )
        if sorted(order) != list(range(rank)):
            raise SemanticError(
                f"tl.make_block_ptr: order {order} must be a permutation of {list(range(rank))}"
            )
        shape_v = [
            self._block_ptr_index(v, core.int64, "tl.make_block_ptr: shape") for v in lists["shape"]
        ]
        strides_v = [
            self._block_ptr_index(v, core.int64, "tl.make_block_ptr: strides")
            for v in lists["strides"]
        ]
        offsets_v = [
            self._block_ptr_index(v, core.int32, "tl.make_block_ptr: offsets")
            for v in lists["offsets"]
        ]
        elt = base.dtype.element_ty
        if elt.is_bool():  # as upstream: a bool block is read and written as int8
            elt = core.int8
            base = self.cast(base, pointer_type(elt, base.dtype.address_space))
        op = tt.MakeTensorPtrOp(
            base.handle,
            [v.handle for v in shape_v],
            [v.handle for v in strides_v],
            [v.handle for v in offsets_v],
            block_shape,
            order,
        )
        ty = pointer_type(block_type(elt, block_shape), base.dtype.address_space)
        return tensor(self.b.result(op), ty)

    def advance(self, base, offsets) -> tensor:
        base = core.unwrap(base)
        if not is_block_ptr(base):
            kind = base.type if isinstance(base, tensor) else repr(base)
            raise SemanticError(
                f"tl.advance needs a block pointer (from tl.make_block_ptr), got {kind}"
            )
        rank = len(base.dtype.element_ty.shape)
        offsets = _as_list(offsets)
        if len(offsets) != rank:
            raise SemanticError(
                f"tl.advance: the block pointer has {rank} dims but {len(offsets)} offsets were given"
            )
        vals = [self._block_ptr_index(v, core.int32, "tl.advance: offsets") for v in offsets]
        return tensor(self.b.result(tt.AdvanceOp(base.handle, [v.handle for v in vals])), base.type)

    def _load_block_pointer(self, ptr: tensor, mask, other, boundary_check, padding_option: str,
                            cache: str, evict: str, volatile: bool) -> tensor:  # fmt: skip
        if mask is not None or other is not None:
            raise SemanticError(
                "tl.load: `mask` and `other` cannot be used with a block pointer; "
                "use boundary_check and padding_option"
            )
        blk = ptr.dtype.element_ty
        if padding_option == "nan" and not blk.element_ty.is_floating():
            raise SemanticError(
                f'tl.load: padding_option="nan" needs a floating-point block, not {blk.element_ty}'
            )
        dims = boundary_check_dims(boundary_check, len(blk.shape), "tl.load")
        op = tt.LoadOp(ptr.handle, None, None, cache, evict)
        _set_boundary_check(op, dims)
        if padding_option:
            op.properties["padding"] = i32_attr(PADDING[padding_option])
        if volatile:
            op.properties["isVolatile"] = BoolAttr.from_bool(True)
        return tensor(self.b.result(op), blk)

    def _store_block_pointer(
        self, ptr: tensor, value, mask, boundary_check, cache: str, evict: str
    ) -> None:
        if mask is not None:
            raise SemanticError(
                "tl.store: `mask` cannot be used with a block pointer; use boundary_check"
            )
        blk = ptr.dtype.element_ty
        elt = blk.element_ty
        value = self.to_tensor(value, elt if not isinstance(core.unwrap(value), tensor) else None)
        if not value.shape:
            value = self.broadcast_to(value, blk.shape)
        elif value.shape != blk.shape:
            raise SemanticError(
                f"tl.store: value of shape {list(value.shape)} does not match the block pointer's "
                f"block shape {list(blk.shape)}"
            )
        if value.dtype.is_ptr():
            raise SemanticError(
                f"tl.store: cannot store pointers ({value.dtype}) through a block pointer"
            )
        value = self.cast(value, elt)
        dims = boundary_check_dims(boundary_check, len(blk.shape), "tl.store")
        op = tt.StoreOp(ptr.handle, value.handle, None, cache, evict)
        _set_boundary_check(op, dims)
        self.b.insert(op)
