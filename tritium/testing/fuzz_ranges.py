"""Static value ranges for the fuzzer's generator: what values an expression of a random
kernel can take, by Triton's typing rules (`fuzz_ir.typeof`), so that the generator never
emits a float overflow, an integer division by zero, or a float-to-int cast out of range.
Integers may wrap (that is defined); their range is then the whole type.
"""

from __future__ import annotations

import math

from tritium.testing import fuzz_ir as ir
from tritium.testing.fuzz_ir import (
    BITS,
    FLOATS,
    INTS,
    BinOp,
    Cast,
    Compare,
    Lit,
    Name,
    Program,
    Reduce,
    Ty,
    Unary,
    Where,
    Zeros,
)

LIMIT = {"fp16": 2.0e4, "bf16": 1.0e30, "fp32": 1.0e30}  # largest magnitude a float value may reach
EXP_MAX = {"fp16": 8.0, "fp32": 60.0}


class Invalid(Exception):
    """An expression the generator must not emit (overflow, bad divisor, bad type)."""


# ------------------------------------------------------------------ static value ranges


def full_range(dtype: str) -> tuple[float, float]:
    if dtype == "i1":
        return 0, 1
    if dtype in INTS or dtype == "i8":  # int8: a dot's operands only
        return -(2 ** (BITS[dtype] - 1)), 2 ** (BITS[dtype] - 1) - 1
    return -LIMIT[dtype], LIMIT[dtype]


def fit(r: tuple, dtype: str) -> tuple:
    """Range `r` as a `dtype` value: integers wrap to the full range, floats must fit."""
    lo, hi = r
    if dtype in INTS or dtype == "i8":
        flo, fhi = full_range(dtype)
        return (lo, hi) if flo <= lo and hi <= fhi else (flo, fhi)
    if max(abs(lo), abs(hi)) > LIMIT[dtype]:
        raise Invalid(f"{dtype} overflow")
    return lo, hi


def _convert(r: tuple, src: str, dst: str) -> tuple:
    """Range of casting a value of range `r` from `src` to `dst`."""
    if src == dst:
        return r
    if dst == "i1":
        raise Invalid("cast to i1")
    if src == "i1" and dst == "i8":
        return r
    if src in FLOATS and dst in INTS:
        bound = 2.0 ** (BITS[dst] - 1) - 2**11
        if max(abs(r[0]), abs(r[1])) >= bound:
            raise Invalid("float out of the int range")
        return math.trunc(r[0]), math.trunc(r[1])
    return fit(r, dst)


