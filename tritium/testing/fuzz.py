"""A kernel fuzzer: random whole kernels, checked against an independent numpy model.

    from hypothesis import given
    from tritium.testing import fuzz

    @given(fuzz.programs(profile="cpu"))
    def test_interpreter(program):
        fuzz.check(program, interpret=True)     # AssertionError shows the kernel's source

`programs(profile)` draws a `Program` (see `fuzz_ir.py` for its shape): one to three
inputs (tiles, rows, columns or scalars of i32 / i64 / fp16 / fp32, loaded with masks over
odd sizes), scalar arguments (ints that specialise to i32, i64 or the constexpr 1; floats),
then statements: arithmetic, `/ // %` with safe divisors, bitwise ops and shifts,
comparisons, `tl.where`, `tl.minimum` / `tl.maximum`, `-`, `tl.abs`, `tl.exp`, `tl.sqrt`,
casts, broadcasts of rows against columns, reductions (`tl.sum` / `tl.max` / `tl.min`
along an axis; by default in the "cpu" profile only: GPU reductions are new), `for` loops
that carry accumulators and `if` on runtime scalars. Outputs are stored with masks,
possibly into a buffer of another dtype (a store casts). Value ranges are tracked while
generating (`fuzz_ranges.py`), so no float overflows and no integer division by zero
happens; integers may wrap (that is defined). The "gpu" profile leaves out float `%`,
which has no GPU lowering yet. `features=` adds the newer operations (`fuzz_ops.py`):
dots, scans, shape operations and gathers, random numbers, atomics.

`check` compiles the source, runs it in the interpreter (or on the GPU), and compares
every output element with `fuzz_model.Model`: bit-exact where the model's error bound is
0, within the bound elsewhere. Hypothesis shrinks a failure to a small kernel (a
statement's kind 0 drops it); `prune` removes what no output uses, so the printed kernel
is minimal. `compile_program` compiles without running (the GPU path, on any machine).
"""

from __future__ import annotations

import itertools
import linecache

import numpy as np
from hypothesis import strategies as st

from tritium.testing import fuzz_ir as ir
from tritium.testing import fuzz_ops
from tritium.testing.fuzz_ir import (
    FLOATS,
    INTS,
    NP_DTYPE,
    Assign,
    BinOp,
    Cast,
    Compare,
    If,
    Input,
    Lit,
    Loop,
    Name,
    Output,
    Program,
    Reduce,
    Scalar,
    Ty,
    Unary,
    Where,
    Zeros,
)
from tritium.testing.fuzz_model import SENTINEL, Model, output_size
from tritium.testing.fuzz_ranges import Invalid, Ranges, fit, full_range

__all__ = [
    "Mismatch",
    "Program",
    "build_kernel",
    "check",
    "compile_program",
    "describe",
    "launch",
    "make_data",
    "programs",
    "prune",
]

VALUE_DTYPES = ("fp32", "i32", "fp16", "i64")
INT_LITERALS = (3, 1, -5, 0, 7, 100)
FLOAT_LITERALS = (0.5, 2.0, -1.5, 0.0, 3.25, -0.25)  # exact in fp16


# ------------------------------------------------------------------ the generator


