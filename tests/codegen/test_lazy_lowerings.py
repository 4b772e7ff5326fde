"""The lazily imported lowerings (codegen/lower/context.py `LAZY_LOWERINGS`): the table names
each op with the module that registers its lowering, and an op of a lazy family is lowered
though its module was not imported before."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import tritium.codegen.lower as lower_pkg
from tritium.codegen.lower.context import LAZY_LOWERINGS, LOWERINGS

EAGER = {"assume", "control_flow", "convert_layout", "elementwise", "memory", "reduce", "shape",
         "shared", "spmd"}  # fmt: skip


def _all_modules() -> None:
    for info in pkgutil.walk_packages(lower_pkg.__path__, "tritium.codegen.lower."):
        importlib.import_module(info.name)


def _lazy_module(op_name: str) -> str | None:
    return LAZY_LOWERINGS.get(op_name) or LAZY_LOWERINGS.get(op_name.partition(".")[0] + ".")


def test_every_lowering_is_registered_by_the_module_the_table_names():
    _all_modules()
    for name, fn in LOWERINGS.items():
        module = fn.__module__.removeprefix("tritium.codegen.lower.")
        lazy = _lazy_module(name)
        if lazy is not None:
            assert module == lazy, f"{name} is lowered in {module}, LAZY_LOWERINGS says {lazy}"
        else:
            assert module in EAGER, f"{name} ({module}) is neither imported eagerly nor lazy"


def test_every_lazy_entry_names_registered_ops():
    _all_modules()
    for key in LAZY_LOWERINGS:
        if key.endswith("."):  # a dialect prefix
            assert any(n.startswith(key) for n in LOWERINGS), key
        else:
            assert key in LOWERINGS, f"LAZY_LOWERINGS names {key}, which nothing lowers"


def test_the_package_imports_the_eager_modules_only():
    # a fresh process: this one may have imported the lazy modules already
    code = (
        "import sys, tritium.codegen.lower\n"
        "print(sorted(m.rpartition('.')[2] for m in sys.modules\n"
        "             if m.startswith('tritium.codegen.lower.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(eval(out.stdout))
    assert loaded == EAGER | {"context", "types"}, loaded


def test_a_lazy_family_is_lowered_on_first_use():
    # math.exp's module (with libm) loads when the lowering meets the op
    code = """
import sys
import tritium, tritium.language as tl
from tritium.compiler import compile as tc
import importlib.util, pathlib, tempfile
src = '''
import tritium, tritium.language as tl
@tritium.jit
def k(x, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(x + o, tl.exp(tl.load(x + o)))
'''
p = pathlib.Path(tempfile.mkdtemp()) / "k.py"
p.write_text(src)
spec = importlib.util.spec_from_file_location("k", p)
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
assert "tritium.codegen.lower.math_ops" not in sys.modules
ptx = tc(m.k, signature="*fp32:16", constexprs={"BLOCK": 128}, stop="ptx").asm["ptx"]
assert "ex2.approx" in ptx
assert "tritium.codegen.lower.math_ops" in sys.modules
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr
