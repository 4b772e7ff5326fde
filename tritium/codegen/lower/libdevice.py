"""`tt.extern_elementwise`: the libdevice functions (`tl.extra.libdevice`), by symbol,
without NVIDIA's bitcode.

    %y = tt.extern_elementwise %x {libname = "", libpath = "", pure = true,
                                   symbol = "__nv_tanhf"} : (tensor<256xf32>) -> ...
    ->  the accurate tanh of libm/ (no tanh.approx), register by register

Each symbol maps to an emitter `fn(ctx, result_type, *registers)`: an accurate libm
routine (`__nv_expf`, `__nv_erf`, `__nv_pow`, ...), a generic LLVM intrinsic NVPTX selects
to one exact instruction (`llvm.floor`, `llvm.fma`, `llvm.sqrt` = `sqrt.rn`, ...), inline
PTX where the rounding mode is the point (`add.rz.f32`, `div.rp.f64`, `cvt.rmi.s32.f64`),
or the approximate instruction for the `__nv_fast_*` functions, which ask for it. A symbol
not in the table is a located NotSupportedError naming it. In libdevice mode
(TRITIUM_LIBDEVICE) every symbol is instead a call of NVIDIA's function (libdevice_calls.py).
"""

from __future__ import annotations

import math

from llvmlite import ir
from xdsl.ir import Operation

from tritium.codegen.lower import libdevice_calls, libm
from tritium.codegen.lower.context import FunctionLowering, lowers, unsupported
from tritium.codegen.lower.elementwise import _f32_div_full
from tritium.codegen.lower.libm.core import Libm
from tritium.codegen.lower.types import f32, f64, i32, i64, llvm_type

LN2 = math.log(2.0)
LOG2E = 1.0 / LN2
LOG10_2 = math.log10(2.0)
LOG2_10 = math.log2(10.0)
_PTX_ROUND = {"rn": "rn", "rz": "rz", "rd": "rm", "ru": "rp"}


def _call(ctx: FunctionLowering, name: str, ty: ir.Type, *args: ir.Value) -> ir.Value:
    return ctx.builder.call(ctx.intrinsic(name, ty, [a.type for a in args]), list(args))


def _asm(ctx, rty: ir.Type, text: str, cons: str, *args: ir.Value) -> ir.Value:
    fty = ir.FunctionType(rty, [a.type for a in args])
    return ctx.builder.asm(fty, text, cons, list(args), False)


def _letter(t: ir.Type, signed: bool = True) -> tuple[str, str]:
    """(inline-asm constraint, PTX type) of a scalar."""
    if isinstance(t, ir.FloatType):
        return "f", "f32"
    if isinstance(t, ir.DoubleType):
        return "d", "f64"
    return ("r", "s32" if signed else "u32") if t.width == 32 else ("l", "s64" if signed else "u64")


# ------------------------------------------------------------------ emitter builders
def _libm(name: str):
    return lambda ctx, rty, *xs: libm.emit(ctx, name, *xs)


def _intr(name: str):
    """llvm.<name>.<type of the first argument>."""
    return lambda ctx, rty, *xs: _call(ctx, f"llvm.{name}.{xs[0].type.intrinsic_name}", xs[0].type, *xs)


def _rounded(op: str, mode: str):
    """`<op>.<mode>.<f32|f64>` with the operands' own type (add, sub, mul, div, fma, rcp,
    sqrt): the result rounded the requested way."""

    def emit(ctx, rty, *xs):
        c, t = _letter(xs[0].type)
        ins = ", ".join(f"${k + 1}" for k in range(len(xs)))
        return _asm(ctx, rty, f"{op}.{_PTX_ROUND[mode]}.{t} $0, {ins};", ",".join([f"={c}"] + [c] * len(xs)), *xs)

    return emit


def _cvt(mode: str, src_signed: bool = True, dst_signed: bool = True, integer: bool = False):
    """`cvt.<mode>[i].<dst>.<src>` (saturating for float -> int, as PTX defines)."""

    def emit(ctx, rty, x):
        sc, st = _letter(x.type, src_signed)
        dc, dt = _letter(rty, dst_signed)
        rnd = _PTX_ROUND[mode] + ("i" if integer else "")
        return _asm(ctx, rty, f"cvt.{rnd}.{dt}.{st} $0, $1;", f"={dc},{sc}", x)

    return emit


def _bitcast(ctx, rty, x):
    return ctx.builder.bitcast(x, rty)


def _rsqrt(ctx, rty, x):  # 1 / sqrt.rn: two roundings, no rsqrt.approx
    sq = _call(ctx, f"llvm.sqrt.{x.type.intrinsic_name}", x.type, x)
    return ctx.builder.fdiv(ir.Constant(x.type, 1.0), sq)