class _Gen:
    """Draws one program's statements, keeping the type and range of every name."""

    def __init__(self, draw, p: Program, profile: str, upstream: bool = False, features=()):
        self.draw, self.p, self.profile, self.upstream = draw, p, profile, upstream
        self.kinds = [k for f in features if f != "atomic"
                      for k in (("shape", "gather") if f == "shape" else (f,))]  # fmt: skip
        self.types = ir.input_env(p)
        self.ranges: dict = {
            "pid": (0, p.grid - 1),
            "rows": (0, p.grid * p.R - 1),
            "cols": (0, p.C - 1),
        }
        for s in p.scalars:
            self.ranges[s.name] = (s.value, s.value)
        for x in p.inputs:
            self.ranges[x.name] = (x.lo, x.hi)
        self.pool = [x.name for x in p.inputs] + ["cols", "rows", "pid"]
        self.pool += [s.name for s in p.scalars]
        self.user = [x.name for x in p.inputs]  # names outputs and accumulators may use
        self.count = itertools.count()

    def R(self) -> Ranges:
        return Ranges(self.types, self.ranges, self.p)

    def name(self) -> Name:
        """A visible name, half the time one of the two newest (so statements chain)."""
        pool = self.pool
        if self.draw(st.booleans()):
            return Name(pool[-1 - self.draw(st.integers(0, min(1, len(pool) - 1)))])
        return Name(self.draw(st.sampled_from(pool)))

    def ok(self, e) -> tuple | None:
        """e's range if the generator may assign it: valid, and a tensor (an expression of
        constants only would be folded by Python, whose `//`, `%` and types differ)."""
        try:
            if ir.typeof(e, self.types).weak:
                return None
            return self.R().of(e)
        except (Invalid, ir.TypeRuleError):
            return None

    def literal_for(self, dtype: str) -> Lit:
        return Lit(self.draw(st.sampled_from(FLOAT_LITERALS if dtype in FLOATS else INT_LITERALS)))

    def operand(self, like: Name) -> object:
        if self.draw(st.booleans()):
            return self.name()
        return self.literal_for(self.types[like.id].dtype)

    def expr(self, reductions: bool) -> object:
        kinds = ["arith", "cast", "unary", "compare", "where", "minmax", "div", "bitwise"]
        if reductions:
            kinds.append("reduce")
        square = "dot" in self.kinds and self.p.R == self.p.C >= 16
        kind = self.draw(st.sampled_from(kinds + 2 * self.kinds + ["dot"] * 6 * square))
        a = self.name()
        ta = self.types[a.id]
        cands: list = []
        if kind in self.kinds:
            cands = fuzz_ops.candidates(self, kind, a)
        elif kind == "arith":
            op = self.draw(st.sampled_from(ir.ARITH))
            b = self.operand(a)
            cands = [BinOp(op, a, b), BinOp(op, b, a)]
        elif kind == "minmax":
            cands = [BinOp(self.draw(st.sampled_from(ir.MINMAX)), a, self.operand(a))]
        elif kind == "cast":
            cands = [
                Cast(a, self.draw(st.sampled_from([d for d in VALUE_DTYPES if d != ta.dtype])))
            ]
        elif kind == "unary":
            op = self.draw(st.sampled_from(["neg", "abs", "exp", "sqrt"]))
            math_ok = ("fp32",) if self.upstream else FLOATS  # upstream: fp32 math only
            x = a if ta.dtype in math_ok or op in ("neg", "abs") else Cast(a, "fp32")
            if op == "sqrt":
                cands = [Unary("sqrt", Unary("abs", x))]
            elif op == "exp":
                cands = [Unary("exp", x), Unary("exp", BinOp("min", x, Lit(2.0)))]
            else:
                cands = [Unary(op, x)]
        elif kind == "compare":
            b = self.operand(a)
            cands = [Compare(self.draw(st.sampled_from(ir.COMPARE)), a, b)]
        elif kind == "where":
            b, c = self.operand(a), self.name()
            cond = c if self.types[c.id].dtype == "i1" else Compare(">", a, c)
            cands = [Where(cond, a, b), Where(Compare("<", a, b), a, b)]
        elif kind == "div":
            b = self.name()
            if ta.dtype in FLOATS or self.draw(st.booleans()):
                op = self.draw(st.sampled_from(["/", "%"])) if ta.dtype in FLOATS else "/"
                den = (
                    BinOp("+", Unary("abs", b), Lit(1.0)) if self.draw(st.booleans()) else Lit(2.0)
                )
                cands = [BinOp(op, a, den)]
            else:
                op = self.draw(st.sampled_from(["//", "%"]))
                den = (
                    BinOp("+", BinOp("&", b, Lit(7)), Lit(1))
                    if self.draw(st.booleans())
                    else Lit(3)
                )
                cands = [BinOp(op, a, den)]
        elif kind == "bitwise":
            op = self.draw(st.sampled_from(ir.BITWISE))
            if op in ("<<", ">>"):
                cands = [BinOp(op, a, Lit(self.draw(st.integers(0, 7))))]
            else:
                cands = [BinOp(op, a, self.operand(a))]
            if ta.dtype in FLOATS:
                cands = [BinOp(c.op, Cast(a, "i32"), c.b) for c in cands]
        elif kind == "reduce":
            if ta.dims:
                axis = self.draw(st.integers(0, len(ta.dims) - 1))
                op = self.draw(st.sampled_from(["sum", "max", "min"]))
                x = Cast(a, "i32") if op == "sum" and ta.dtype == "i1" else a  # not uint32
                cands = [Reduce(op, x, axis)]
        cands += [Unary("neg", a), Cast(a, "i32")]  # one of these is always valid
        for e in cands:
            if self.ok(e) is not None:
                return e
        raise AssertionError("the fallback is always valid")  # pragma: no cover

    def assign(self, reductions: bool, prefix: str = "v") -> Assign:
        e = self.expr(reductions)
        name = f"{prefix}{next(self.count)}"
        r = self.R().of(e)
        self.types[name] = ir.typeof(e, self.types)
        self.ranges[name] = r
        self.pool.append(name)
        self.user.append(name)
        return Assign(name, e)

    def loop(self, reductions: bool) -> list:
        """An accumulator, then `for i in range(...)`: temporaries; `acc = acc OP t`."""
        pre: list = []
        if self.draw(st.booleans()):
            dims = self.draw(st.sampled_from([("R", "C"), ("C",), ("R",), ()]))
            dt = self.draw(st.sampled_from(VALUE_DTYPES))
            acc = f"acc{next(self.count)}"
            pre.append(Assign(acc, Zeros(dt, dims)))
            self.types[acc], self.ranges[acc] = Ty(dt, dims), (0, 0)
            self.pool.append(acc)
            self.user.append(acc)
        else:
            accs = [n for n in self.user if self.types[n].dtype != "i1"]
            if not accs:
                return []
            acc = self.draw(st.sampled_from(accs))
        start = self.draw(st.sampled_from([0, 1, -2]))
        step = self.draw(st.sampled_from([1, 2, 3]))
        small = [s.name for s in self.p.scalars if isinstance(s.value, int) and 0 <= s.value <= 6]
        if small and self.draw(st.booleans()):
            stop_name = self.draw(st.sampled_from(small))
            stop, stop_v = Name(stop_name), self.ranges[stop_name][0]
        else:
            stop_v = self.draw(st.integers(0, 4))
            stop = Lit(stop_v)
        trips = range(start, stop_v, step)
        var = f"i{next(self.count)}"
        self.types[var] = Ty("i32", ())
        self.ranges[var] = (min(trips), max(trips)) if trips else (start, start)
        outer_pool = list(self.pool)
        self.pool = [n for n in self.pool if n != acc] + [var]
        body = [self.assign(reductions, "t") for _ in range(self.draw(st.integers(0, 2)))]
        t = self.name()
        acc_ty = self.types[acc]
        t_ty = self.types[t.id]
        if not set(t_ty.dims) <= set(acc_ty.dims):
            t = Name(var)
        if ir.typeof(BinOp("+", Name(acc), t), self.types) != acc_ty:
            t = Cast(t, acc_ty.dtype)
        op = self.draw(st.sampled_from(["+", "max", "min", "-"]))
        update, final = self._update(acc, op, t, len(trips), Name(var))
        body.append(Assign(acc, update))
        self.pool = outer_pool
        for a in body[:-1]:  # loop temporaries are not visible after the loop
            self.user.remove(a.name)
        self.ranges[acc] = final
        return pre + [Loop(var, start, stop, step, tuple(body))]

    def branch(self, reductions: bool) -> list:
        """`if <scalar int> OP <literal>:` updating one or two names, maybe with an `else`."""
        conds = [n for n in self.pool if self.types[n] in (Ty("i32", ()), Ty("i64", ()))]
        targets = [n for n in self.user if self.types[n].dtype != "i1"]
        if not targets:
            return []
        cond = Compare(
            self.draw(st.sampled_from(ir.COMPARE)),
            Name(self.draw(st.sampled_from(conds))),
            Lit(self.draw(st.integers(-1, 3))),
        )
        chosen = list(
            dict.fromkeys(self.draw(st.lists(st.sampled_from(targets), min_size=1, max_size=2)))
        )
        before = {n: self.ranges[n] for n in chosen}
        blocks, finals = [], []
        for _ in range(2 if self.draw(st.booleans()) else 1):
            outer_pool, outer_user = list(self.pool), list(self.user)
            self.pool = [n for n in self.pool if n not in chosen]
            block = [self.assign(reductions, "t") for _ in range(self.draw(st.integers(0, 1)))]
            final = {}
            for acc in chosen:
                t = self.name()
                if not set(self.types[t.id].dims) <= set(self.types[acc].dims):
                    t = Lit(1)
                elif ir.typeof(BinOp("+", Name(acc), t), self.types) != self.types[acc]:
                    t = Cast(t, self.types[acc].dtype)
                op = self.draw(st.sampled_from(["+", "max", "min", "-"]))
                update, final[acc] = self._update(acc, op, t, 1, Lit(1))
                block.append(Assign(acc, update))
            self.pool, self.user = outer_pool, outer_user
            blocks.append(tuple(block))
            finals.append(final)
        for acc in chosen:
            rs = [f[acc] for f in finals] + ([before[acc]] if len(blocks) == 1 else [])
            self.ranges[acc] = (min(r[0] for r in rs), max(r[1] for r in rs))
        return [If(cond, blocks[0], blocks[1] if len(blocks) > 1 else ())]

    def _update(self, acc: str, op: str, t, trips: int, fallback):
        try:
            tlo, thi = self.R()._as(t, self.types[acc].dtype)  # t as acc's type
        except Invalid:
            t = fallback  # acc + i (or + 1) keeps acc's type for every accumulator dtype
            tlo, thi = self.R().of(t)
        lo, hi = self.ranges[acc]
        dt = self.types[acc].dtype
        if op in ("+", "-"):
            if op == "-":
                tlo, thi = -thi, -tlo
            final = (lo + trips * min(tlo, 0), hi + trips * max(thi, 0))
            try:
                final = fit(final, dt)
                return BinOp(op, Name(acc), t), final
            except Invalid:
                op = "max"
        return BinOp(op, Name(acc), t), (min(lo, tlo), max(hi, thi))


