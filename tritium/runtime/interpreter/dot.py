"""The interpreter's `tt.dot`: `d = a @ b + c` with numpy.

    %d = tt.dot %a, %b, %c, inputPrecision = tf32 : tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>

Floats multiply and accumulate in float64, then round once to the result type (bf16
results to nearest-even bf16); `inputPrecision = tf32` with f32 inputs first rounds the
inputs to tf32 (10-bit mantissa), as the tensor cores do. Integer dots accumulate in
int64 and wrap to the result type.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import Float32Type, IntegerType

from tritium.ir.types import element_type
from tritium.runtime.interpreter import values as rep


def _round_tf32(x):
    """float32 -> float32 with a 10-bit mantissa, round to nearest even (NaN/inf kept)."""
    b = np.asarray(x, np.float32).view(np.uint32)
    r = (b + (np.uint32(0xFFF) + ((b >> 13) & np.uint32(1)))) & np.uint32(0xFFFFE000)
    finite = np.isfinite(np.asarray(x))
    return np.where(finite, r, b).view(np.float32)


def dot(op, fc):
    """Builder of the `tt.dot` closure (registered in ops.py's table)."""
    a, b, c, out = fc(op.a), fc(op.b), fc(op.c), fc(op.d)
    ea, er = element_type(op.a.type), element_type(op.d.type)
    tf32 = op.input_precision == "tf32" and isinstance(ea, Float32Type)
    rt, post = rep.np_dtype(er), rep.rounding_for(er)
    if isinstance(ea, IntegerType):

        def run(env, st):
            acc = np.matmul(env[a].astype(np.int64), env[b].astype(np.int64))
            env[out] = (acc + env[c].astype(np.int64)).astype(rt)

        return run

    def run(env, st):
        x, y = env[a], env[b]
        if tf32:
            x, y = _round_tf32(x), _round_tf32(y)
        acc = np.matmul(x.astype(np.float64), y.astype(np.float64)) + env[c]
        r = acc.astype(rt)
        env[out] = post(r) if post is not None else r

    return run


HANDLERS = {"tt.dot": dot}

__all__ = ["HANDLERS", "dot"]
