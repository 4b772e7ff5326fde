"""Triton's elementwise math functions as TTIR (mixed into `Semantic`)."""

from __future__ import annotations

from tritium.frontend import core
from tritium.frontend.core import tensor
from tritium.frontend.semantic_errors import SemanticError
from tritium.ir import tt


def _xmath():
    """xDSL's `math` dialect, loaded by the first kernel that calls a math function."""
    from xdsl.dialects import math

    return math


class MathOps:
    """`tl.exp`, `tl.sqrt`, ..., `tl.abs`, `tl.fma`, `tl.umulhi`."""

    # ------------------------------------------------------------------ math
    def unary_math(self, name: str, x, allowed=("fp32", "fp64", "fp16", "bf16")) -> tensor:
        x = self.to_tensor(x)
        if x.dtype.name not in allowed:
            raise SemanticError(f"tl.{name} expects one of {list(allowed)}, got {x.dtype}")
        xmath = _xmath()
        ops = {
            "exp": xmath.ExpOp,
            "exp2": xmath.Exp2Op,
            "log": xmath.LogOp,
            "log2": xmath.Log2Op,
            "sqrt": xmath.SqrtOp,
            "rsqrt": xmath.RsqrtOp,
            "sin": xmath.SinOp,
            "cos": xmath.CosOp,
            "tanh": xmath.TanhOp,
            "erf": xmath.ErfOp,
            "floor": xmath.FloorOp,
            "ceil": xmath.CeilOp,
        }
        if name == "sqrt_rn":
            return tensor(self.b.result(tt.PreciseSqrtOp(x.handle)), x.type)
        return tensor(self.b.result(ops[name](x.handle)), x.type)

    def abs(self, x) -> tensor:
        x = self.to_tensor(x)
        if x.dtype.is_floating():
            return tensor(self.b.result(_xmath().AbsFOp(x.handle)), x.type)
        if x.dtype.is_int_signed():
            return tensor(self.b.result(_xmath().AbsIOp(x.handle)), x.type)
        if x.dtype.is_int():
            return x
        raise SemanticError(f"tl.abs does not take {x.dtype}")

    def fma(self, x, y, z) -> tensor:
        x, y = self.binary_operands(x, y)
        x, z = self.binary_operands(x, z)
        x, y = self.binary_operands(x, y)
        if not x.dtype.is_floating():
            raise SemanticError("tl.fma needs floating-point operands")
        return tensor(self.b.result(_xmath().FmaOp(x.handle, y.handle, z.handle)), x.type)

    def extern_elementwise(self, name: str, args: list, sigs: dict) -> tensor:
        """`tt.extern_elementwise` for the libdevice function `name`; `sigs` maps argument
        dtype names to (symbol, result dtype name). Broadcast, then an exact dtype match,
        else float arguments promoted to the widest float among them (fp16 / bf16 computed
        in fp32, the float result rounded back)."""
        ts = [self.to_tensor(a) for a in args]
        shape = ()
        for t in ts:
            shape = self.broadcast_shapes(shape, t.shape)
        ts = [self.broadcast_to(t, shape) if shape else t for t in ts]
        key = given = tuple(t.dtype.name for t in ts)
        low = None
        if key not in sigs:
            floats = [t.dtype for t in ts if t.dtype.is_floating()]
            wide = core.float64 if any(d.name == "fp64" for d in floats) else core.float32
            if floats and all(d.name in ("fp16", "bf16") for d in floats) and len(set(floats)) == 1:
                low = floats[0]
            ts = [self.cast(t, wide) if t.dtype.is_floating() else t for t in ts]
            key = tuple(t.dtype.name for t in ts)
        if key not in sigs:
            want = " or ".join(f"({', '.join(k)})" for k in sigs)
            raise SemanticError(
                f"libdevice.{name} takes {want}; got ({', '.join(given)})"
            )
        symbol, ret = sigs[key]
        rty = core.dtype(ret)
        res_ty = core.block_type(rty, shape) if shape else rty
        op = tt.ExternElementwiseOp([t.handle for t in ts], res_ty.to_ir(), symbol)
        out = tensor(self.b.result(op), res_ty)
        if low is not None and rty.is_floating():
            out = self.cast(out, low)
        return out

    def umulhi(self, x, y) -> tensor:
        a, b = self._bitwise_operands(x, y)
        return tensor(self.b.result(tt.MulhiUIOp(a.handle, b.handle)), a.type)
