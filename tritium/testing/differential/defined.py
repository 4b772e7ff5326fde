"""The numpy model, refusing programs whose result the language leaves undefined.

    expected = DefinedModel(program).run(data)    # raises Undefined instead of guessing

The fuzzer's generator tracks value ranges so that its programs never divide an integer
by zero, overflow a float, shift by the width or more, or cast a float to an integer type
that cannot hold it. A shrunk program is no longer generated, so the shrinker asks this
model whether a candidate is still defined before it trusts a mismatch: two correct
implementations may differ on an undefined operation, and that is no bug. It also refuses
what the model does not model (arithmetic on i1, which numpy's bools saturate where
Triton's wrap; tl.max / tl.min of i1), as the generator's ranges do.
"""

from __future__ import annotations

import numpy as np

from tritium.testing import fuzz_ir as ir
from tritium.testing.fuzz_ir import BITS, FLOATS, INTS
from tritium.testing.fuzz_model import Model, Val


class Undefined(Exception):
    """The program does something whose result the language does not define."""


def _finite(v: Val, what: str) -> Val:
    if v.ty.dtype in FLOATS and not np.all(np.isfinite(v.v)):
        raise Undefined(f"{what} overflows {v.ty.dtype}")
    return v


class DefinedModel(Model):
    def binary(self, op: str, a: Val, b: Val, ty):
        if ty.dtype == "i1" and op not in ("&", "|", "^"):
            raise Undefined(f"{op} of i1 (the model does not model it)")
        if op in ("//", "%") and ty.dtype in INTS and np.any(b.v == 0):
            raise Undefined(f"integer {op} by zero")
        if op in ("<<", ">>") and np.any((b.v < 0) | (b.v >= BITS[ty.dtype])):
            raise Undefined(f"{op} by a negative amount or the width or more")
        return _finite(super().binary(op, a, b, ty), op)

    def unary(self, op: str, a: Val, ty):
        if ty.dtype == "i1":
            raise Undefined(f"{op} of i1 (the model does not model it)")
        return _finite(super().unary(op, a, ty), f"tl.{op}")

    def reduce(self, op: str, a: Val, axis: int, ty):
        if a.ty.dtype == "i1" and op != "sum":
            raise Undefined(f"tl.{op} of i1 (the model does not model it)")
        return _finite(super().reduce(op, a, axis, ty), f"tl.{op}")

    def newer(self, e, a, b, c, ty):
        if isinstance(e, ir.Gather):
            n = a.v.shape[e.axis] if a.v.ndim else 1
            if np.any((b.v < 0) | (b.v >= n)):
                raise Undefined("a tl.gather index out of range")
        if isinstance(e, ir.Dot) and e.kind == "fp16":
            for x in (a, b):
                if np.any(np.abs(x.v.astype(np.float64)) > 65504):
                    raise Undefined("a tl.dot operand does not fit fp16")
        return _finite(super().newer(e, a, b, c, ty), type(e).__name__)

    def cast(self, x: Val, dtype: str) -> Val:
        src = x.ty.dtype
        if src in FLOATS and dtype in INTS and dtype != "i1":
            t = np.trunc(x.v.astype(np.float64))
            lim = 2.0 ** (BITS[dtype] - 1)
            if np.any((t < -lim) | (t >= lim)):
                raise Undefined(f"a {src} value does not fit {dtype}")
        return _finite(super().cast(x, dtype), f"a cast to {dtype}")
