"""Shared helpers for the pass tests: parse a snippet, run passes, find values by name."""

from __future__ import annotations

from xdsl.ir import SSAValue

from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir
from tritium.passes.pipeline import run_passes
from tritium.passes.utils import walk_values


def run(text: str, passes: list[str], ttgir: bool = False, **options):
    """Parse `text`, run `passes` (verifying after each) and return (module, printed IR)."""
    module = parse_module(text)
    run_passes(module, passes, options, verify=True, ttgir=ttgir)
    return module, print_ir(module)


def value(module, name: str) -> SSAValue:
    """The SSA value printed as `%name` in the source snippet."""
    found = [v for v in walk_values(module) if v.name_hint == name]
    assert len(found) == 1, f"{len(found)} values named %{name}"
    return found[0]


def func(body: str, args: str = "", rets: str = "") -> str:
    """Wrap op lines into `module { tt.func public @k(args) { body tt.return } }`."""
    return (
        "module {\n  tt.func public @k("
        + args
        + ") attributes {noinline = false} {\n"
        + body
        + "\n    tt.return\n  }\n}\n"
    )


DIV16 = "{tt.divisibility = 16 : i32}"


def vector_add(block: int, elem: str = "f32", hints: bool = True) -> str:
    h = f" {DIV16}" if hints else ""
    args = f"%x_ptr: !tt.ptr<{elem}>{h}, %y_ptr: !tt.ptr<{elem}>{h}, %out_ptr: !tt.ptr<{elem}>{h}, %n: i32{h}"
    body = f"""
    %cB = arith.constant {block} : i32
    %pid = tt.get_program_id x : i32
    %start = arith.muli %pid, %cB : i32
    %r = tt.make_range {{end = {block} : i32, start = 0 : i32}} : tensor<{block}xi32>
    %s = tt.splat %start : i32 -> tensor<{block}xi32>
    %offs = arith.addi %s, %r : tensor<{block}xi32>
    %ns = tt.splat %n : i32 -> tensor<{block}xi32>
    %mask = arith.cmpi slt, %offs, %ns : tensor<{block}xi32>
    %xs = tt.splat %x_ptr : !tt.ptr<{elem}> -> tensor<{block}x!tt.ptr<{elem}>>
    %xp = tt.addptr %xs, %offs : tensor<{block}x!tt.ptr<{elem}>>, tensor<{block}xi32>
    %x = tt.load %xp, %mask : tensor<{block}x!tt.ptr<{elem}>>
    %ys = tt.splat %y_ptr : !tt.ptr<{elem}> -> tensor<{block}x!tt.ptr<{elem}>>
    %yp = tt.addptr %ys, %offs : tensor<{block}x!tt.ptr<{elem}>>, tensor<{block}xi32>
    %y = tt.load %yp, %mask : tensor<{block}x!tt.ptr<{elem}>>
    %z = arith.addf %x, %y : tensor<{block}x{elem}>
    %os = tt.splat %out_ptr : !tt.ptr<{elem}> -> tensor<{block}x!tt.ptr<{elem}>>
    %op = tt.addptr %os, %offs : tensor<{block}x!tt.ptr<{elem}>>, tensor<{block}xi32>
    tt.store %op, %z, %mask : tensor<{block}x!tt.ptr<{elem}>>
    """
    return func(body, args)
