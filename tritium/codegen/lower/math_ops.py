"""`math` ops and Triton's precise / bit-level extras, register by register.

    %y = math.exp %x : tensor<1024xf32, #blocked>
    ->  %t = fmul float %x, 0x3FF7154760000000      ; x * log2(e)
        %y = call float @llvm.nvvm.ex2.approx.f(float %t)        (ex2.approx.f32)

By default no libdevice (TRITIUM_LIBDEVICE, libdevice_calls.py, calls it where upstream
does): every function is an NVVM intrinsic, a generic LLVM intrinsic NVPTX
selects to one instruction, or an accurate routine of libm/ (log, sin, tanh, erf, ...,
and every f64 transcendental). f16 / bf16 inputs are computed in f32 and rounded back.
The choices and each function's measured accuracy are in codegen/ARCHITECTURE.md.
"""

from __future__ import annotations

import math

from llvmlite import ir
from xdsl.ir import Operation

from tritium.codegen.lower import libdevice_calls, libm
from tritium.codegen.lower.context import FunctionLowering, lowers
from tritium.codegen.lower.elementwise import in_f32
from tritium.codegen.lower.fp8 import lower_fp8_cast
from tritium.codegen.lower.types import BFloatType, f32, f64, i16, llvm_type
from tritium.ir.types import is_fp8

LOG2E = 1.0 / math.log(2.0)


def _unary(ctx: FunctionLowering, op: Operation, emit) -> None:
    ctx.set(op.result, ctx.zip_map([ctx.get(op.operands[0])], emit))


def _call(ctx: FunctionLowering, name: str, ty: ir.Type, *args: ir.Value) -> ir.Value:
    fn = ctx.intrinsic(name, ty, [a.type for a in args])
    return ctx.builder.call(fn, list(args))


def _nvvm_f32(ctx: FunctionLowering, name: str):
    return lambda x: _call(ctx, f"llvm.nvvm.{name}.f", f32, x)


def _generic(ctx: FunctionLowering, name: str, ty: ir.Type):
    """`llvm.<name>.<type>`: floor, ceil, fabs, sqrt, fma, ... selected natively by NVPTX."""
    return lambda *xs: _call(ctx, f"llvm.{name}.{ty.intrinsic_name}", ty, *xs)


@lowers("math.exp", "math.exp2")
def exp(ctx: FunctionLowering, op: Operation) -> None:
    if libdevice_calls.lower_math(ctx, op):  # TRITIUM_LIBDEVICE: as upstream
        return
    # f32 (and f16 / bf16): ex2.approx.f32 for exp (x * log2(e) first), ex2.approx.ftz.f32
    # for exp2 (ptxas adds no denormal fix-up around it), as upstream;
    # libdevice.exp / exp2 are the accurate ones. f64: libm.
    ty = llvm_type(op.result.type)
    if isinstance(ty, ir.DoubleType):
        _unary(ctx, op, lambda x: libm.emit(ctx, op.name[5:], x))
        return
    b = ctx.builder
    if op.name == "math.exp":
        ex2 = _nvvm_f32(ctx, "ex2.approx")
        fn = lambda x: ex2(b.fmul(x, ir.Constant(f32, LOG2E)))  # noqa: E731
    else:  # upstream's exp2 is libdevice's __nv_exp2f with denormals flushed
        fn = _nvvm_f32(ctx, "ex2.approx.ftz")
    _unary(ctx, op, in_f32(ctx, ty, fn))


# math op -> libm routine: accurate (about 1 ulp, see codegen/ARCHITECTURE.md) in f32 and
# f64; f16 / bf16 computed in f32
_LIBM = {
    "math.log": "log", "math.log2": "log2", "math.log10": "log10", "math.log1p": "log1p",
    "math.sin": "sin", "math.cos": "cos", "math.tan": "tan", "math.tanh": "tanh",
    "math.sinh": "sinh", "math.cosh": "cosh", "math.asin": "asin", "math.acos": "acos",
    "math.atan": "atan", "math.asinh": "asinh", "math.acosh": "acosh", "math.atanh": "atanh",
    "math.erf": "erf", "math.expm1": "expm1", "math.cbrt": "cbrt", "math.atan2": "atan2",
    "math.powf": "pow",
}  # fmt: skip


@lowers(*_LIBM)
def libm_op(ctx: FunctionLowering, op: Operation) -> None:
    if libdevice_calls.lower_math(ctx, op):  # TRITIUM_LIBDEVICE: as upstream
        return
    ty = llvm_type(op.result.type)
    name = _LIBM[op.name]
    fn = lambda *xs: libm.emit(ctx, name, *xs)  # noqa: E731
    if not isinstance(ty, ir.DoubleType):
        fn = in_f32(ctx, ty, fn)
    ctx.set(op.result, ctx.zip_map([ctx.get(v) for v in op.operands], fn))


@lowers("math.sqrt")
def sqrt(ctx: FunctionLowering, op: Operation) -> None:
    if libdevice_calls.lower_math(ctx, op):  # TRITIUM_LIBDEVICE: as upstream
        return
    # As upstream 3.6 (its rms_norm PTX): sqrt.approx.ftz.f32.
    ty = llvm_type(op.result.type)
    if isinstance(ty, ir.DoubleType):
        _unary(ctx, op, _generic(ctx, "sqrt", ty))  # sqrt.rn.f64
    else:
        _unary(ctx, op, in_f32(ctx, ty, _nvvm_f32(ctx, "sqrt.approx.ftz")))


