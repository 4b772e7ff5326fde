"""One xDSL `Context` with every dialect tritium reads or writes loaded (`math`, which a
compile that has no math op never needs, registered: loaded when first looked up)."""

from __future__ import annotations

from functools import cache

from xdsl.context import Context
from xdsl.dialects import builtin, cf, scf


@cache
def _dialects():
    from tritium.ir import ttg_memory, ttg_mma  # noqa: F401  (both register into TTG)
    from tritium.ir.arith import Arith
    from tritium.ir.gpu import GPU
    from tritium.ir.llvm import LLVM
    from tritium.ir.tt import TT
    from tritium.ir.ttg import TTG
    from tritium.ir.ttng import TTNG

    return [builtin.Builtin, Arith, scf.Scf, cf.Cf, TT, TTG, TTNG, GPU, LLVM]


def make_context() -> Context:
    """A fresh context; cheap enough to build per parse."""
    ctx = Context(allow_unregistered=False)
    for d in _dialects():
        ctx.load_dialect(d)
    ctx.register_dialect("math", _math)
    return ctx


def _math():
    from xdsl.dialects.math import Math

    return Math


def every_dialect() -> list:
    """Every dialect a context reads, the registered ones loaded."""
    return [*_dialects(), _math()]
