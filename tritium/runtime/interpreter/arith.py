"""Elementwise semantics for the interpreter: `arith.*` and `math.*` on numpy values
(value representation: `values.py`).

Integer ops wrap at the type's width (numpy does, for same-dtype operands); unsigned ops
view the bits as uint; `divsi`/`remsi` truncate toward zero as C and PTX do; division by
zero gives what the GPU's division gives (PTX leaves it unspecified; measured on an H100):
x / 0 is all ones (-1 signed; 2**32 - 1 for 64-bit x in [0, 2**32), which LLVM divides
in 32 bits), x % 0 is x. bf16 is
computed in float32 and rounded to nearest-even bf16 after every op. Float-to-int casts
saturate and send NaN to 0 (PTX `cvt.rzi`). Shifts by >= the width give 0 (or the sign,
for `shrsi`), as PTX's clamped shifts do.

Each handler here is a *builder*: `build(op, slot) -> run(env, st)`, called once per op
when a function is compiled; `run` does the work on every execution.
"""

from __future__ import annotations

import math

import numpy as np

from tritium.errors import NotSupportedError
from tritium.ir.locations import op_source_loc
from tritium.ir.types import PointerType, element_type
from tritium.runtime.interpreter.values import (
    INT_DTYPES,
    constant_value,
    float_cast,
    from_bits,
    int_width,
    np_dtype,
    rounding_for,
    to_bits,
)
from tritium.runtime.libdevice import SYMBOLS as LIBDEVICE

# ------------------------------------------------------------------ builders


def elementwise(make):
    """Builder for an op with N operands and one result, from `make(op) -> fn(*values)`."""

    def build(op, slot):
        fn = make(op)
        post = rounding_for(op.results[0].type)
        if post is not None:
            inner = fn

            def fn(*xs):
                return post(inner(*xs))

        out = slot(op.results[0])
        ins = [slot(v) for v in op.operands]
        if len(ins) == 1:
            (a,) = ins

            def run(env, st):
                env[out] = fn(env[a])
        elif len(ins) == 2:
            a, b = ins

            def run(env, st):
                env[out] = fn(env[a], env[b])
        else:

            def run(env, st):
                env[out] = fn(*[env[i] for i in ins])

        return run

    return build


def _simple(fn):
    return elementwise(lambda op: fn)


class _Ints:
    """Signed / unsigned views of an integer width (i1: 0/-1 signed, 0/1 unsigned)."""

    def __init__(self, elem):
        self.w = w = int_width(elem)
        self.S = np.dtype(np.int8) if w == 1 else INT_DTYPES[w]
        self.U = np.dtype(f"uint{max(w, 8)}")

    def s(self, x):
        return -(np.asarray(x).astype(np.int8))[()] if self.w == 1 else x

    def u(self, x):
        return np.asarray(x).astype(np.uint8)[()] if self.w == 1 else x.view(self.U)

    def back(self, y):
        """Signed or unsigned result bits -> the representation dtype."""
        if self.w == 1:
            return (np.asarray(y) & 1).astype(bool)[()]
        return np.asarray(y).astype(self.U, copy=False).view(self.S)[()]


def _int_op(signed_fn=None, unsigned_fn=None):
    """Integer binary op computed on the signed or the unsigned view."""

    def make(op):
        k = _Ints(element_type(op.operands[0].type))
        if signed_fn is not None:
            if k.w == 1:
                return lambda a, b: k.back(signed_fn(k.s(a), k.s(b)))
            return signed_fn
        return lambda a, b: k.back(unsigned_fn(k.u(a), k.u(b)))

    return elementwise(make)


def _by_zero(a, dtype):
    """x // 0 as the GPU computes it: all ones; but LLVM divides 64-bit operands that both
    fit in 32 unsigned bits with a 32-bit division, whose all ones are 2**32 - 1."""
    ones = np.asarray(-1).astype(dtype)
    if dtype.itemsize < 8:
        return ones
    small = (np.asarray(a).view(np.uint64) >> np.uint64(32)) == 0
    return np.where(small, np.asarray(0xFFFFFFFF).astype(dtype), ones)