def _inputs(draw, n: int) -> list[Input]:
    out = []
    for k in range(n):
        dt = draw(st.sampled_from(VALUE_DTYPES))
        dims = draw(st.sampled_from([("R", "C"), ("C",), ("R",), ()]))
        if dt in FLOATS:
            lo, hi = draw(st.sampled_from([(-2.0, 2.0), (0.0, 4.0), (-100.0, 100.0)]))
            other = draw(st.sampled_from([0.0, 1.0, -2.5]))
        else:
            full = full_range(dt)
            lo, hi = draw(st.sampled_from([(-20, 20), (0, 100), (-1000, 1000), full]))
            other = draw(st.sampled_from([0, 1, -3]))
        out.append(Input(f"in{k}", dt, dims, lo, hi, other))
    return out


SCALAR_VALUES = (2, 1, 3, 16, 0, 5, -7, 100, 3_000_000_000, -(2**31), 0.5, -1.25)


@st.composite
def programs(
    draw,
    profile: str = "cpu",
    max_statements: int = 12,
    reductions: bool | None = None,
    upstream: bool = False,
    features: tuple = (),
) -> Program:
    """A random kernel. Profile "cpu" generates reductions; "gpu" does not unless
    `reductions=True` (GPU reductions are new). `upstream=True` keeps to what upstream
    Triton 3.6 accepts as well: `tl.exp` / `tl.sqrt` of fp32 only (upstream refuses fp16,
    which tritium computes in fp32), for the differential driver (`differential/`).
    `features` adds the newer operations (`fuzz_ops.FEATURES`: "dot", "scan", "shape",
    "random", "atomic"); with "dot" a quarter of the tiles are square (16 or 32)."""
    if profile not in ("cpu", "gpu"):
        raise ValueError(f"profile must be 'cpu' or 'gpu', not {profile!r}")
    if set(features) - set(fuzz_ops.FEATURES):
        raise ValueError(f"features must be among {fuzz_ops.FEATURES}, not {features!r}")
    reductions = profile == "cpu" if reductions is None else reductions
    R = draw(st.sampled_from([4, 8, 1, 2, 16, 32]))
    C = draw(st.sampled_from([8, 4, 1, 2, 16, 32]))
    if "dot" in features and draw(st.integers(0, 3)) == 0:
        R = C = draw(st.sampled_from([16, 32]))
    grid = draw(st.integers(1, 3))
    n_rows = draw(st.integers((grid - 1) * R + 1, grid * R))
    n_cols = draw(st.integers(1, C))
    inputs = _inputs(draw, draw(st.integers(1, 3)))
    scalars = [
        Scalar(f"s{k}", draw(st.sampled_from(SCALAR_VALUES)))
        for k in range(draw(st.integers(0, 2)))
    ]
    p = Program(R, C, grid, n_rows, n_cols, inputs, scalars, [], [], draw(st.integers(0, 2**16)))
    g = _Gen(draw, p, profile, upstream, features)
    for _ in range(draw(st.integers(3, max_statements))):
        kind = draw(st.integers(0, 9))  # 0 (where shrinking goes) drops the statement
        if kind == 9 and "atomic" in features and draw(st.booleans()):
            p.body.extend(fuzz_ops.atomic(g))
        elif kind == 1:
            p.body.extend(g.loop(reductions))
        elif kind == 2:
            p.body.extend(g.branch(reductions))
        elif kind:
            p.body.append(g.assign(reductions))
    if not g.user[len(p.inputs) :]:  # at least one statement
        p.body.append(g.assign(reductions))
    names = list(reversed(g.user))
    chosen = [names[0]] + draw(st.lists(st.sampled_from(names[1:] or names), max_size=2))
    chosen = list(dict.fromkeys(chosen))
    for name in chosen:
        ty = g.types[name]
        dt = "i32" if ty.dtype == "i1" else ty.dtype
        if draw(st.integers(0, 3)) == 0:
            other = draw(st.sampled_from(VALUE_DTYPES))
            if g.ok(Cast(Name(name), other)) is not None:
                dt = other
        p.outputs.append(Output(name, dt))
    return prune(p)


