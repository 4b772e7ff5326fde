"""Small helpers for frontend tests: compile a kernel to TTIR text for a signature."""

from __future__ import annotations

from tritium.frontend.signature import parse_signature
from tritium.frontend.ttir import ast_to_ttir
from tritium.ir import tt
from tritium.ir.printer import print_ir


def ttir(fn, signature, constexprs=None, debug=False):
    module, _ = ast_to_ttir(fn, parse_signature(fn, signature, constexprs or {}), debug=debug)
    return module


def ttir_text(fn, signature, constexprs=None, debug=False) -> str:
    return print_ir(ttir(fn, signature, constexprs, debug))


def op_names(module) -> list[str]:
    return [op.name for op in module.walk() if op.name not in ("builtin.module", tt.FuncOp.name)]


def result_types(module, op_name: str) -> list[str]:
    return [str(r.type) for op in module.walk() if op.name == op_name for r in op.results]