def _divsi(a, b):
    """C division (toward zero); by zero as the GPU (`_by_zero`); MIN / -1 wraps to MIN."""
    q = (a - np.fmod(a, b)) // np.where(b == 0, 1, b)
    return np.where(b == 0, _by_zero(a, q.dtype), q)[()]


def _remsi(a, b):
    """C remainder (the sign of the dividend); by zero the GPU gives the dividend."""
    return np.where(b == 0, a, np.fmod(a, np.where(b == 0, 1, b)))[()]


def _divui(a, b):
    """Unsigned division; by zero as the GPU (`_by_zero`)."""
    q = a // np.where(b == 0, 1, b)
    return np.where(b == 0, _by_zero(a, q.dtype), q).astype(q.dtype)[()]


def _remui(a, b):
    """Unsigned remainder; by zero the GPU gives the dividend."""
    return np.where(b == 0, a, a % np.where(b == 0, 1, b))[()]


def _ceildivsi(a, b):
    r = np.fmod(a, b)
    q = (a - r) // b
    return q + ((r != 0) & ((r > 0) == (b > 0))).astype(q.dtype)


def _ceildivui(a, b):
    q = a // b
    return q + (a % b != 0).astype(q.dtype)


def _shift(kind):
    def make(op):
        k = _Ints(element_type(op.operands[0].type))
        w = k.w

        def fn(a, b):
            amt = k.u(b)
            big = amt >= w
            sh = np.where(big, 0, amt).astype(k.S if kind != "shrui" else k.U)
            if kind == "shli":
                return k.back(np.where(big, 0, np.left_shift(k.s(a), sh.astype(k.S))))
            if kind == "shrsi":
                x = k.s(a)
                return k.back(np.right_shift(x, np.where(big, w - 1, sh).astype(k.S)))
            return k.back(np.where(big, 0, np.right_shift(k.u(a), sh)))

        return fn

    return elementwise(make)


def _mulhiui(op):
    k = _Ints(element_type(op.operands[0].type))
    if k.w < 64:
        wide = np.dtype(np.uint64)

        def fn(a, b):
            p = k.u(a).astype(wide) * k.u(b).astype(wide)
            return k.back(p >> np.uint64(k.w))

        return fn

    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)

    def fn64(a, b):
        a, b = k.u(a), k.u(b)
        al, ah, bl, bh = a & m32, a >> s32, b & m32, b >> s32
        t = al * bl
        w1 = ah * bl + (t >> s32)
        w2 = al * bh + (w1 & m32)
        return k.back(ah * bh + (w1 >> s32) + (w2 >> s32))

    return fn64


_CMPI = {
    "eq": (np.equal, False), "ne": (np.not_equal, False),
    "slt": (np.less, False), "sle": (np.less_equal, False),
    "sgt": (np.greater, False), "sge": (np.greater_equal, False),
    "ult": (np.less, True), "ule": (np.less_equal, True),
    "ugt": (np.greater, True), "uge": (np.greater_equal, True),
}  # fmt: skip


def _cmpi(op):
    fn, unsigned = _CMPI[op.predicate_name]
    elem = element_type(op.lhs.type)
    if isinstance(elem, PointerType):
        return (lambda a, b: fn(a.view(np.uint64), b.view(np.uint64))) if unsigned else fn
    k = _Ints(elem)
    if unsigned:
        return lambda a, b: fn(k.u(a), k.u(b))
    if k.w == 1:
        return lambda a, b: fn(k.s(a), k.s(b))
    return fn


def _isnan2(a, b):
    return np.isnan(a) | np.isnan(b)


_CMPF = {
    "oeq": np.equal, "ogt": np.greater, "oge": np.greater_equal,
    "olt": np.less, "ole": np.less_equal,
    "one": lambda a, b: np.less(a, b) | np.greater(a, b),
    "ord": lambda a, b: ~_isnan2(a, b),
    "ueq": lambda a, b: np.equal(a, b) | _isnan2(a, b),
    "ugt": lambda a, b: ~np.less_equal(a, b), "uge": lambda a, b: ~np.less(a, b),
    "ult": lambda a, b: ~np.greater_equal(a, b), "ule": lambda a, b: ~np.greater(a, b),
    "une": np.not_equal, "uno": _isnan2,
}  # fmt: skip


