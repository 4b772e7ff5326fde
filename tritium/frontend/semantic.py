"""Triton's typing rules, turned into TTIR ops.

Each method takes `tensor`s (or Python numbers, for literals), applies upstream Triton's
rules — scalar promotion (a literal does not widen a tensor of the same kind), C-style
integer promotion, implicit broadcasting, pointer arithmetic — and emits the ops through
the builder. Mistakes raise `SemanticError`; the code generator adds the source location.
"""

from __future__ import annotations

import math
import numbers

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr

from tritium.frontend import core
from tritium.frontend.builder import Builder
from tritium.frontend.core import block_type, constexpr, dtype, tensor
from tritium.frontend.semantic_atomic import AtomicOps
from tritium.frontend.semantic_block_ptr import BlockPtrOps
from tritium.frontend.semantic_errors import SemanticError
from tritium.frontend.semantic_math import MathOps
from tritium.frontend.semantic_memory import MemoryOps
from tritium.frontend.semantic_shape import ShapeOps
from tritium.ir import arith, tt
from tritium.ir import types as irt

MAX_TENSOR_NUMEL = 1 << 20


def _normalize_int(value: int, width: int) -> int:
    if width == 1:
        return 1 if value else 0
    value &= (1 << width) - 1
    return value - (1 << width) if value >= 1 << (width - 1) else value


_FP32_MIN_NORMAL = 2.0**-126
_FP32_MAX = (2 - 2.0**-23) * 2.0**127


def literal_dtype(value) -> dtype:
    """The dtype a Python number takes (upstream's `to_tensor`): bool -> int1, int ->
    int32/uint32/int64/uint64 by range, float -> fp32, or fp64 when its magnitude is outside
    fp32's normal range (0, inf and nan stay fp32)."""
    if isinstance(value, bool):
        return core.int1
    if isinstance(value, numbers.Integral):
        v = int(value)
        if -(2**31) <= v < 2**31:
            return core.int32
        if 2**31 <= v < 2**32:
            return core.uint32
        if -(2**63) <= v < 2**63:
            return core.int64
        if 2**63 <= v < 2**64:
            return core.uint64
        raise SemanticError(f"integer literal {v} does not fit in 64 bits")
    if isinstance(value, numbers.Real):
        a = abs(float(value))
        if a in (0.0, math.inf) or a != a or _FP32_MIN_NORMAL <= a <= _FP32_MAX:
            return core.float32
        return core.float64
    raise SemanticError(f"{type(value).__name__} values cannot be used in a kernel")


def _float_attr(x: float, ir_ty) -> FloatAttr:
    """A float constant; one too large for its type rounds to +-inf (as upstream's cast of
    its fp32 constant does) instead of failing inside xDSL's packing."""
    try:
        return FloatAttr(x, ir_ty)
    except OverflowError:
        return FloatAttr(math.copysign(math.inf, x), ir_ty)