def _recip_of(name: str):
    def emit(ctx, rty, *xs):
        if isinstance(xs[0].type, ir.FloatType):  # via f64: one rounding at the end
            b = ctx.builder
            wide = [b.fpext(x, f64) for x in xs]
            v = b.fdiv(ir.Constant(f64, 1.0), libm.emit(ctx, name, *wide))
            return b.fptrunc(v, f32)
        return ctx.builder.fdiv(ir.Constant(xs[0].type, 1.0), libm.emit(ctx, name, *xs))

    return emit


def _frsqrt_rn(ctx, rty, x):
    b = ctx.builder
    w = b.fpext(x, f64)
    return b.fptrunc(b.fdiv(ir.Constant(f64, 1.0), _call(ctx, "llvm.sqrt.f64", f64, w)), f32)


def _powi(ctx, rty, x, n):
    return libm.emit(ctx, "pow", x, ctx.builder.sitofp(n, x.type))


def _int_result(pred):
    def emit(ctx, rty, x):
        return ctx.builder.zext(pred(Libm(ctx, x.type), x), i32)

    return emit


def _signbit(ctx, rty, x):
    m = Libm(ctx, x.type)
    return ctx.builder.zext(ctx.builder.icmp_signed("<", m.bits(x), m.ci(0)), i32)


def _to_i64(rounding: str):
    def emit(ctx, rty, x):
        r = _call(ctx, f"llvm.{rounding}.{x.type.intrinsic_name}", x.type, x)
        return _call(ctx, f"llvm.fptosi.sat.i64.{x.type.intrinsic_name}", i64, r)

    return emit


def _saturate(ctx, rty, x):
    return _asm(ctx, f32, "cvt.sat.f32.f32 $0, $1;", "=f,f", x)


# --------------------------------------------------------------- fast (approximate) ones
def _nvvm(ctx, name: str, *xs):
    return _call(ctx, f"llvm.nvvm.{name}", f32, *xs)


def _fast(fn):
    return lambda ctx, rty, *xs: fn(ctx, ctx.builder, *xs)


FAST = {
    "__nv_fast_sinf": _fast(lambda ctx, b, x: _nvvm(ctx, "sin.approx.f", x)),
    "__nv_fast_cosf": _fast(lambda ctx, b, x: _nvvm(ctx, "cos.approx.f", x)),
    "__nv_fast_log2f": _fast(lambda ctx, b, x: _nvvm(ctx, "lg2.approx.f", x)),
    "__nv_fast_logf": _fast(
        lambda ctx, b, x: b.fmul(_nvvm(ctx, "lg2.approx.f", x), ir.Constant(f32, LN2))
    ),
    "__nv_fast_log10f": _fast(
        lambda ctx, b, x: b.fmul(_nvvm(ctx, "lg2.approx.f", x), ir.Constant(f32, LOG10_2))
    ),
    "__nv_fast_expf": _fast(
        lambda ctx, b, x: _nvvm(ctx, "ex2.approx.f", b.fmul(x, ir.Constant(f32, LOG2E)))
    ),
    "__nv_fast_exp10f": _fast(
        lambda ctx, b, x: _nvvm(ctx, "ex2.approx.f", b.fmul(x, ir.Constant(f32, LOG2_10)))
    ),
    "__nv_fast_tanf": _fast(
        lambda ctx, b, x: _f32_div_full(
            ctx, _nvvm(ctx, "sin.approx.f", x), _nvvm(ctx, "cos.approx.f", x)
        )
    ),
    "__nv_fast_powf": _fast(
        lambda ctx, b, x, y: _nvvm(ctx, "ex2.approx.f", b.fmul(y, _nvvm(ctx, "lg2.approx.f", x)))
    ),
    "__nv_fast_fdividef": _fast(lambda ctx, b, x, y: _f32_div_full(ctx, x, y)),
}


# ------------------------------------------------------------------ integer functions
def _mulhi(signed: bool):
    def emit(ctx, rty, x, y):
        b = ctx.builder
        w = ir.IntType(2 * x.type.width)
        ext = b.sext if signed else b.zext
        p = b.mul(ext(x, w), ext(y, w))
        return b.trunc(b.ashr(p, ir.Constant(w, x.type.width)), x.type)

    return emit


def _mul24(signed: bool):
    def emit(ctx, rty, x, y):
        b = ctx.builder
        k = ir.Constant(i32, 8)
        if signed:
            x, y = b.ashr(b.shl(x, k), k), b.ashr(b.shl(y, k), k)
        else:
            mask = ir.Constant(i32, 0xFFFFFF)
            x, y = b.and_(x, mask), b.and_(y, mask)
        return b.mul(x, y)

    return emit


