"""The interpreter's op table: the builder of every op it runs, by op class.

    HANDLERS[arith.AddiOp] = build      build(op, fc) -> run(env, st)   (once per op)
    TERMINATORS[scf.YieldOp] = build    build(op, fc, shells) -> term(env, st)

Each op family's module names its builders by op name (`arith.py`, `control_flow.py`,
`spmd.py`, `shape.py`, `load_store.py`, `atomic.py`, `reduce.py`, `scan.py`, `dot.py`,
`print_op.py`, `hints.py`); this module merges them and maps the names to the dialects' op classes.
It is the one place that imports them all, and none of them imports it.
"""

from __future__ import annotations

from xdsl.dialects import cf, math, scf

from tritium.ir.arith import Arith
from tritium.ir.gpu import GPU
from tritium.ir.llvm import LLVM
from tritium.ir.tt import TT
from tritium.ir.ttg import TTG
from tritium.runtime.interpreter import (
    arith,
    atomic,
    control_flow,
    dot,
    hints,
    load_store,
    print_op,
    reduce,
    scan,
    shape,
    spmd,
)

_BY_NAME = (
    arith.HANDLERS
    | control_flow.HANDLERS
    | spmd.HANDLERS
    | shape.HANDLERS
    | load_store.HANDLERS
    | atomic.HANDLERS
    | reduce.HANDLERS
    | scan.HANDLERS
    | dot.HANDLERS
    | print_op.HANDLERS
    | hints.HANDLERS
)

_OP_CLASSES = {
    cls.name: cls
    for dialect in (Arith, math.Math, scf.Scf, cf.Cf, TT, TTG, GPU, LLVM)
    for cls in dialect.operations
}
# (an op name the dialects lack, say `arith.remf` in an older tritium.ir, is skipped)
HANDLERS = {_OP_CLASSES[n]: build for n, build in _BY_NAME.items() if n in _OP_CLASSES}
TERMINATORS = {_OP_CLASSES[name]: build for name, build in control_flow.TERMINATORS.items()}

__all__ = ["HANDLERS", "TERMINATORS"]