# ------------------------------------------------------------------ pruning


def _uses(e) -> set:
    if isinstance(e, Name):
        return {e.id}
    out: set = set()
    for f in ("a", "b", "c"):
        if hasattr(e, f):
            out |= _uses(getattr(e, f))
    return out


def _prune_block(stmts, live: set) -> list:
    kept = []
    for s in reversed(stmts):
        if isinstance(s, ir.Atomic):  # its buffer is compared: always live
            live.discard(s.name)
            live |= _uses(s)
            kept.append(s)
            continue
        if isinstance(s, Assign):
            if s.name in live:
                live.discard(s.name)
                live |= _uses(s.expr)
                kept.append(s)
            continue
        blocks = (s.body,) if isinstance(s, Loop) else (s.then, s.orelse)
        carried = {a.name for b in blocks for a in b} & live
        if not carried:
            continue
        pruned, uses = [], set(carried)
        for b in blocks:
            inner = set(carried)
            body = _prune_block(list(b), inner)
            pruned.append(tuple(body))
            uses |= inner - ({a.name for a in body} - carried)
        if isinstance(s, Loop):
            live |= (uses - {s.var}) | _uses(s.stop)
            kept.append(Loop(s.var, s.start, s.stop, s.step, pruned[0]))
        else:
            live |= uses | _uses(s.cond)
            kept.append(If(s.cond, pruned[0], pruned[1]))
    kept.reverse()
    return kept


