"""libm: accurate elementwise math as LLVM IR, without libdevice (tritium ships no
NVIDIA bitcode). The entry point is `emit(ctx, name, *registers)`; the table ROUTINES
says which routine computes each function for f32 and f64.

| module | functions |
|---|---|
| `core.py` | `Libm`: typed helpers (fma, Horner, bits, 2^k scaling, frexp); `widen` |
| `constants.py` | ln2, pi, ... to 45 digits, head/tail splits, the bits of 2/pi |
| `coefficients.py` | the fitted polynomials (scripts/fit_libm.py writes it) |
| `log_sin_cos_f32.py` | f32 log, log2, sin, cos (Cody-Waite / Payne-Hanek) |
| `exp.py` | exp, exp2, exp10, expm1 (f32, f64) |
| `log.py` | log, log2, log10, log1p (f64); log as a double-length value (pow) |
| `trig.py` | sin, cos, tan, sinpi, cospi (f64; Payne-Hanek above 2^26) |
| `inverse_trig.py` | atan, atan2, asin, acos (f64) |
| `hyperbolic.py` | tanh (f32, f64), sinh, cosh, asinh, acosh, atanh (f64) |
| `erf.py` | erf (f32, f64), erfc (f64) |
| `power.py` | pow, cbrt, hypot (f64) |
| `ieee.py` | fmod, remainder, ldexp, ilogb, logb, nextafter, fdim (f32, f64); norm (f64) |

Where the f32 entry is `None`, the f32 function is the f64 routine on the widened
argument, rounded once (`widen`): within 0.5 ulp + 2^-29 of the f64 routine's error, at
the cost of f64 arithmetic (fast on datacenter GPUs, 1/64 rate on consumer ones). Those
are the functions that are rarely hot. The accuracy of each function, measured against
mpmath / numpy, is in codegen/ARCHITECTURE.md ("Math") and checked by
tests/codegen/test_libm*.py (the same LLVM IR JIT-compiled for the host CPU).
"""

from __future__ import annotations

from llvmlite import ir

from tritium.codegen.lower.context import FunctionLowering
from tritium.codegen.lower.libm import (
    erf,
    exp,
    hyperbolic,
    ieee,
    inverse_trig,
    log,
    power,
    trig,
)
from tritium.codegen.lower.libm.core import Libm, widen
from tritium.codegen.lower.libm.log_sin_cos_f32 import log_f32, sin_cos_f32


def _typed(fn):
    """fn(m: Libm, *xs) as an emitter fn(ctx, *xs)."""
    return lambda ctx, *xs: fn(Libm(ctx, xs[0].type), *xs)


_BOTH = {
    "exp": exp.exp,
    "exp2": exp.exp2,
    "exp10": exp.exp10,
    "expm1": exp.expm1,
    "tanh": hyperbolic.tanh,
    "erf": erf.erf,
    "fmod": ieee.fmod,
    "remainder": ieee.remainder,
    "fdim": ieee.fdim,
    "nextafter": ieee.nextafter,
    "ldexp": ieee.ldexp,
    "ilogb": ieee.ilogb,
    "logb": ieee.logb,
}
_F64 = {
    "log": lambda m, x: log.log(m, x, "e"),
    "log2": lambda m, x: log.log(m, x, "2"),
    "log10": lambda m, x: log.log(m, x, "10"),
    "log1p": log.log1p,
    "sin": lambda m, x: trig.sin_cos(m, x, False),
    "cos": lambda m, x: trig.sin_cos(m, x, True),
    "tan": trig.tan,
    "asin": inverse_trig.asin,
    "acos": inverse_trig.acos,
    "atan": inverse_trig.atan,
    "atan2": inverse_trig.atan2,
    "sinh": hyperbolic.sinh,
    "cosh": hyperbolic.cosh,
    "asinh": hyperbolic.asinh,
    "acosh": hyperbolic.acosh,
    "atanh": hyperbolic.atanh,
    "erfc": erf.erfc,
    "pow": power.pow_,
    "cbrt": power.cbrt,
    "hypot": power.hypot,
    "norm": ieee.norm,
    "sinpi": lambda m, x: trig.sin_cos_pi(m, x, False),
    "cospi": lambda m, x: trig.sin_cos_pi(m, x, True),
}
_F32 = {
    "log": lambda ctx, x: log_f32(ctx, x, False),
    "log2": lambda ctx, x: log_f32(ctx, x, True),
    "sin": lambda ctx, x: sin_cos_f32(ctx, x, False),
    "cos": lambda ctx, x: sin_cos_f32(ctx, x, True),
}
# name -> (f32 emitter or None: the f64 one widened, f64 emitter)
ROUTINES = {name: (_typed(fn), _typed(fn)) for name, fn in _BOTH.items()}
ROUTINES |= {name: (_F32.get(name), _typed(fn)) for name, fn in _F64.items()}


def emit(ctx: FunctionLowering, name: str, *xs: ir.Value) -> ir.Value:
    """`name` (a ROUTINES key) of f32 or f64 registers."""
    f32_fn, f64_fn = ROUTINES[name]
    if isinstance(xs[0].type, ir.DoubleType):
        return f64_fn(ctx, *xs)
    if f32_fn is None:
        return widen(ctx, lambda *ws: f64_fn(ctx, *ws))(*xs)  # ints pass through
    return f32_fn(ctx, *xs)


__all__ = ["ROUTINES", "emit", "log_f32", "sin_cos_f32"]
