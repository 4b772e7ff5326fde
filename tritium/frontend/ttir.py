"""Kernel entry: a `@jit` function plus a signature becomes a TTIR module.

    tt.func public @add_kernel(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, ...,
                               %n_elements: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false}

Runtime parameters become the function's arguments, in order; constexpr parameters (and
ints specialised as equal to 1) are folded into the body and do not appear. A tuple
argument (upstream's tuple parameters) is flattened into leaves named by their path,
`t.0`, `t.1.0`, ..., each a runtime argument or a constant; the kernel sees the tuple.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.utils.exceptions import VerifyException

from tritium.errors import CompilationError, SourceLoc
from tritium.frontend import param_annotations
from tritium.frontend.builder import Builder, name_value
from tritium.frontend.codegen import CodeGenerator
from tritium.frontend.core import constexpr, dtype, pointer_type, tensor
from tritium.frontend.semantic import Semantic
from tritium.frontend.semantic_errors import SemanticError
from tritium.ir import tt
from tritium.ir.locations import file_loc


@dataclass
class KernelSpec:
    """What a kernel is compiled for: one entry per parameter, in order.

    `types[name]` is the dtype of a runtime parameter; `constants[name]` the value of a
    constexpr (or specialised) one; `divisible_by_16` names the runtime parameters that
    get `tt.divisibility = 16`. A tuple parameter `t` has an entry per leaf instead
    (`t.0`, `t.1.0`, ...; an empty tuple is the constant `()`).
    """

    types: dict[str, dtype] = field(default_factory=dict)
    constants: dict[str, object] = field(default_factory=dict)
    divisible_by_16: set[str] = field(default_factory=set)


def _leaves(spec: KernelSpec, name: str) -> list[str]:
    """The spec entries of parameter `name`: itself, or its tuple's leaves in order."""
    if name in spec.types or name in spec.constants:
        return [name]
    prefix = name + "."
    return [n for n in (*spec.types, *spec.constants) if n.startswith(prefix)]


def _tuple_of(path: str, scope: dict) -> tuple:
    """The tuple at `path` rebuilt from its leaves' values in `scope` (`t.0`, `t.1.0`, ...)."""
    out = []
    for i in range(len(scope)):
        elem = f"{path}.{i}"
        if elem in scope:
            out.append(scope.pop(elem))
        elif any(k.startswith(elem + ".") for k in scope):
            out.append(_tuple_of(elem, scope))
        else:
            break
    return tuple(out)


def ast_to_ttir(fn, spec: KernelSpec, debug: bool = False) -> tuple[ModuleOp, set]:
    """Generate the TTIR module for `fn` under `spec`; returns it and the `@jit`
    functions that were inlined into it (for cache keys)."""
    leaves = {n: _leaves(spec, n) for n in fn.arg_names}
    for name in fn.arg_names:
        if not leaves[name]:
            raise CompilationError(
                f"no type or value given for parameter `{name}` of `{fn.__name__}`",
                SourceLoc(fn.file, fn.line, 1),
            )
    runtime = [leaf for n in fn.arg_names for leaf in leaves[n] if leaf in spec.types]
    try:
        arg_types = [spec.types[n].to_ir() for n in runtime]
    except SemanticError as e:  # a type no target has (fp8e4b15, ...)
        raise CompilationError(str(e), SourceLoc(fn.file, fn.def_line, 1)) from None
    arg_attrs = [
        {"tt.divisibility": IntegerAttr(16, 32)} if n in spec.divisible_by_16 else {}
        for n in runtime
    ]
    func = tt.FuncOp(fn.__name__, arg_types, [], "public", arg_attrs=arg_attrs)
    def_loc = file_loc(fn.file, fn.def_line, 1)
    func.location = def_loc
    scope: dict = {}
    _, const = param_annotations.param_types(fn)
    for n, a in zip(runtime, func.body.block.args):
        name_value(a, n)
        a.location = file_loc(fn.file, fn.def_line, 1, n)
        ty = spec.types[n]
        if n in const and ty.is_ptr() and not ty.is_block_ptr():  # `x_ptr: tl.const`
            ty = pointer_type(ty.element_ty, ty.address_space, const=True, origin=n)
        scope[n] = tensor(a, ty)
    for n, v in spec.constants.items():
        scope[n] = v if isinstance(v, constexpr) else constexpr(v)
    for n in fn.arg_names:
        if n not in spec.types and n not in spec.constants:
            scope[n] = _tuple_of(n, scope)
    builder = Builder()
    builder.block = func.body.block
    semantic = Semantic(builder, debug=debug)
    gen = CodeGenerator(fn, semantic, scope, is_kernel=True)
    gen.visit_function_body(fn.body)
    builder.loc = def_loc
    builder.insert(tt.ReturnOp())
    module = ModuleOp([func])
    try:
        module.verify()
    except VerifyException as e:
        raise CompilationError(
            f"internal compiler error: generated TTIR does not verify: {e}",
            SourceLoc(fn.file, fn.def_line, 1),
        ) from e
    return module, gen.deps
