"""The interpreter's control flow: terminators, `scf.for/if/while/execute_region`,
`tt.call`, `tt.assert` / `cf.assert`.

    scf.for %i = %lb to %ub step %s iter_args(%acc = %init) -> (f32) { ... scf.yield %a }
    ->  run(env, st): for i in range(lb, ub, s): env[%i], env[%acc] = i, vals; body ops;
                      vals = the yield's operands

Each builder compiles its regions once (`fc.region(...)`, fc being the function being
compiled) and runs them with `blocks.run_block`. A terminator builder
`build(op, fc, shells) -> term(env, st)` returns `(next block, its arguments)` for
`cf.br`/`cf.cond_br` and `(None, the region's results)` for the yields and returns.
"""

from __future__ import annotations

import numpy as np

from tritium.errors import KernelAssertionError, TritiumError
from tritium.ir.locations import op_source_loc
from tritium.runtime.interpreter import values as rep
from tritium.runtime.interpreter.blocks import run_block

# ------------------------------------------------------------------ terminators


def _t_values(op, fc, shells):
    ins = [fc(v) for v in op.operands]

    def term(env, st):
        return None, [env[i] for i in ins]

    return term


def _t_br(op, fc, shells):
    target, ins = shells[op.successor], [fc(v) for v in op.arguments]

    def term(env, st):
        return target, [env[i] for i in ins]

    return term


def _t_cond_br(op, fc, shells):
    c = fc(op.cond)
    t_blk, t_ins = shells[op.then_block], [fc(v) for v in op.then_arguments]
    e_blk, e_ins = shells[op.else_block], [fc(v) for v in op.else_arguments]

    def term(env, st):
        if env[c]:
            return t_blk, [env[i] for i in t_ins]
        return e_blk, [env[i] for i in e_ins]

    return term


TERMINATORS = {
    "tt.return": _t_values,
    "tt.reduce.return": _t_values,
    "tt.scan.return": _t_values,
    "scf.yield": _t_values,
    "scf.condition": _t_values,  # [cond, *args]
    "cf.br": _t_br,
    "cf.cond_br": _t_cond_br,
}


# ------------------------------------------------------------------ control flow


def _for(op, fc):
    lb, ub, step = fc(op.lb), fc(op.ub), fc(op.step)
    inits, outs = [fc(v) for v in op.iter_args], [fc(r) for r in op.res]
    body = fc.region(op.body)
    iv, carried, ops, term = body.args[0], body.args[1:], body.ops, body.term
    make_iv = rep.np_dtype(op.lb.type).type

    def run(env, st):
        lo, hi, s = int(env[lb]), int(env[ub]), int(env[step])
        vals = [env[i] for i in inits]
        if lo < hi:
            if s <= 0:
                raise TritiumError(f"{op_source_loc(op)}: scf.for step must be positive, got {s}")
            for i in range(lo, hi, s):
                env[iv] = make_iv(i)
                for slot, v in zip(carried, vals):
                    env[slot] = v
                for f in ops:
                    f(env, st)
                vals = term(env, st)[1]
        for o, v in zip(outs, vals):
            env[o] = v

    return run


def _if(op, fc):
    c, outs = fc(op.cond), [fc(r) for r in op.output]
    then_blk, else_blk = fc.region(op.true_region), fc.region(op.false_region)

    def run(env, st):
        blk = then_blk if env[c] else else_blk
        if blk is not None:
            for o, v in zip(outs, run_block(blk, env, st, ())):
                env[o] = v

    return run


def _while(op, fc):
    inits, outs = [fc(v) for v in op.arguments], [fc(r) for r in op.res]
    before, after = fc.region(op.before_region), fc.region(op.after_region)

    def run(env, st):
        vals = [env[i] for i in inits]
        while True:
            cond, *vals = run_block(before, env, st, vals)
            if not cond:
                break
            vals = run_block(after, env, st, vals)
        for o, v in zip(outs, vals):
            env[o] = v

    return run


def _execute_region(op, fc):
    outs, blk = [fc(r) for r in op.outs], fc.region(op.region)

    def run(env, st):
        for o, v in zip(outs, run_block(blk, env, st, ())):
            env[o] = v

    return run


def _call(op, fc):
    name = op.callee.root_reference.data
    ins, outs = [fc(v) for v in op.args], [fc(r) for r in op.res]

    def run(env, st):
        callee = st.funcs.get(name)
        if callee is None:
            raise TritiumError(f"{op_source_loc(op)}: tt.call of unknown function @{name}")
        for o, v in zip(outs, callee.call(st, [env[i] for i in ins])):
            env[o] = v

    return run


def _assert(cond_of, msg_of):
    def build(op, fc):
        c, msg = fc(cond_of(op)), msg_of(op)

        def run(env, st):
            ok = env[c]
            if not np.all(ok):
                where = ""
                if np.ndim(ok):
                    first = tuple(int(i) for i in np.argwhere(~np.asarray(ok))[0])
                    where = f", first failing element {first}"
                pid = tuple(int(p) for p in st.pid)
                raise KernelAssertionError(
                    f"{msg} (program id {pid}{where})", op_source_loc(op)
                ) from None

        return run

    return build


HANDLERS = {
    "scf.for": _for,
    "scf.if": _if,
    "scf.while": _while,
    "scf.execute_region": _execute_region,
    "tt.call": _call,
    "tt.assert": _assert(lambda op: op.condition, lambda op: op.message.data),
    "cf.assert": _assert(lambda op: op.arg, lambda op: op.msg.data),
}

__all__ = ["HANDLERS", "TERMINATORS"]
