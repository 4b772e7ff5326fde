"""Compiler hints: `tl.multiple_of`, `tl.max_contiguous`, `tl.max_constancy`.

    offs = tl.multiple_of(pid * 1024, 16)   ->  %offs = arith.muli %pid, %c1024 {tt.divisibility = dense<16> : tensor<1xi32>} : i32

Each sets an attribute (one value per dimension) on the op that made the value, for the
axis analysis to trust; a value no op made (a function argument, a constexpr) is
returned unchanged.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import OpResult

from tritium.frontend.builtins.base import builtin
from tritium.frontend.core import tensor, unwrap
from tritium.frontend.semantic import SemanticError
from tritium.ir import types as irt


@builtin
def multiple_of(input, values, _semantic=None, _generator=None):
    return _hint(input, values, "tt.divisibility")


@builtin
def max_contiguous(input, values, _semantic=None, _generator=None):
    return _hint(input, values, "tt.contiguity")


@builtin
def max_constancy(input, values, _semantic=None, _generator=None):
    return _hint(input, values, "tt.constancy")


def _hint(x, values, key: str):
    x = unwrap(x)
    vals = unwrap(values)
    vals = [unwrap(v) for v in (vals if isinstance(vals, (tuple, list)) else [vals])]
    if not isinstance(x, tensor) or not isinstance(x.handle, OpResult):
        return x
    rank = len(x.shape) or 1
    if len(vals) != rank:
        raise SemanticError(f"{key.split('.')[1]} needs {rank} value(s), one per dimension")
    attr = DenseIntOrFPElementsAttr.from_list(irt.tensor((rank,), irt.i32), vals)
    x.handle.op.attributes[key] = attr
    return x


__all__ = ["max_constancy", "max_contiguous", "multiple_of"]
