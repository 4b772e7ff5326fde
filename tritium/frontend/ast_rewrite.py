"""AST preparation before code generation.

`lower_early_returns` moves the statements that follow an `if` containing a `return`
into the branches that fall through, so that every `return` ends its statement list:

    if row >= n_rows:            if row >= n_rows:
        return            ==>        return
    x = tl.load(p)               else:
    tl.store(q, x)                   x = tl.load(p)
                                     tl.store(q, x)

After it, `if` statements map one-to-one onto `scf.if` (with the returned values as its
results), and no unstructured control flow is ever needed.
"""

from __future__ import annotations

import ast
import copy

UNSUPPORTED = {
    ast.Try: "try/except",
    ast.With: "with statements",
    ast.AsyncWith: "async with",
    ast.AsyncFor: "async for",
    ast.AsyncFunctionDef: "async functions",
    ast.Lambda: "lambda expressions",
    ast.Break: "break",
    ast.Continue: "continue",
    ast.ListComp: "list comprehensions",
    ast.SetComp: "set comprehensions",
    ast.DictComp: "dict comprehensions",
    ast.GeneratorExp: "generator expressions",
    ast.FunctionDef: "nested function definitions",
    ast.ClassDef: "class definitions",
    ast.Global: "global declarations",
    ast.Nonlocal: "nonlocal declarations",
    ast.Delete: "del",
    ast.Yield: "yield",
    ast.YieldFrom: "yield from",
    ast.Await: "await",
    ast.NamedExpr: "assignment expressions (:=)",
    ast.Starred: "starred expressions (*args)",
    ast.Dict: "dict literals",
    ast.Set: "set literals",
    ast.Raise: "raise",
    ast.Import: "import statements",
    ast.ImportFrom: "import statements",
    ast.Match: "match statements",
}


def contains_return(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Return):
            return True
    return False


def _loop_has_return(stmts: list[ast.stmt]) -> ast.Return | None:
    for s in stmts:
        for sub in ast.walk(s):
            if isinstance(sub, (ast.For, ast.While)):
                for inner in ast.walk(sub):
                    if isinstance(inner, ast.Return):
                        return inner
    return None


def lower_early_returns(stmts: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for i, s in enumerate(stmts):
        if isinstance(s, ast.Return):
            out.append(s)
            return out
        if isinstance(s, ast.If) and contains_return(s):
            rest = stmts[i + 1 :]
            new = copy.copy(s)
            new.body = lower_early_returns(list(s.body) + rest)
            new.orelse = lower_early_returns(list(s.orelse) + rest)
            out.append(new)
            return out
        out.append(s)
    return out


def return_in_loop(stmts: list[ast.stmt]) -> ast.Return | None:
    """A `return` inside a `for`/`while` (not supported, as upstream), if any."""
    return _loop_has_return(stmts)


def assigned_names(stmts: list[ast.stmt]) -> list[str]:
    """Names bound by assignments anywhere in `stmts` (in first-seen order)."""
    seen: dict[str, None] = {}
    for s in stmts:
        for sub in ast.walk(s):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                seen.setdefault(sub.id, None)
    return list(seen)
