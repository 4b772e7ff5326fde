"""The per-kernel launch function, generated once per `@jit` kernel.

`kernel[grid](*args, **kw)` must cost little more than `cuLaunchKernel`. Python's own
argument binding is done in C, so we generate, for each kernel, a function with the
kernel's exact parameter list, e.g. for `add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK)`:

    def launch(x_ptr, y_ptr, out_ptr, n, BLOCK, *, _grid, stream=None, **_opts):
        if _opts: return _slow(...)
        r = _runners.get(((_K(type(x_ptr), _fb)(x_ptr), ..., ("c", BLOCK)), (), _interp()))
        if r is None or <grid not a 3-tuple>: return _slow(...)
        r(_grid, [x_ptr, y_ptr, out_ptr, n, BLOCK], stream)

The key it builds is exactly `JITFunction.run`'s, so whatever `run` (the general path:
options, callable grids, first launches) puts in `runners`, this finds.
"""

from __future__ import annotations

import inspect
import os

from tritium.frontend.specialize import _KEYERS, LAUNCH_OPTIONS, arg_key, options_key

_MISSING = object()


def _checked_options_key(opts: dict) -> tuple:
    """`options_key`, after checking the names: a typo raises TypeError, which sends the
    call down the general path, which reports it."""
    if not LAUNCH_OPTIONS.issuperset(opts):
        raise TypeError("unknown launch option")
    return options_key(opts)


def _fallback(v):
    return arg_key(v, False, False)


def _nospec(v):
    return arg_key(v, False, True)


def _general(jf, grid, stream, extra, opts, values: dict):
    """Calls the fast path does not handle: options, wrong arity, missing arguments."""
    from tritium.errors import ArgumentError

    if extra:
        n = len(values)
        raise ArgumentError(f"{jf.__name__}() takes {n} arguments but {n + len(extra)} were given")
    given = {k: v for k, v in values.items() if v is not _MISSING}
    return jf.run(grid=grid, stream=stream, **given, **opts)


def build_launch(jf):
    names = jf.arg_names
    ns: dict = {
        "_K": _KEYERS.get,
        "_fb": _fallback,
        "_ns": _nospec,
        "_runners": jf.runners,
        "_slow": jf.run,
        "_okey": _checked_options_key,
        "_general": lambda grid, stream, extra, opts, values: _general(
            jf, grid, stream, extra, opts, values
        ),
        "_tuple": tuple,
        "_len": len,
        "_type": type,
        "_M": _MISSING,
        "_pad": {1: (1, 1), 2: (1,), 3: ()},
    }
    params = []
    required = []
    for i, p in enumerate(jf.signature.parameters.values()):
        if p.default is inspect.Parameter.empty:
            params.append(f"{p.name}=_M")  # missing ones go to the slow path, which names them
            required.append(p.name)
        else:
            ns[f"_d{i}"] = p.default
            params.append(f"{p.name}=_d{i}")
    parts = []
    for n, kind in zip(names, jf.kinds):
        if kind == 0:
            parts.append(f"_K(_type({n}), _fb)({n})")
        elif kind == 1:
            parts.append(f"('c', {n})")
        else:
            parts.append(f"_ns({n})")
    if jf.interpret is None:
        ns["_env"] = os.environ.get
        interp = '_env("TRITIUM_INTERPRET", "0") not in ("", "0")'
    else:
        interp = repr(bool(jf.interpret))
    args = ", ".join(names)
    key = "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    missing = " or ".join(f"{n} is _M" for n in required) or "False"
    src = f"""
def launch({", ".join(params)}{", " if params else ""}*_extra, _grid, stream=None, **_opts):
    if _extra or {missing}:
        return _general(_grid, stream, _extra, _opts, {{{", ".join(f"{n!r}: {n}" for n in names)}}})
    try:
        r = _runners.get(({key}, _okey(_opts) if _opts else (), {interp}))
    except TypeError:
        r = None
    g = _grid
    if r is None or _type(g) is not _tuple:
        return _slow({args}{", " if names else ""}grid=g, stream=stream, **_opts)
    pad = _pad.get(_len(g))
    if pad is None:
        return _slow({args}{", " if names else ""}grid=g, stream=stream, **_opts)
    r(g + pad if pad else g, [{args}], stream)
"""
    exec(compile(src, f"<tritium launch {jf.__name__}>", "exec"), ns)
    launch = ns["launch"]
    # Python names the function in binding errors ("add_kernel() got multiple values for
    # argument 'BLOCK'"): make that the kernel's name.
    launch.__name__ = launch.__qualname__ = jf.__name__
    return launch
