"""Triton's atomic rules (`tl.atomic_add`, ..., `tl.atomic_cas`), turned into `tt.atomic_*` ops.

    old = tl.atomic_add(hist + bucket, 1, mask=m)
  =>
    %old = tt.atomic_rmw add, acq_rel, gpu, %ptrs, %cst, %m
        : (tensor<128x!tt.ptr<i32>>, tensor<128xi32>, tensor<128xi1>) -> tensor<128xi32>

The rules are upstream's: the pointer is a pointer or a block of pointers; `val` and
`mask` broadcast to its shape and `val` is cast to the pointee type; without a mask an
all-true one is made (so the op always carries a mask, as upstream's TTIR does);
`sem` is "relaxed" | "acquire" | "release" | "acq_rel" (default) and `scope` is
"gpu" (default) | "cta" | "sys". Elements must be 32 or 64 bits wide, except that
`atomic_add` also takes fp16 and bf16 (`fadd`).

Float `atomic_max` / `atomic_min` (fp32, fp64) use upstream's trick on the integer view
of the bits: for a value with the sign bit clear, float order is signed-int order;
with the sign bit set, float order is reversed unsigned-int order. So max becomes

    neg = signbit(val)
    a = tt.atomic_rmw max,  (int ptr),  bits(val), mask & !neg     // val >= +0
    b = tt.atomic_rmw umin, (uint ptr), bits(val), mask & neg      // val <= -0
    old = bitcast(select(!neg, a, b))

and min is the same with min / umax. It orders -0.0 below +0.0; a NaN with the sign bit
clear wins a max (and loses a min), one with the sign bit set the reverse.

`AtomicOps` is mixed into `Semantic` (the builtins call `_semantic.atomic_rmw(...)`).
"""

from __future__ import annotations

from tritium.frontend import core
from tritium.frontend.core import block_type, dtype, pointer_type, tensor
from tritium.frontend.semantic_errors import SemanticError
from tritium.ir import arith, tt
from tritium.ir.tt_atomic import SCOPES, SEMANTICS  # noqa: F401  (one list, the IR's)

# tl.atomic_<kind> -> tt.atomic_rmw operation, for (signed int, unsigned int, float) elements
_RMW = {
    "add": ("add", "add", "fadd"),
    "and": ("and", "and", None),
    "or": ("or", "or", None),
    "xor": ("xor", "xor", None),
    "max": ("max", "umax", None),  # floats: the bit trick below
    "min": ("min", "umin", None),
    "xchg": ("exch", "exch", "exch"),
}


def _choice(value, allowed: tuple[str, ...], default: str, what: str) -> str:
    value = core.unwrap(value)
    if value is None:
        return default
    if isinstance(value, tensor):
        raise SemanticError(
            f"{what} must be a compile-time string such as {default!r}, not a runtime value"
        )
    if value not in allowed:
        raise SemanticError(
            f"{what} must be one of {', '.join(repr(a) for a in allowed)}, got {value!r}"
        )
    return value


# ---------------------------------------------------------------------- checks
def _options(sem, scope, what: str) -> tuple[str, str]:
    return (
        _choice(sem, SEMANTICS, "acq_rel", f"{what}: sem"),
        _choice(scope, SCOPES, "gpu", f"{what}: scope"),
    )


def _check_element(elt: dtype, kind: str, what: str) -> None:
    """Reject element types the hardware has no atomic for (upstream's list)."""
    if getattr(elt, "is_block", lambda: False)():
        raise SemanticError(
            f"{what} does not take a block pointer (tl.make_block_ptr); use a block of pointers"
        )
    if elt.is_ptr():
        raise SemanticError(f"{what} does not take a pointer to pointers ({elt})")
    if elt.is_floating():
        if elt.primitive_bitwidth == 16 and kind != "add":
            raise SemanticError(
                f"{what} does not support {elt} elements; of the atomics only "
                "tl.atomic_add takes fp16 and bf16 (use a float32 buffer)"
            )
        if kind in ("and", "or", "xor"):
            raise SemanticError(f"{what} needs integer elements, got a pointer to {elt}")
    elif elt.primitive_bitwidth < 32:
        raise SemanticError(
            f"{what}: atomics need 32- or 64-bit elements, got a pointer to {elt} "
            "(use an int32 or int64 buffer)"
        )


