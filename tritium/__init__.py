"""tritium: a pure-Python compiler for the Triton kernel language.

import tritium
import tritium.language as tl

@tritium.jit
def kernel(x_ptr, n, BLOCK: tl.constexpr): ...

kernel[(tritium.cdiv(n, 1024),)](x, n, BLOCK=1024)

Importing `tritium` is light: the compiler (`compile`, `jit`: xDSL, llvmlite) and the
runtime (`load_ptx`, device arrays: cuda-python) are imported on first use, so a program
that only launches saved kernels (`tritium.load_ptx("add.ptx")`) never loads the compiler.
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
    "jit": ("tritium.frontend.jit", "jit"),
    "JITFunction": ("tritium.frontend.jit", "JITFunction"),
    "autotune": ("tritium.frontend.autotune", "autotune"),
    "Config": ("tritium.frontend.autotune", "Config"),
    "heuristics": ("tritium.frontend.heuristics", "heuristics"),
    "load_ptx": ("tritium.aot_runtime", "load_ptx"),
    "to_device": ("tritium.runtime.arrays", "to_device"),
    "empty": ("tritium.runtime.arrays", "empty"),
    "zeros": ("tritium.runtime.arrays", "zeros"),
    "DeviceArray": ("tritium.runtime.arrays", "DeviceArray"),
    "reinterpret": ("tritium.runtime.reinterpret", "reinterpret"),
}


def cdiv(x: int, y: int) -> int:
    """Ceiling division on the host, for grids: `cdiv(1000, 256) == 4`."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n (n >= 1)."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value  # later lookups skip __getattr__
        return value
    if name == "language":
        import tritium.language as language

        return language
    raise AttributeError(f"module 'tritium' has no attribute {name!r}")
