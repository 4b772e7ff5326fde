"""The interpreter's shape ops, layout conversions and `tt.fp_to_fp`: numpy reshapes of
whole tensors (TTGIR layouts are ignored: every program holds its whole tensors).

    %r = tt.make_range {start = 0, end = 4}  ->  np.arange(0, 4, dtype=int32) (read-only)
    %b = tt.broadcast %s : 1x64 -> 32x64     ->  a filled 32x64 copy
    %e = tt.expand_dims %s {axis = 0}        ->  np.expand_dims(s, 0)
    %c = ttg.convert_layout %x               ->  x
"""

from __future__ import annotations

import numpy as np

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


HANDLERS = {
    "tt.make_range": _make_range,
    "tt.splat": _shape_op(_broadcast),
    "tt.broadcast": _shape_op(_broadcast),
    "tt.expand_dims": _shape_op(_expand_dims),
    "tt.reshape": _shape_op(_reshape),
    "tt.trans": _shape_op(_trans),
    "tt.fp_to_fp": _shape_op(_fp_to_fp),
    "ttg.convert_layout": _shape_op(lambda op: lambda x: x),
}

__all__ = ["HANDLERS"]