class Ranges:
    """Static ranges of names, and of expressions built from them (Triton's rules)."""

    def __init__(self, types: dict, ranges: dict, program: Program):
        self.types, self.ranges, self.p = types, ranges, program

    def of(self, e) -> tuple:
        t = ir.typeof(e, self.types)
        if isinstance(e, Name):
            return self.ranges[e.id]
        if isinstance(e, Lit):
            return e.value, e.value
        if isinstance(e, Zeros):
            return 0, 0
        if isinstance(e, Cast):
            return _convert(self.of(e.a), ir.typeof(e.a, self.types).dtype, e.dtype)
        if isinstance(e, Unary):
            lo, hi = self.of(e.a)
            if t.dtype == "i1":
                raise Invalid("arithmetic on i1")
            if e.op == "neg":
                return fit((-hi, -lo), t.dtype)
            if e.op == "abs":
                m = max(abs(lo), abs(hi))
                return fit((0 if lo <= 0 <= hi else min(abs(lo), abs(hi)), m), t.dtype)
            if e.op == "exp":
                if hi > EXP_MAX[t.dtype]:
                    raise Invalid("exp overflow")
                return math.exp(lo), math.exp(hi)
            return 0, math.sqrt(max(abs(lo), abs(hi)))
        if isinstance(e, Reduce):
            src = ir.typeof(e.a, self.types)
            lo, hi = _convert(self.of(e.a), src.dtype, t.dtype)
            n = self.p.R if src.dims[e.axis] == "R" else self.p.C
            if src.dtype == "i1" and e.op != "sum":
                raise Invalid("max / min of i1")
            return fit((n * lo, n * hi), t.dtype) if e.op == "sum" else (lo, hi)
        if isinstance(e, Compare):
            self._operands(e, t)
            return 0, 1
        if isinstance(e, Where):
            self.of(e.c)
            ct = ir.computation_type(ir.typeof(e.a, self.types), ir.typeof(e.b, self.types), False)
            a, b = (self._as(x, ct) for x in (e.a, e.b))
            return min(a[0], b[0]), max(a[1], b[1])
        if isinstance(e, BinOp):
            return self._binop(e, t)
        if isinstance(e, ir.Dot):
            want = {"i8": "i8", "tf32": "fp32", "ieee": "fp32"}.get(e.kind, e.kind)
            a, b = (_convert(self.of(x), ir.typeof(x, self.types).dtype, want) for x in (e.a, e.b))
            m = self.p.C * max(abs(a[0]), abs(a[1])) * max(abs(b[0]), abs(b[1]))
            c = self.of(e.c) if e.c is not None else (0, 0)
            return fit((c[0] - m, c[1] + m), t.dtype)
        if isinstance(e, ir.Scan):
            lo, hi = self.of(e.a)
            if e.op == "cummax":
                return lo, hi
            n = self.p.R if ir.typeof(e.a, self.types).dims[e.axis] == "R" else self.p.C
            return fit((min(lo, n * lo), max(hi, n * hi)), t.dtype)
        if isinstance(e, ir.Shape):
            lo, hi = self.of(e.a)
            if e.b is not None:
                blo, bhi = self.of(e.b)
                lo, hi = min(lo, blo), max(hi, bhi)
            return lo, hi
        if isinstance(e, ir.Gather):
            self.of(e.b)
            return self.of(e.a)
        if isinstance(e, ir.Rand):
            self.of(e.b)
            return {"rand": (0.0, 1.0), "randn": (-7.0, 7.0), "randint": full_range("i32")}[e.op]
        raise TypeError(e)

    def _as(self, e, dtype: str) -> tuple:
        r = self.of(e)
        src = ir.typeof(e, self.types)
        return r if src.weak else _convert(r, src.dtype, dtype)

    def _operands(self, e, t: Ty):
        ta, tb = ir.operand_types(e, self.types)
        ct = ir.computation_type(ta, tb, e.op in ir.DIVMOD)
        if e.op == "/" and ct in INTS:
            ct = "fp32"
        if ct == "i1" and e.op not in ("&", "|", "^") + ir.COMPARE:
            raise Invalid("i1 arithmetic (i1 wraps; numpy's bools saturate)")
        return self._as(e.a, ct), self._as(e.b, ct), ct

    def _binop(self, e: BinOp, t: Ty) -> tuple:
        (alo, ahi), (blo, bhi), ct = self._operands(e, t)
        op = e.op
        if op in ("+", "-", "*"):
            if op == "+":
                c = (alo + blo, ahi + bhi)
            elif op == "-":
                c = (alo - bhi, ahi - blo)
            else:
                ps = [alo * blo, alo * bhi, ahi * blo, ahi * bhi]
                c = (min(ps), max(ps))
            return fit(c, ct)
        if op in ("min", "max"):
            f = min if op == "min" else max
            return f(alo, blo), f(ahi, bhi)
        if op == "/":
            if blo < 0.5 and bhi > -0.5:
                raise Invalid("divisor may be near zero")
            m = max(abs(alo), abs(ahi)) / min(abs(blo), abs(bhi))
            return fit((-m, m), ct)
        if op in ("//", "%"):
            if ct in INTS and blo < 1:
                raise Invalid("integer divisor must be positive")
            if ct in FLOATS and blo < 0.5:
                raise Invalid("float divisor must be >= 0.5")
            m = max(abs(alo), abs(ahi))
            if op == "//":
                return -m, m
            return (-bhi if alo < 0 else 0), (bhi if ahi > 0 else 0)
        if op in ("<<", ">>"):
            if op == ">>":
                return alo, ahi
            return fit((alo * 2**blo, ahi * 2**blo), ct)
        if alo >= 0 and blo >= 0:  # & | ^ of non-negative values
            top = 2 ** max(int(ahi).bit_length(), int(bhi).bit_length()) - 1
            return (0, min(ahi, bhi)) if op == "&" else (0, top)
        return full_range(ct)
