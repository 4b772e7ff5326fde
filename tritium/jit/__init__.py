"""The launch layer, above the compiler: `@tritium.jit`, specialisation, the launch fast
path, autotune and heuristics. See ARCHITECTURE.md.

    jit.py         `@jit`, `JITFunction` (a frontend KernelSource that can be launched), the
                   general launch path
    specialize.py  the specialisation key, once for both launch paths, and its KernelSpec
    launch.py      the generated `kernel[grid](...)` function
    autotune.py    `@autotune`, `Config`
    heuristics.py  `@heuristics`

Importing this package is light: its names load with their module, on first use. The
decorators are `tritium.jit`, `tritium.autotune` and `tritium.heuristics` (see
tritium/__init__.py): in this package, `jit`, `autotune` and `heuristics` name submodules.
"""

# name -> module: imported on first access (PEP 562)
_LAZY = {
    "JITFunction": "tritium.jit.jit",
    "Autotuner": "tritium.jit.autotune",
    "Config": "tritium.jit.autotune",
    "JITHeuristics": "tritium.jit.heuristics",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tritium.jit' has no attribute {name!r}")
