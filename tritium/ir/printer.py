"""Printing TTIR / TTGIR in upstream Triton 3.x's textual form.

On top of xDSL's printer this adds what upstream's output looks like:

* `module {` rather than `builtin.module {`;
* layout encodings printed once as aliases at the top (`#blocked = #ttg.blocked<...>`)
  and referred to by name in types (`tensor<1024xf32, #blocked>`);
* source locations, when asked for, as `loc("file.py":12:8)` after each op (unknown
  locations are left out rather than printed as `loc(unknown)`).

It also prints faster than xDSL's printer, with the same text: a string literal (the file
name of every op's location) is written at once rather than byte by byte, and text goes to
the stream's `write` rather than through `print()` (together ~half of printing a module);
a splat dense constant is told by its bytes, where xDSL unpacks every element twice to
find it is one (a GEMM's 128x128 accumulator of zeros: ~1 ms a print).

The output parses back with `tritium.ir.parser.parse_module` to the same text.
"""

from __future__ import annotations

import io
import re

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, ParametrizedAttribute
from xdsl.printer import Printer

from tritium.ir.ttg import BlockedEncodingAttr

_ALIAS_PREFIX = {BlockedEncodingAttr: "blocked"}


def _alias_prefix(attr: Attribute) -> str | None:
    for cls, prefix in _ALIAS_PREFIX.items():
        if isinstance(attr, cls):
            return prefix
    return getattr(attr, "alias_prefix", None)


def register_alias_prefix(cls: type, prefix: str) -> None:
    """Layouts defined elsewhere (mma, shared) ask to be printed as aliases too."""
    _ALIAS_PREFIX[cls] = prefix


def _collect_aliases(module: Operation) -> dict[Attribute, str]:
    found: list[Attribute] = []

    def visit_type(t: Attribute) -> None:
        if isinstance(t, TensorType):
            visit_attr(t.encoding)
        elif isinstance(t, ParametrizedAttribute):  # !ttg.memdesc<..., #shared, #smem, ...>
            for p in t.parameters:
                visit_attr(p)

    def visit_attr(a: Attribute) -> None:
        prefix = _alias_prefix(a)
        if prefix is not None and a not in found:
            found.append(a)
        parent = getattr(a, "parent", None)
        if isinstance(parent, Attribute):
            visit_attr(parent)

    for op in module.walk():
        for v in list(op.results) + list(op.operands):
            visit_type(v.type)
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    visit_type(arg.type)
    names: dict[Attribute, str] = {}
    counts: dict[str, int] = {}
    for a in found:
        prefix = _alias_prefix(a)
        n = counts.get(prefix, 0)
        counts[prefix] = n + 1
        names[a] = f"#{prefix}" if n == 0 else f"#{prefix}{n}"
    return names


# byte -> its escape in a printed string literal, as xDSL's Printer.print_bytes_literal
_ESCAPES = {b: f"\\{b:02X}" for b in range(256) if b < 0x20 or b > 0x7E or b == 0x22}
_ESCAPES[0x5C] = "\\\\"


class TritonPrinter(Printer):
    """xDSL printer that prints known layout encodings by their alias."""

    def __init__(self, stream, aliases: dict[Attribute, str], print_debuginfo: bool = False):
        super().__init__(stream=stream, print_debuginfo=print_debuginfo)
        self._aliases = aliases
        # (an attribute equal to an alias has its type: other types skip hashing the
        # attribute, which xDSL recomputes through every parameter on each call)
        self._alias_types = {type(a) for a in aliases}
        self._write = stream.write
        self._defining_alias = False

    def print_attribute(self, attribute: Attribute) -> None:
        name = self._aliases.get(attribute) if type(attribute) in self._alias_types else None
        if name is not None and not self._defining_alias:
            self.print_string(name)
            return
        self._defining_alias = False
        if type(attribute) is DenseIntOrFPElementsAttr and self._print_splat(attribute):
            return
        super().print_attribute(attribute)

    def _print_splat(self, attr: DenseIntOrFPElementsAttr) -> bool:
        """`dense<v> : type` when every element has the same bytes (False, printing
        nothing, otherwise: xDSL's own printing decides). A NaN splat is not printed here:
        xDSL compares unpacked elements, and NaN equals no other NaN."""
        data, n = attr.data.data, len(attr)
        size = len(data) // n if n > 1 else 0
        if not size or data != data[:size] * n:
            return False
        value = attr.get_element_type().unpack(data[:size], 1)[0]
        if not isinstance(value, int | float) or value != value:
            return False
        self.print_string("dense<")
        attr._print_one_elem(value, self)
        self.print_string("> : ")
        self.print_attribute(attr.get_type())
        return True

    def print_string(self, text: str, *, indent: int | None = None) -> None:
        if "\n" not in text:  # the common case, as xDSL's: no indentation to apply
            self._current_column += len(text)
            self._write(text)
            return
        super().print_string(text, indent=indent)

    def print_bytes_literal(self, bytestring: bytes) -> None:
        """xDSL's escaping (a backslash doubled; quotes and bytes outside printable ASCII
        as a backslash and two hex digits), in one write."""
        self.print_string('"' + bytestring.decode("latin-1").translate(_ESCAPES) + '"')


_UNKNOWN_LOC = re.compile(r" loc\(unknown\)")
_MODULE = re.compile(r"^(\s*)builtin\.module\b", re.M)


def print_ir(op: Operation, locations: bool = False) -> str:
    """The upstream-style text of `op` (usually a `builtin.module`)."""
    aliases = _collect_aliases(op)
    out = io.StringIO()
    for attr, name in aliases.items():
        p = TritonPrinter(out, aliases)
        p.print_string(f"{name} = ")
        p._defining_alias = True
        p.print_attribute(attr)
        p.print_string("\n")
    body = io.StringIO()
    TritonPrinter(body, aliases, print_debuginfo=locations).print_op(op)
    text = body.getvalue()
    if locations:
        text = _UNKNOWN_LOC.sub("", text)
    text = _MODULE.sub(r"\1module", text)
    return out.getvalue() + text.rstrip("\n") + "\n"


def module_str(module: ModuleOp) -> str:
    return print_ir(module)
