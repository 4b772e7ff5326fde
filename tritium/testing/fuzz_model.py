"""A numpy model of a random kernel (`fuzz_ir.Program`), written from Triton's semantics.

This is not the interpreter: it evaluates the program form directly, one program id at a
time, with numpy in each value's own dtype (so fp16 and fp32 round after every operation
as IEEE arithmetic does), integers wrapping at their width, `//` and `%` truncating toward
zero as C does, float `%` as C's fmod, casts from float to int truncating, and `tl.where`,
comparisons and reductions as Triton defines them.

Next to every value it carries an error bound `err` (float64, same shape): how far a
correct implementation may be from the model's value.
  * Exact operations on exact inputs give err = 0: the result must match bit for bit.
  * Reductions may sum in any order: err = (n - 1) * u * sum(|x|) plus the model's own
    rounding (u = the unit roundoff of the dtype).
  * Transcendentals (`tl.exp`) get an ulp of slack; on a GPU (`fuzzy=True`) every add /
    sub / mul gets u * (|a| + |b|) (fma contraction), `/`, `exp`, `sqrt` a few ulps
    (approximate instructions), and every float result the smallest normal (subnormals
    may be flushed to zero; `sqrt.approx.ftz` reads a subnormal input as 0).
  * Inexact inputs propagate by first-order bounds (|a| e_b + |b| e_a for `*`, ...).
    Where a comparison's operands are within their errors the boolean may flip (err 1);
    `where` then takes |a - b|. Float-to-int truncation of an inexact value may move by
    floor(err) + 1. Bitwise ops of inexact integers, or integers that may wrap, are
    unknown (err = inf) and not compared.
"""

from __future__ import annotations

import numpy as np

from tritium.testing import fuzz_ir as ir
from tritium.testing import fuzz_random
from tritium.testing.fuzz_ir import BITS, FLOATS, INTS, NP_DTYPE, Ty

UNIT = {"fp16": 2.0**-11, "fp32": 2.0**-24}
TINY = {"fp16": 2.0**-14, "fp32": 2.0**-126}  # smallest normals: a GPU may flush below them


class Val:
    """A value of the model: numpy array `v` in its dtype, error bound `e` (float64)."""

    __slots__ = ("v", "e", "ty")

    def __init__(self, v, e, ty: Ty):
        self.v = np.asarray(v, dtype=NP_DTYPE[ty.dtype])
        self.e = np.broadcast_to(np.asarray(e, dtype=np.float64), self.v.shape).copy()
        self.ty = ty


def _f64(x) -> np.ndarray:
    return np.asarray(x).astype(np.float64)


def _ulp(v: np.ndarray, dtype: str) -> np.ndarray:
    return np.spacing(np.abs(v).astype(NP_DTYPE[dtype])).astype(np.float64)


