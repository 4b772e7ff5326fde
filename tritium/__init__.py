"""tritium: a pure-Python compiler for the Triton kernel language.

import tritium
import tritium.language as tl

@tritium.jit
def kernel(x_ptr, n, BLOCK: tl.constexpr): ...

kernel[(tritium.cdiv(n, 1024),)](x, n, BLOCK=1024)
"""

__version__ = "0.1.0"

from tritium.compiler import CompiledKernel, compile  # noqa: E402,F401
from tritium.errors import (  # noqa: E402,F401
    ArgumentError,
    CompilationError,
    KernelAssertionError,
    LaunchError,
    NoGPUError,
    OutOfBoundsError,
    TritiumError,
    UnsupportedSyntaxError,
)
from tritium.frontend.jit import JITFunction, jit  # noqa: E402,F401


def cdiv(x: int, y: int) -> int:
    """Ceiling division on the host, for grids: `cdiv(1000, 256) == 4`."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n (n >= 1)."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def __getattr__(name):
    # Device arrays live in the runtime; import them only when asked for.
    if name in ("to_device", "empty", "zeros", "DeviceArray"):
        from tritium.runtime import arrays

        return getattr(arrays, name)
    if name == "language":
        import tritium.language as language

        return language
    raise AttributeError(f"module 'tritium' has no attribute {name!r}")