@lowers("math.rsqrt")
def rsqrt(ctx: FunctionLowering, op: Operation) -> None:
    if libdevice_calls.lower_math(ctx, op):  # TRITIUM_LIBDEVICE: as upstream
        return
    ty = llvm_type(op.result.type)
    b = ctx.builder
    if isinstance(ty, ir.DoubleType):
        sq = _generic(ctx, "sqrt", ty)
        _unary(ctx, op, lambda x: b.fdiv(ir.Constant(ty, 1.0), sq(x)))
    else:
        _unary(ctx, op, in_f32(ctx, ty, _nvvm_f32(ctx, "rsqrt.approx.ftz")))  # as upstream


_GENERIC_FLOAT = {
    "math.absf": "fabs",
    "math.floor": "floor",
    "math.ceil": "ceil",
    "math.trunc": "trunc",
    "math.round": "round",
    "math.roundeven": "roundeven",
    "math.fma": "fma",
    "math.copysign": "copysign",
}


@lowers(*_GENERIC_FLOAT)
def generic_float(ctx: FunctionLowering, op: Operation) -> None:
    if libdevice_calls.lower_math(ctx, op):  # TRITIUM_LIBDEVICE: as upstream
        return
    ty = llvm_type(op.result.type)
    fn = _generic(ctx, _GENERIC_FLOAT[op.name], ty)
    if isinstance(ty, BFloatType | ir.HalfType) and op.name != "math.absf":
        fn = in_f32(ctx, ty, _generic(ctx, _GENERIC_FLOAT[op.name], f32))
    ctx.set(op.result, ctx.zip_map([ctx.get(v) for v in op.operands], fn))


@lowers("math.absi")
def absi(ctx: FunctionLowering, op: Operation) -> None:
    ty = llvm_type(op.result.type)
    false = ir.Constant(ir.IntType(1), 0)
    _unary(ctx, op, lambda x: _call(ctx, f"llvm.abs.{ty.intrinsic_name}", ty, x, false))


@lowers("math.ctlz", "math.cttz", "math.ctpop")
def bit_count(ctx: FunctionLowering, op: Operation) -> None:
    ty = llvm_type(op.result.type)
    name = op.name[5:]
    false = ir.Constant(ir.IntType(1), 0)
    extra = () if name == "ctpop" else (false,)
    _unary(ctx, op, lambda x: _call(ctx, f"llvm.{name}.{ty.intrinsic_name}", ty, x, *extra))


# --------------------------------------------------------------------------- tt extras


@lowers("tt.precise_sqrt")
def precise_sqrt(ctx: FunctionLowering, op: Operation) -> None:
    ty = llvm_type(op.result.type)  # llvm.sqrt is IEEE sqrt.rn on NVPTX
    if isinstance(ty, BFloatType | ir.HalfType):
        _unary(ctx, op, in_f32(ctx, ty, _generic(ctx, "sqrt", f32)))
    else:
        _unary(ctx, op, _generic(ctx, "sqrt", ty))


@lowers("tt.precise_divf")
def precise_divf(ctx: FunctionLowering, op: Operation) -> None:
    ty = llvm_type(op.result.type)  # fdiv is IEEE div.rn on NVPTX
    fn = ctx.builder.fdiv
    if isinstance(ty, BFloatType | ir.HalfType):
        fn = in_f32(ctx, ty, fn)
    ctx.set(op.result, ctx.zip_map([ctx.get(op.x), ctx.get(op.y)], fn))


@lowers("tt.mulhiui")
def mulhiui(ctx: FunctionLowering, op: Operation) -> None:
    b = ctx.builder
    ty = llvm_type(op.result.type)
    wide = ir.IntType(2 * ty.width)

    def emit(x, y):
        p = b.mul(b.zext(x, wide), b.zext(y, wide))
        return b.trunc(b.lshr(p, ir.Constant(wide, ty.width)), ty)

    ctx.set(op.result, ctx.zip_map([ctx.get(op.x), ctx.get(op.y)], emit))


_ASM_FLOAT = {"half": ("h", i16), "bfloat": ("h", i16), "float": ("f", f32), "double": ("d", f64)}
_PTX_FLOAT = {"half": "f16", "bfloat": "bf16", "float": "f32", "double": "f64"}


@lowers("tt.fp_to_fp")
def fp_to_fp(ctx: FunctionLowering, op: Operation) -> None:
    if is_fp8(op.src.type) or is_fp8(op.result.type):
        return lower_fp8_cast(ctx, op)
    b = ctx.builder
    src, dst = llvm_type(op.src.type), llvm_type(op.result.type)
    rounding = "rtne" if op.rounding is None else ("rtz", "rtne")[op.rounding.value.data]
    if _bits(dst) > _bits(src):
        _unary(ctx, op, lambda x: b.fpext(x, dst))
        return
    if src == dst:
        _unary(ctx, op, lambda x: x)
        return

    def to_f32_first(x: ir.Value) -> ir.Value:  # f16 <-> bf16 go through f32 (exact)
        return b.fpext(x, f32) if _bits(src) == 16 else x

    if rounding == "rtne":
        _unary(ctx, op, lambda x: b.fptrunc(to_f32_first(x), dst))
        return
    # Round toward zero: cvt.rz.<dst>.<src>.
    mid = f32 if _bits(src) == 16 else src
    out_c, out_ty = _ASM_FLOAT[str(dst)]
    in_c, _ = _ASM_FLOAT[str(mid)]
    text = f"cvt.rz.{_PTX_FLOAT[str(dst)]}.{_PTX_FLOAT[str(mid)]} $0, $1;"
    fty = ir.FunctionType(out_ty, [mid])

    def emit(x: ir.Value) -> ir.Value:
        y = b.asm(fty, text, f"={out_c},{in_c}", [to_f32_first(x)], False)
        return y if out_ty == dst else b.bitcast(y, dst)

    _unary(ctx, op, emit)


def _bits(ty: ir.Type) -> int:
    return {"half": 16, "bfloat": 16, "float": 32, "double": 64}[str(ty)]