def _halving_add(signed: bool, rounded: bool):
    def emit(ctx, rty, x, y):
        b = ctx.builder
        ext = b.sext if signed else b.zext
        s = b.add(ext(x, i64), ext(y, i64))
        if rounded:
            s = b.add(s, ir.Constant(i64, 1))
        return b.trunc((b.ashr if signed else b.lshr)(s, ir.Constant(i64, 1)), i32)

    return emit


def _sad(signed: bool):
    def emit(ctx, rty, x, y, z):
        b = ctx.builder
        ext = b.sext if signed else b.zext
        d = b.sub(ext(x, i64), ext(y, i64))
        d = _call(ctx, "llvm.abs.i64", i64, d, ir.Constant(ir.IntType(1), 0))
        return b.add(b.trunc(d, i32), z)

    return emit


def _bits_count(name: str, extra: bool):
    def emit(ctx, rty, x):
        b = ctx.builder
        args = (x, ir.Constant(ir.IntType(1), 0)) if extra else (x,)
        v = _call(ctx, f"llvm.{name}.{x.type.intrinsic_name}", x.type, *args)
        return b.trunc(v, i32) if x.type.width == 64 else v

    return emit


def _ffs(ctx, rty, x):
    b = ctx.builder
    tz = _call(ctx, f"llvm.cttz.{x.type.intrinsic_name}", x.type, x, ir.Constant(ir.IntType(1), 0))
    tz = b.trunc(tz, i32) if x.type.width == 64 else tz
    zero = b.icmp_signed("==", x, ir.Constant(x.type, 0))
    return b.select(zero, ir.Constant(i32, 0), b.add(tz, ir.Constant(i32, 1)))


def _byte_perm(ctx, rty, x, y, s):
    return _asm(ctx, i32, "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r", x, y, s)


def _iabs(ctx, rty, x):
    return _call(ctx, f"llvm.abs.{x.type.intrinsic_name}", x.type, x, ir.Constant(ir.IntType(1), 0))


def _hilo(ctx, rty, hi, lo):
    b = ctx.builder
    v = b.or_(b.shl(b.zext(hi, i64), ir.Constant(i64, 32)), b.zext(lo, i64))
    return b.bitcast(v, f64)


def _half_of_double(high: bool):
    def emit(ctx, rty, x):
        b = ctx.builder
        v = b.bitcast(x, i64)
        if high:
            v = b.lshr(v, ir.Constant(i64, 32))
        return b.trunc(v, i32)

    return emit


