"""Run a kernel's TTIR (or TTGIR: layouts are ignored) on the CPU with numpy, bounds-checked.

    module = parse_module(ttir_text)
    interpret(module, grid=(n_rows,), args=[x, out, n_rows, n_cols])   # x, out: numpy arrays

runs the `tt.func` once per program id of the grid, in order (x fastest), reading and
writing the arrays in place. It is the CPU reference the GPU is checked against, so it
follows the GPU's semantics (integer wrap-around, C-style division, bf16 rounding, ...;
see `interpreter_arith.py`), and unlike upstream's interpreter mode it checks every
memory access: an unmasked lane outside every argument's buffer raises
`OutOfBoundsError` naming the op's source line, the argument and the offset
(`interpreter_memory.py` holds the address space).

How it runs: each function is compiled once per call of `interpret` into Python
closures, one per op, found by op class in `_HANDLERS`; a closure reads its operands from
a list of SSA slots (`env`) and writes its results there, so running an op costs one
call plus the numpy work. Control flow (`scf.for/if/while`, `cf.br/cond_br`, early
`tt.return`, `tt.call`) runs regions as chains of compiled blocks whose terminator names
the next block or the region's results. `tt.reduce` evaluates its combine region on whole
arrays, pairing neighbours (lower index on the left) in a tree: log2(n) region runs.
"""

from __future__ import annotations

import operator

import numpy as np
from xdsl.dialects import cf, math, scf
from xdsl.dialects.builtin import BFloat16Type, Float32Type, IntegerType, ModuleOp, TensorType
from xdsl.ir import Operation, Region, SSAValue

from tritium.errors import ArgumentError, KernelAssertionError, OutOfBoundsError, TritiumError
from tritium.ir.arith import Arith
from tritium.ir.locations import op_source_loc
from tritium.ir.tt import TT, FuncOp
from tritium.ir.ttg import TTG
from tritium.ir.types import PointerType, bitwidth, element_type, shape_of
from tritium.runtime import interpreter_values as rep
from tritium.runtime.interpreter_arith import HANDLERS as ARITH_HANDLERS
from tritium.runtime.interpreter_atomic import atomic_cas, atomic_rmw
from tritium.runtime.interpreter_memory import AddressSpace, MemoryFault
from tritium.runtime.interpreter_print import print_op
from tritium.runtime.interpreter_scan import scan

__all__ = ["interpret"]


def interpret(module: ModuleOp, grid: tuple[int, ...], args: list, kernel: str | None = None):
    """Run `kernel` (default: the module's only public `tt.func`) for every program id."""
    funcs = {op.sym_name.data: op for op in module.body.block.ops if isinstance(op, FuncOp)}
    func = funcs.get(kernel) if kernel is not None else _default_kernel(funcs)
    if func is None:
        raise ArgumentError(f"no tt.func named {kernel!r} in the module (have {list(funcs)})")
    dims = tuple(int(g) for g in grid)
    if not 1 <= len(dims) <= 3 or min(dims) < 0:
        raise ArgumentError(f"grid must be 1 to 3 non-negative ints, got {grid!r}")
    dims = dims + (1,) * (3 - len(dims))

    params = func.function_type.inputs.data
    names = [a.name_hint or f"arg{i}" for i, a in enumerate(func.body.blocks.first.args)]
    if len(args) != len(params):
        raise ArgumentError(
            f"{func.sym_name.data} takes {len(params)} arguments ({', '.join(names)}), "
            f"got {len(args)}"
        )
    arrays = []
    values: list = [None] * len(args)
    for i, (t, name, a) in enumerate(zip(params, names, args)):
        if isinstance(t, PointerType):
            arrays.append((i, name, _array_arg(a, name)))
        else:
            values[i] = _scalar_arg(a, t, name)
    memory = AddressSpace([(name, a) for _, name, a in arrays])
    for (i, _, _), ptr in zip(arrays, memory.pointers):
        values[i] = np.int64(ptr)

    compiled = {name: _Function(f) for name, f in funcs.items()}
    st = _State(memory, compiled, dims)
    entry = compiled[func.sym_name.data]
    with np.errstate(all="ignore"):
        for z in range(dims[2]):
            for y in range(dims[1]):
                for x in range(dims[0]):
                    st.pid = (np.int32(x), np.int32(y), np.int32(z))
                    entry.call(st, values)


