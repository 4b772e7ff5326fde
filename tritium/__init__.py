"""tritium: a pure-Python compiler for the Triton kernel language.

import tritium
import tritium.language as tl

@tritium.jit
def kernel(x_ptr, n, BLOCK: tl.constexpr): ...

kernel[(tritium.cdiv(n, 1024),)](x, n, BLOCK=1024)

Importing `tritium` is light: the compiler (`compile`, `jit`: xDSL, llvmlite) and the
runtime (`load_ptx`, device arrays: cuda-python) are imported on first use, so a program
that only launches saved kernels (`tritium.load_ptx("add.ptx")`) never loads the compiler.

`tritium.install_as_triton()` serves `import triton` with tritium, for libraries written for
upstream Triton (tritium/triton_alias.py, docs/triton-compat.md).
"""

__version__ = "0.1.0"

from tritium.errors import (  # noqa: E402,F401
    ArgumentError,
    CompilationError,
    KernelAssertionError,
    LaunchError,
    NoGPUError,
    NotSupportedError,
    OutOfBoundsError,
    TritiumError,
    UnsupportedSyntaxError,
)

# name -> (module, attribute): imported on first access (PEP 562).
_LAZY = {
    "compile": ("tritium.compiler", "compile"),
    "CompiledKernel": ("tritium.compiler", "CompiledKernel"),
    "jit": ("tritium.jit.jit", "jit"),
    "JITFunction": ("tritium.jit.jit", "JITFunction"),
    "autotune": ("tritium.jit.autotune", "autotune"),
    "Config": ("tritium.jit.autotune", "Config"),
    "heuristics": ("tritium.jit.heuristics", "heuristics"),
    "load_ptx": ("tritium.aot_runtime", "load_ptx"),
    "to_device": ("tritium.runtime.arrays", "to_device"),
    "empty": ("tritium.runtime.arrays", "empty"),
    "zeros": ("tritium.runtime.arrays", "zeros"),
    "DeviceArray": ("tritium.runtime.arrays", "DeviceArray"),
    "reinterpret": ("tritium.runtime.reinterpret", "reinterpret"),
    "set_allocator": ("tritium.runtime.global_scratch", "set_allocator"),
    # serve `import triton` with tritium (tritium/triton_alias.py, docs/triton-compat.md)
    "install_as_triton": ("tritium.triton_alias", "install"),
}


# `tritium.jit` is both the `@jit` decorator and the package tritium/jit/. Importing a
# package binds it as an attribute of its parent, once, when it is first loaded; so load the
# (light) package now and drop that binding: `tritium.jit` is then the decorator (from
# _LAZY), and `tritium.jit.launch` and friends import as usual.
import tritium.jit as _jit_package  # noqa: E402

del _jit_package, jit  # noqa: F821  (the binding the import made)


def cdiv(x: int, y: int) -> int:
    """Ceiling division on the host, for grids: `cdiv(1000, 256) == 4`."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n (n >= 1)."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def __getattr__(name):
    if name in _LAZY:
        import importlib

        from tritium.dataclass_bytecode import dataclass_bytecode
        from tritium.gc_pause import gc_paused

        module, attr = _LAZY[name]
        # the compiler's modules: xDSL's classes, no garbage to find, many dataclasses
        with gc_paused(), dataclass_bytecode():
            value = getattr(importlib.import_module(module), attr)
        globals()[name] = value  # later lookups skip __getattr__
        return value
    if name == "language":
        import tritium.language as language

        return language
    if name == "testing":  # upstream's triton.testing: do_bench, perf_report, assert_close
        import tritium.testing as testing

        return testing
    if name == "runtime":  # upstream's triton.runtime.driver.active
        import tritium.runtime.driver  # noqa: F401  (binds tritium.runtime.driver)

        return globals()["runtime"]
    raise AttributeError(f"module 'tritium' has no attribute {name!r}")