class Semantic(MemoryOps, BlockPtrOps, AtomicOps, MathOps, ShapeOps):
    def __init__(self, builder: Builder, debug: bool = False):
        self.b = builder
        self.debug = debug

    # ------------------------------------------------------------------ constants
    def scalar_constant(self, value, ty: dtype) -> tensor:
        ir_ty = ty.to_ir()
        if ty.is_floating():
            attr = _float_attr(float(value), ir_ty)
        elif ty.is_int():
            attr = IntegerAttr(_normalize_int(int(value), ty.int_bitwidth), ir_ty)
        else:
            raise SemanticError(f"cannot make a constant of type {ty}")
        return tensor(self.b.result(arith.ConstantOp(attr, ir_ty)), ty)

    def full(self, shape, value, ty: dtype) -> tensor:
        shape = tuple(shape)
        if not shape:
            return self.scalar_constant(value, ty)
        self.check_shape(shape)
        t = irt.tensor(shape, ty.to_ir())
        if ty.is_floating():
            v = _float_attr(float(value), ty.to_ir()).value.data  # +-inf past the type's range
        else:
            v = _normalize_int(int(value), ty.int_bitwidth)
        attr = DenseIntOrFPElementsAttr.from_list(t, [v])
        return tensor(self.b.result(arith.ConstantOp(attr, t)), block_type(ty, shape))

    def to_tensor(self, x, ty: dtype | None = None) -> tensor:
        if isinstance(x, constexpr):
            x = x.value
        if isinstance(x, tensor):
            return x
        if isinstance(x, numbers.Number):
            return self.scalar_constant(x, ty or literal_dtype(x))
        raise SemanticError(f"expected a tensor or a number, got {type(x).__name__} {x!r}")

    @staticmethod
    def check_shape(shape) -> None:
        for s in shape:
            if not isinstance(s, int) or s <= 0:
                raise SemanticError(
                    f"shape {list(shape)} must be positive integers known at compile time"
                )
            if s & (s - 1):
                raise SemanticError(f"shape {list(shape)} must have power-of-two dimensions")
        if math.prod(shape) > MAX_TENSOR_NUMEL:
            raise SemanticError(
                f"a block may hold at most 2**20 = {MAX_TENSOR_NUMEL} elements; shape {list(shape)} has {math.prod(shape)}"
            )

    # ------------------------------------------------------------------ types
    @staticmethod
    def integer_promote(a: dtype, b: dtype) -> dtype:
        ar, br = a.int_bitwidth, b.int_bitwidth
        if a.is_int_unsigned() == b.is_int_unsigned():
            return a if ar > br else b
        if a.is_int_unsigned():
            return a if ar >= br else b
        return b if br >= ar else a

    def computation_type(
        self, a: dtype, a_lit: bool, b: dtype, b_lit: bool, div_or_mod: bool
    ) -> dtype:
        if a.is_fp8() and b.is_fp8() and a != b:
            return core.float16  # as upstream: two different fp8 formats meet in fp16
        if a.is_fp8() and (b.is_fp8() or b_lit) or b.is_fp8() and a_lit:
            raise SemanticError(
                f"no arithmetic on {a if a.is_fp8() else b} values: cast them to tl.float16 or "
                "tl.float32 first (fp8 is a storage and tl.dot format)"
            )
        if a_lit != b_lit:
            lit, ten = (a, b) if a_lit else (b, a)
            if lit.kind() <= ten.kind():
                if div_or_mod and (ten.is_fp16() or ten.is_bf16()):
                    return core.float32
                return ten
        if a.is_fp64() or b.is_fp64():
            return core.float64
        if a.is_fp32() or b.is_fp32():
            return core.float32
        if a.is_fp16() or b.is_fp16():
            return core.float32 if div_or_mod else core.float16
        if a.is_bf16() or b.is_bf16():
            if div_or_mod or not (a.is_bf16() and b.is_bf16()):
                return core.float32
            return core.bfloat16
        if not (a.is_int() and b.is_int()):
            raise SemanticError(f"unexpected operand types {a} and {b}")
        if div_or_mod and a.is_int_signed() != b.is_int_signed():
            raise SemanticError(
                f"cannot use /, // or % with {a} and {b} because they have different signedness; "
                "cast one of them first"
            )
        return self.integer_promote(a, b)

    def binary_operands(
        self, lhs, rhs, allow_lhs_ptr=False, allow_rhs_ptr=False, arithmetic=True, div_or_mod=False
    ):
        lhs, rhs = core.unwrap(lhs), core.unwrap(rhs)
        lhs_lit = isinstance(lhs, numbers.Number)
        rhs_lit = isinstance(rhs, numbers.Number)
        lhs_t = lhs if not lhs_lit else None
        rhs_t = rhs if not rhs_lit else None
        for v, lit in ((lhs, lhs_lit), (rhs, rhs_lit)):
            if not lit and not isinstance(v, tensor):
                raise SemanticError(
                    f"unsupported operand {v!r} of type {type(v).__name__}: kernel arithmetic "
                    "takes tensors and numbers"
                )
        lty = lhs_t.dtype if lhs_t is not None else literal_dtype(lhs)
        rty = rhs_t.dtype if rhs_t is not None else literal_dtype(rhs)
        self._check_ptr(lty, rty, allow_lhs_ptr)
        self._check_ptr(rty, lty, allow_rhs_ptr)
        if arithmetic and not lty.is_ptr() and not rty.is_ptr():
            ret = self.computation_type(lty, lhs_lit, rty, rhs_lit, div_or_mod)
            for lit, v in ((lhs_lit, lhs), (rhs_lit, rhs)):
                if lit and v < 0 and ret.is_int_unsigned():
                    raise SemanticError(
                        "cannot combine an unsigned tensor with a negative literal; cast one of them explicitly"
                    )
                if lit and ret.is_int() and not (
                    ret.get_int_min_value() <= v <= ret.get_int_max_value()
                ):  # as upstream: never a silent wrap (`x_i8 + 300`)
                    raise SemanticError(
                        f"scalar {v} is out of range for type {ret} "
                        f"([{ret.get_int_min_value()}, {ret.get_int_max_value()}]); "
                        "cast the tensor to a wider type first"
                    )
            lhs_t = self.scalar_constant(lhs, ret) if lhs_lit else self.cast(lhs_t, ret)
            rhs_t = self.scalar_constant(rhs, ret) if rhs_lit else self.cast(rhs_t, ret)
        else:
            lhs_t = lhs_t if lhs_t is not None else self.to_tensor(lhs)
            rhs_t = rhs_t if rhs_t is not None else self.to_tensor(rhs)
        return self.broadcast_pair(lhs_t, rhs_t)

    @staticmethod
    def _check_ptr(a: dtype, b: dtype, allow: bool) -> None:
        if a.is_ptr():
            if a.is_block_ptr():
                raise SemanticError(
                    f"a block pointer ({a}) takes no arithmetic: move it with tl.advance"
                )
            if not allow:
                raise SemanticError(f"this operation does not take a pointer ({a})")
            if b.is_ptr():
                raise SemanticError(f"cannot combine two pointers ({a} and {b})")
            if b.is_floating():
                raise SemanticError(f"cannot add a floating-point offset ({b}) to a pointer")

    # ------------------------------------------------------------------ shapes
    def splat(self, x: tensor, shape) -> tensor:
        shape = tuple(shape)
        t = irt.tensor(shape, x.dtype.to_ir())
        return tensor(self.b.result(tt.SplatOp(x.handle, t)), block_type(x.dtype, shape))

    def broadcast_to(self, x: tensor, shape) -> tensor:
        shape = tuple(shape)
        if x.shape == shape:
            return x
        if not x.shape:
            return self.splat(x, shape)
        if len(x.shape) != len(shape):
            while len(x.shape) < len(shape):
                x = self.expand_dims(x, 0)
            if len(x.shape) != len(shape):
                raise SemanticError(f"cannot broadcast shape {list(x.shape)} to {list(shape)}")
        for a, b in zip(x.shape, shape):
            if a != b and a != 1:
                raise SemanticError(f"cannot broadcast shape {list(x.shape)} to {list(shape)}")
        if x.shape == shape:
            return x
        t = irt.tensor(shape, x.dtype.to_ir())
        return tensor(self.b.result(tt.BroadcastOp(x.handle, t)), block_type(x.dtype, shape))

    def broadcast_shapes(self, a: tuple, b: tuple) -> tuple:
        if not a:
            return b
        if not b:
            return a
        n = max(len(a), len(b))
        a = (1,) * (n - len(a)) + a
        b = (1,) * (n - len(b)) + b
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            if x == y or y == 1:
                out.append(x)
            elif x == 1:
                out.append(y)
            else:
                raise SemanticError(
                    f"incompatible shapes {list(a)} and {list(b)} at dimension {i} ({x} vs {y})"
                )
        return tuple(out)

    def fits(self, shape: tuple, target: tuple) -> bool:
        """Whether a value of `shape` broadcasts to exactly `target`."""
        if len(shape) > len(target):
            return False
        try:
            return self.broadcast_shapes(shape, target) == target
        except SemanticError:
            return False

    def broadcast_pair(self, a: tensor, b: tensor):
        if a.shape == b.shape:
            return a, b
        shape = self.broadcast_shapes(a.shape, b.shape)
        return self.broadcast_to(a, shape), self.broadcast_to(b, shape)

    def expand_dims(self, x: tensor, axis: int) -> tensor:
        rank = len(x.shape)
        if axis < 0:
            axis += rank + 1
        if not 0 <= axis <= rank:
            raise SemanticError(
                f"expand_dims axis {axis} is out of range for a tensor of rank {rank}"
            )
        if not x.shape:
            return self.splat(x, (1,))
        shape = x.shape[:axis] + (1,) + x.shape[axis:]
        t = irt.tensor(shape, x.dtype.to_ir())
        return tensor(self.b.result(tt.ExpandDimsOp(x.handle, axis, t)), block_type(x.dtype, shape))

    def reshape(self, x: tensor, shape, can_reorder: bool = False) -> tensor:
        shape = tuple(shape)
        if math.prod(shape) != x.numel:
            raise SemanticError(
                f"cannot reshape {list(x.shape)} ({x.numel} elements) to {list(shape)}"
            )
        if not x.shape:
            return self.splat(x, shape)
        self.check_shape(shape)
        t = irt.tensor(shape, x.dtype.to_ir())
        return tensor(
            self.b.result(tt.ReshapeOp(x.handle, t, can_reorder)), block_type(x.dtype, shape)
        )

    def permute(self, x: tensor, order) -> tensor:
        order = tuple(order)
        if sorted(order) != list(range(len(x.shape))):
            raise SemanticError(
                f"permutation {list(order)} does not fit a tensor of rank {len(x.shape)}"
            )
        shape = tuple(x.shape[i] for i in order)
        t = irt.tensor(shape, x.dtype.to_ir())
        return tensor(self.b.result(tt.TransOp(x.handle, order, t)), block_type(x.dtype, shape))

    def arange(self, start: int, end: int) -> tensor:
        if not isinstance(start, int) or not isinstance(end, int):
            raise SemanticError("tl.arange's start and end must be tl.constexpr integers")
        if end <= start:
            raise SemanticError(f"tl.arange's end ({end}) must be greater than its start ({start})")
        n = end - start
        if n & (n - 1):
            raise SemanticError(
                f"tl.arange's range must be a power of two, got {n} ({start}..{end})"
            )
        if n > MAX_TENSOR_NUMEL:
            raise SemanticError(f"tl.arange's range {n} exceeds the 2**20 element limit of a block")
        if start < -(2**31) or end > 2**31:
            raise SemanticError("tl.arange's bounds must fit in int32")
        t = irt.tensor((n,), irt.i32)
        return tensor(self.b.result(tt.MakeRangeOp(start, end, t)), block_type(core.int32, (n,)))

    # ------------------------------------------------------------------ casts
    def cast(self, x: tensor, to: dtype, fp_downcast_rounding: str | None = None) -> tensor:
        src = x.dtype
        if src == to:
            return x
        if isinstance(to, block_type):
            to = to.scalar
        res_ty = block_type(to, x.shape) if x.shape else to
        rt = res_ty.to_ir()
        h = x.handle
        b = self.b
        if fp_downcast_rounding is not None and not (
            src.is_floating()
            and to.is_floating()
            and to.primitive_bitwidth < src.primitive_bitwidth
        ):
            raise SemanticError(
                "fp_downcast_rounding applies only to casts from a wider to a narrower float type"
            )
        if src.is_fp8() or to.is_fp8():
            return self._cast_fp8(x, to, res_ty, fp_downcast_rounding)
        if src.is_floating() and to.is_floating():
            if fp_downcast_rounding is not None:
                return tensor(b.result(tt.FpToFpOp(h, rt, fp_downcast_rounding)), res_ty)
            if (src.is_bf16() and to.is_fp16()) or (src.is_fp16() and to.is_bf16()):
                return self.cast(self.cast(x, core.float32), to)
            if to.primitive_bitwidth > src.primitive_bitwidth:
                return tensor(b.result(arith.ExtFOp(h, rt)), res_ty)
            return tensor(b.result(arith.TruncFOp(h, rt)), res_ty)
        if src.is_int() and to.is_int():
            if to.is_bool():
                return self.not_equal(x, 0)
            if to.int_bitwidth == src.int_bitwidth:
                return tensor(h, res_ty)
            if to.int_bitwidth < src.int_bitwidth:
                return tensor(b.result(arith.TruncIOp(h, rt)), res_ty)
            if src.is_int_signed():
                return tensor(b.result(arith.ExtSIOp(h, rt)), res_ty)
            return tensor(b.result(arith.ExtUIOp(h, rt)), res_ty)
        if src.is_floating() and to.is_int():
            if to.is_bool():
                return self.not_equal(x, 0)
            if to.is_int_signed():
                return tensor(b.result(arith.FPToSIOp(h, rt)), res_ty)
            return tensor(b.result(arith.FPToUIOp(h, rt)), res_ty)
        if src.is_int() and to.is_floating():
            if src.is_int_unsigned():
                return tensor(b.result(arith.UIToFPOp(h, rt)), res_ty)
            return tensor(b.result(arith.SIToFPOp(h, rt)), res_ty)
        if src.is_ptr() and to.is_ptr():
            return tensor(b.result(tt.BitcastOp(h, rt)), res_ty)
        if src.is_ptr() and to.is_int():
            if to.int_bitwidth != 64:
                raise SemanticError(f"a pointer can only be cast to a 64-bit integer, not {to}")
            return tensor(b.result(tt.PtrToIntOp(h, rt)), res_ty)
        if src.is_int() and to.is_ptr():
            if src.int_bitwidth != 64:
                raise SemanticError(f"only a 64-bit integer can be cast to a pointer, not {src}")
            return tensor(b.result(tt.IntToPtrOp(h, rt)), res_ty)
        raise SemanticError(f"cannot cast {src} to {to}")

    def _cast_fp8(self, x: tensor, to: dtype, res_ty, rounding: str | None) -> tensor:
        """Casts to and from fp8 are `tt.fp_to_fp` (fp16 / bf16 / fp32 on the other side;
        downcasts round to nearest even unless `fp_downcast_rounding` says "rtz"); fp64,
        integers and the other fp8 format go through fp32 / fp16 first, exactly."""
        src = x.dtype
        other = to if src.is_fp8() else src
        if other.is_fp8():  # fp8 -> fp8: the fp16 upcast is exact
            return self.cast(self.cast(x, core.float16), to, rounding)
        if not other.is_floating() or other.is_fp64():
            mid = core.float32
            if src.is_fp8():
                return self.cast(self.cast(x, mid), to)
            return self.cast(self.cast(x, mid), to, rounding)
        if to.is_fp8() and rounding is None:
            rounding = "rtne"
        op = tt.FpToFpOp(x.handle, res_ty.to_ir(), rounding if to.is_fp8() else None)
        return tensor(self.b.result(op), res_ty)

    def bitcast(self, x: tensor, to: dtype) -> tensor:
        src = x.dtype
        if src == to:
            return x
        if src.primitive_bitwidth != to.primitive_bitwidth:
            raise SemanticError(
                f"cannot bitcast {src} ({src.primitive_bitwidth} bits) to {to} ({to.primitive_bitwidth} bits)"
            )
        if src.is_ptr() != to.is_ptr():
            return self.cast(x, to)
        res_ty = block_type(to, x.shape) if x.shape else to
        return tensor(self.b.result(tt.BitcastOp(x.handle, res_ty.to_ir())), res_ty)

    # ------------------------------------------------------------------ arithmetic
    def _binop(self, op_cls, a: tensor, b: tensor) -> tensor:
        return tensor(self.b.result(op_cls(a.handle, b.handle)), a.type)

    def _sanitize_overflow(self, a: tensor, b: tensor, kind: str) -> None:
        if not self.debug or not a.dtype.is_int_signed() or a.dtype.int_bitwidth >= 64:
            return
        ty = a.dtype
        a64, b64 = self.cast(a, core.int64), self.cast(b, core.int64)
        op = {"add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp}[kind]
        r = self._binop(op, a64, b64)
        ok = self.and_(
            self.less_equal(r, self.scalar_constant(ty.get_int_max_value(), core.int64)),
            self.greater_equal(r, self.scalar_constant(ty.get_int_min_value(), core.int64)),
        )
        self.device_assert(ok, f"int{ty.int_bitwidth} overflow detected for operation {kind}")

    def add(self, lhs, rhs) -> tensor:
        a, b = self.binary_operands(lhs, rhs, True, True)
        if b.dtype.is_ptr():
            a, b = b, a
        if a.dtype.is_ptr():
            return tensor(self.b.result(tt.AddPtrOp(a.handle, b.handle)), a.type)
        if a.dtype.is_floating():
            return self._binop(arith.AddfOp, a, b)
        self._sanitize_overflow(a, b, "add")
        return self._binop(arith.AddiOp, a, b)

    def sub(self, lhs, rhs) -> tensor:
        a, b = self.binary_operands(lhs, rhs, True, False)
        if a.dtype.is_ptr():
            return tensor(self.b.result(tt.AddPtrOp(a.handle, self.minus(b).handle)), a.type)
        if a.dtype.is_floating():
            return self._binop(arith.SubfOp, a, b)
        self._sanitize_overflow(a, b, "sub")
        return self._binop(arith.SubiOp, a, b)

    def mul(self, lhs, rhs) -> tensor:
        a, b = self.binary_operands(lhs, rhs)
        if a.dtype.is_floating():
            return self._binop(arith.MulfOp, a, b)
        self._sanitize_overflow(a, b, "mul")
        return self._binop(arith.MuliOp, a, b)

    def truediv(self, lhs, rhs) -> tensor:
        a, b = self.binary_operands(lhs, rhs, arithmetic=True, div_or_mod=True)
        at, bt = a.dtype, b.dtype
        if at.is_floating() and bt.is_int():
            b = self.cast(b, at)
        elif at.is_int() and bt.is_floating():
            a = self.cast(a, bt)
        elif at.is_int() and bt.is_int():
            a, b = self.cast(a, core.float32), self.cast(b, core.float32)
        elif at.fp_mantissa_width > bt.fp_mantissa_width:
            b = self.cast(b, at)
        else:
            a = self.cast(a, bt)
        return self._binop(arith.DivfOp, a, b)

    def floordiv(self, lhs, rhs) -> tensor:
        a, b = self.binary_operands(lhs, rhs, arithmetic=True, div_or_mod=True)
        if not (a.dtype.is_int() and b.dtype.is_int()):
            raise SemanticError(f"// needs integer operands, got {a.dtype} and {b.dtype}")
        op = arith.DivSIOp if a.dtype.is_int_signed() else arith.DivUIOp
        return self._binop(op, a, b)

    def fdiv(self, lhs, rhs, ieee_rounding: bool = False) -> tensor:
        l, r = core.unwrap(lhs), core.unwrap(rhs)
        for v in (l, r):
            dt = v.dtype if isinstance(v, tensor) else literal_dtype(v)
            if not dt.is_floating():
                raise SemanticError("both operands of fdiv must be floating point")
        a, b = self.binary_operands(lhs, rhs, arithmetic=True, div_or_mod=True)
        return self._binop(tt.PreciseDivFOp if ieee_rounding else arith.DivfOp, a, b)

    def mod(self, lhs, rhs) -> tensor:
        a, b = self.binary_operands(lhs, rhs, arithmetic=True, div_or_mod=True)
        if a.dtype.is_floating():
            return self._binop(arith.RemFOp, a, b)
        op = arith.RemSIOp if a.dtype.is_int_signed() else arith.RemUIOp
        return self._binop(op, a, b)

    def minus(self, x) -> tensor:
        x = self.to_tensor(x)
        if x.dtype.is_ptr():
            raise SemanticError("cannot negate a pointer")
        zero = self.full(x.shape, 0, x.dtype)
        return self.sub(zero, x)

    def invert(self, x) -> tensor:
        x = self.to_tensor(x)
        if not x.dtype.is_int():
            raise SemanticError(f"~ needs an integer operand, got {x.dtype}")
        ones = self.full(x.shape, -1 if not x.dtype.is_bool() else 1, x.dtype)
        return self._binop(arith.XOrIOp, x, ones)

    def _bitwise_operands(self, lhs, rhs):
        a, b = self.binary_operands(lhs, rhs)
        if not (a.dtype.is_int() and b.dtype.is_int()):
            raise SemanticError(
                f"bitwise operations need integer operands, got {a.dtype} and {b.dtype}"
            )
        return a, b

    def and_(self, lhs, rhs) -> tensor:
        return self._binop(arith.AndIOp, *self._bitwise_operands(lhs, rhs))

    def or_(self, lhs, rhs) -> tensor:
        return self._binop(arith.OrIOp, *self._bitwise_operands(lhs, rhs))

    def xor_(self, lhs, rhs) -> tensor:
        return self._binop(arith.XOrIOp, *self._bitwise_operands(lhs, rhs))

    def shl(self, lhs, rhs) -> tensor:
        return self._binop(arith.ShLIOp, *self._bitwise_operands(lhs, rhs))

    def shr(self, lhs, rhs) -> tensor:
        a, b = self._bitwise_operands(lhs, rhs)
        return self._binop(arith.ShRSIOp if a.dtype.is_int_signed() else arith.ShRUIOp, a, b)

    def logical_and(self, lhs, rhs) -> tensor:
        return self.and_(
            self.cast(self.to_tensor(lhs), core.int1), self.cast(self.to_tensor(rhs), core.int1)
        )

    def logical_or(self, lhs, rhs) -> tensor:
        return self.or_(
            self.cast(self.to_tensor(lhs), core.int1), self.cast(self.to_tensor(rhs), core.int1)
        )

    def logical_not(self, x) -> tensor:
        x = self.cast(self.to_tensor(x), core.int1)
        return self.xor_(x, self.full(x.shape, 1, core.int1))

    # ------------------------------------------------------------------ comparisons
    def _compare(self, lhs, rhs, fpred: str, spred: str, upred: str) -> tensor:
        a, b = self.binary_operands(lhs, rhs, True, True)
        if a.dtype.is_ptr() != b.dtype.is_ptr():
            raise SemanticError(f"cannot compare {a.dtype} with {b.dtype}")
        res_ty = block_type(core.int1, a.shape) if a.shape else core.int1
        if a.dtype.is_floating():
            op = arith.CmpfOp(a.handle, b.handle, fpred)
        else:
            pred = spred if a.dtype.is_int_signed() else upred
            op = arith.CmpiOp(a.handle, b.handle, pred)
        return tensor(self.b.result(op), res_ty)

    def less_than(self, a, b):
        return self._compare(a, b, "olt", "slt", "ult")

    def less_equal(self, a, b):
        return self._compare(a, b, "ole", "sle", "ule")

    def greater_than(self, a, b):
        return self._compare(a, b, "ogt", "sgt", "ugt")

    def greater_equal(self, a, b):
        return self._compare(a, b, "oge", "sge", "uge")

    def equal(self, a, b):
        return self._compare(a, b, "oeq", "eq", "eq")

    def not_equal(self, a, b):
        return self._compare(a, b, "une", "ne", "ne")

    # ------------------------------------------------------------------ selection, min/max
    def where(self, cond, x, y) -> tensor:
        cond = self.to_tensor(cond)
        if not cond.dtype.is_bool():
            cond = self.cast(cond, core.int1)
        x, y = self.binary_operands(x, y, True, True)
        if cond.shape:
            cond, x = self.broadcast_pair(cond, x)
            x, y = self.broadcast_pair(x, y)
            cond, x = self.broadcast_pair(cond, x)
        elif x.shape:
            cond = self.splat(cond, x.shape)
        return tensor(self.b.result(arith.SelectOp(cond.handle, x.handle, y.handle)), x.type)

    def maximum(self, x, y, propagate_nan: bool = False) -> tensor:
        a, b = self.binary_operands(x, y)
        if a.dtype.is_floating():
            op = arith.MaximumfOp if propagate_nan else arith.MaxnumfOp
        elif a.dtype.is_int_signed():
            op = arith.MaxSIOp
        else:
            op = arith.MaxUIOp
        return self._binop(op, a, b)

    def minimum(self, x, y, propagate_nan: bool = False) -> tensor:
        a, b = self.binary_operands(x, y)
        if a.dtype.is_floating():
            op = arith.MinimumfOp if propagate_nan else arith.MinnumfOp
        elif a.dtype.is_int_signed():
            op = arith.MinSIOp
        else:
            op = arith.MinUIOp
        return self._binop(op, a, b)