def _cmpf(op):
    pred = op.predicate_name
    if pred in ("false", "true"):
        value = pred == "true"
        return lambda a, b: np.full(np.shape(a), value)[()]
    return _CMPF[pred]


def _select(op, slot):
    c, a, b, out = slot(op.cond), slot(op.lhs), slot(op.rhs), slot(op.result)

    def run(env, st):
        cond = env[c]
        if cond.__class__ is np.bool_:  # a scalar condition picks a whole value
            env[out] = env[a] if cond else env[b]
        else:  # elementwise (also a scalar-typed select inside a tt.reduce region)
            env[out] = np.where(cond, env[a], env[b])[()]

    return run


def _constant(op, slot):
    value = constant_value(op.value, op.result.type)
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    out = slot(op.result)

    def run(env, st):
        env[out] = value

    return run


# ------------------------------------------------------------------ casts


def _src_dst(op):
    return element_type(op.operands[0].type), element_type(op.results[0].type)


def _extsi(op):
    src, dst = _src_dst(op)
    k, dt = _Ints(src), np_dtype(dst)
    return lambda x: np.asarray(k.s(x)).astype(dt)[()]


def _extui(op):
    src, dst = _src_dst(op)
    k, d = _Ints(src), _Ints(dst)
    return lambda x: d.back(np.asarray(k.u(x)).astype(d.U))


def _trunci(op):
    src, dst = _src_dst(op)
    k, d = _Ints(src), _Ints(dst)
    return lambda x: d.back(np.asarray(k.u(x)).astype(d.U))


def _itofp(signed):
    def make(op):
        src, dst = _src_dst(op)
        k, dt = _Ints(src), np_dtype(dst)
        view = k.s if signed else k.u
        return lambda x: np.asarray(view(x)).astype(dt)[()]

    return make


def _fptoi(signed):
    def make(op):
        dst = element_type(op.result.type)
        k = _Ints(dst)
        w = k.w
        lo, hi = (-(2 ** (w - 1)), 2 ** (w - 1) - 1) if signed else (0, 2**w - 1)
        wide = np.dtype(np.uint64) if (w == 64 and not signed) else np.dtype(np.int64)
        lo_v, hi_v = wide.type(lo), wide.type(hi)

        def fn(x):
            t = np.trunc(np.asarray(x, np.float64))
            t = np.where(np.isnan(t), 0.0, t)
            big, small = t >= float(hi) + 1, t < float(lo)
            r = np.where(big | small, 0.0, t).astype(wide)
            r = np.where(big, hi_v, np.where(small, lo_v, r))
            return k.back(r.astype(k.U if not signed else k.S).view(k.U))

        return fn

    return make


def _extf_truncf(op):
    src, dst = _src_dst(op)
    return float_cast(src, dst)


def _bitcast(op):
    src, dst = _src_dst(op)
    if isinstance(src, PointerType) or isinstance(dst, PointerType):
        return lambda x: x
    return lambda x: from_bits(to_bits(x, src), dst)


def _index_cast(op):
    src, dst = _src_dst(op)
    k, dt = _Ints(src), np_dtype(dst)
    d = _Ints(dst)
    return lambda x: d.back(np.asarray(k.s(x)).astype(np.int64).astype(dt).view(d.U))


# ------------------------------------------------------------------ math


def _round_away(x):
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t).astype(np.asarray(x).dtype)[()]


_ERF = np.frompyfunc(math.erf, 1, 1)


def _erf(x):
    x = np.asarray(x)
    return np.asarray(_ERF(x.astype(np.float64)), np.float64).astype(x.dtype)[()]


def _fma(a, b, c):
    a = np.asarray(a)
    if a.dtype == np.float64:
        return a * b + c
    return (a.astype(np.float64) * b + c).astype(a.dtype)[()]


def _fpowi(op):
    return lambda x, n: np.power(x, np.asarray(n).astype(np.asarray(x).dtype))


def _int_unary(fn):
    def make(op):
        k = _Ints(element_type(op.operands[0].type))
        return lambda x: fn(x, k)

    return elementwise(make)


def _ctlz(x, k):
    u = np.asarray(k.u(x)).copy()
    s = 1
    while s < k.w:
        u |= u >> k.U.type(s)
        s *= 2
    return k.back(k.w - np.bitwise_count(u).astype(k.U))


