"""The interpreter's shape ops, layout conversions and `tt.fp_to_fp`: numpy reshapes of
whole tensors (TTGIR layouts are ignored: every program holds its whole tensors).

    %r = tt.make_range {start = 0, end = 4}  ->  np.arange(0, 4, dtype=int32) (read-only)
    %b = tt.broadcast %s : 1x64 -> 32x64     ->  a filled 32x64 copy
    %e = tt.expand_dims %s {axis = 0}        ->  np.expand_dims(s, 0)
    %c = ttg.convert_layout %x               ->  x
    %j = tt.join %a, %b                      ->  np.stack([a, b], axis=-1)
    %l, %r = tt.split %j                     ->  j[..., 0], j[..., 1]
    %c = tt.cat %a, %b                       ->  np.concatenate([a, b])  (in order)
    %g = tt.gather %x[%i] {axis = 0}         ->  np.take_along_axis(x, i, 0) (indices checked)
    %h = tt.histogram %x, %m                 ->  counts of 0 <= x < bins where m
"""

from __future__ import annotations

import numpy as np

from tritium.errors import OutOfBoundsError
from tritium.ir.locations import op_source_loc
from tritium.ir.types import element_type, shape_of
from tritium.runtime.interpreter import values as rep


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


def _join(op, fc):
    a, b, out = fc(op.lhs), fc(op.rhs), fc(op.result)

    def run(env, st):
        env[out] = np.stack([env[a], env[b]], axis=-1)

    return run


def _split(op, fc):
    src, lhs, rhs = fc(op.src), fc(op.outLHS), fc(op.outRHS)

    def run(env, st):
        x = env[src]
        env[lhs], env[rhs] = x[..., 0].copy(), x[..., 1].copy()

    return run


def _cat(op, fc):
    a, b, out = fc(op.lhs), fc(op.rhs), fc(op.result)

    def run(env, st):
        env[out] = np.concatenate([env[a], env[b]], axis=0)

    return run


def _gather(op, fc):
    src, idx, out = fc(op.src), fc(op.indices), fc(op.result)
    axis = op.axis.value.data
    shape = shape_of(op.result.type)

    def run(env, st):
        x, i = env[src], np.asarray(env[idx]).astype(np.int64)
        n = x.shape[axis]
        bad = (i < 0) | (i >= n)
        if bad.any():
            pid = tuple(int(p) for p in st.pid)
            raise OutOfBoundsError(
                f"tt.gather: index {int(i[bad].flat[0])} is out of range [0, {n}) along axis "
                f"{axis} (program id {pid})",
                op_source_loc(op),
            )
        # the non-gathered dims of the indices may be shorter than the source's
        x = x[tuple(slice(None) if d == axis else slice(0, s) for d, s in enumerate(shape))]
        env[out] = np.take_along_axis(x, i, axis)

    return run


def _histogram(op, fc):
    src, out = fc(op.src), fc(op.result)
    mask = fc(op.mask) if op.mask is not None else None
    bins = shape_of(op.result.type)[0]
    rt = rep.np_dtype(element_type(op.result.type))

    def run(env, st):
        x = np.asarray(env[src]).astype(np.int64)
        keep = (x >= 0) & (x < bins)
        if mask is not None:
            keep &= np.broadcast_to(np.asarray(env[mask], bool), x.shape)
        env[out] = np.bincount(x[keep], minlength=bins).astype(rt)

    return run


HANDLERS = {
    "tt.make_range": _make_range,
    "tt.splat": _shape_op(_broadcast),
    "tt.broadcast": _shape_op(_broadcast),
    "tt.expand_dims": _shape_op(_expand_dims),
    "tt.reshape": _shape_op(_reshape),
    "tt.trans": _shape_op(_trans),
    "tt.fp_to_fp": _shape_op(_fp_to_fp),
    "ttg.convert_layout": _shape_op(lambda op: lambda x: x),
    "tt.join": _join,
    "tt.split": _split,
    "tt.cat": _cat,
    "tt.gather": _gather,
    "tt.histogram": _histogram,
}

__all__ = ["HANDLERS"]
