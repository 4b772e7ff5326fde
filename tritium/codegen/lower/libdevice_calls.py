"""Libdevice mode (`TRITIUM_LIBDEVICE`): math as calls of NVIDIA's `__nv_*` functions, where
upstream Triton 3.6 calls them, so results match upstream bit for bit
(`codegen/libdevice_link.py` links the bitcode; off by default: math_ops.py / libdevice.py).

    %y = math.log %x : tensor<256xf32, #blocked>          (libdevice mode)
    ->  %y0 = call float @__nv_logf(float %x0)  ...        (one call per register)
    %z = tt.extern_elementwise %x {symbol = "__nv_tanhf"}
    ->  %z0 = call float @__nv_tanhf(float %x0) ...

Which ops: those whose upstream lowering (3.6's LLVM IR before linking, compiled from TTIR
for each op) calls libdevice: `math.exp2, log, log2, sin, cos, erf, sqrt, rsqrt, floor,
ceil` in f32 (`__nv_<name>f`) and f64 (`__nv_<name>`), `math.exp` in f64 only. What upstream
lowers to instructions stays as in the default mode: `math.exp` on f32 (`ex2.approx.f32`),
`absf`, `fma`, `/` (`div.full.f32`), `tt.precise_sqrt` / `precise_divf` (`sqrt.rn` /
`div.rn`). The math ops upstream's frontend never emits (tanh, tan, log1p, pow, ... as an
imported TTIR may hold) call the function MLIR's libdevice lowering names. Every
`tt.extern_elementwise` (`tl.extra.libdevice`) calls its own symbol. f16 / bf16 values are
computed in f32 and rounded back, as in the default mode (upstream refuses them).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.codegen import libdevice_link
from tritium.codegen.lower.context import FunctionLowering, intrinsic, unsupported
from tritium.codegen.lower.elementwise import in_f32
from tritium.codegen.lower.types import llvm_type

__all__ = ["MATH", "call_extern", "lower_math"]

# math op -> libdevice base name (`__nv_<base>f` on f32, `__nv_<base>` on f64)
MATH = {
    "math.exp2": "exp2", "math.log": "log", "math.log2": "log2", "math.sin": "sin",
    "math.cos": "cos", "math.erf": "erf", "math.sqrt": "sqrt", "math.rsqrt": "rsqrt",
    "math.floor": "floor", "math.ceil": "ceil",
    # not emitted by upstream's frontend: named as MLIR's GPU-to-NVVM libdevice patterns
    "math.log10": "log10", "math.log1p": "log1p", "math.tan": "tan", "math.tanh": "tanh",
    "math.sinh": "sinh", "math.cosh": "cosh", "math.asin": "asin", "math.acos": "acos",
    "math.atan": "atan", "math.asinh": "asinh", "math.acosh": "acosh", "math.atanh": "atanh",
    "math.expm1": "expm1", "math.cbrt": "cbrt", "math.atan2": "atan2", "math.powf": "pow",
}  # fmt: skip
F64_ONLY = {"math.exp": "exp"}  # f32 exp is ex2.approx.f32 upstream too


def _call(ctx: FunctionLowering, symbol: str, rty: ir.Type, *xs: ir.Value) -> ir.Value:
    fn = intrinsic(ctx.module, symbol, rty, [x.type for x in xs])
    return ctx.builder.call(fn, list(xs))


def _check(ctx: FunctionLowering, op: Operation, symbol: str) -> None:
    if not libdevice_link.defines(ctx.libdevice, symbol):
        raise unsupported(op, f"{symbol} is not defined in {ctx.libdevice} (TRITIUM_LIBDEVICE)")


def lower_math(ctx: FunctionLowering, op: Operation) -> bool:
    """Lower a `math.*` op as a libdevice call when libdevice mode is on and upstream calls
    libdevice for it (True); else leave it to the default lowering (False)."""
    if ctx.libdevice is None:
        return False
    ty = llvm_type(op.result.type)
    base = MATH.get(op.name) or (F64_ONLY.get(op.name) if isinstance(ty, ir.DoubleType) else None)
    if base is None:
        return False
    wide = isinstance(ty, ir.DoubleType)
    symbol = f"__nv_{base}" if wide else f"__nv_{base}f"
    _check(ctx, op, symbol)
    elem = ty if wide else ir.FloatType()
    fn = lambda *xs: _call(ctx, symbol, elem, *xs)  # noqa: E731
    if not wide:
        fn = in_f32(ctx, ty, fn)
    ctx.set(op.result, ctx.zip_map([ctx.get(v) for v in op.operands], fn))
    return True


def call_extern(ctx: FunctionLowering, op: Operation) -> None:
    """`tt.extern_elementwise` in libdevice mode: a call of its symbol per register."""
    symbol = op.symbol.data
    _check(ctx, op, symbol)
    rty = llvm_type(op.result.type)
    regs = [ctx.get(v) for v in op.operands]
    ctx.set(op.result, ctx.zip_map(regs, lambda *xs: _call(ctx, symbol, rty, *xs)))
