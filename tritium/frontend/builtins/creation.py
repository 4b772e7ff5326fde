"""Where values start: program ids, ranges and constant blocks.

    pid = tl.program_id(0)        ->  %pid = tt.get_program_id x : i32
    offs = tl.arange(0, 128)      ->  %offs = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    acc = tl.zeros((64, 64), tl.float32)
                                  ->  %acc = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    c = tl.cat(a, b, can_reorder=True)
                                  ->  %c = tt.cat %a, %b : tensor<64xf32> -> tensor<128xf32>

Axes, bounds and shapes are compile-time integers; the rules live in `semantic.py`.
"""

from __future__ import annotations

from tritium.frontend.builtins.base import builtin, dtype_arg, int_arg, shape_arg
from tritium.frontend.core import tensor, unwrap


@builtin
def program_id(axis, _semantic=None, _generator=None):
    return _semantic.program_id(int_arg(axis, "program_id's axis"))


@builtin
def num_programs(axis, _semantic=None, _generator=None):
    return _semantic.num_programs(int_arg(axis, "num_programs's axis"))


@builtin
def arange(start, end, _semantic=None, _generator=None):
    return _semantic.arange(int_arg(start, "tl.arange's start"), int_arg(end, "tl.arange's end"))


@builtin
def full(shape, value, dtype, _semantic=None, _generator=None):
    shape = shape_arg(shape)
    dtype = dtype_arg(dtype)
    value = unwrap(value)
    if isinstance(value, tensor):
        v = _semantic.cast(value, dtype)
        return _semantic.broadcast_to(v, shape) if shape else v
    _semantic.check_shape(shape)
    return _semantic.full(shape, value, dtype)


@builtin
def zeros(shape, dtype, _semantic=None, _generator=None):
    return full(shape, 0, dtype, _semantic=_semantic)


@builtin
def zeros_like(input, _semantic=None, _generator=None):
    return _semantic.full(input.shape, 0, input.dtype)


@builtin
def full_like(input, value, _semantic=None, _generator=None):
    return full(input.shape, value, input.dtype, _semantic=_semantic)


@builtin
def cat(input, other, can_reorder=False, _semantic=None, _generator=None):
    """`input` then `other` (1D, one type). Upstream may reorder the elements and so
    requires `can_reorder=True`; tritium keeps them in order."""
    return _semantic.cat(unwrap(input), unwrap(other), bool(unwrap(can_reorder)))


__all__ = ["arange", "cat", "full", "full_like", "num_programs", "program_id", "zeros", "zeros_like"]
