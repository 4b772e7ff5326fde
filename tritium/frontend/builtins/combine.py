"""The combine region of `tt.reduce` and `tt.scan`, and the standard combine functions.

    s = tl.sum(x, 0)   ->  %s = "tt.reduce"(%x) <{axis = 0 : i32}> ({
                           ^bb0(%0: f32, %1: f32):
                             %s_1 = arith.addf %0, %1 : f32     (the inlined _sum_combine)
                             tt.reduce.return %s_1 : f32
                           }) : (tensor<128xf32>) -> f32

`combine_block` builds the region's block: the combine function is a `@jit` function (a
KernelSource),
inlined by the code generator the builtin received (`_generator`). The combine
functions of `tl.sum`, `max`, `min`, `argmax`, `argmin`, `xor_sum`, `cumsum` and
`cumprod` are written in the language itself, as upstream's `standard.py`.
"""

from __future__ import annotations

from xdsl.ir import Block

from tritium.frontend.builtins.elementwise import maximum, minimum, where
from tritium.frontend.core import constexpr, tensor, unwrap
from tritium.frontend.kernel_source import KernelSource
from tritium.frontend.semantic import SemanticError


def combine_block(elts, combine_fn, return_op, what: str, semantic, generator) -> Block:
    """The combine region's block for scalars of dtypes `elts`: 2*N arguments (the left
    values, then the right ones), the inlined `combine_fn`, and `return_op(values)`,
    each result cast to its operand's dtype."""
    combine_fn = unwrap(combine_fn)
    if not generator.is_jit_function(combine_fn):
        name = getattr(combine_fn, "__name__", repr(combine_fn))
        raise SemanticError(f"the combine function must be a @jit function, got `{name}`")
    block = Block(arg_types=[e.to_ir() for e in elts] * 2)
    with semantic.b.at(block):
        args = [tensor(a, e) for a, e in zip(block.args, list(elts) * 2)]
        out = generator.call_jit(combine_fn, args)
        out = list(out) if isinstance(out, tuple) else [out]
        if len(out) != len(elts):
            raise SemanticError(
                f"the combine function returned {len(out)} value(s) for {len(elts)} {what}"
            )
        vals = []
        for o, e in zip(out, elts):
            o = unwrap(o)
            if o is None:
                raise SemanticError("the combine function must return a value")
            o = semantic.to_tensor(o, e)
            if o.shape:
                raise SemanticError("a combine function must return scalars")
            vals.append(semantic.cast(o, e).handle)
        semantic.b.insert(return_op(vals))
    return block


# ---------------------------------------------------------------------- combine functions
@KernelSource
def _take_first(a, b):
    """Keeps the first element: reducing a size-1 axis to a scalar, as upstream's core.py."""
    return a


@KernelSource
def _sum_combine(a, b):
    return a + b


@KernelSource
def _prod_combine(a, b):
    return a * b


@KernelSource
def _xor_combine(a, b):
    return a ^ b


@KernelSource
def _elementwise_max(a, b):
    return maximum(a, b)


@KernelSource
def _elementwise_min(a, b):
    return minimum(a, b)


@KernelSource
def _argmax_combine(value1, index1, value2, index2, tie_break_left: constexpr):
    if tie_break_left:
        tie = value1 == value2 and index1 < index2
    else:
        tie = False
    gt = value1 > value2 or tie
    v_ret = where(gt, value1, value2)
    i_ret = where(gt, index1, index2)
    return v_ret, i_ret


@KernelSource
def _argmax_combine_tie_break_left(value1, index1, value2, index2):
    return _argmax_combine(value1, index1, value2, index2, True)


@KernelSource
def _argmax_combine_tie_break_fast(value1, index1, value2, index2):
    return _argmax_combine(value1, index1, value2, index2, False)


@KernelSource
def _argmin_combine(value1, index1, value2, index2, tie_break_left: constexpr):
    if tie_break_left:
        tie = value1 == value2 and index1 < index2
    else:
        tie = False
    lt = value1 < value2 or tie
    value_ret = where(lt, value1, value2)
    index_ret = where(lt, index1, index2)
    return value_ret, index_ret


@KernelSource
def _argmin_combine_tie_break_left(value1, index1, value2, index2):
    return _argmin_combine(value1, index1, value2, index2, True)


@KernelSource
def _argmin_combine_tie_break_fast(value1, index1, value2, index2):
    return _argmin_combine(value1, index1, value2, index2, False)


__all__ = ["combine_block"]