def _default_kernel(funcs: dict[str, FuncOp]) -> FuncOp | None:
    if len(funcs) == 1:
        return next(iter(funcs.values()))
    public = [f for f in funcs.values() if f.sym_visibility and f.sym_visibility.data == "public"]
    if len(public) != 1:
        raise ArgumentError(f"the module has several tt.funcs {list(funcs)}: pass kernel=NAME")
    return public[0]


def _array_arg(a, name: str) -> np.ndarray:
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "__dlpack__"):
        try:
            return np.from_dlpack(a)
        except Exception as e:  # a GPU tensor, say
            msg = f"argument {name!r}: cannot view {type(a).__name__} as numpy: {e}"
            raise ArgumentError(msg) from None
    raise ArgumentError(
        f"argument {name!r} is a pointer: pass a numpy array, not {type(a).__name__}"
    )


def _scalar_arg(v, t, name: str):
    if isinstance(t, TensorType):
        raise ArgumentError(f"argument {name!r}: tensor parameters cannot be passed to a kernel")
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v.item()
    if isinstance(t, IntegerType):
        w = t.width.data
        try:
            iv = operator.index(v)
        except TypeError:
            raise ArgumentError(f"argument {name!r} is {t}: expected an int, got {v!r}") from None
        if not -(1 << max(w - 1, 0)) <= iv < (1 << w):
            raise ArgumentError(f"argument {name!r}: {iv} does not fit in {t}")
        return rep.wrap_int(iv, t)
    if isinstance(v, bool) or not isinstance(v, int | float | np.integer | np.floating):
        raise ArgumentError(f"argument {name!r} is {t}: expected a number, got {v!r}")
    value = rep.np_dtype(t).type(v)
    return rep.round_bf16(value) if isinstance(t, BFloat16Type) else value


class _State:
    """What a running program sees besides its SSA values."""

    __slots__ = ("mem", "funcs", "grid", "pid")

    def __init__(self, mem: AddressSpace, funcs: dict, dims: tuple[int, int, int]):
        self.mem = mem
        self.funcs = funcs
        self.grid = tuple(np.int32(d) for d in dims)
        self.pid = (np.int32(0),) * 3


class _Block:
    """A compiled block: argument slots, op closures, and a terminator closure that
    returns `(next block, its arguments)` or `(None, the region's results)`."""

    __slots__ = ("args", "ops", "term")


def _run(block: _Block, env: list, st: _State, args) -> list:
    while True:
        for s, v in zip(block.args, args):
            env[s] = v
        for f in block.ops:
            f(env, st)
        block, args = block.term(env, st)
        if block is None:
            return args


class _Function:
    """One `tt.func` compiled to closures over a slot list (calling it is `_run`)."""

    def __init__(self, func: FuncOp):
        self.name = func.sym_name.data
        self._slots: dict[SSAValue, int] = {}
        self.entry = self.region(func.body) if func.body.blocks else None

    def __call__(self, value: SSAValue) -> int:
        """The slot of an SSA value (builders call `slot(value)`)."""
        s = self._slots.get(value)
        if s is None:
            s = self._slots[value] = len(self._slots)
        return s

    def call(self, st: _State, args) -> list:
        if self.entry is None:
            raise TritiumError(f"interpreter: tt.func {self.name} has no body")
        return _run(self.entry, [None] * len(self._slots), st, args)

    def region(self, region: Region) -> _Block | None:
        """Compile a region's blocks; returns the entry block (None for an empty region)."""
        if not region.blocks:
            return None
        shells = {b: _Block() for b in region.blocks}
        for b, cb in shells.items():
            cb.args = [self(a) for a in b.args]
            ops = list(b.ops)
            last = ops[-1] if ops else None
            if last is not None and type(last) in _TERMINATORS:
                ops.pop()
                cb.term = _TERMINATORS[type(last)](last, self, shells)
            else:
                cb.term = _no_results
            cb.ops = [self.op(o) for o in ops]
        return shells[region.blocks.first]

    def op(self, op: Operation):
        build = _HANDLERS.get(type(op))
        if build is None:
            loc = op_source_loc(op)
            where = f"{loc}: " if loc else ""
            raise TritiumError(f"{where}the interpreter does not support operation '{op.name}'")
        return build(op, self)