def _bf16(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (to nearest, ties to even), as float64."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def _layout(x: Val, dims: tuple) -> tuple[np.ndarray, np.ndarray]:
    """x's arrays reshaped to broadcast against a value of `dims`."""
    if len(dims) == 2 and len(x.ty.dims) == 1:
        shape = (-1, 1) if x.ty.dims == ("R",) else (1, -1)
        return x.v.reshape(shape), x.e.reshape(shape)
    return x.v, x.e


class Model:
    """Evaluates a Program for one launch; `fuzzy` widens bounds for GPU arithmetic."""

    def __init__(self, program: ir.Program, fuzzy: bool = False, exact_randn: bool = False):
        self.p = program
        self.fuzzy = fuzzy
        self.exact_randn = exact_randn  # both sides run the same libm (libdevice)

    # ------------------------------------------------------------------ casts
    def cast(self, x: Val, dtype: str) -> Val:
        src = x.ty.dtype
        ty = Ty(dtype, x.ty.dims)
        if src == dtype:
            return Val(x.v, x.e, ty)
        e = x.e
        with np.errstate(all="ignore"):
            if dtype in FLOATS:
                v = x.v.astype(NP_DTYPE[dtype])  # round to nearest even (ints and floats)
                e = np.where(e > 0, e + _ulp(v, dtype), e)  # same rounding (RN) on both sides
            elif src in FLOATS:  # truncation toward zero
                v = np.trunc(x.v.astype(np.float64)).astype(NP_DTYPE[dtype])
                e = np.where(e > 0, np.floor(e) + 1, 0.0)
            elif src == "i1":
                v = x.v.astype(NP_DTYPE[dtype])  # zero-extended: True is 1
            else:
                v = x.v.astype(NP_DTYPE[dtype])  # wraps when narrowing
                if BITS[dtype] < BITS[src]:
                    e = np.where(
                        (e > 0) & (np.abs(_f64(x.v)) + e >= 2.0 ** (BITS[dtype] - 1)), np.inf, e
                    )
        return Val(v, e, ty)

    def literal(self, value, dtype: str) -> Val:
        return Val(np.asarray(value).astype(NP_DTYPE[dtype]), 0.0, Ty(dtype, ()))

    def operand(self, x: Val | object, dtype: str) -> Val:
        return self.cast(x, dtype) if isinstance(x, Val) else self.literal(x, dtype)

    # ------------------------------------------------------------------ expressions
    def eval(self, e, env: dict):
        """A Val, or a Python number for a literal (literals are typed by their use)."""
        if isinstance(e, ir.Name):
            return env[e.id]
        if isinstance(e, ir.Lit):
            return e.value
        tenv = {
            k: (v.ty if isinstance(v, Val) else ir.Ty(ir.literal_dtype(v), (), True))
            for k, v in env.items()
        }
        ty = ir.typeof(e, tenv)
        if isinstance(e, ir.Zeros):
            return Val(np.zeros(self.shape(e.dims), NP_DTYPE[e.dtype]), 0.0, ty)
        if isinstance(e, ir.Cast):
            return self.cast(self.as_val(self.eval(e.a, env), e.a, tenv), e.dtype)
        if isinstance(e, ir.Unary):
            return self.unary(e.op, self.as_val(self.eval(e.a, env), e.a, tenv), ty)
        if isinstance(e, ir.Reduce):
            return self.reduce(e.op, self.as_val(self.eval(e.a, env), e.a, tenv), e.axis, ty)
        if isinstance(e, ir.Dot | ir.Scan | ir.Shape | ir.Gather | ir.Rand):
            args = [self.as_val(self.eval(x, env), x, tenv) if x is not None else None
                    for x in (e.a, getattr(e, "b", None), getattr(e, "c", None))]  # fmt: skip
            return self.newer(e, *args, ty)
        if isinstance(e, ir.Where):
            ta, tb = ir.typeof(e.a, tenv), ir.typeof(e.b, tenv)
            ct = ir.computation_type(ta, tb, False)
            c = self.cast(self.as_val(self.eval(e.c, env), e.c, tenv), "i1")
            a = self.operand(self.eval(e.a, env), ct)
            b = self.operand(self.eval(e.b, env), ct)
            return self.where(c, a, b, ty)
        if isinstance(e, ir.BinOp | ir.Compare):
            ta, tb = ir.operand_types(e, tenv)
            ct = ir.computation_type(ta, tb, e.op in ir.DIVMOD)
            if e.op == "/" and ct in INTS:
                ct = "fp32"
            a = self.operand(self.eval(e.a, env), ct)
            b = self.operand(self.eval(e.b, env), ct)
            if isinstance(e, ir.Compare):
                return self.compare(e.op, a, b, ty)
            return self.binary(e.op, a, b, ty)
        raise TypeError(f"not an expression: {e!r}")

    def as_val(self, x, e, tenv) -> Val:
        if isinstance(x, Val):
            return x
        return self.literal(x, ir.literal_dtype(x))

    def shape(self, dims: tuple) -> tuple:
        return tuple(self.p.R if d == "R" else self.p.C for d in dims)

    # ------------------------------------------------------------------ operations
    def binary(self, op: str, a: Val, b: Val, ty: Ty) -> Val:
        av, ae = _layout(a, ty.dims)
        bv, be = _layout(b, ty.dims)
        dt = ty.dtype
        is_float = dt in FLOATS
        with np.errstate(all="ignore"):
            if op in ("+", "-", "*"):
                v = {"+": np.add, "-": np.subtract, "*": np.multiply}[op](av, bv)
                if op == "*":
                    e = np.abs(_f64(av)) * be + np.abs(_f64(bv)) * ae + ae * be
                else:
                    e = ae + be
                if is_float:
                    e = np.where(e > 0, e + _ulp(v, dt), e)
                    if self.fuzzy:
                        e = e + UNIT[dt] * (np.abs(_f64(av)) + np.abs(_f64(bv)) + np.abs(_f64(v)))
                else:
                    e = self._wrap_check(v, e, av, bv, op, dt)
            elif op == "/":
                v = np.divide(av, bv)
                den = np.abs(_f64(bv)) - be
                e = np.where(
                    den > 0, (ae + np.abs(_f64(v)) * be) / np.where(den > 0, den, 1), np.inf
                )
                e = np.where(e > 0, e + _ulp(v, dt), e)
                if self.fuzzy:
                    e = e + 2 * _ulp(v, dt)
            elif op == "//":
                q = np.floor_divide(av, bv)  # divisors are positive: fix floor to truncation
                v = np.where((np.remainder(av, bv) != 0) & (av < 0), q + 1, q).astype(av.dtype)
                e = np.where(be > 0, np.inf, np.where(ae > 0, ae / np.abs(_f64(bv)) + 1, 0.0))
            elif op == "%":
                if is_float:
                    v = np.fmod(av, bv)
                else:
                    q = np.floor_divide(av, bv)
                    q = np.where((np.remainder(av, bv) != 0) & (av < 0), q + 1, q).astype(av.dtype)
                    v = (av - q * bv).astype(av.dtype)
                e = np.where((ae > 0) | (be > 0), 2 * (np.abs(_f64(bv)) + be), 0.0)
            elif op in ir.BITWISE:
                fn = {
                    "&": np.bitwise_and,
                    "|": np.bitwise_or,
                    "^": np.bitwise_xor,
                    "<<": np.left_shift,
                    ">>": np.right_shift,  # arithmetic for signed types, as Triton's >>
                }[op]
                v = fn(av, bv)
                e = np.where((ae > 0) | (be > 0), np.inf, 0.0)
            elif op in ir.MINMAX:
                v = (np.minimum if op == "min" else np.maximum)(av, bv)
                e = np.maximum(ae, be)
            else:
                raise ValueError(op)
        return self._gpu(Val(v, e, ty))

    def _gpu(self, v: Val) -> Val:
        """On a GPU, a float result may also differ by flushing subnormals to zero."""
        if self.fuzzy and v.ty.dtype in FLOATS:
            v.e = v.e + TINY[v.ty.dtype]
        return v

    def _wrap_check(self, v, e, av, bv, op, dt) -> np.ndarray:
        """Inexact integers that may wrap have an unknown value."""
        if not np.any(e > 0):
            return e
        exact = {"+": np.add, "-": np.subtract, "*": np.multiply}[op](_f64(av), _f64(bv))
        return np.where((e > 0) & (np.abs(exact) + e >= 2.0 ** (BITS[dt] - 1)), np.inf, e)

    def compare(self, op: str, a: Val, b: Val, ty: Ty) -> Val:
        av, ae = _layout(a, ty.dims)
        bv, be = _layout(b, ty.dims)
        fn = {
            "<": np.less,
            "<=": np.less_equal,
            ">": np.greater,
            ">=": np.greater_equal,
            "==": np.equal,
            "!=": np.not_equal,
        }[op]
        v = fn(av, bv)
        tol = ae + be
        flip = (tol > 0) & (np.abs(_f64(av) - _f64(bv)) <= tol)
        return Val(v, np.where(flip, 1.0, 0.0), ty)

    def where(self, c: Val, a: Val, b: Val, ty: Ty) -> Val:
        cv, ce = _layout(c, ty.dims)
        av, ae = _layout(a, ty.dims)
        bv, be = _layout(b, ty.dims)
        v = np.where(cv, av, bv)
        e = np.where(cv, ae, be)
        with np.errstate(all="ignore"):
            e = np.where(ce > 0, np.abs(_f64(av) - _f64(bv)) + np.maximum(ae, be), e)
        return Val(
            np.broadcast_to(v, self.shape(ty.dims)), np.broadcast_to(e, self.shape(ty.dims)), ty
        )

    def unary(self, op: str, a: Val, ty: Ty) -> Val:
        dt = ty.dtype
        with np.errstate(all="ignore"):
            if op == "neg":
                return Val(np.negative(a.v), a.e, ty)
            if op == "abs":
                return Val(np.abs(a.v), a.e, ty)
            if op == "exp":
                v = np.exp(a.v.astype(np.float64)).astype(NP_DTYPE[dt])
                e = np.abs(_f64(v)) * np.expm1(a.e) + _ulp(v, dt)  # an ulp for the libm
                if self.fuzzy:
                    e = e + (np.abs(_f64(a.v)) + 4) * UNIT[dt] * np.abs(_f64(v))
                return self._gpu(Val(v, e, ty))
            if op == "sqrt":  # of a value >= 0 (the generator writes tl.sqrt(tl.abs(x)))
                v = np.sqrt(a.v)
                e = np.where(a.e > 0, np.sqrt(a.e) + _ulp(v, dt), 0.0)
                if self.fuzzy:  # sqrt.approx.ftz: 2 ulp, and subnormal inputs read as 0
                    e = e + 2 * _ulp(v, dt)
                    e = np.where(np.abs(_f64(a.v)) < TINY[dt], np.maximum(e, TINY[dt] ** 0.5), e)
                return self._gpu(Val(v, e, ty))
        raise ValueError(op)

    def reduce(self, op: str, a: Val, axis: int, ty: Ty) -> Val:
        dt = ty.dtype
        x = a if a.ty.dtype == dt else self.cast(a, dt)
        n = x.v.shape[axis]
        with np.errstate(all="ignore"):
            if op == "sum":
                if dt in FLOATS:
                    exact = _f64(x.v).sum(axis=axis)
                    v = exact.astype(NP_DTYPE[dt])
                    e = x.e.sum(axis=axis) + 1.01 * (n - 1) * UNIT[dt] * np.abs(_f64(x.v)).sum(
                        axis=axis
                    )
                    e = e + _ulp(v, dt)
                else:
                    v = x.v.sum(axis=axis, dtype=x.v.dtype)  # wraps at the width
                    e = x.e.sum(axis=axis)
                    big = np.abs(_f64(x.v)).sum(axis=axis) + e >= 2.0 ** (BITS[dt] - 1)
                    e = np.where((e > 0) & big, np.inf, e)
            else:
                v = (np.max if op == "max" else np.min)(x.v, axis=axis)
                e = x.e.max(axis=axis)
        return self._gpu(Val(v, e, ty)) if op == "sum" else Val(v, e, ty)

    # ------------------------------------------------------------------ newer operations
    def newer(self, e, a: Val, b: Val | None, c: Val | None, ty: Ty) -> Val:
        """Dots, scans, shape operations, gathers and random numbers."""
        if isinstance(e, ir.Dot):
            return self.dot(e.kind, a, b, c, ty)
        if isinstance(e, ir.Scan):
            return self.scan(e.op, a, e.axis, e.reverse, ty)
        if isinstance(e, ir.Shape):
            dims = a.ty.dims
            v = self.reshape(e.op, a.v, b.v if b else None, dims)
            return Val(v, self.reshape(e.op, a.e, b.e if b else None, dims), ty)
        if isinstance(e, ir.Gather):
            idx = b.v.astype(np.int64)
            v = np.take_along_axis(a.v, idx, e.axis) if idx.ndim else a.v[idx]
            err = np.take_along_axis(a.e, idx, e.axis) if idx.ndim else a.e[idx]
            return Val(v, np.where(b.e > 0, np.inf, err), ty)
        seed = int(np.asarray(a.v))
        v = getattr(fuzz_random, e.op)(seed, b.v)
        err = np.where(b.e > 0, np.inf, 0.0) + float(np.asarray(a.e))  # inexact: unknown
        if e.op == "randn" and not self.exact_randn:
            err = err + fuzz_random.randn_bound(v) * (4 if self.fuzzy else 1)
        if e.op == "randint":
            v = v.view(np.int32)
        return Val(v, np.where(err > 0, np.inf, 0.0) if e.op == "randint" else err, ty)

    def reshape(self, op: str, x: np.ndarray, y, dims: tuple) -> np.ndarray:
        """The shape operation `op` on one array (values or bounds) of `dims`."""
        p = self.p
        if op in ("trans", "permute"):
            return x.T
        if op == "reshape_trans":
            return x.reshape(p.C, p.R).T
        if op == "trans_reshape":
            return x.T.reshape(p.R, p.C)
        if op == "broadcast":
            return np.broadcast_to(x.reshape((-1, 1) if dims == ("R",) else (1, -1)), (p.R, p.C))
        joined = np.stack([x, np.broadcast_to(y, x.shape)], axis=-1)  # (..., n, 2)
        moved = np.swapaxes(joined, -1, -2).reshape(joined.shape)  # (..., 2, n) as (..., n, 2)
        return moved[..., int(op[-1])]

    def dot(self, kind: str, a: Val, b: Val, c: Val | None, ty: Ty) -> Val:
        """fp16 / bf16 / tf32 / fp32 products are exact in float64; their sum of K terms may
        be in any order in fp32: (K - 1) u sum |a b|; tf32 rounds each input by 2**-11
        (2**-10 truncating); int8 dots are exact (they cannot overflow int32)."""
        k = a.v.shape[1]
        if kind == "i8":
            av, bv = (x.v.astype(np.int8).astype(np.int64) for x in (a, b))
            v = av @ bv + (c.v.astype(np.int64) if c is not None else 0)
            bad = (a.e > 0).any(axis=1)[:, None] | (b.e > 0).any(axis=0)[None, :]
            if c is not None:
                bad = bad | (c.e > 0)
            return Val(v.astype(np.int32), np.where(bad, np.inf, 0.0), ty)
        ins = []
        for x in (a, b):
            v32 = x.v.astype(np.float32)
            if kind == "fp16":
                r = v32.astype(np.float16).astype(np.float64)
            elif kind == "bf16":
                r = _bf16(v32)
            else:
                r = _f64(v32)
            e = np.where(x.e > 0, x.e + np.abs(r) * (2.0**-8 if kind == "bf16" else 2.0**-11), 0)
            if kind == "tf32":
                e = e + np.abs(r) * 2.0**-10
            ins.append((r, e))
        (ar, ae), (br, be) = ins
        exact = ar @ br + (_f64(c.v) if c is not None else 0.0)
        mag = np.abs(ar) @ np.abs(br)
        v = exact.astype(np.float32)
        e = np.abs(ar) @ be + ae @ np.abs(br) + ae @ be + (c.e if c is not None else 0.0)
        e = e + (k if c is not None else k - 1) * UNIT["fp32"] * 1.01 * mag + _ulp(v, "fp32")
        if self.fuzzy:
            e = e + k * UNIT["fp32"] * mag
        return self._gpu(Val(v, e, ty))

    def scan(self, op: str, a: Val, axis: int, reverse: bool, ty: Ty) -> Val:
        dt = ty.dtype
        v, e = (np.flip(x, axis) if reverse else x for x in (a.v, a.e))
        n = v.shape[axis]
        with np.errstate(all="ignore"):
            if op == "cummax":
                out, err = np.maximum.accumulate(v, axis), np.maximum.accumulate(e, axis)
            elif dt in FLOATS:
                out = np.cumsum(_f64(v), axis).astype(NP_DTYPE[dt])
                mag = np.cumsum(np.abs(_f64(v)), axis)
                err = np.cumsum(e, axis) + 1.01 * (n - 1) * UNIT[dt] * mag + _ulp(out, dt)
            else:
                out = np.cumsum(v, axis, dtype=v.dtype)  # wraps at the width
                err = np.cumsum(e, axis)
                big = np.cumsum(np.abs(_f64(v)), axis) + err >= 2.0 ** (BITS[dt] - 1)
                err = np.where((err > 0) & big, np.inf, err)
        out, err = (np.flip(x, axis) if reverse else x for x in (out, err))
        res = Val(out, err, ty)
        return self._gpu(res) if op == "cumsum" else res

    def atomic(self, s: ir.Atomic, value: Val, other: Val | None) -> Val:
        """Apply one atomic statement of this program id to its buffer; the old values
        (not defined where lanes share an element, or a lane is masked off)."""
        pid, rows, cols, rmask, cmask = self.lanes
        p, (buf, berr) = self.p, self.buffers[s.buf]
        dims, dt = value.ty.dims, value.ty.dtype
        if s.op == "cas":
            old, old_e = buf[pid].copy(), berr[pid]
            cmp = self.cast(other, dt)
            if float(cmp.e) > 0 or old_e > 0:
                berr[pid] = np.inf
            elif old == cmp.v:
                buf[pid], berr[pid] = value.v, float(value.e)
            return Val(old, old_e, value.ty)
        shape = self.shape(dims)
        inside = {("R", "C"): rmask[:, None] & cmask[None, :], ("R",): rmask, ("C",): cmask,
                  (): np.True_}[dims] & np.ones(shape, bool)  # fmt: skip
        active, unsure = inside, np.zeros(shape, bool)
        if other is not None:
            cv, ce = _layout(self.cast(other, "i1"), dims)
            active = inside & np.broadcast_to(cv, shape)
            unsure = inside & np.broadcast_to(ce > 0, shape)
        if s.shared:
            idx = np.broadcast_to(cols if dims else np.int32(0), shape)
        else:
            idx = {("R", "C"): rows[:, None] * p.n_cols + cols[None, :], ("R",): rows,
                   ("C",): pid * p.n_cols + cols, (): np.int32(pid)}[dims]  # fmt: skip
            idx = np.broadcast_to(idx, shape)
        old = np.zeros(shape, NP_DTYPE[dt])
        old_e = np.full(shape, np.inf)
        vv, ve = np.broadcast_to(value.v, shape), np.broadcast_to(value.e, shape)
        spread = self.spread.setdefault(s.buf, np.zeros((2, buf.size)))  # sum |x|, adds
        for lane in zip(*np.nonzero(np.ones(shape, bool))) if shape else [()]:
            j = int(idx[lane])
            if unsure[lane]:  # the lane may or may not apply: the element is unknown
                berr[j] = np.inf
                continue
            if not active[lane]:
                continue
            old[lane], old_e[lane] = buf[j], (np.inf if s.shared else berr[j])
            x, xe = vv[lane], ve[lane]
            with np.errstate(all="ignore"):
                if s.op == "add":
                    new = np.asarray(buf[j] + x).astype(buf.dtype)
                    err = berr[j] + xe
                    if dt in FLOATS and s.shared:  # summed in any order: bounded at the end
                        spread[:, j] += (abs(float(x)), 1)
                    elif dt in FLOATS and err > 0:
                        err += float(_ulp(new, dt))
                    elif dt in INTS and err > 0:
                        err = np.inf
                elif s.op in ("max", "min"):
                    new, err = (max if s.op == "max" else min)(buf[j], x), max(berr[j], xe)
                else:  # xchg (each lane its own element)
                    new, err = x, xe
            buf[j], berr[j] = new, err
        return Val(old, old_e, value.ty)

    # ------------------------------------------------------------------ statements
    def run_block(self, stmts, env: dict) -> None:
        for s in stmts:
            if isinstance(s, ir.Assign):
                env[s.name] = self.as_val(self.eval(s.expr, env), s.expr, None)
                continue
            if isinstance(s, ir.Atomic):
                value = self.as_val(self.eval(s.a, env), s.a, None)
                other = self.as_val(self.eval(s.b, env), s.b, None) if s.b is not None else None
                env[s.name] = self.atomic(s, value, other)
                continue
            if isinstance(s, ir.If):
                c = self.cast(self.as_val(self.eval(s.cond, env), s.cond, None), "i1")
                block = s.then if bool(c.v) else s.orelse
                self.run_block(block, env)
                if float(c.e) > 0:  # the branch taken is not certain: neither are its results
                    for a in s.then + s.orelse:
                        if isinstance(env.get(a.name), Val):
                            env[a.name].e = np.full_like(env[a.name].e, np.inf)
                continue
            stop = self.eval(s.stop, env)
            stop = int(stop.v) if isinstance(stop, Val) else int(stop)
            for i in range(s.start, stop, s.step):
                env[s.var] = Val(np.int32(i), 0.0, Ty("i32", ()))
                self.run_block(s.body, env)
            env.pop(s.var, None)

    def run(self, data: dict) -> list[tuple[np.ndarray, np.ndarray]]:
        """Expected outputs (values, error bounds) for the input arrays in `data`, then
        the atomic statements' buffers after the launch."""
        p = self.p
        outs = [None] * len(p.outputs)
        self.buffers = {a.buf: (data[a.buf].copy(), np.zeros(data[a.buf].size)) for a in p.atomics()}
        self.spread: dict = {}
        for pid in range(p.grid):
            rows = pid * p.R + np.arange(p.R, dtype=np.int32)
            cols = np.arange(p.C, dtype=np.int32)
            rmask, cmask = rows < p.n_rows, cols < p.n_cols
            self.lanes = (pid, rows, cols, rmask, cmask)
            env: dict = {
                "pid": Val(np.int32(pid), 0.0, Ty("i32", ())),
                "rows": Val(rows, 0.0, Ty("i32", ("R",))),
                "cols": Val(cols, 0.0, Ty("i32", ("C",))),
            }
            for s in p.scalars:
                ty = ir.input_env(p)[s.name]
                env[s.name] = s.value if ty.weak else Val(s.value, 0.0, ty)
            for x in p.inputs:
                env[x.name] = Val(
                    self.load(x, data[x.name], pid, rows, cols, rmask, cmask),
                    0.0,
                    Ty(x.dtype, x.dims),
                )
            self.run_block(p.body, env)
            for i, o in enumerate(p.outputs):
                val = self.cast(env[o.name], o.dtype)
                if outs[i] is None:
                    outs[i] = output_arrays(p, o, env[o.name].ty.dims)
                store(outs[i], val, pid, rows, cols, rmask, cmask, p)
        for name, (mag, adds) in self.spread.items():  # float adds sharing an element
            buf, berr = self.buffers[name]
            if buf.dtype.kind == "f":
                dt = "fp32" if buf.dtype == np.float32 else "fp16"
                start = np.abs(_f64(data[name]))
                berr += np.where(adds > 0, adds * UNIT[dt] * (start + mag) + _ulp(buf, dt), 0.0)
        return outs + [self.buffers[a.buf] for a in p.atomics()]

    def load(self, x: ir.Input, arr: np.ndarray, pid, rows, cols, rmask, cmask) -> np.ndarray:
        p = self.p
        dt = NP_DTYPE[x.dtype]
        other = np.asarray(x.other).astype(dt)
        if x.dims == ("R", "C"):
            out = np.full((p.R, p.C), other, dt)
            r, c = rows[rmask], cols[cmask]
            out[np.ix_(rmask, cmask)] = arr.reshape(p.n_rows, p.n_cols)[np.ix_(r, c)]
            return out
        if x.dims == ("R",):
            out = np.full(p.R, other, dt)
            out[rmask] = arr[rows[rmask]]
            return out
        if x.dims == ("C",):
            out = np.full(p.C, other, dt)
            out[cmask] = arr[cols[cmask]]
            return out
        return arr[pid]


SENTINEL = {"i1": True, "i32": -12345, "i64": -1234567, "fp16": -7.0, "fp32": -77.0}


def output_size(p: ir.Program, dims: tuple) -> int:
    return {
        ("R", "C"): p.n_rows * p.n_cols,
        ("R",): p.n_rows,
        ("C",): p.grid * p.n_cols,
        (): p.grid,
    }[dims]


def output_arrays(p: ir.Program, o: ir.Output, dims: tuple) -> tuple[np.ndarray, np.ndarray]:
    n = output_size(p, dims)
    return np.full(n, SENTINEL[o.dtype], NP_DTYPE[o.dtype]), np.zeros(n)


def store(out, val: Val, pid, rows, cols, rmask, cmask, p: ir.Program) -> None:
    v, e = out
    dims = val.ty.dims
    if dims == ("R", "C"):
        idx = (rows[:, None] * p.n_cols + cols[None, :])[np.ix_(rmask, cmask)]
        v[idx] = val.v[np.ix_(rmask, cmask)]
        e[idx] = val.e[np.ix_(rmask, cmask)]
    elif dims == ("R",):
        v[rows[rmask]] = val.v[rmask]
        e[rows[rmask]] = val.e[rmask]
    elif dims == ("C",):
        v[pid * p.n_cols + cols[cmask]] = val.v[cmask]
        e[pid * p.n_cols + cols[cmask]] = val.e[cmask]
    else:
        v[pid] = val.v
        e[pid] = val.e
