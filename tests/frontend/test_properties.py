"""Hypothesis properties: kernels compiled by the frontend and run in the interpreter
agree with numpy (float64 references) over random sizes, block sizes, masks, dtypes and
random expression trees."""

from __future__ import annotations

import linecache
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tritium
import tritium.language as tl

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def _interpret(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")


@tritium.jit
def elementwise_kernel(x_ptr, y_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    y = tl.load(y_ptr + offs, mask=mask, other=1)
    if OP == "add":
        z = x + y
    elif OP == "sub":
        z = x - y
    elif OP == "mul":
        z = x * y
    elif OP == "max":
        z = tl.maximum(x, y)
    elif OP == "min":
        z = tl.minimum(x, y)
    else:
        z = tl.where(x < y, x, y * 2)
    tl.store(out_ptr + offs, z, mask=mask)


NP_OPS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
    "where": lambda x, y: np.where(x < y, x, y * 2),
}
DTYPES = [np.float32, np.float16, np.int32, np.int64, np.int8, np.uint16]


def _rand(rng, n, dt):
    if np.issubdtype(dt, np.floating):
        return rng.standard_normal(n).astype(dt)
    info = np.iinfo(dt)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    return rng.integers(lo, hi, n).astype(dt)


@SETTINGS
@given(
    n=st.integers(1, 3000),
    block=st.sampled_from([16, 64, 128, 1024]),
    op=st.sampled_from(sorted(NP_OPS)),
    dt=st.sampled_from(DTYPES),
    seed=st.integers(0, 2**32 - 1),
)
def test_elementwise_matches_numpy(n, block, op, dt, seed):
    rng = np.random.default_rng(seed)
    x, y = _rand(rng, n, dt), _rand(rng, n, dt)
    out = np.full(n + 7, 77, dtype=dt)  # poisoned, with a tail the kernel must not touch
    elementwise_kernel[(tritium.cdiv(n, block),)](x, y, out, n, OP=op, BLOCK=block)
    ref = (
        NP_OPS[op](x.astype(np.float64), y.astype(np.float64))
        if np.issubdtype(dt, np.floating)
        else NP_OPS[op](x, y)
    )
    if np.issubdtype(dt, np.floating):
        rtol = 1e-3 if dt == np.float16 else 1e-6
        np.testing.assert_allclose(out[:n].astype(np.float64), ref, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(out[:n], ref.astype(dt))  # wraps like the GPU
    assert (out[n:] == 77).all()


@tritium.jit
def reduce_kernel(
    x_ptr,
    out_ptr,
    rows,
    cols,
    stride,
    OP: tl.constexpr,
    AXIS: tl.constexpr,
    BR: tl.constexpr,
    BC: tl.constexpr,
):
    r = tl.arange(0, BR)
    c = tl.arange(0, BC)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    if OP == "max" or OP == "argmax":
        fill = -float("inf")
    elif OP == "min" or OP == "argmin":
        fill = float("inf")
    else:
        fill = 0.0
    x = tl.load(x_ptr + r[:, None] * stride + c[None, :], mask=mask, other=fill)
    if OP == "sum":
        v = tl.sum(x, axis=AXIS)
    elif OP == "max":
        v = tl.max(x, axis=AXIS)
    elif OP == "min":
        v = tl.min(x, axis=AXIS)
    elif OP == "argmax":
        v = tl.argmax(x, axis=AXIS)
    else:
        v = tl.argmin(x, axis=AXIS)
    if AXIS == 0:
        tl.store(out_ptr + c, v, mask=c < cols)
    else:
        tl.store(out_ptr + r, v, mask=r < rows)


@SETTINGS
@given(
    rows=st.integers(1, 40),
    cols=st.integers(1, 70),
    op=st.sampled_from(["sum", "max", "min", "argmax", "argmin"]),
    axis=st.sampled_from([0, 1]),
    ties=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_reductions_match_numpy(rows, cols, op, axis, ties, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    if ties:
        x = np.round(x)  # many equal values: argmax/argmin must pick the lowest index
    br, bc = tritium.next_power_of_2(rows), tritium.next_power_of_2(cols)
    n_out = cols if axis == 0 else rows
    is_arg = op.startswith("arg")
    out = np.full(n_out, -7 if is_arg else np.nan, dtype=np.int32 if is_arg else np.float32)
    reduce_kernel[(1,)](x, out, rows, cols, cols, OP=op, AXIS=axis, BR=br, BC=bc)
    x64 = x.astype(np.float64)
    ref = {"sum": np.sum, "max": np.max, "min": np.min, "argmax": np.argmax, "argmin": np.argmin}[
        op
    ](x64, axis=axis)
    if is_arg:
        np.testing.assert_array_equal(out, ref)
    else:
        np.testing.assert_allclose(
            out, ref, rtol=1e-5, atol=1e-5 * np.abs(x64).sum(axis=axis).max()
        )


# ---------------------------------------------------------------------- expression trees

FLOAT_LEAVES = ["x", "y", "1.5", "2.0", "0.25"]
INT_LEAVES = ["i", "j", "3", "7", "-5"]


def float_expr():
    leaf = st.sampled_from(FLOAT_LEAVES)

    def extend(sub):
        bin_op = st.tuples(st.sampled_from(["+", "-", "*"]), sub, sub).map(
            lambda t: f"({t[1]} {t[0]} {t[2]})"
        )
        div = st.tuples(sub, sub).map(lambda t: f"({t[0]} / (tl.abs({t[1]}) + 1.0))")
        fn = st.tuples(st.sampled_from(["tl.maximum", "tl.minimum"]), sub, sub).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]})"
        )
        una = st.tuples(st.sampled_from(["tl.abs", "-", "tl.sigmoid"]), sub).map(
            lambda t: f"{t[0]}({t[1]})"
        )
        sel = st.tuples(sub, sub, sub).map(lambda t: f"tl.where({t[0]} < {t[1]}, {t[1]}, {t[2]})")
        return st.one_of(bin_op, div, fn, una, sel)

    return st.recursive(leaf, extend, max_leaves=8)


def int_expr():
    leaf = st.sampled_from(INT_LEAVES)

    def extend(sub):
        bin_op = st.tuples(st.sampled_from(["+", "-", "*", "&", "|", "^"]), sub, sub).map(
            lambda t: f"({t[1]} {t[0]} {t[2]})"
        )
        div = st.tuples(st.sampled_from(["//", "%"]), sub, sub).map(
            lambda t: f"({t[1]} {t[0]} ((tl.abs({t[2]}) % 5) + 1))"
        )
        fn = st.tuples(st.sampled_from(["tl.maximum", "tl.minimum"]), sub, sub).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]})"
        )
        return st.one_of(bin_op, div, fn)

    return st.recursive(leaf, extend, max_leaves=8)


_KERNELS: dict[str, object] = {}


def make_kernel(expr: str, kind: str):
    key = kind + expr
    if key in _KERNELS:
        return _KERNELS[key]
    a, b = ("x", "y") if kind == "float" else ("i", "j")
    src = textwrap.dedent(
        f"""
        import tritium
        import tritium.language as tl

        @tritium.jit
        def expr_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            {a} = tl.load(a_ptr + offs, mask=mask, other=1)
            {b} = tl.load(b_ptr + offs, mask=mask, other=1)
            tl.store(out_ptr + offs, {expr}, mask=mask)
        """
    )
    fname = f"<tritium-expr-{len(_KERNELS)}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    ns: dict = {}
    exec(compile(src, fname, "exec"), ns)
    _KERNELS[key] = ns["expr_kernel"]
    return ns["expr_kernel"]