def prune(p: Program) -> Program:
    """Drop statements, inputs and scalar arguments no output depends on (so a shrunk
    failure prints minimally)."""
    live = {o.name for o in p.outputs}
    p.body = _prune_block(p.body, live)
    p.inputs = [x for x in p.inputs if x.name in live]
    p.scalars = [s for s in p.scalars if s.name in live]
    return p


# ------------------------------------------------------------------ running and checking

_counter = itertools.count()


def build_kernel(p: Program, interpret: bool):
    """The program's @tritium.jit kernel, compiled from its source (kept in linecache so
    errors and `inspect` show the generated lines)."""
    src = p.source()
    fname = f"<tritium-fuzz-{next(_counter)}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    ns: dict = {}
    exec(compile(src, fname, "exec"), ns)
    kernel = ns["fuzz_kernel"]
    kernel.interpret = interpret
    return kernel


def make_data(p: Program) -> dict:
    """Input arrays for `p`, from its seed; then the atomic statements' buffers."""
    rng = np.random.default_rng(p.seed)
    data = {}
    for x in p.inputs:
        n = output_size(p, x.dims) if x.dims != ("C",) else p.n_cols
        if x.dtype in FLOATS:
            v = rng.uniform(x.lo, x.hi, n)
            if rng.random() < 0.3:
                v = np.round(v * 4) / 4  # ties and exact integers
        else:
            v = rng.integers(int(x.lo), int(x.hi), n, endpoint=True, dtype=np.int64)
        data[x.name] = v.astype(NP_DTYPE[x.dtype])
    types = _types(p)
    for a in p.atomics():
        ty = types[a.name]
        n = output_size(p, ty.dims) if not a.shared else (p.n_cols if ty.dims else 1)
        lo, hi = (-2, 2) if a.op == "cas" else fuzz_ops.ATOMIC_START[ty.dtype]
        v = np.round(rng.uniform(lo, hi, n) * 4) / 4 if ty.dtype in FLOATS else (
            rng.integers(lo, hi, n, endpoint=True))  # fmt: skip
        data[a.buf] = v.astype(NP_DTYPE[ty.dtype])
    return data


