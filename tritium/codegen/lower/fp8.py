"""`tt.fp_to_fp` to and from fp8 (f8E4M3FN = tl.float8e4nv, f8E5M2 = tl.float8e5), two
elements per instruction, with the sm_89 conversions upstream's table uses:

    %y = tt.fp_to_fp %x, rounding = rtne : tensor<256xf32, #blocked> -> tensor<256xf8E4M3FN, #blocked>
      -> cvt.rn.satfinite.e4m3x2.f32 %h, %x1, %x0;       (x0 -> bits 7:0, x1 -> bits 15:8)
    %z = tt.fp_to_fp %y : tensor<256xf8E4M3FN, #blocked> -> tensor<256xf32, #blocked>
      -> cvt.rn.f16x2.e4m3x2 %r, %h;  cvt.f32.f16 ...   (fp8 -> fp16 is exact)

    f32  -> fp8  rtne: cvt.rn.satfinite.{e4m3,e5m2}x2.f32 (nearest even; finite values and
                       infinities past the largest finite value saturate to it; NaN -> NaN)
    f16  -> fp8  rtne: cvt.rn.satfinite.{e4m3,e5m2}x2.f16x2
    bf16 -> fp8  rtne: exact bf16 -> f32, then the f32 conversion
    f32 / f16 / bf16 -> e5m2 rtz: f32 rounded toward zero to f16 (cvt.rz.f16.f32), then its
                       upper byte (e5m2 is the top half of fp16), as upstream
    fp8 -> f16: cvt.rn.f16x2.{e4m3,e5m2}x2;  fp8 -> f32 / bf16: through f16 (all exact)

In registers and memory an fp8 element is the i8 of its bits. These instructions need
sm_89; for older targets the conversion is reported (`NotSupportedError`) rather than
emulated. tritium/runtime/interpreter/fp8.py implements the same rounding in numpy.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects.builtin import Float8E4M3FNType, Float8E5M2Type
from xdsl.ir import Operation

from tritium.codegen.lower.context import FunctionLowering, unsupported
from tritium.codegen.lower.types import f16, f32, i8, i16, i32, llvm_type
from tritium.ir.ttg import compute_capability
from tritium.ir.types import element_type

_PTX = {Float8E4M3FNType: "e4m3", Float8E5M2Type: "e5m2"}


def lower_fp8_cast(ctx: FunctionLowering, op: Operation) -> None:
    """`tt.fp_to_fp` with an fp8 source or result."""
    src_e, dst_e = element_type(op.src.type), element_type(op.result.type)
    fmt = _PTX.get(type(dst_e)) or _PTX.get(type(src_e))
    if fmt is None or type(src_e) in _PTX and type(dst_e) in _PTX:
        raise unsupported(op, f"no conversion from {src_e} to {dst_e}")
    if compute_capability(op) < 89:
        raise unsupported(
            op,
            f"fp8 ({src_e} -> {dst_e}) conversions need sm_89 or newer "
            f"(the target is sm_{compute_capability(op)})",
        )
    regs = list(ctx.get(op.src))
    pairs = [
        (regs[i], regs[i + 1] if i + 1 < len(regs) else regs[i]) for i in range(0, len(regs), 2)
    ]
    if type(src_e) in _PTX:
        out = [v for p in pairs for v in _from_fp8(ctx, fmt, p, llvm_type(op.result.type))]
    else:
        rounding = "rtne" if op.rounding is None else ("rtz", "rtne")[op.rounding.value.data]
        if rounding == "rtz" and fmt != "e5m2":
            raise unsupported(op, f"rounding toward zero to {dst_e} (upstream: e5m2 only)")
        out = [v for p in pairs for v in _to_fp8(ctx, fmt, p, rounding)]
    ctx.set(op.result, out[: len(regs)])


def fp8x2_to_f16x2(ctx: FunctionLowering, elem, pair) -> ir.Value:
    """The f16x2 word (first element in the low half) of two fp8 registers (i8 bits) of
    type `elem`: one `cvt.rn.f16x2.{e4m3,e5m2}x2` (exact)."""
    b = ctx.builder
    packed = _pack(b, pair, i8, i16)
    fty = ir.FunctionType(i32, [i16])
    text = f"cvt.rn.f16x2.{_PTX[type(elem)]}x2 $0, $1;"
    return b.asm(fty, text, "=r,h", [packed], side_effect=False)


def _from_fp8(ctx: FunctionLowering, fmt: str, pair, dst: ir.Type) -> list[ir.Value]:
    b = ctx.builder
    elem = next(t for t, name in _PTX.items() if name == fmt)()
    halves = _unpack(b, fp8x2_to_f16x2(ctx, elem, pair), f16, 2)
    if dst == f16:
        return halves
    wide = [b.fpext(h, f32) for h in halves]
    return wide if dst == f32 else [b.fptrunc(w, dst) for w in wide]  # bf16: exact


def _to_fp8(ctx: FunctionLowering, fmt: str, pair, rounding: str) -> list[ir.Value]:
    b = ctx.builder
    x0, x1 = pair
    if rounding == "rtz":  # e5m2: the upper byte of the value rounded toward zero to fp16
        halves = [x if x.type == f16 else _f16_rz(b, _f32(b, x)) for x in pair]
        bits = _unpack(b, _pack(b, halves, f16, i32), i8, 4)
        return [bits[1], bits[3]]
    if x0.type == f16:
        fty = ir.FunctionType(i16, [i32])
        text = f"cvt.rn.satfinite.{fmt}x2.f16x2 $0, $1;"
        packed = b.asm(fty, text, "=h,r", [_pack(b, pair, f16, i32)], side_effect=False)
    else:
        fty = ir.FunctionType(i16, [f32, f32])
        text = f"cvt.rn.satfinite.{fmt}x2.f32 $0, $1, $2;"
        packed = b.asm(fty, text, "=h,f,f", [_f32(b, x1), _f32(b, x0)], side_effect=False)
    return _unpack(b, packed, i8, 2)


def _f32(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return x if x.type == f32 else b.fpext(x, f32)  # bf16 -> f32 is exact


def _f16_rz(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    fty = ir.FunctionType(i16, [f32])
    return b.bitcast(b.asm(fty, "cvt.rz.f16.f32 $0, $1;", "=h,f", [x], side_effect=False), f16)


def _pack(b: ir.IRBuilder, values, elem: ir.Type, word: ir.Type) -> ir.Value:
    vec = ir.Constant(ir.VectorType(elem, len(values)), None)
    for j, v in enumerate(values):
        vec = b.insert_element(vec, v, ir.Constant(i32, j))
    return b.bitcast(vec, word)


def _unpack(b: ir.IRBuilder, word: ir.Value, elem: ir.Type, n: int) -> list[ir.Value]:
    vec = b.bitcast(word, ir.VectorType(elem, n))
    return [b.extract_element(vec, ir.Constant(i32, j)) for j in range(n)]


__all__ = ["fp8x2_to_f16x2", "lower_fp8_cast"]
