"""`@tritium.heuristics`: constexpr arguments computed from the others at each launch, as
upstream's `triton.heuristics`.

    @tritium.heuristics({
        "BLOCK": lambda meta: min(tritium.next_power_of_2(meta["n"]), 1024),
        "EVEN_N": lambda meta: meta["n"] % meta["BLOCK"] == 0,   # sees BLOCK: runs after it
    })
    @tritium.jit
    def kernel(x_ptr, n, BLOCK: tl.constexpr, EVEN_N: tl.constexpr): ...

    kernel[grid](x, n)          # launches kernel[grid](x, n, BLOCK=..., EVEN_N=...)

Each function gets `meta`: the launch's arguments by name (positional ones, then the
keywords, launch options such as `num_warps` included), plus the values the heuristics
before it computed, in the order the dict lists them. As upstream:

* it stacks with `@tritium.autotune` either way round. Under autotune
  (`@autotune(...) @heuristics(...) @jit`, upstream's usual order) the heuristics run for
  every config and see its values (`meta["BLOCK_M"]`); above it (`@heuristics(...)
  @autotune(...) @jit`) they run once per launch, before the tuner picks a config;
* a value passed as a keyword is replaced by the heuristic's, without a warning; passed
  positionally it is an error (upstream: "got multiple values for argument");
* a heuristic for a name that is neither a parameter nor a launch option is an error
  (upstream raises at launch, "Keyword argument X was specified but unrecognised";
  tritium at decoration, as an `ArgumentError`).

The launch goes through the wrapped kernel's `[grid]`, so a warm `@jit` kernel keeps its
generated fast path; the heuristics add a dict and one call per value.

Wrapping a `@jit` function gives a `JITHeuristics`, which is also a `JITFunction` (of the
same Python function; launches go to the wrapped one): `@autotune` takes it, and
`tritium.compile` compiles it (constexprs given explicitly). `.kernel` is the wrapped
object (upstream's `.fn`; on a JITFunction `.fn` is the Python function).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tritium.errors import ArgumentError
from tritium.jit.jit import JITFunction, KernelInterface
from tritium.options import LAUNCH_OPTIONS

__all__ = ["Heuristics", "JITHeuristics", "heuristics"]


class Heuristics(KernelInterface):
    """A kernel (a `@jit` function or an autotuner) whose launches get values computed by
    `values[name](meta)` as extra keyword arguments (see the module doc)."""

    def __init__(self, kernel, arg_names: list[str], values: dict[str, Callable[[dict], Any]]):
        self.kernel = kernel
        self.arg_names = list(arg_names)
        self.values = dict(values)
        self.__name__ = getattr(kernel, "__name__", "kernel")
        self.__doc__ = getattr(kernel, "__doc__", None)
        for name, fn in self.values.items():
            if not callable(fn):
                raise ArgumentError(f"heuristics[{name!r}] must be a function of meta, got {fn!r}")
            if name not in self.arg_names and name not in LAUNCH_OPTIONS:
                raise ArgumentError(
                    f"heuristics: {self.__name__} has no parameter named {name!r} "
                    f"(parameters: {', '.join(self.arg_names)})"
                )
        self._positions = {n: i for i, n in enumerate(self.arg_names) if n in self.values}

    def __getattr__(self, name: str):
        # the wrapped kernel's other attributes (an autotuner's `best_config`, `cache`, ...)
        if name.startswith("__") or name in ("kernel", "values", "arg_names"):
            raise AttributeError(name)
        return getattr(self.kernel, name)

    def __repr__(self) -> str:
        return f"Heuristics({self.kernel!r}, {list(self.values)})"

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"`{self.__name__}` is a tritium kernel: launch it with {self.__name__}[grid](...)"
        )

    def add_values(self, args: tuple, kwargs: dict) -> dict:
        """`kwargs` with each heuristic's value added (replacing a keyword passed too)."""
        for name, i in self._positions.items():
            if i < len(args):
                raise ArgumentError(
                    f"{self.__name__}() got multiple values for argument '{name}': it is "
                    "computed by @tritium.heuristics, do not pass it"
                )
        meta = dict(zip(self.arg_names, args))
        meta.update(kwargs)
        out = dict(kwargs)
        for name, fn in self.values.items():
            out[name] = meta[name] = fn(meta)
        return out

    def __getitem__(self, grid):
        launch = self.kernel[grid]  # a JITFunction's fast launch, bound to the grid
        add = self.add_values
        return lambda *args, **kwargs: launch(*args, **add(args, kwargs))

    def run(self, *args, grid, **kwargs):
        return self.kernel.run(*args, grid=grid, **self.add_values(args, kwargs))


class JITHeuristics(Heuristics, JITFunction):
    """Heuristics over a `@jit` function: also a `JITFunction` (of the same Python
    function) so that `@autotune`, `tritium.compile` and calls from other kernels take it
    as one. Launches go to the wrapped function, which keeps the compiled kernels."""

    def __init__(self, kernel: JITFunction, values: dict[str, Callable[[dict], Any]]):
        JITFunction.__init__(
            self,
            kernel.fn,
            do_not_specialize=tuple(kernel.do_not_specialize),
            debug=kernel.debug,
            interpret=kernel.interpret,
            noinline=kernel.noinline,
        )
        Heuristics.__init__(self, kernel, kernel.arg_names, values)

    def __repr__(self) -> str:
        return f"JITHeuristics({self.__module__}:{self.__qualname__}, {list(self.values)})"


def heuristics(values: dict[str, Callable[[dict], Any]]):
    """Decorate a kernel (`@tritium.jit`, or `@tritium.autotune` above one) so that each
    launch computes the constexprs in `values` from the others: `values[name](meta)`
    with `meta` the launch's arguments by name (see the module doc)."""
    if not isinstance(values, dict):
        raise ArgumentError(f"tritium.heuristics takes a dict of name -> function, got {values!r}")

    def decorator(fn):
        if isinstance(fn, JITFunction):
            return JITHeuristics(fn, values)
        if not hasattr(fn, "arg_names") or not hasattr(fn, "run"):
            raise ArgumentError(
                "@tritium.heuristics decorates a @tritium.jit (or @tritium.autotune) kernel; "
                "put it above them"
            )
        return Heuristics(fn, fn.arg_names, values)

    return decorator
