"""The fuzzer's draws of the newer operations: dots, scans, shape operations, gathers,
random numbers (expressions) and atomics (statements). `fuzz.programs(features=...)`
enables them; `fuzz._Gen` calls `candidates` for an expression of one of these kinds and
`atomic` for a statement, and keeps the first candidate its type and range rules accept.

    v3 = tl.dot(v1.to(tl.bfloat16), in0.to(tl.bfloat16), acc2)       # R == C >= 16
    v4 = tl.cumsum(v3, axis=1, reverse=True)
    v5 = tl.split(tl.reshape(tl.permute(tl.join(v4, in0), (0, 2, 1)), (R, C, 2)))[1]
    v6 = tl.gather(v5, (cols * 3 + rows) & 15, axis=1)
    v7 = tl.rand(s0, rows[:, None] * 16 + cols[None, :])
    old8 = tl.atomic_add(at0_ptr + cols[None, :] + 0 * rows[:, None], v7, mask=mask)

Each kind's values are exactly defined (bit for bit) except where the model gives a
bound: a dot's or cumsum's float order, tf32's input rounding, randn's libm, a float
atomic add on an element lanes share.
"""

from __future__ import annotations

from hypothesis import strategies as st

from tritium.testing import fuzz_ir as ir
from tritium.testing.fuzz_ir import FLOATS, BinOp, Cast, Compare, Lit, Name, Ty, Unary
from tritium.testing.fuzz_ranges import fit

FEATURES = ("dot", "scan", "shape", "random", "atomic")
SEEDS = (0, 7, 12345, -3, 2**31 - 1)


def _names(g, pred) -> list[str]:
    return [n for n in g.pool if pred(g.types[n]) and not g.types[n].weak]


def _index(g, dims: tuple, axis: int):
    """An in-range index of `dims` along `axis`: an integer name of those dims, or one
    made from `rows` and `cols`, masked to the power-of-two extent."""
    n = g.p.R if dims[axis] == "R" else g.p.C
    ints = _names(g, lambda t: t.dims == dims and t.dtype in ("i32", "i64"))
    base = Name(g.draw(st.sampled_from(ints))) if ints and g.draw(st.booleans()) else None
    if base is None:
        base = BinOp("*", Name("cols" if "C" in dims else "rows"), Lit(3))
        if dims == ("R", "C"):
            base = BinOp("+", base, Name("rows"))
    return BinOp("&", base, Lit(n - 1))


def candidates(g, kind: str, a: Name) -> list:
    """Expressions of `kind` built around the name `a` (some may break a rule)."""
    ta, p, draw = g.types[a.id], g.p, g.draw
    if kind == "dot":
        if not p.R == p.C >= 16:
            return []
        k = draw(st.sampled_from(ir.DOT_KINDS))
        want = ("i32", "i64") if k == "i8" else FLOATS
        tiles = _names(g, lambda t: t.dims == ("R", "C"))
        if not tiles:
            return []
        x, y = (Name(draw(st.sampled_from(tiles))) for _ in range(2))
        x, y = (n if g.types[n.id].dtype in want else Cast(n, want[0] if k == "i8" else "fp32")
                for n in (x, y))  # fmt: skip
        out = Ty("i32" if k == "i8" else "fp32", ("R", "C"))
        accs = _names(g, lambda t: t == out)
        c = Name(draw(st.sampled_from(accs))) if accs and draw(st.booleans()) else None
        return [ir.Dot(k, x, y, c), ir.Dot(k, x, y)]
    if kind == "scan":
        if not ta.dims:
            return []
        axis = draw(st.integers(0, len(ta.dims) - 1))
        op, rev = draw(st.sampled_from(ir.SCANS)), draw(st.booleans())
        x = Cast(a, "i32") if ta.dtype == "i1" else a
        return [ir.Scan(op, x, axis, rev)]
    if kind == "shape":
        if not ta.dims:
            return []
        ops = ["join_split0", "join_split1"]
        if len(ta.dims) == 1:
            ops.append("broadcast")
        else:
            ops += ["reshape_trans", "trans_reshape"] + (["trans", "permute"] * (p.R == p.C))
        op = draw(st.sampled_from(ops))
        if not op.startswith("join"):
            return [ir.Shape(op, a)]
        same = _names(g, lambda t: t == Ty(ta.dtype, ta.dims))
        b = Name(draw(st.sampled_from(same))) if same else a
        return [ir.Shape(op, a, b), ir.Shape(op, a, Unary("neg", a))]
    if kind == "gather":
        if not ta.dims:
            return []
        axis = draw(st.integers(0, len(ta.dims) - 1))
        return [ir.Gather(a, _index(g, ta.dims, axis), axis)]
    if kind == "random":
        op = draw(st.sampled_from(ir.RANDOM))
        seeds = _names(g, lambda t: t.dims == () and t.dtype in ("i32", "i64"))
        seed = Name(draw(st.sampled_from(seeds))) if seeds and draw(st.booleans()) else None
        seed = seed or Lit(draw(st.sampled_from(SEEDS)))
        offs = [a] if ta.dtype == "i32" and not ta.weak else []
        offs.append(BinOp("+", BinOp("*", Name("rows"), Lit(p.C)), Name("cols")))
        return [ir.Rand(op, seed, o) for o in offs]
    raise ValueError(kind)


ATOMIC_DTYPES = ir.ATOMIC_DTYPES


def atomic(g) -> list:
    """One atomic statement on a buffer of its own (or nothing if no value fits)."""
    draw = g.draw
    op = draw(st.sampled_from(ir.ATOMICS))
    dtypes = ATOMIC_DTYPES[op]
    values = _names(g, lambda t: t.dtype in dtypes and (t.dims == () or op != "cas"))
    if not values:
        scalars = _names(g, lambda t: t.dims == () and t.dtype != "i1")
        if op != "cas" or not scalars:
            return []
        values = scalars
    a = Name(draw(st.sampled_from(values)))
    ta = g.types[a.id]
    dt = ta.dtype if ta.dtype in dtypes else dtypes[0]
    value = a if ta.dtype == dt else Cast(a, dt)
    if g.ok(value) is None:
        return []
    shared = op in ("add", "max", "min") and ta.dims != ("R",) and draw(st.booleans())
    k = next(g.count)
    if op == "cas":
        b = Lit(draw(st.sampled_from([0, 1, -1, 2])))
    elif draw(st.integers(0, 2)) == 0:
        b = Compare(draw(st.sampled_from(ir.COMPARE)), value, Lit(0))
    else:
        b = None
    s = ir.Atomic(f"old{k}", f"at{k}", op, value, b, shared)
    vlo, vhi = g.R().of(value)
    lo, hi = ATOMIC_START[dt] if op != "cas" else (-2, 2)
    if not shared:
        r = (lo, hi)  # each lane's old value is the buffer's first
    elif op == "add":
        n = g.p.grid * g.p.R * g.p.C
        r = (lo + n * min(vlo, 0), hi + n * max(vhi, 0))
        if dt in FLOATS and max(abs(r[0]), abs(r[1])) > 1e30:
            return []
    else:
        r = (min(lo, vlo), max(hi, vhi))
    g.types[s.name], g.ranges[s.name] = Ty(dt, ta.dims), fit(r, dt)
    g.pool.append(s.name)
    g.user.append(s.name)
    return [s]


ATOMIC_START = {"i32": (-3, 3), "i64": (-3, 3), "fp32": (-2.0, 2.0)}  # the buffers' values
