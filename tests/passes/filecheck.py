"""A tiny FileCheck for printed IR.

    filecheck(text, '''
        CHECK: tt.make_range
        CHECK-NEXT: tt.splat
        CHECK-NOT: ttg.convert_layout
        CHECK: tt.store {{.*}} #blocked>
    ''')

* `CHECK: p`      the next line (after the previous match) containing `p`;
* `CHECK-NEXT: p` the line right after the previous match contains `p`;
* `CHECK-NOT: p`  no line between the previous match and the next positive match (or
                  the end) contains `p`;
* `CHECK-LABEL: p` like CHECK (kept for readability).
A pattern is literal text; `{{...}}` inside it is a regular expression.
"""

from __future__ import annotations

import re

_DIRECTIVE = re.compile(r"^\s*(CHECK(?:-NEXT|-NOT|-LABEL)?):\s?(.*)$")


def _compile(pattern: str) -> re.Pattern:
    parts = re.split(r"\{\{(.*?)\}\}", pattern.strip())
    rx = "".join(p if i % 2 else re.escape(p) for i, p in enumerate(parts))
    return re.compile(rx)


def filecheck(text: str, checks: str) -> None:
    lines = text.splitlines()
    directives = []
    for raw in checks.splitlines():
        m = _DIRECTIVE.match(raw)
        if m:
            directives.append((m.group(1), m.group(2), _compile(m.group(2))))
    if not directives:
        raise ValueError("filecheck: no CHECK directives given")
    pos = 0  # first line not yet consumed
    last = -1  # line of the previous positive match
    pending_not: list[tuple[str, re.Pattern]] = []

    def fail(msg: str) -> None:
        numbered = "\n".join(f"{i + 1:4d} | {line}" for i, line in enumerate(lines))
        raise AssertionError(f"filecheck: {msg}\n--- input ---\n{numbered}")

    def check_nots(start: int, end: int) -> None:
        for src, rx in pending_not:
            for i in range(start, end):
                if rx.search(lines[i]):
                    fail(f"CHECK-NOT: {src!r} matched line {i + 1}: {lines[i]!r}")
        pending_not.clear()

    for kind, src, rx in directives:
        if kind == "CHECK-NOT":
            pending_not.append((src, rx))
            continue
        if kind == "CHECK-NEXT":
            i = last + 1
            if last < 0 or i >= len(lines) or not rx.search(lines[i]):
                got = lines[i] if 0 <= i < len(lines) else "<end of input>"
                fail(f"CHECK-NEXT: {src!r} not on the line after the previous match (got {got!r})")
        else:
            i = next((j for j in range(pos, len(lines)) if rx.search(lines[j])), None)
            if i is None:
                fail(f"{kind}: {src!r} not found after line {pos}")
        check_nots(pos, i)
        last = i
        pos = i + 1
    check_nots(pos, len(lines))