def _types(p: Program) -> dict:
    types = ir.input_env(p)
    for a in p.body:  # follow names to know each output's dims
        _note_types(a, types)
    return types


def _arguments(p: Program, data: dict) -> tuple[list, list]:
    """(runtime arguments in order, the output arrays among them: the outputs', then
    copies of the atomic statements' buffers)."""
    types = _types(p)
    outs = [
        np.full(output_size(p, types[o.name].dims), SENTINEL[o.dtype], NP_DTYPE[o.dtype])
        for o in p.outputs
    ]
    outs += [data[a.buf].copy() for a in p.atomics()]
    args = [data[x.name] for x in p.inputs] + outs + [p.n_rows, p.n_cols]
    return args + [s.value for s in p.scalars], outs


def launch(p: Program, kernel, data: dict) -> list[np.ndarray]:
    args, outs = _arguments(p, data)
    kernel[(p.grid,)](*args, R=p.R, C=p.C)
    return outs


def compile_program(p: Program, stop: str = "cubin", arch: str = "sm_89") -> dict:
    """Compile `p` as a launch would specialise it (no cache, no GPU): the asm dict up to
    `stop` ("cubin" runs ptxas when it is installed, which rejects invalid PTX)."""
    from tritium import compiler
    from tritium.jit.specialize import build_spec
    from tritium.options import Options

    kernel = build_kernel(p, interpret=False)
    args, _ = _arguments(p, make_data(p))
    spec = build_spec(kernel, args + [p.R, p.C])
    options = Options(arch=arch)
    module, _ = compiler.make_ttir(kernel, spec, options, compiler.Dumper(None), None)
    asm, _ = compiler.lower(module, options, compiler.Dumper(None), None, stop=stop)
    return asm