def np_eval_float(expr: str, x, y):
    env = {
        "x": x,
        "y": y,
        "tl": type("tl", (), {
            "maximum": staticmethod(np.maximum),
            "minimum": staticmethod(np.minimum),
            "abs": staticmethod(np.abs),
            "where": staticmethod(np.where),
            "sigmoid": staticmethod(lambda v: 1 / (1 + np.exp(-v))),
        }),
    }  # fmt: skip
    return eval(expr, env)


def _c_div(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def _c_mod(a, b):
    r = np.abs(a) % np.abs(b)
    return np.where(a < 0, -r, r)


class _I:
    """int64 numpy values with C-style // and %, wrapped to int32 after every op."""

    def __init__(self, v):
        self.v = (np.asarray(v, dtype=np.int64) + 2**31) % 2**32 - 2**31

    def _b(self, o, f):
        return _I(f(self.v, o.v if isinstance(o, _I) else np.int64(o)))

    def __add__(self, o):
        return self._b(o, np.add)

    def __radd__(self, o):
        return _I(o) + self

    def __sub__(self, o):
        return self._b(o, np.subtract)

    def __rsub__(self, o):
        return _I(o) - self

    def __mul__(self, o):
        return self._b(o, np.multiply)

    def __rmul__(self, o):
        return _I(o) * self

    def __and__(self, o):
        return self._b(o, np.bitwise_and)

    def __rand__(self, o):
        return _I(o) & self

    def __or__(self, o):
        return self._b(o, np.bitwise_or)

    def __ror__(self, o):
        return _I(o) | self

    def __xor__(self, o):
        return self._b(o, np.bitwise_xor)

    def __rxor__(self, o):
        return _I(o) ^ self

    def __floordiv__(self, o):
        return self._b(o, _c_div)

    def __rfloordiv__(self, o):
        return _I(o) // self

    def __mod__(self, o):
        return self._b(o, _c_mod)

    def __rmod__(self, o):
        return _I(o) % self

    def __neg__(self):
        return _I(-self.v)


def np_eval_int(expr: str, i, j):
    def lift(v):
        return v if isinstance(v, _I) else _I(v)

    env = {
        "i": _I(i),
        "j": _I(j),
        "tl": type("tl", (), {
            "maximum": staticmethod(lambda a, b: _I(np.maximum(lift(a).v, lift(b).v))),
            "minimum": staticmethod(lambda a, b: _I(np.minimum(lift(a).v, lift(b).v))),
            "abs": staticmethod(lambda a: _I(np.abs(lift(a).v))),
        }),
    }  # fmt: skip
    return lift(eval(expr, env)).v


@SETTINGS
@given(expr=float_expr(), n=st.integers(1, 600), seed=st.integers(0, 2**32 - 1))
def test_random_float_expressions(expr, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, dtype=np.float32)
    make_kernel(expr, "float")[(tritium.cdiv(n, 128),)](x, y, out, n, BLOCK=128)
    ref = np.broadcast_to(np_eval_float(expr, x.astype(np.float64), y.astype(np.float64)), (n,))
    scale = 1 + np.abs(ref)
    assert np.all(np.abs(out - ref) <= 1e-4 * scale), (expr, np.max(np.abs(out - ref) / scale))


@SETTINGS
@given(expr=int_expr(), n=st.integers(1, 600), seed=st.integers(0, 2**32 - 1))
def test_random_int_expressions(expr, n, seed):
    rng = np.random.default_rng(seed)
    i = rng.integers(-(2**31), 2**31, n).astype(np.int32)
    j = rng.integers(-1000, 1000, n).astype(np.int32)
    out = np.full(n, 12345, dtype=np.int32)
    make_kernel(expr, "int")[(tritium.cdiv(n, 128),)](i, j, out, n, BLOCK=128)
    ref = np.broadcast_to(np_eval_int(expr, i, j), (n,)).astype(np.int32)
    np.testing.assert_array_equal(out, ref, err_msg=expr)