def _no_results(env, st):
    return None, ()


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


_TERMINATOR_BUILDERS = {
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
            for o, v in zip(outs, _run(blk, env, st, ())):
                env[o] = v

    return run


def _while(op, fc):
    inits, outs = [fc(v) for v in op.arguments], [fc(r) for r in op.res]
    before, after = fc.region(op.before_region), fc.region(op.after_region)

    def run(env, st):
        vals = [env[i] for i in inits]
        while True:
            cond, *vals = _run(before, env, st, vals)
            if not cond:
                break
            vals = _run(after, env, st, vals)
        for o, v in zip(outs, vals):
            env[o] = v

    return run


def _execute_region(op, fc):
    outs, blk = [fc(r) for r in op.outs], fc.region(op.region)

    def run(env, st):
        for o, v in zip(outs, _run(blk, env, st, ())):
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


# ------------------------------------------------------------------ tt: programs, shapes


def _program_id(field):
    def build(op, fc):
        out, axis = fc(op.result), op.axis_value

        def run(env, st):
            env[out] = getattr(st, field)[axis]

        return run

    return build


def _make_range(op, fc):
    value = np.arange(op.start.value.data, op.end.value.data, dtype=np.int32)
    value.flags.writeable = False
    out = fc(op.result)

    def run(env, st):
        env[out] = value

    return run


def _shape_op(make):
    """Builder for one-operand shape ops, from `make(op) -> fn(value)`."""

    def build(op, fc):
        fn, a, out = make(op), fc(op.operands[0]), fc(op.results[0])

        def run(env, st):
            env[out] = fn(env[a])

        return run

    return build


def _broadcast(op):
    shape = shape_of(op.result.type)

    def fn(x):  # a filled copy is cheaper than np.broadcast_to's view, for these sizes
        out = np.empty(shape, x.dtype)
        out[...] = x
        return out

    return fn


def _expand_dims(op):
    axis = op.axis.value.data
    return lambda x: np.expand_dims(x, axis)


def _reshape(op):
    shape = shape_of(op.result.type)
    return lambda x: np.reshape(x, shape)


def _trans(op):
    order = op.order_list
    return lambda x: np.transpose(x, order)


def _fp_to_fp(op):
    rounding = "rtne" if op.rounding is None else ("rtz", "rtne")[op.rounding.value.data]
    return rep.float_cast(element_type(op.src.type), element_type(op.result.type), rounding)


# ------------------------------------------------------------------ tt: memory


def _addptr(op, fc):
    p, o, out = fc(op.ptr), fc(op.offset), fc(op.result)
    pointee = element_type(op.ptr.type).pointee
    size = max(bitwidth(pointee) // 8, 1)

    def run(env, st):
        env[out] = env[p] + np.asarray(env[o]).astype(np.int64) * size

    return run


def _fault(op, e: MemoryFault, st: _State) -> OutOfBoundsError:
    pid = tuple(int(p) for p in st.pid)
    return OutOfBoundsError(f"{op.name}: {e} (program id {pid})", op_source_loc(op))


def _load(op, fc):
    p, out = fc(op.ptr), fc(op.result)
    m = fc(op.mask) if op.mask is not None else None
    o = fc(op.other) if op.other is not None else None
    elem = element_type(op.result.type)
    sdt = rep.storage_dtype(elem)

    def run(env, st):
        mask = env[m] if m is not None else None
        try:
            raw = st.mem.load(env[p], mask, sdt, "load")
        except MemoryFault as e:
            raise _fault(op, e, st) from None
        val = rep.from_storage(raw, elem)
        if o is not None:
            val = np.where(mask, val, env[o])
        env[out] = val[()]

    return run


def _store(op, fc):
    p, v = fc(op.ptr), fc(op.value)
    m = fc(op.mask) if op.mask is not None else None
    elem = element_type(op.value.type)
    sdt = rep.storage_dtype(elem)

    def run(env, st):
        try:
            st.mem.store(
                env[p], rep.to_storage(env[v], elem), env[m] if m is not None else None, sdt
            )
        except MemoryFault as e:
            raise _fault(op, e, st) from None

    return run


# ------------------------------------------------------------------ tt: reduce, dot


def _reduce(op, fc):
    srcs, outs = [fc(v) for v in op.srcs], [fc(r) for r in op.res]
    axis = op.axis.value.data
    body = fc.region(op.combine_op)

    def run(env, st):
        vals = [np.moveaxis(np.asarray(env[s]), axis, -1) for s in srcs]
        n = vals[0].shape[-1]
        while n > 1:
            even = n - n % 2
            left = [v[..., 0:even:2] for v in vals]
            right = [v[..., 1:even:2] for v in vals]
            shape = left[0].shape
            res = [
                r if np.shape(r) == shape else np.broadcast_to(r, shape)
                for r in _run(body, env, st, left + right)
            ]
            if n % 2:
                res = [np.concatenate([r, v[..., even:]], axis=-1) for r, v in zip(res, vals)]
            vals, n = res, even // 2 + n % 2
        for o, v in zip(outs, vals):
            env[o] = v[..., 0][()]

    return run


def _round_tf32(x):
    """float32 -> float32 with a 10-bit mantissa, round to nearest even (NaN/inf kept)."""
    b = np.asarray(x, np.float32).view(np.uint32)
    r = (b + (np.uint32(0xFFF) + ((b >> 13) & np.uint32(1)))) & np.uint32(0xFFFFE000)
    finite = np.isfinite(np.asarray(x))
    return np.where(finite, r, b).view(np.float32)


def _dot(op, fc):
    a, b, c, out = fc(op.a), fc(op.b), fc(op.c), fc(op.d)
    ea, er = element_type(op.a.type), element_type(op.d.type)
    tf32 = op.input_precision == "tf32" and isinstance(ea, Float32Type)
    rt, post = rep.np_dtype(er), rep.rounding_for(er)
    if isinstance(ea, IntegerType):

        def run(env, st):
            acc = np.matmul(env[a].astype(np.int64), env[b].astype(np.int64))
            env[out] = (acc + env[c].astype(np.int64)).astype(rt)

        return run

    def run(env, st):
        x, y = env[a], env[b]
        if tf32:
            x, y = _round_tf32(x), _round_tf32(y)
        acc = np.matmul(x.astype(np.float64), y.astype(np.float64)) + env[c]
        r = acc.astype(rt)
        env[out] = post(r) if post is not None else r

    return run


# ------------------------------------------------------------------ dispatch

_BY_NAME = dict(ARITH_HANDLERS) | {
    "scf.for": _for,
    "scf.if": _if,
    "scf.while": _while,
    "scf.execute_region": _execute_region,
    "tt.call": _call,
    "tt.assert": _assert(lambda op: op.condition, lambda op: op.message.data),
    "cf.assert": _assert(lambda op: op.arg, lambda op: op.msg.data),
    "tt.get_program_id": _program_id("pid"),
    "tt.get_num_programs": _program_id("grid"),
    "tt.make_range": _make_range,
    "tt.splat": _shape_op(_broadcast),
    "tt.broadcast": _shape_op(_broadcast),
    "tt.expand_dims": _shape_op(_expand_dims),
    "tt.reshape": _shape_op(_reshape),
    "tt.trans": _shape_op(_trans),
    "tt.fp_to_fp": _shape_op(_fp_to_fp),
    "ttg.convert_layout": _shape_op(lambda op: lambda x: x),
    "tt.addptr": _addptr,
    "tt.load": _load,
    "tt.store": _store,
    "tt.atomic_rmw": atomic_rmw,
    "tt.atomic_cas": atomic_cas,
    "tt.reduce": _reduce,
    "tt.scan": scan,
    "tt.dot": _dot,
    "tt.print": print_op,
}

_OP_CLASSES = {
    cls.name: cls
    for dialect in (Arith, math.Math, scf.Scf, cf.Cf, TT, TTG)
    for cls in dialect.operations
}
# (an op name the dialects lack, say `arith.remf` in an older tritium.ir, is skipped)
_HANDLERS = {_OP_CLASSES[n]: build for n, build in _BY_NAME.items() if n in _OP_CLASSES}
_TERMINATORS = {_OP_CLASSES[name]: build for name, build in _TERMINATOR_BUILDERS.items()}
