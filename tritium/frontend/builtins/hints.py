"""Compiler hints (upstream's group of that name): `tl.multiple_of`, `tl.max_contiguous`,
`tl.max_constancy`, `tl.assume`, `tl.debug_barrier`.

    offs = tl.multiple_of(pid * 1024, 16)   ->  %offs = arith.muli %pid, %c1024 {tt.divisibility = dense<16> : tensor<1xi32>} : i32
    tl.assume(n > 0)                        ->  llvm.intr.assume %c : i1
    tl.debug_barrier()                      ->  gpu.barrier

The first three set an attribute (one value per dimension) on the op that made the
value, for the axis analysis to trust; a value no op made (a function argument, a
constexpr) is returned unchanged. `assume` is a promise handed to LLVM (`llvm.assume`;
the axis analysis does not read it); `debug_barrier` is a `gpu.barrier`, which the
membar pass counts as one already in place and the backend lowers to `bar.sync 0`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import OpResult

from tritium.frontend.builtins.base import builtin
from tritium.frontend.core import tensor, unwrap
from tritium.frontend.semantic import SemanticError
from tritium.ir import types as irt
from tritium.ir.gpu import BarrierOp
from tritium.ir.llvm import AssumeOp


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


@builtin
def assume(cond, _semantic=None, _generator=None):
    """Promise the compiler that the scalar `cond` holds (upstream's `tl.assume`)."""
    c = unwrap(cond)
    if not isinstance(c, tensor):
        if not isinstance(c, (bool, int)):
            raise SemanticError(f"tl.assume needs a boolean condition, got {c!r}")
        if c:
            return None  # known to hold: nothing to tell LLVM
    c = _semantic.to_tensor(c)
    if c.shape or not c.dtype.is_bool():
        raise SemanticError(f"tl.assume needs a boolean scalar condition, got {c.type}")
    _semantic.b.insert(AssumeOp(c.handle))
    return None


@builtin
def debug_barrier(_semantic=None, _generator=None):
    """Make every thread of the program wait here (upstream's `tl.debug_barrier`)."""
    _semantic.b.insert(BarrierOp())


__all__ = ["assume", "debug_barrier", "max_constancy", "max_contiguous", "multiple_of"]
