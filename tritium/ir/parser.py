"""Reading textual TTIR / TTGIR, upstream Triton's included.

xDSL's parser reads MLIR's generic syntax and our ops' custom syntax. Two things in
upstream's printed IR it does not take as is, so the text is normalised first:

* location aliases (`#loc12 = loc(...)`) that upstream prints *after* the module and
  refers to before they are defined: every top-level alias definition is hoisted to the
  front, in dependency order;
* hexadecimal splats in dense float attributes (`dense<0xFF800000> : tensor<4xf32>`),
  which xDSL 0.74 reads as integers: they are rewritten as MLIR's hex-string form
  (`dense<"0x000080FF">`, the raw little-endian bytes), which it reads correctly.
"""

from __future__ import annotations

import re

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

from tritium.ir.context import make_context

_ALIAS_DEF = re.compile(r"^(#[A-Za-z_][\w$.-]*)\s*=\s*(.*)$")
_ALIAS_REF = re.compile(r"#[A-Za-z_][\w$.-]*")
_DENSE_HEX = re.compile(r"dense<0x([0-9A-Fa-f]+)>")


class IRParseError(Exception):
    """The text is not valid TTIR/TTGIR; the message points at the offending line."""


def _hoist_aliases(text: str) -> str:
    defs: dict[str, str] = {}
    order: list[str] = []
    body: list[str] = []
    for line in text.splitlines():
        m = _ALIAS_DEF.match(line)
        if m and not line.startswith(" "):
            defs[m.group(1)] = line
            order.append(m.group(1))
        else:
            body.append(line)
    emitted: set[str] = set()
    out: list[str] = []

    def emit(name: str, stack: tuple[str, ...] = ()) -> None:
        if name in emitted or name not in defs or name in stack:
            return
        rhs = _ALIAS_DEF.match(defs[name]).group(2)
        for ref in _ALIAS_REF.findall(rhs):
            emit(ref, stack + (name,))
        emitted.add(name)
        out.append(defs[name])

    for name in order:
        emit(name)
    return "\n".join(out + body) + "\n"


def _fix_dense_hex(text: str) -> str:
    def repl(m: re.Match) -> str:
        digits = m.group(1)
        if len(digits) % 2:
            digits = "0" + digits
        little = bytes.fromhex(digits)[::-1].hex().upper()
        return f'dense<"0x{little}">'

    return _DENSE_HEX.sub(repl, text)


def normalize(text: str) -> str:
    return _fix_dense_hex(_hoist_aliases(text))


def parse_module(text: str, name: str = "<ir>", verify: bool = True) -> ModuleOp:
    """Parse TTIR or TTGIR text (tritium's or upstream's) into a verified module."""
    src = normalize(text)
    try:
        module = Parser(make_context(), src, name).parse_module()
    except ParseError as e:
        raise IRParseError(str(e)) from None
    if verify:
        module.verify()
    return module