# ------------------------------------------------------------------ the table
def _table() -> dict:
    t: dict = {}
    for name in libm.ROUTINES:
        if name in ("norm", "ldexp"):
            continue
        t[f"__nv_{name}f"] = t[f"__nv_{name}"] = _libm(name)
    t["__nv_scalbnf"] = t["__nv_scalbn"] = t["__nv_ldexpf"] = t["__nv_ldexp"] = _libm("ldexp")
    t["__nv_isnanf"] = t["__nv_isnand"] = _int_result(lambda m, x: m.isnan(x))
    t["__nv_isinff"] = t["__nv_isinfd"] = _int_result(
        lambda m, x: m.cmp("==", m.abs(x), m.c(math.inf))
    )
    t["__nv_finitef"] = t["__nv_isfinited"] = _int_result(
        lambda m, x: m.cmp("<", m.abs(x), m.c(math.inf))
    )
    t["__nv_signbitf"] = t["__nv_signbitd"] = _signbit
    for name, intr in (("floor", "floor"), ("ceil", "ceil"), ("trunc", "trunc"), ("round", "round"),
                       ("rint", "roundeven"), ("nearbyint", "roundeven"), ("fabs", "fabs"),
                       ("copysign", "copysign"), ("fmin", "minnum"), ("fmax", "maxnum"),
                       ("fma", "fma"), ("sqrt", "sqrt")):  # fmt: skip
        t[f"__nv_{name}f"] = t[f"__nv_{name}"] = _intr(intr)
    t["__nv_fmaf_rn"] = t["__nv_fma_rn"] = _intr("fma")
    t["__nv_llrintf"] = t["__nv_llrint"] = _to_i64("roundeven")
    t["__nv_llroundf"] = t["__nv_llround"] = _to_i64("round")
    t["__nv_rsqrtf"] = t["__nv_rsqrt"] = _rsqrt
    t["__nv_frsqrt_rn"] = _frsqrt_rn
    t["__nv_powif"] = t["__nv_powi"] = _powi
    t["__nv_rcbrtf"] = t["__nv_rcbrt"] = _recip_of("cbrt")
    t["__nv_rhypotf"] = t["__nv_rhypot"] = _recip_of("hypot")
    t["__nv_norm3df"] = t["__nv_norm3d"] = t["__nv_norm4df"] = t["__nv_norm4d"] = _libm("norm")
    t["__nv_rnorm3df"] = t["__nv_rnorm3d"] = _recip_of("norm")
    t["__nv_rnorm4df"] = t["__nv_rnorm4d"] = _recip_of("norm")
    t["__nv_saturatef"] = _saturate
    for mode in _PTX_ROUND:
        for op, f, d in (("add", "fadd", "dadd"), ("sub", "fsub", "dsub"), ("mul", "fmul", "dmul"),
                         ("div", "fdiv", "ddiv"), ("rcp", "frcp", "drcp"), ("sqrt", "fsqrt", "dsqrt")):  # fmt: skip
            t[f"__nv_{f}_{mode}"] = t[f"__nv_{d}_{mode}"] = _rounded(op, mode)
        if mode != "rn":
            t[f"__nv_fmaf_{mode}"] = t[f"__nv_fma_{mode}"] = _rounded("fma", mode)
        t[f"__nv_double2float_{mode}"] = _cvt(mode)
        for src in ("float", "double"):
            t[f"__nv_{src}2int_{mode}"] = _cvt(mode, integer=True)
            t[f"__nv_{src}2uint_{mode}"] = _cvt(mode, dst_signed=False, integer=True)
            t[f"__nv_{src}2ll_{mode}"] = _cvt(mode, integer=True)
            t[f"__nv_{src}2ull_{mode}"] = _cvt(mode, dst_signed=False, integer=True)
        t[f"__nv_int2float_{mode}"] = _cvt(mode)
        t[f"__nv_uint2float_{mode}"] = _cvt(mode, src_signed=False)
        for src, signed in (("ll", True), ("ull", False)):
            t[f"__nv_{src}2float_{mode}"] = _cvt(mode, src_signed=signed)
            t[f"__nv_{src}2double_{mode}"] = _cvt(mode, src_signed=signed)
    t["__nv_int2double_rn"] = _cvt("rn")
    t["__nv_uint2double_rn"] = _cvt("rn", src_signed=False)
    for name in ("int_as_float", "float_as_int", "uint_as_float", "float_as_uint",
                 "longlong_as_double", "double_as_longlong"):  # fmt: skip
        t[f"__nv_{name}"] = _bitcast
    t["__nv_hiloint2double"] = _hilo
    t["__nv_double2loint"] = _half_of_double(False)
    t["__nv_double2hiint"] = _half_of_double(True)
    # integers
    t["__nv_clz"] = t["__nv_clzll"] = _bits_count("ctlz", True)
    t["__nv_popc"] = t["__nv_popcll"] = _bits_count("ctpop", False)
    t["__nv_brev"] = t["__nv_brevll"] = _intr("bitreverse")
    t["__nv_ffs"] = t["__nv_ffsll"] = _ffs
    t["__nv_abs"] = t["__nv_llabs"] = _iabs
    t["__nv_mulhi"] = t["__nv_mul64hi"] = _mulhi(True)
    t["__nv_umulhi"] = t["__nv_umul64hi"] = _mulhi(False)
    t["__nv_mul24"], t["__nv_umul24"] = _mul24(True), _mul24(False)
    t["__nv_hadd"], t["__nv_uhadd"] = _halving_add(True, False), _halving_add(False, False)
    t["__nv_rhadd"], t["__nv_urhadd"] = _halving_add(True, True), _halving_add(False, True)
    t["__nv_sad"], t["__nv_usad"] = _sad(True), _sad(False)
    t["__nv_byte_perm"] = _byte_perm
    return t | FAST


SYMBOLS = _table()


@lowers("tt.extern_elementwise")
def extern_elementwise(ctx: FunctionLowering, op: Operation) -> None:
    if ctx.libdevice is not None:  # TRITIUM_LIBDEVICE: NVIDIA's own function, as upstream
        return libdevice_calls.call_extern(ctx, op)
    symbol = op.symbol.data
    emit = SYMBOLS.get(symbol)
    if emit is None:
        raise unsupported(
            op,
            f"libdevice function {symbol} has no routine in tritium's own math: set "
            "TRITIUM_LIBDEVICE=auto to call NVIDIA's libdevice for it, as upstream does "
            "(it links a libdevice.10.bc found on this machine)",
        )
    rty = llvm_type(op.result.type)
    ctx.set(op.result, ctx.zip_map([ctx.get(v) for v in op.operands], lambda *xs: emit(ctx, rty, *xs)))


__all__ = ["SYMBOLS", "extern_elementwise"]
