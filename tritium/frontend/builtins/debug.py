"""Debugging builtins: `tl.static_assert`, `tl.static_print` (at compile time),
`tl.device_assert` and `tl.device_print` (at run time), as upstream.

    tl.device_print("x", x)          ->  tt.print " x: " {hex = false, isSigned = array<i32: 1>} : %x : tensor<128xi32>
    tl.device_assert(x > 0, "x")     ->  tt.assert %c, "x" : tensor<128xi1>   (only with debug=True)

`device_print`'s `prefix` must be a compile-time ASCII string; `args` are tensors or
scalars (numbers become constants). As upstream, a prefix followed by values is made to
start with a space and end with ": ". On the GPU each thread prints the elements it owns,
one line each:

    pid (0, 0, 0) idx (  3) x: 7

(`idx` is the element's index along each dimension, padded to the width of that
dimension's size; with several values, `(operand n) ` goes before each value). The
interpreter prints upstream's interpreter format instead: one line per value with the
whole array, `(0, 0, 0)  x: [0 1 2 ...]`. Output from the GPU goes through CUDA's printf
buffer and appears on the process's stdout when the launch is synchronized. Python's
`print` in a kernel is `tl.device_print` (the code generator sends it here).
"""

from __future__ import annotations

import string

from tritium.frontend.builtins.base import builtin
from tritium.frontend.core import tensor, unwrap
from tritium.frontend.semantic import SemanticError
from tritium.ir.tt_print import PrintOp


@builtin
def static_assert(cond, msg="", _semantic=None, _generator=None):
    c = unwrap(cond)
    if isinstance(c, tensor):
        raise SemanticError("tl.static_assert needs a condition known at compile time")
    if not c:
        raise SemanticError(f"static_assert failed: {unwrap(msg)}")


@builtin
def static_print(*values, sep=" ", end="\n", file=None, flush=False, _semantic=None,
                 _generator=None):  # fmt: skip
    """Print at compile time; a tensor prints as its type, `int32[8, 16]`, as upstream."""

    def text(v):
        v = unwrap(v)
        if isinstance(v, tensor):
            return f"{v.dtype}[{', '.join(str(d) for d in v.shape)}]"
        return v

    print(*[text(v) for v in values], sep=unwrap(sep), end=unwrap(end), file=unwrap(file),
          flush=bool(unwrap(flush)))  # fmt: skip


@builtin
def device_assert(cond, msg="", mask=None, _semantic=None, _generator=None):
    if not _semantic.debug:
        return
    c = unwrap(cond)
    if not isinstance(c, tensor):
        if not c:
            raise SemanticError(f"device_assert always fails: {unwrap(msg)}")
        return
    if mask is not None:
        c = _semantic.logical_or(c, _semantic.logical_not(unwrap(mask)))
    _semantic.device_assert(c, str(unwrap(msg)))


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


__all__ = ["device_assert", "device_print", "print_prefix", "static_assert", "static_print"]
