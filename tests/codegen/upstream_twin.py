"""An upstream `@triton.jit` twin of a tritium test kernel, made from the same source text
(for GPU tests that compare with upstream Triton where `import triton` works).

    twin = upstream_twin(fp8_cast_kernel)     # None when triton is not installed
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap


def upstream_twin(kernel, extra_globals: dict | None = None):
    try:
        import triton
        import triton.language as tl
    except Exception:
        return None
    fn = getattr(kernel, "fn", kernel)
    text = textwrap.dedent(inspect.getsource(fn))
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef))
    src = "@triton.jit\n" + ast.get_source_segment(text, node) + "\n"
    filename = f"<upstream twin of {fn.__name__}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {"triton": triton, "tl": tl, **(extra_globals or {})}
    exec(compile(src, filename, "exec"), namespace)
    return namespace[fn.__name__]


__all__ = ["upstream_twin"]
