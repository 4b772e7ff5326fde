"""The elementwise builtins: `tl.where`, `maximum`, `minimum`, `clamp`, the math functions
(`exp`, `log`, `sqrt`, ...), `abs`, `fdiv`, `div_rn`, `fma`, `umulhi`.

    y = tl.where(x > 0, x, 0.0)     ->  %y = arith.select %c, %x, %zero : tensor<128xi1>, tensor<128xf32>
    e = tl.exp(x)                   ->  %e = math.exp %x : tensor<128xf32>

Operands broadcast and promote as for Python operators (`semantic.py`), except that
`maximum` / `minimum` / `clamp` make a number operand a tensor of its own type first, as
upstream (`tl.maximum(x_f16, 0.0)` is fp32); the math functions take floats only
(`semantic_math.py`).
"""

from __future__ import annotations

from tritium.frontend.builtins.base import builtin
from tritium.frontend.core import float32, unwrap


@builtin
def where(condition, x, y, _semantic=None, _generator=None):
    return _semantic.where(unwrap(condition), unwrap(x), unwrap(y))


def _minmax_operand(x, _semantic):
    """As upstream's `maximum` / `minimum` / `clamp`: every operand is made a tensor first
    (so a number takes its own type: `tl.maximum(x_f16, 0.0)` is fp32, `tl.maximum(x_i8, 1)`
    int32), and bf16 computes in fp32 (no bf16 min/max in hardware)."""
    x = _semantic.to_tensor(unwrap(x))
    return _semantic.cast(x, float32) if x.dtype.is_bf16() else x


@builtin
def maximum(x, y, propagate_nan=None, _semantic=None, _generator=None):
    x, y = _minmax_operand(x, _semantic), _minmax_operand(y, _semantic)
    return _semantic.maximum(x, y, _propagate(propagate_nan))


@builtin
def minimum(x, y, propagate_nan=None, _semantic=None, _generator=None):
    x, y = _minmax_operand(x, _semantic), _minmax_operand(y, _semantic)
    return _semantic.minimum(x, y, _propagate(propagate_nan))


@builtin
def logical_and(x, other, _semantic=None, _generator=None):
    """`x.logical_and(y)`: a tensor member in upstream (no `tl.logical_and`); both made
    i1 (nonzero), then and-ed (torch inductor's bucketize helper calls it)."""
    return _semantic.logical_and(unwrap(x), unwrap(other))


@builtin
def logical_or(x, other, _semantic=None, _generator=None):
    """`x.logical_or(y)`: as `logical_and`, or-ed."""
    return _semantic.logical_or(unwrap(x), unwrap(other))


def _propagate(p) -> bool:
    p = unwrap(p)
    return p is not None and str(p).upper().endswith("ALL")


@builtin
def clamp(x, min, max, propagate_nan=None, _semantic=None, _generator=None):  # noqa: F811
    x, lo, hi = (_minmax_operand(v, _semantic) for v in (x, min, max))
    return _semantic.minimum(
        _semantic.maximum(x, lo, _propagate(propagate_nan)), hi, _propagate(propagate_nan)
    )


def _math1(name: str, allowed=("fp32", "fp64", "fp16", "bf16")):
    def fn(x, _semantic=None, _generator=None):
        return _semantic.unary_math(name, unwrap(x), allowed)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} (upstream's `tl.{name}`)."
    return builtin(fn)


exp = _math1("exp")
exp2 = _math1("exp2")
log = _math1("log")
log2 = _math1("log2")
sqrt = _math1("sqrt")
sqrt_rn = _math1("sqrt_rn", ("fp32", "fp64"))
rsqrt = _math1("rsqrt")
sin = _math1("sin")
cos = _math1("cos")
erf = _math1("erf")
floor = _math1("floor")
ceil = _math1("ceil")
tanh = _math1("tanh")


@builtin
def abs(x, _semantic=None, _generator=None):
    return _semantic.abs(unwrap(x))


@builtin
def fdiv(x, y, ieee_rounding=False, _semantic=None, _generator=None):
    return _semantic.fdiv(unwrap(x), unwrap(y), bool(unwrap(ieee_rounding)))


@builtin
def div_rn(x, y, _semantic=None, _generator=None):
    return _semantic.fdiv(unwrap(x), unwrap(y), True)


@builtin
def fma(x, y, z, _semantic=None, _generator=None):
    return _semantic.fma(unwrap(x), unwrap(y), unwrap(z))


@builtin
def umulhi(x, y, _semantic=None, _generator=None):
    return _semantic.umulhi(unwrap(x), unwrap(y))


__all__ = [
    "abs",
    "ceil",
    "clamp",
    "cos",
    "div_rn",
    "erf",
    "exp",
    "exp2",
    "fdiv",
    "floor",
    "fma",
    "log",
    "log2",
    "maximum",
    "minimum",
    "rsqrt",
    "sin",
    "sqrt",
    "sqrt_rn",
    "tanh",
    "umulhi",
    "where",
]
