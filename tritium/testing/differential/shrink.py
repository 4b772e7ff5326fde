"""Shrinking a random kernel while a mismatch persists.

    small = shrink(program, still_fails)     # still_fails(candidate) -> bool

Greedy, on the program form (fuzz_ir.py), smallest steps last: drop an output; shrink the
launch (one program, fewer rows and columns, smaller tiles); drop a statement anywhere
(in loops and branches too); inline a loop's body once or a branch's side; replace an
expression by one of its operands; replace a name assigned once by its expression; store
an output in its own dtype. Each accepted step
is pruned (`fuzz.prune`: what no output needs goes), and the first candidate that still
fails is taken, until none does or `budget` candidates were tried. Candidates that no
longer render (a name lost its definition, a type rule breaks) are skipped here; whether
a candidate is still defined (no division by zero, ...) is `still_fails`'s to say.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator

from tritium.testing import fuzz_ir as ir
from tritium.testing.fuzz import prune
from tritium.testing.fuzz_ir import Assign, If, Lit, Loop, Name, Output, Program


def _children(e) -> list:
    return [getattr(e, f) for f in ("c", "a", "b") if hasattr(e, f)]


def _substitute(e, name: str, value):
    """`e` with every Name(name) replaced by `value`."""
    if isinstance(e, Name):
        return value if e.id == name else e
    if not dataclasses.is_dataclass(e):
        return e
    changes = {f: _substitute(getattr(e, f), name, value)
               for f in ("a", "b", "c") if hasattr(e, f)}  # fmt: skip
    return dataclasses.replace(e, **changes) if changes else e


def _subst_block(stmts, name: str, value) -> tuple:
    out = []
    for s in stmts:
        if isinstance(s, Assign):
            out.append(Assign(s.name, _substitute(s.expr, name, value)))
        elif isinstance(s, ir.Atomic):
            out.append(_substitute(s, name, value))
        elif isinstance(s, Loop):
            stop = _substitute(s.stop, name, value)
            out.append(Loop(s.var, s.start, stop, s.step, _subst_block(s.body, name, value)))
        else:
            cond = _substitute(s.cond, name, value)
            then, orelse = (_subst_block(b, name, value) for b in (s.then, s.orelse))
            out.append(If(cond, then, orelse))
    return tuple(out)


def _expr_edits(e) -> Iterator:
    """Simpler expressions in place of `e`: its operands, or `e` with one operand simpler."""
    kids = _children(e)
    yield from kids
    for f in ("c", "a", "b"):
        if hasattr(e, f):
            for k in _expr_edits(getattr(e, f)):
                yield dataclasses.replace(e, **{f: k})


def _block_edits(stmts: tuple) -> Iterator[tuple]:
    stmts = tuple(stmts)
    for i, s in enumerate(stmts):
        head, tail = stmts[:i], stmts[i + 1 :]
        yield head + tail
        if isinstance(s, Loop):
            if isinstance(s.stop, Lit) or s.stop != Lit(s.start):
                once = _subst_block(s.body, s.var, Lit(s.start))
                yield head + once + tail  # one trip, inlined
            for body in _block_edits(s.body):
                yield head + (Loop(s.var, s.start, s.stop, s.step, body),) + tail
        elif isinstance(s, If):
            yield head + tuple(s.then) + tail
            yield head + tuple(s.orelse) + tail
            for then in _block_edits(s.then):
                yield head + (If(s.cond, then, s.orelse),) + tail
            for orelse in _block_edits(s.orelse):
                yield head + (If(s.cond, s.then, orelse),) + tail
        elif isinstance(s, ir.Atomic):
            for e in _expr_edits(s.a):
                yield head + (dataclasses.replace(s, a=e),) + tail
        else:
            for e in _expr_edits(s.expr):
                yield head + (Assign(s.name, e),) + tail


def _assigned(stmts) -> list[str]:
    out = []
    for s in stmts:
        if isinstance(s, Assign | ir.Atomic):
            out.append(s.name)
        elif isinstance(s, Loop):
            out += _assigned(s.body)
        else:
            out += _assigned(s.then) + _assigned(s.orelse)
    return out


def _inlines(stmts: tuple) -> Iterator[tuple]:
    """A name assigned once, replaced by its expression where it is used."""
    counts = _assigned(stmts)
    for i, s in enumerate(stmts):
        if isinstance(s, Assign) and counts.count(s.name) == 1:
            yield stmts[:i] + _subst_block(stmts[i + 1 :], s.name, s.expr)


def _with(p: Program, **changes) -> Program:
    q = copy.copy(p)
    for k, v in changes.items():
        setattr(q, k, v)
    q.inputs, q.scalars, q.outputs = list(q.inputs), list(q.scalars), list(q.outputs)
    return q


def _launch_edits(p: Program) -> Iterator[Program]:
    if p.grid > 1:
        yield _with(p, grid=1, n_rows=min(p.n_rows, p.R))
    if p.R > 1:
        R = p.R // 2
        yield _with(p, R=R, n_rows=min(p.n_rows, p.grid * R) if p.grid == 1 else p.grid * R)
    if p.C > 1:
        yield _with(p, C=p.C // 2, n_cols=min(p.n_cols, p.C // 2))
    if p.n_rows > (p.grid - 1) * p.R + 1:
        yield _with(p, n_rows=(p.grid - 1) * p.R + 1)
    if p.n_cols > 1:
        yield _with(p, n_cols=1)


def candidates(p: Program) -> Iterator[Program]:
    for i in range(len(p.outputs)) if len(p.outputs) > 1 else ():
        yield _with(p, outputs=p.outputs[:i] + p.outputs[i + 1 :])
    yield from _launch_edits(p)
    for body in _block_edits(tuple(p.body)):
        yield _with(p, body=list(body))
    stored = {o.name for o in p.outputs}
    for body in _inlines(tuple(p.body)):
        if stored <= set(_assigned(body)) | {x.name for x in p.inputs}:
            yield _with(p, body=list(body))
    types = ir.input_env(p)
    for s in p.body:
        if isinstance(s, Assign):
            types[s.name] = ir.typeof(s.expr, types)
        elif isinstance(s, ir.Atomic):
            types[s.name] = ir.typeof(s.a, types)
    for i, o in enumerate(p.outputs):
        own = types.get(o.name)
        if own is not None and own.dtype not in (o.dtype, "i1"):
            yield _with(p, outputs=p.outputs[:i] + [Output(o.name, own.dtype)] + p.outputs[i + 1 :])


def _assigns_a_constant(stmts, env: dict) -> bool:
    """Whether a statement assigns an expression of constants only (`t = 0.5`): the
    language makes that a tensor (fp32 here), the fuzzer's typing keeps it a literal, so
    the generator never writes one, and neither may the shrinker."""
    for s in stmts:
        if isinstance(s, Assign | ir.Atomic):
            t = ir.typeof(s.expr if isinstance(s, Assign) else s.a, env)
            if t.weak:
                return True
            env[s.name] = t
        elif isinstance(s, Loop):
            inner = dict(env)
            inner[s.var] = ir.Ty("i32", ())
            if _assigns_a_constant(s.body, inner):
                return True
            env.update({n: inner[n] for n in _assigned(s.body) if n in env})
        elif any(_assigns_a_constant(b, dict(env)) for b in (s.then, s.orelse)):
            return True
    return False


def renders(p: Program) -> bool:
    """Whether `p` is a program the generator could have written: every name defined,
    every type rule kept, no constant assigned."""
    if not p.outputs or not ir.shapes_ok(p):
        return False
    try:
        p.source()
        return not _assigns_a_constant(p.body, ir.input_env(p))
    except (KeyError, ir.TypeRuleError, TypeError, ValueError):
        return False


def shrink(p: Program, still_fails: Callable[[Program], bool], budget: int = 400) -> Program:
    best, tried = p, 0
    progress = True
    while progress and tried < budget:
        progress = False
        for cand in candidates(best):
            cand = prune(cand)
            if not renders(cand):
                continue
            tried += 1
            if still_fails(cand):
                best, progress = cand, True
                break
            if tried >= budget:
                break
    return best
