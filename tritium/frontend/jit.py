"""`@tritium.jit`: kernels, specialisation and the launch entry point.

`kernel[grid](*args, **constexprs_and_options)` binds the arguments, computes a small
specialisation key from their kinds (pointer dtype and 16-byte alignment, int width,
divisibility by 16 and equality to 1, constexpr values, options) and looks it up in a
dict of ready runners. Only a miss compiles. A runner either interprets the TTIR on
numpy (`TRITIUM_INTERPRET=1` or `interpret=True`) or launches the compiled kernel.
"""

from __future__ import annotations

import ast
import inspect
import os
import textwrap

from tritium.errors import ArgumentError, CompilationError, SourceLoc
from tritium.frontend import ast_rewrite
from tritium.frontend.core import constexpr
from tritium.frontend.specialize import LAUNCH_OPTIONS, build_spec, launch_key

_MISSING = object()


class JITFunction:
    """A Triton-language function: a kernel when launched, a helper when called from one."""

    def __init__(self, fn, *, do_not_specialize=(), debug=None, interpret=None, noinline=False):
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
        dns = [self.arg_names[d] if isinstance(d, int) else d for d in do_not_specialize]
        self.do_not_specialize = set(dns)
        self.defaults = [p.default for p in self.signature.parameters.values()]
        self.kinds = [
            1 if n in self.constexpr_names else 2 if n in self.do_not_specialize else 0
            for n in self.arg_names
        ]
        self.debug = debug
        self.interpret = interpret
        self.noinline = noinline
        self.file = inspect.getsourcefile(fn) or "<unknown>"
        self._parsed = None
        self.runners: dict = {}

    # ------------------------------------------------------------------ source
    def _parse(self):
        if self._parsed is None:
            lines, start = inspect.getsourcelines(self.fn)
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
            self._parsed = (src, ast_rewrite.lower_early_returns(fdef.body))
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

    def __repr__(self) -> str:
        return f"JITFunction({self.__module__}:{self.__qualname__})"

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"`{self.__name__}` is a tritium kernel: launch it with {self.__name__}[grid](...), "
            "or call it from another @tritium.jit function"
        )

    # ------------------------------------------------------------------ launch
    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    def bind(self, args, kwargs):
        """All parameter values in order, and the launch options."""
        n = len(self.arg_names)
        if len(args) > n:
            raise ArgumentError(f"{self.__name__}() takes {n} arguments but {len(args)} were given")
        vals = list(args)
        if len(args) < n:
            vals += [_MISSING] * (n - len(args))
        opts = {}
        filled = len(args)
        index = self.param_index
        for k, v in kwargs.items():
            i = index.get(k)
            if i is None:
                if k not in LAUNCH_OPTIONS:
                    raise ArgumentError(
                        f"{self.__name__}() got an unexpected keyword argument '{k}'"
                    )
                opts[k] = v
            elif vals[i] is not _MISSING:
                raise ArgumentError(f"{self.__name__}() got multiple values for argument '{k}'")
            else:
                vals[i] = v
                filled += 1
        if filled < n:
            self._fill_defaults(vals)
        return vals, opts

    def _fill_defaults(self, vals) -> None:
        missing = []
        for i, v in enumerate(vals):
            if v is _MISSING:
                d = self.defaults[i]
                if d is inspect.Parameter.empty:
                    missing.append(self.arg_names[i])
                vals[i] = d
        if missing:
            raise ArgumentError(f"{self.__name__}() is missing argument(s): {', '.join(missing)}")

    def run(self, *args, grid, **kwargs):
        vals, opts = self.bind(args, kwargs)
        interpret = self.interpret
        if interpret is None:
            interpret = os.environ.get("TRITIUM_INTERPRET", "0") not in ("", "0")
        key = (launch_key(self.kinds, vals), _options_key(opts) if opts else (), interpret)
        runner = self.runners.get(key)
        if runner is None:
            runner = self._make_runner(vals, opts, interpret)
            self.runners[key] = runner
        if type(grid) is not tuple or len(grid) != 3:
            grid = self._grid3(grid, vals, opts)
        runner(grid, vals, opts.get("stream") if opts else None)

    def _grid3(self, grid, vals, opts) -> tuple:
        if callable(grid):
            meta = dict(zip(self.arg_names, vals))
            meta.update(opts)
            grid = grid(meta)
        grid = tuple(grid)
        if not 1 <= len(grid) <= 3:
            raise ArgumentError(f"a grid has 1 to 3 dimensions, got {grid!r}")
        return grid + (1,) * (3 - len(grid))

    def _make_runner(self, vals, opts, interpret):
        from tritium.compiler import compile_jit

        spec = build_spec(self, vals)
        kernel = compile_jit(self, spec, opts, interpret=interpret)
        return kernel.make_runner([self.param_index[n] for n in kernel.runtime_params])


def _options_key(opts: dict) -> tuple:
    return tuple(sorted((k, v) for k, v in opts.items() if k != "stream"))


def _is_constexpr_annotation(ann) -> bool:
    if ann is inspect.Parameter.empty:
        return False
    if ann is constexpr or (isinstance(ann, type) and issubclass(ann, constexpr)):
        return True
    return isinstance(ann, str) and "constexpr" in ann


def jit(fn=None, *, do_not_specialize=(), debug=None, interpret=None, noinline=False, **_ignored):
    """Decorate a function written in the Triton language (`@tritium.jit` or `@tritium.jit(debug=True)`)."""

    def wrap(f):
        return JITFunction(
            f,
            do_not_specialize=do_not_specialize,
            debug=debug,
            interpret=interpret,
            noinline=noinline,
        )

    return wrap(fn) if fn is not None else wrap
