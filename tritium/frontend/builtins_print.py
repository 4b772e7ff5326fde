"""`tl.device_print(prefix, *args, hex=False)`: print values at run time, as upstream.

    tl.device_print("x", x)          ->  tt.print " x: " {hex = false, isSigned = array<i32: 1>} : %x : tensor<128xi32>

`prefix` must be a compile-time ASCII string; `args` are tensors or scalars (numbers
become constants). As upstream, a prefix followed by values is made to start with a space
and end with ": ". On the GPU each thread prints the elements it owns, one line each:

    pid (0, 0, 0) idx (  3) x: 7

(`idx` is the element's index along each dimension, padded to the width of that
dimension's size; with several values, `(operand n) ` goes before each value). The
interpreter prints upstream's interpreter format instead: one line per value with the
whole array, `(0, 0, 0)  x: [0 1 2 ...]`. Output from the GPU goes through CUDA's printf
buffer and appears on the process's stdout when the launch is synchronized.
"""

from __future__ import annotations

import string

from tritium.frontend.builtins import builtin
from tritium.frontend.core import tensor, unwrap
from tritium.frontend.semantic import SemanticError
from tritium.ir.tt_print import PrintOp

__all__ = ["device_print"]


def print_prefix(prefix: str, has_args: bool) -> str:
    """Upstream's tidying of the prefix: `"x"` -> `" x: "` when values follow."""
    if not prefix.endswith(" ") and has_args:
        prefix += " "
    if not prefix.endswith(": ") and has_args:
        prefix = prefix[:-1] + ": "
    if len(prefix) > 2 and not prefix.startswith(" "):
        prefix = " " + prefix
    return prefix


@builtin
def device_print(prefix, *args, hex=False, _semantic=None, _generator=None):
    """Print `prefix` and the values of `args` from the device (upstream's
    `tl.device_print`); `hex=True` prints integers (and floats' bits) in hexadecimal."""
    text = unwrap(prefix)
    if isinstance(text, tensor) or not isinstance(text, str):
        raise SemanticError(
            f"tl.device_print: the prefix must be a compile-time string, got {text!r}"
        )
    if any(ch not in string.printable for ch in text):
        raise SemanticError(f"tl.device_print: the prefix {text!r} is not an ASCII string")
    as_hex = unwrap(hex)
    if isinstance(as_hex, tensor) or not isinstance(as_hex, bool):
        raise SemanticError(f"tl.device_print: hex must be True or False, got {as_hex!r}")
    values = [_semantic.to_tensor(unwrap(a)) for a in args]
    op = PrintOp(
        print_prefix(text, bool(values)),
        [v.handle for v in values],
        as_hex,
        [v.dtype.is_int_signed() for v in values],
    )
    _semantic.b.insert(op)