def _note_types(s, types: dict) -> None:
    if isinstance(s, Assign):
        types[s.name] = ir.typeof(s.expr, types)
    elif isinstance(s, ir.Atomic):
        types[s.name] = ir.typeof(s.a, types)
    elif isinstance(s, If):  # reassigned names keep their type
        return
    else:
        inner = dict(types)
        inner[s.var] = Ty("i32", ())
        for a in s.body:
            _note_types(a, inner)
        for a in s.body:
            if a.name in types:
                types[a.name] = inner[a.name]


def results(p: Program) -> list[Output]:
    """What a launch of `p` is compared on: its outputs, then its atomic buffers (named
    by the buffer, in the buffer's dtype)."""
    types = _types(p) if p.atomics() else {}
    return p.outputs + [Output(a.buf, types[a.name].dtype) for a in p.atomics()]


class Mismatch(AssertionError):
    """The implementation disagrees with the model; the message holds the kernel."""


def describe(p: Program) -> str:
    scal = ", ".join(f"{s.name}={s.value!r}" for s in p.scalars)
    ins = ", ".join(f"{x.name}: {x.dtype}{list(x.dims)} in [{x.lo}, {x.hi}]" for x in p.inputs)
    return (
        f"grid=({p.grid},), R={p.R}, C={p.C}, n_rows={p.n_rows}, n_cols={p.n_cols}, seed={p.seed}"
        f"{', ' + scal if scal else ''}\ninputs: {ins}\n\n{p.source()}"
    )


def check(p: Program, interpret: bool = True, fuzzy: bool | None = None) -> dict:
    """Run `p` and compare with the model; raises `Mismatch` (with the source) if they differ.

    Returns {"compared": elements compared, "skipped": elements whose value the model
    cannot pin down (an inexact integer that may wrap, say)}."""
    fuzzy = (not interpret) if fuzzy is None else fuzzy
    data = make_data(p)
    expected = Model(p, fuzzy=fuzzy).run(data)
    try:
        kernel = build_kernel(p, interpret)
        got = launch(p, kernel, data)
    except Exception as exc:
        raise Mismatch(f"{type(exc).__name__}: {exc}\n\nfor the kernel\n{describe(p)}") from exc
    compared = skipped = 0
    problems = []
    for i, (o, g, (want, err)) in enumerate(zip(results(p), got, expected)):
        known = np.isfinite(err)
        skipped += int((~known).sum())
        compared += int(known.sum())
        g64, w64 = g.astype(np.float64), want.astype(np.float64)
        if o.dtype in FLOATS and not np.all(np.isfinite(w64[known])):
            raise AssertionError(f"the model made a non-finite value\n{describe(p)}")
        with np.errstate(invalid="ignore"):
            bad = known & ~(np.abs(g64 - w64) <= 2 * err)
        if o.dtype in INTS:  # compare integers exactly in their own type
            bad = known & np.where(err == 0, g != want, ~(np.abs(g64 - w64) <= err))
        if bad.any():
            idx = np.flatnonzero(bad)[:5]
            rows = "; ".join(
                f"[{j}] got {g[j]!r}, expected {want[j]!r} (bound {err[j]:.3g})" for j in idx
            )
            problems.append(
                f"out{i} ({o.name} as {o.dtype}): {int(bad.sum())} of {g.size} differ: {rows}"
            )
    if problems:
        mode = "interpreter" if interpret else "GPU"
        raise Mismatch(
            f"{mode} disagrees with the numpy model:\n" + "\n".join(problems) + "\n\n" + describe(p)
        )
    return {"compared": compared, "skipped": skipped}
