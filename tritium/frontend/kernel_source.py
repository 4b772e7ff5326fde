"""A function written in the Triton language, as the code generator sees it.

    @KernelSource                     # the standard library's helpers (standard.py)
    def cdiv(x, div): ...

    src = KernelSource(fn)
    src.name, src.arg_names, src.constexpr_names    # from the signature
    src.src, src.body, src.file, src.line           # parsed once, on first use
    src.fingerprint()                               # sha256 of everything its code reaches

`tritium.jit`'s `JITFunction` (tritium/jit/jit.py) is a KernelSource that can also be
launched; the code generator recognises callees (`@jit` helpers, combine functions) as
KernelSources, so the frontend never needs the launch layer. The body is the function's
AST with early returns lowered (ast_rewrite.py); `return` inside a loop is refused here.

`fingerprint()` is what the compiled-kernel cache keys a kernel's code on: the function's
source, the sources of every KernelSource its code names (followed recursively, and one
attribute deep through modules: `tl.cdiv`, `helpers.combine`), and the value of every plain
constant it names (`BLOCK = 128`, `tl.constexpr(...)`, a `tl` dtype). It is None when one
of those values has no stable form (an arbitrary object): such a kernel is not cached.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import textwrap
import types

from tritium.errors import CompilationError, SourceLoc
from tritium.frontend import ast_rewrite
from tritium.frontend.core import constexpr, dtype

__all__ = ["KernelSource", "stable_value"]


class KernelSource:
    """A Triton-language function: its signature, parsed source and where it came from."""

    def __init__(self, fn, *, noinline: bool = False):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn
        self.signature = inspect.signature(fn)
        self.arg_names = list(self.signature.parameters)
        self.param_index = {n: i for i, n in enumerate(self.arg_names)}
        self.constexpr_names = {
            n
            for n, p in self.signature.parameters.items()
            if _is_constexpr_annotation(p.annotation)
        }
        self.constexpr_indices = [
            i for i, n in enumerate(self.arg_names) if n in self.constexpr_names
        ]
        self.defaults = [p.default for p in self.signature.parameters.values()]
        self.noinline = noinline
        self.file = inspect.getsourcefile(fn) or "<unknown>"
        self._parsed = None

    @property
    def name(self) -> str:
        return self.__name__

    @property
    def qualified_name(self) -> str:
        return f"{self.__module__}.{self.__qualname__}"

    # ------------------------------------------------------------------ source
    def _parse(self):
        if self._parsed is None:
            try:
                lines, start = inspect.getsourcelines(self.fn)
            except (OSError, TypeError):
                raise CompilationError(
                    f"cannot read the source of `{self.__name__}`: tritium compiles kernels from "
                    "their source, so define them in a .py file (not in a REPL or with exec)"
                ) from None
            src = textwrap.dedent("".join(lines))
            self.col0 = len(lines[0]) - len(lines[0].lstrip())
            tree = ast.parse(src)
            fdef = next(
                n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            )
            self._line = start
            self._def_line = start + fdef.lineno - 1
            bad = ast_rewrite.return_in_loop(fdef.body)
            if bad is not None:
                raise CompilationError(
                    "`return` inside a loop is not supported (as in upstream Triton)",
                    SourceLoc(self.file, start + bad.lineno - 1, bad.col_offset + 1 + self.col0),
                )
            # `src` from the `def` on, without decorators, as upstream's JITFunction.src
            # (torch's inductor parses `"def " + src` unless it starts with "def ")
            text = "".join(src.splitlines(keepends=True)[fdef.lineno - 1 :])
            self._parsed = (text, ast_rewrite.lower_early_returns(fdef.body))
        return self._parsed

    @property
    def src(self) -> str:
        return self._parse()[0]

    @property
    def body(self) -> list[ast.stmt]:
        return self._parse()[1]

    @property
    def line(self) -> int:
        self._parse()
        return self._line

    @property
    def def_line(self) -> int:
        self._parse()
        return self._def_line

    @property
    def globals(self) -> dict:
        return getattr(self.fn, "__globals__", {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__module__}:{self.__qualname__})"

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"`{self.__name__}` is written in the Triton language: call it from a "
            "@tritium.jit function"
        )

    # ------------------------------------------------------------------ cache key
    def fingerprint(self) -> str | None:
        """sha256 (hex) of this function's code and everything it reaches (module doc)."""
        sources: dict[str, str] = {}
        try:
            self._sources(sources)
        except (TypeError, OSError):
            return None
        text = json.dumps(
            {"kernel": self.qualified_name, "sources": sources}, sort_keys=True, ensure_ascii=True
        )
        return hashlib.sha256(text.encode()).hexdigest()

    def _sources(self, seen: dict[str, str]) -> None:
        qual = self.qualified_name
        if qual in seen:
            return
        seen[qual] = self.src
        globs = self.globals
        names = self.fn.__code__.co_names
        for name in names:
            value = globs.get(name)
            if isinstance(value, KernelSource):
                value._sources(seen)
            elif isinstance(value, bool | int | float | str | constexpr):
                seen[f"{qual}:{name}"] = repr(stable_value(value))
            elif isinstance(value, types.ModuleType):  # mod.helper: look one attribute deep
                for attr in names:
                    sub = getattr(value, attr, None)
                    if isinstance(sub, KernelSource):
                        sub._sources(seen)


def stable_value(value: object) -> object:
    """A constexpr or global value as plain data for a cache key: None, bool, int, float, str,
    bytes, lists of them, `{"tl": name}` for a dtype; TypeError when it has no stable form."""
    if isinstance(value, constexpr):
        value = value.value
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return value
    if isinstance(value, list | tuple):
        return [stable_value(v) for v in value]
    if isinstance(value, dtype):
        return {"tl": value.name}
    raise TypeError(f"no stable cache-key form for {type(value).__name__}")


def _is_constexpr_annotation(ann) -> bool:
    if ann is inspect.Parameter.empty:
        return False
    if ann is constexpr or (isinstance(ann, type) and issubclass(ann, constexpr)):
        return True
    return isinstance(ann, str) and "constexpr" in ann
