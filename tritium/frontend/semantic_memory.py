"""Triton's memory, program-id, assertion and dot rules (mixed into `Semantic`)."""

from __future__ import annotations

from tritium.frontend import core
from tritium.frontend.core import block_type, dtype, pointer_type, tensor
from tritium.frontend.semantic_block_ptr import is_block_ptr
from tritium.frontend.semantic_errors import SemanticError
from tritium.ir import tt


class MemoryOps:
    """Methods of `Semantic` that touch memory or the launch: load/store, program ids, asserts, dot."""

    @staticmethod
    def check_writable(ptr: tensor, what: str) -> None:
        """As upstream: no store or atomic through a pointer to `tl.const` data."""
        if ptr.dtype.is_const():
            origin = ptr.dtype.origin
            whose = f"parameter `{origin}` is annotated tl.const" if origin else "it is tl.const"
            raise SemanticError(
                f"{what}: cannot store to a constant pointer ({whose}: it points to read-only data)"
            )

    # ------------------------------------------------------------------ memory
    def _memory_args(self, ptr, mask, what: str):
        ptr = self.to_tensor(ptr)
        if not ptr.dtype.is_ptr():
            raise SemanticError(
                f"{what} needs a pointer or a block of pointers, got a value of type {ptr.dtype}"
            )
        if mask is not None:
            mask = self.to_tensor(mask)
            if not mask.dtype.is_bool():
                mask = self.cast(mask, core.int1)
            if ptr.shape and mask.shape != ptr.shape:
                if not self.fits(mask.shape, ptr.shape):
                    raise SemanticError(
                        f"{what}: mask of shape {list(mask.shape)} does not fit pointers of shape {list(ptr.shape)}"
                    )
                mask = self.broadcast_to(mask, ptr.shape)
            elif not ptr.shape and mask.shape:
                shape = mask.shape
                ptr = self.broadcast_to(ptr, shape)
        return ptr, mask

    def load(
        self,
        ptr,
        mask=None,
        other=None,
        cache: str = "none",
        evict: str = "evict_normal",
        volatile=False,
        boundary_check=(),
        padding_option: str = "",
    ) -> tensor:
        if is_block_ptr(ptr):
            return self._load_block_pointer(
                ptr, mask, other, boundary_check, padding_option, cache, evict, volatile
            )
        if boundary_check or padding_option:
            raise SemanticError(
                "tl.load: boundary_check and padding_option need a block pointer "
                "(tl.make_block_ptr); with a pointer or a block of pointers, use mask and other"
            )
        ptr, mask = self._memory_args(ptr, mask, "tl.load")
        if other is not None and mask is None:
            raise SemanticError("tl.load: `other` needs a `mask`")
        elt = ptr.dtype.element_ty
        is_bool = elt.is_bool()
        if is_bool:
            elt = core.int8
            ptr = self.cast(
                ptr,
                block_type(pointer_type(core.int8), ptr.shape)
                if ptr.shape
                else pointer_type(core.int8),
            )
        if other is not None:
            other = self.to_tensor(
                other, elt if not isinstance(core.unwrap(other), tensor) else None
            )
            other = self.cast(other, elt)
            other = self.broadcast_to(other, ptr.shape) if ptr.shape else other
            if ptr.shape and other.shape != ptr.shape:
                raise SemanticError(
                    f"tl.load: `other` of shape {list(other.shape)} does not fit pointers of shape {list(ptr.shape)}"
                )
        res_ty = block_type(elt, ptr.shape) if ptr.shape else elt
        op = tt.LoadOp(
            ptr.handle,
            mask.handle if mask is not None else None,
            other.handle if other is not None else None,
            cache,
            evict,
        )
        if volatile:
            from xdsl.dialects.builtin import BoolAttr

            op.isVolatile = BoolAttr.from_bool(True)
        val = tensor(self.b.result(op), res_ty)
        if is_bool:
            val = self.not_equal(val, 0)
        return val

    def store(
        self,
        ptr,
        value,
        mask=None,
        cache: str = "none",
        evict: str = "evict_normal",
        boundary_check=(),
    ) -> None:
        if is_block_ptr(ptr):
            return self._store_block_pointer(ptr, value, mask, boundary_check, cache, evict)
        if boundary_check:
            raise SemanticError(
                "tl.store: boundary_check needs a block pointer (tl.make_block_ptr); "
                "with a pointer or a block of pointers, use mask"
            )
        ptr, mask = self._memory_args(ptr, mask, "tl.store")
        self.check_writable(ptr, "tl.store")
        elt = ptr.dtype.element_ty
        value = self.to_tensor(value, elt if not isinstance(core.unwrap(value), tensor) else None)
        if ptr.shape:
            if not self.fits(value.shape, ptr.shape):
                raise SemanticError(
                    f"tl.store: value of shape {list(value.shape)} does not fit pointers of shape {list(ptr.shape)}"
                )
            value = self.broadcast_to(value, ptr.shape)
        elif value.shape:
            raise SemanticError(
                f"tl.store: a block value of shape {list(value.shape)} cannot be stored through a scalar pointer"
            )
        if elt.is_bool():
            elt = core.int8
            ptr = self.cast(
                ptr,
                block_type(pointer_type(core.int8), ptr.shape)
                if ptr.shape
                else pointer_type(core.int8),
            )
        value = self.cast(value, elt)
        self.b.insert(
            tt.StoreOp(
                ptr.handle, value.handle, mask.handle if mask is not None else None, cache, evict
            )
        )

    # ------------------------------------------------------------------ misc
    def program_id(self, axis: int) -> tensor:
        if axis not in (0, 1, 2):
            raise SemanticError(f"program_id axis must be 0, 1 or 2, got {axis}")
        return tensor(self.b.result(tt.GetProgramIdOp(axis)), core.int32)

    def num_programs(self, axis: int) -> tensor:
        if axis not in (0, 1, 2):
            raise SemanticError(f"num_programs axis must be 0, 1 or 2, got {axis}")
        return tensor(self.b.result(tt.GetNumProgramsOp(axis)), core.int32)

    def device_assert(self, cond, msg: str) -> None:
        cond = self.to_tensor(cond)
        if not cond.dtype.is_bool():
            cond = self.cast(cond, core.int1)
        self.b.insert(tt.AssertOp(cond.handle, msg))

    def dot(
        self,
        a: tensor,
        b: tensor,
        acc: tensor | None,
        input_precision: str,
        max_num_imprecise_acc,
        out_dtype: dtype,
    ) -> tensor:
        if len(a.shape) not in (2, 3) or len(b.shape) != len(a.shape):
            raise SemanticError(
                f"tl.dot needs two 2D (or 3D) blocks, got shapes {list(a.shape)} and {list(b.shape)}"
            )
        if a.shape[-1] != b.shape[-2]:
            raise SemanticError(
                f"tl.dot: inner dimensions differ: {list(a.shape)} @ {list(b.shape)} ({a.shape[-1]} vs {b.shape[-2]})"
            )
        if min(a.shape[-2:]) < 16 or min(b.shape[-2:]) < 16:
            raise SemanticError(
                f"tl.dot: every dimension must be >= 16, got {list(a.shape)} @ {list(b.shape)}"
            )
        fp8 = a.dtype.is_fp8() and b.dtype.is_fp8()  # any two fp8 formats may meet (upstream)
        if a.dtype != b.dtype and not fp8:
            raise SemanticError(
                f"tl.dot: operands must have the same element type, got {a.dtype} and {b.dtype}"
            )
        if not (a.dtype.is_floating() or a.dtype.is_int()):
            raise SemanticError(f"tl.dot does not take {a.dtype}")
        if a.dtype.is_int() and a.dtype != core.int8:
            raise SemanticError(
                f"tl.dot: integer operands must be int8 (as upstream), got {a.dtype}; cast "
                "uint8 values that fit to int8, or widen them to a float type"
            )
        if a.dtype.is_int():
            out_dtype = core.int32
        elif out_dtype.is_bf16():
            raise SemanticError(
                "tl.dot: out_dtype=bfloat16 is not supported (as upstream): use float32 or "
                "float16 and cast the result with .to(tl.bfloat16)"
            )
        elif a.dtype.is_fp32() or a.dtype.is_bf16() or a.dtype.is_fp64():
            out_dtype = core.float64 if a.dtype.is_fp64() else core.float32
        elif not (out_dtype.is_fp16() or out_dtype.is_fp32()):
            raise SemanticError(f"tl.dot: out_dtype must be float32 or float16, got {out_dtype}")
        k = a.shape[-1]
        if fp8 and max_num_imprecise_acc is not None and max_num_imprecise_acc > k:
            raise SemanticError(f"tl.dot: max_num_imprecise_acc ({max_num_imprecise_acc}) must be <= K ({k})")
        shape = a.shape[:-1] + (b.shape[-1],)
        if acc is None:
            acc = self.full(shape, 0, out_dtype)
        else:
            acc = self.to_tensor(acc)
            if acc.shape != shape:
                raise SemanticError(
                    f"tl.dot: accumulator shape {list(acc.shape)} must be {list(shape)}"
                )
            if acc.dtype != out_dtype and not (a.dtype.is_floating() and acc.dtype.is_floating()):
                raise SemanticError(
                    f"tl.dot: accumulator type {acc.dtype} does not match {out_dtype}"
                )
        if input_precision not in tt.INPUT_PRECISIONS:
            raise SemanticError(
                f"tl.dot: input_precision must be one of {list(tt.INPUT_PRECISIONS)}, got {input_precision!r}"
            )
        op = tt.DotOp(
            a.handle, b.handle, acc.handle, input_precision, int(max_num_imprecise_acc or 0)
        )
        return tensor(self.b.result(op), acc.type)