def _cttz(x, k):
    u = np.asarray(k.u(x))
    low = u & (~u + k.U.type(1))
    return k.back(np.bitwise_count(low - k.U.type(1)).astype(k.U) if k.w > 1 else 1 - u)


_UNARY_F = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt,
    "rsqrt": lambda x: np.reciprocal(np.sqrt(x)), "absf": np.abs, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "roundeven": np.rint, "round": _round_away, "cbrt": np.cbrt,
    "erf": _erf,
}  # fmt: skip

_BINARY_F = {
    "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply,
    "arith.divf": np.divide, "arith.remf": np.fmod, "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin,
    "arith.maximumf": np.maximum, "arith.minimumf": np.minimum, "math.powf": np.power,
    "math.atan2": np.arctan2, "math.copysign": np.copysign,
    "tt.precise_divf": np.divide,
}  # fmt: skip


HANDLERS = {
    "arith.constant": _constant,
    "arith.select": _select,
    "arith.addi": _int_op(np.add),
    "arith.subi": _int_op(np.subtract),
    "arith.muli": _int_op(np.multiply),
    "arith.divsi": _int_op(_divsi),
    "arith.remsi": _int_op(_remsi),
    "arith.floordivsi": _int_op(np.floor_divide),
    "arith.ceildivsi": _int_op(_ceildivsi),
    "arith.divui": _int_op(unsigned_fn=_divui),
    "arith.remui": _int_op(unsigned_fn=_remui),
    "arith.ceildivui": _int_op(unsigned_fn=_ceildivui),
    "arith.maxsi": _int_op(np.maximum),
    "arith.minsi": _int_op(np.minimum),
    "arith.maxui": _int_op(unsigned_fn=np.maximum),
    "arith.minui": _int_op(unsigned_fn=np.minimum),
    "arith.andi": _simple(np.bitwise_and),
    "arith.ori": _simple(np.bitwise_or),
    "arith.xori": _simple(np.bitwise_xor),
    "arith.shli": _shift("shli"),
    "arith.shrui": _shift("shrui"),
    "arith.shrsi": _shift("shrsi"),
    "arith.cmpi": elementwise(_cmpi),
    "arith.cmpf": elementwise(_cmpf),
    "arith.negf": _simple(np.negative),
    "arith.extsi": elementwise(_extsi),
    "arith.extui": elementwise(_extui),
    "arith.trunci": elementwise(_trunci),
    "arith.sitofp": elementwise(_itofp(True)),
    "arith.uitofp": elementwise(_itofp(False)),
    "arith.fptosi": elementwise(_fptoi(True)),
    "arith.fptoui": elementwise(_fptoi(False)),
    "arith.extf": elementwise(_extf_truncf),
    "arith.truncf": elementwise(_extf_truncf),
    "arith.bitcast": elementwise(_bitcast),
    "arith.index_cast": elementwise(_index_cast),
    "tt.bitcast": elementwise(_bitcast),
    "tt.mulhiui": elementwise(_mulhiui),
    "tt.precise_sqrt": _simple(np.sqrt),
    "math.fma": _simple(_fma),
    "math.fpowi": elementwise(_fpowi),
    "math.absi": _int_unary(lambda x, k: np.abs(x) if k.w > 1 else x),
    "math.ctpop": _int_unary(lambda x, k: k.back(np.bitwise_count(k.u(x)).astype(k.U))),
    "math.ctlz": _int_unary(_ctlz),
    "math.cttz": _int_unary(_cttz),
}
HANDLERS |= {name: _simple(fn) for name, fn in _BINARY_F.items()}
def _libdevice(op):
    fn = LIBDEVICE.get(op.symbol.data)
    if fn is None:  # (y0, y1, yn, rcp64h: runtime/libdevice_special.py)
        raise NotSupportedError(
            f"the interpreter has no routine for libdevice's {op.symbol.data} (on the GPU: "
            "TRITIUM_LIBDEVICE=auto calls NVIDIA's)",
            op_source_loc(op),
        )
    return fn


HANDLERS["tt.extern_elementwise"] = elementwise(_libdevice)
HANDLERS |= {f"math.{name}": _simple(fn) for name, fn in _UNARY_F.items()}