class AtomicOps:
    """Methods of `Semantic` for `tl.atomic_*`: atomic_rmw and atomic_cas."""

    def _atomic_operand(self, ptr: tensor, x, elt: dtype, name: str, what: str) -> tensor:
        """`x` (a tensor or a literal) broadcast to the pointers' shape and cast to `elt`."""
        x = self.to_tensor(x, elt if not isinstance(core.unwrap(x), tensor) else None)
        if ptr.shape:
            if not self.fits(x.shape, ptr.shape):
                raise SemanticError(
                    f"{what}: {name} of shape {list(x.shape)} does not fit pointers of shape {list(ptr.shape)}"
                )
            x = self.broadcast_to(x, ptr.shape)
        elif x.shape:
            raise SemanticError(
                f"{what}: a block {name} of shape {list(x.shape)} needs a block of pointers, "
                "not a scalar pointer (reduce it first, e.g. with tl.sum, or broadcast the pointer)"
            )
        if x.dtype.is_ptr():
            raise SemanticError(f"{what}: {name} must be a number, not a pointer ({x.dtype})")
        return self.cast(x, elt)

    # ---------------------------------------------------------------------- read-modify-write
    def atomic_rmw(self, kind: str, ptr, val, mask=None, sem=None, scope=None) -> tensor:
        """`tl.atomic_<kind>`, kind in add, and, or, xor, max, min, xchg: the old values."""
        what = f"tl.atomic_{kind}"
        ptr, mask = self._memory_args(ptr, mask, what)
        self.check_writable(ptr, what)
        elt = ptr.dtype.element_ty
        _check_element(elt, kind, what)
        sem, scope = _options(sem, scope, what)
        val = self._atomic_operand(ptr, val, elt, "value", what)
        if mask is None:
            mask = self.full(ptr.shape, 1, core.int1)
        if elt.is_floating() and kind in ("max", "min"):
            return self._float_minmax(kind, ptr, val, mask, sem, scope)
        signed, unsigned, fp = _RMW[kind]
        rmw = fp if elt.is_floating() else signed if elt.is_int_signed() else unsigned
        return self._rmw_op(rmw, ptr, val, mask, sem, scope)

    def _rmw_op(self, rmw, ptr, val, mask, sem, scope) -> tensor:
        op = tt.AtomicRMWOp(rmw, ptr.handle, val.handle, mask.handle, sem, scope)
        return tensor(self.b.result(op), val.type)

    def _float_minmax(self, kind, ptr, val, mask, sem, scope) -> tensor:
        elt = val.dtype
        width = elt.primitive_bitwidth
        ity, uty = (core.int32, core.uint32) if width == 32 else (core.int64, core.uint64)
        # i32 and u32 are one IR type: the unsigned views are the signed ones, retyped.
        i_val = self.bitcast(val, ity)
        u_val = tensor(i_val.handle, block_type(uty, val.shape) if val.shape else uty)
        i_ptr = self.bitcast(ptr, pointer_type(ity))
        p_uty = pointer_type(uty)
        u_ptr = tensor(i_ptr.handle, block_type(p_uty, ptr.shape) if ptr.shape else p_uty)
        neg = self.cast(self.shr(u_val, width - 1), core.int1)
        pos = self.logical_not(neg)
        pos_rmw, neg_rmw = ("max", "umin") if kind == "max" else ("min", "umax")
        pos_old = self._rmw_op(pos_rmw, i_ptr, i_val, self.and_(mask, pos), sem, scope)
        neg_old = self._rmw_op(neg_rmw, u_ptr, u_val, self.and_(mask, neg), sem, scope)
        sel = arith.SelectOp(pos.handle, pos_old.handle, neg_old.handle)
        return self.bitcast(tensor(self.b.result(sel), i_val.type), elt)

    # ---------------------------------------------------------------------- compare-and-swap
    def atomic_cas(self, ptr, cmp, val, sem=None, scope=None) -> tensor:
        """`tl.atomic_cas`: where memory holds `cmp`, write `val`; the old values."""
        what = "tl.atomic_cas"
        ptr, _ = self._memory_args(ptr, None, what)
        self.check_writable(ptr, what)
        elt = ptr.dtype.element_ty
        _check_element(elt, "cas", what)
        sem, scope = _options(sem, scope, what)
        cmp = self._atomic_operand(ptr, cmp, elt, "cmp", what)
        val = self._atomic_operand(ptr, val, elt, "value", what)
        op = tt.AtomicCASOp(ptr.handle, cmp.handle, val.handle, sem, scope)
        return tensor(self.b.result(op), val.type)


__all__ = ["SCOPES", "SEMANTICS", "AtomicOps"]
