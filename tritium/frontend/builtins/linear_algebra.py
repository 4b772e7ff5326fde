"""`tl.dot(a, b, acc=None, input_precision=None, ...)`: a matrix product, as upstream.

    acc = tl.dot(a, b, acc)   ->  %acc = tt.dot %a, %b, %acc, inputPrecision = tf32
                                      : tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>

fp32 operands default to tf32 (upstream's default); `allow_tf32=False` or
`input_precision="ieee"` asks for full precision. The rules live in `semantic_memory.py`.
"""

from __future__ import annotations

from tritium.frontend import core
from tritium.frontend.builtins.base import builtin, dtype_arg
from tritium.frontend.core import unwrap
from tritium.frontend.semantic import SemanticError


@builtin
def dot(
    input,
    other,
    acc=None,
    input_precision=None,
    allow_tf32=None,
    max_num_imprecise_acc=None,
    out_dtype=core.float32,
    _semantic=None,
    _generator=None,
):
    a = _semantic.to_tensor(unwrap(input))
    b = _semantic.to_tensor(unwrap(other))
    precision = unwrap(input_precision)
    tf32 = unwrap(allow_tf32)
    if precision is not None and tf32 is not None:
        raise SemanticError("tl.dot: give input_precision or allow_tf32, not both")
    if precision is None:
        # Upstream's default for fp32 operands is tf32; allow_tf32=False asks for ieee.
        precision = "ieee" if tf32 is False else "tf32"
    acc = unwrap(acc)
    return _semantic.dot(
        a, b, acc, str(precision), unwrap(max_num_imprecise_acc), dtype_arg(out_dtype)
    )


__all__ = ["dot"]
