"""The package's layering, checked on its import statements (lazy ones inside functions too).

    base (errors, dtype names, config, options, gc pause, dataclass bytecode)
      ir
        analysis ─┬─ passes
                  └─ codegen          (passes and codegen never import each other)
        frontend                      (language, AST -> TTIR: on ir alone)
        runtime                       (driver, arrays, cache, interpreter: on ir alone)
          compiler                    (composes the stages)
            jit                       (@jit, specialisation, the launch fast path, autotune)
              cli, aot, testing, triton_alias (+ triton_backends, triton_compile), the root

A module may import its own layer or one the table below allows, and no two files may
import each other, directly or through a longer circle.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1] / "tritium"

# layer -> module prefixes that belong to it (the longest matching prefix wins)
LAYERS = {
    "base": [
        "tritium.errors",
        "tritium.dtype_names",
        "tritium.config",
        "tritium.options",
        "tritium.gc_pause",
        "tritium.dataclass_bytecode",
        "tritium.background",
    ],
    "ir": ["tritium.ir"],
    "analysis": ["tritium.analysis"],
    "passes": ["tritium.passes"],
    "codegen": ["tritium.codegen"],
    "frontend": ["tritium.frontend", "tritium.language"],
    "runtime": ["tritium.runtime", "tritium.aot_runtime"],
    "compiler": ["tritium.compiler", "tritium.compiled_kernel"],
    "jit": ["tritium.jit"],
    "top": [
        "tritium",
        "tritium.cli",
        "tritium.back_end_worker",
        "tritium.__main__",
        "tritium.aot",
        "tritium.testing",
        "tritium.triton_alias",
        "tritium.triton_backends",
        "tritium.triton_compile",
    ],
}
# layer -> the layers it may import (besides itself)
ALLOWED = {
    "base": set(),
    "ir": {"base"},
    "analysis": {"ir", "base"},
    "passes": {"analysis", "ir", "base"},
    "codegen": {"analysis", "ir", "base"},
    "frontend": {"ir", "base"},
    "runtime": {"ir", "base"},
    "compiler": {"passes", "codegen", "analysis", "frontend", "runtime", "ir", "base"},
    "jit": {"compiler", "passes", "codegen", "analysis", "frontend", "runtime", "ir", "base"},
    "top": {"jit", "compiler", "passes", "codegen", "analysis", "frontend", "runtime", "ir", "base"},
}


def modules() -> dict[str, pathlib.Path]:
    out = {}
    for p in ROOT.rglob("*.py"):
        parts = p.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def layer_of(module: str) -> str:
    best, best_len = None, -1
    for layer, prefixes in LAYERS.items():
        for pre in prefixes:
            if (module == pre or module.startswith(pre + ".")) and len(pre) > best_len:
                best, best_len = layer, len(pre)
    assert best is not None, f"{module} belongs to no layer: add it to LAYERS"
    return best


def imports(mods: dict[str, pathlib.Path]) -> dict[str, set[str]]:
    """module -> the tritium modules it imports (anywhere in the file)."""
    edges: dict[str, set[str]] = {}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                # `from pkg import name`: name may be a submodule
                names = [f"{base}.{a.name}" for a in node.names] + [base]
            for name in names:
                while name and name not in mods:
                    name = name.rpartition(".")[0]
                if not name or name == mod:
                    continue
                # importing a submodule runs its package's __init__: not an edge to count
                # when that package is an ancestor of the importer
                if mods[name].name == "__init__.py" and mod.startswith(name + "."):
                    continue
                targets.add(name)
        edges[mod] = targets
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_every_module_has_a_layer():
    for mod in modules():
        layer_of(mod)


def test_no_import_against_the_layering():
    mods = modules()
    bad = []
    for mod, targets in sorted(imports(mods).items()):
        a = layer_of(mod)
        for t in sorted(targets):
            b = layer_of(t)
            if b != a and b not in ALLOWED[a]:
                bad.append(f"{mod} ({a}) imports {t} ({b})")
    assert not bad, "imports against the layering:\n  " + "\n  ".join(bad)


def test_no_circle_of_imports():
    found = cycles(imports(modules()))
    assert not found, "modules that import each other:\n  " + "\n  ".join(
        " <-> ".join(c) for c in found
    )


def test_the_checker_sees_circles_and_lazy_imports(tmp_path):
    # the checker itself: a lazy import inside a function closes a circle
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [["a", "b", "c"]]
    src = "def f():\n    from tritium.ir import tt\n"
    tree = ast.parse(src)
    assert any(isinstance(n, ast.ImportFrom) for n in ast.walk(tree))
