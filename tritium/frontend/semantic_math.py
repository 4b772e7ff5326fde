"""Triton's elementwise math functions as TTIR (mixed into `Semantic`)."""

from __future__ import annotations

from xdsl.dialects import math as xmath

from tritium.frontend.core import tensor
from tritium.frontend.semantic_errors import SemanticError
from tritium.ir import tt


class MathOps:
    """`tl.exp`, `tl.sqrt`, ..., `tl.abs`, `tl.fma`, `tl.umulhi`."""

    # ------------------------------------------------------------------ math
    def unary_math(self, name: str, x, allowed=("fp32", "fp64", "fp16", "bf16")) -> tensor:
        x = self.to_tensor(x)
        if x.dtype.name not in allowed:
            raise SemanticError(f"tl.{name} expects one of {list(allowed)}, got {x.dtype}")
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
            return tensor(self.b.result(xmath.AbsFOp(x.handle)), x.type)
        if x.dtype.is_int_signed():
            return tensor(self.b.result(xmath.AbsIOp(x.handle)), x.type)
        if x.dtype.is_int():
            return x
        raise SemanticError(f"tl.abs does not take {x.dtype}")

    def fma(self, x, y, z) -> tensor:
        x, y = self.binary_operands(x, y)
        x, z = self.binary_operands(x, z)
        x, y = self.binary_operands(x, y)
        if not x.dtype.is_floating():
            raise SemanticError("tl.fma needs floating-point operands")
        return tensor(self.b.result(xmath.FmaOp(x.handle, y.handle, z.handle)), x.type)

    def umulhi(self, x, y) -> tensor:
        a, b = self._bitwise_operands(x, y)
        return tensor(self.b.result(tt.MulhiUIOp(a.handle, b.handle)), a.type)
