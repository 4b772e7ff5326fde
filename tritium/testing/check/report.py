"""What `check_kernel` finds wrong in one launch, and the reproducer it prints.

problems(case, buffers, views, before, expected, ...)  ->  ["out: 3 of 17 elements
    were never written (they still hold the poison), first at (14,)", ...]
reproducer(case, ...)  ->  a Python snippet: the arrays with their concrete values,
    laid out as in the failing launch, the launch, the reference and the comparison
"""

from __future__ import annotations

import inspect
import os
import tempfile

import numpy as np

from tritium.testing.check.spec import Case, poison_of, tolerance

MAX_LITERAL = 512  # elements printed inline; larger inputs are saved to an .npz file
MAX_LISTED = 5


def bits(a: np.ndarray) -> np.ndarray:
    """The raw bits of each element (so NaNs compare by payload)."""
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind != "b" else a.view(np.uint8)


def _index(flat: int, shape) -> tuple:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def _outside_written(d, buf) -> str | None:
    inside = np.zeros(d.buffer_shape, bool)
    d.view_of(inside)[...] = True
    changed = (bits(buf) != bits(poison_of(d.dtype)).reshape(())) & ~inside
    if not changed.any():
        return None
    first = _index(int(np.flatnonzero(changed)[0]), d.buffer_shape)
    return (
        f"{d.name}: the kernel wrote outside the array: {int(changed.sum())} element(s) of "
        f"its buffer around the view changed (layout {d.layout}, buffer shape "
        f"{d.buffer_shape}, first at buffer index {first})"
    )


def _compare(name, got, exp, rtol, atol) -> list[str]:
    dt = got.dtype
    try:
        exp = np.broadcast_to(np.asarray(exp), got.shape)
    except ValueError:
        return [
            f"{name}: the reference returned shape {np.shape(exp)} for an output of shape {got.shape}"
        ]
    unwritten = bits(got) == bits(poison_of(dt)).reshape(())
    if dt.kind == "f":  # against the reference rounded to the output's dtype
        with np.errstate(over="ignore", invalid="ignore"):
            g = got.astype(np.float64)
            e = exp.astype(dt).astype(np.float64)
            bad = ~np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            e = exp.astype(dt)
        g = got
        bad = g != e
    out = []
    lost = bad & unwritten
    if lost.any():
        first = _index(int(np.flatnonzero(lost)[0]), got.shape)
        out.append(
            f"{name}: {int(lost.sum())} of {got.size} elements were never written (they "
            f"still hold the poison), first at {first}"
        )
    wrong = bad & ~unwritten
    if wrong.any():
        idx = np.flatnonzero(wrong)
        listed = "; ".join(
            f"at {_index(int(i), got.shape)}: got {g.flat[i]!r}, expected {e.flat[i]!r}"
            for i in idx[:MAX_LISTED]
        )
        tol = f" beyond rtol={rtol:g}, atol={atol:g}" if dt.kind == "f" else ""
        out.append(f"{name}: {idx.size} of {got.size} elements differ{tol}: {listed}")
    return out


def problems(case: Case, buffers, views, before, expected, outputs, rtol, atol) -> list[str]:
    """Everything wrong after one launch. `before`: each input's bits before it."""
    found = []
    for name, d in case.arrays.items():
        if d.is_input and name not in outputs:
            changed = bits(views[name]) != before[name]
            if changed.any():
                first = _index(int(np.flatnonzero(changed)[0]), d.shape)
                found.append(
                    f"{name}: the kernel wrote into this input ({int(changed.sum())} "
                    f"element(s) changed, first at {first})"
                )
        msg = _outside_written(d, buffers[name])
        if msg:
            found.append(msg)
    for name in outputs:
        r, a = tolerance(case.arrays[name].dtype, rtol, atol, name)
        found += _compare(name, views[name], expected[name], r, a)
    return found


# ------------------------------------------------------------------ the reproducer
def _literal(v) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_literal(x) for x in v) + "]"
    if isinstance(v, float):
        if np.isnan(v):
            return "np.nan"
        if np.isinf(v):
            return "np.inf" if v > 0 else "-np.inf"
    return repr(v)


def _np_dtype_text(dt: np.dtype) -> str:
    return f"np.{dt.name}" if hasattr(np, dt.name) else repr(dt.name)


def _function_line(fn, alias: str) -> str:
    mod, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if mod and mod != "__main__" and qual.isidentifier():
        return f"from {mod} import {qual}" + (f" as {alias}" if qual != alias else "")
    try:
        where = f"{inspect.getsourcefile(fn)}:{inspect.getsourcelines(fn)[1]}"
    except (OSError, TypeError):
        where = "your test"
    return f"# {alias} = ...  (paste `{qual or repr(fn)}` from {where})"


def call_text(fn, alias: str, names: list[str], pass_names) -> str:
    args = ", ".join(f"{k}={k}" for k in names if pass_names(fn, k))
    return f"{alias}({args})"


def reproducer(
    case: Case, launch, reference, outputs, expected_form, interpret, rtol, atol, pass_names
) -> str:
    lines = [
        "# tritium.testing.check_kernel: the smallest failing example hypothesis found",
        f"# {case!r}",
    ]
    if interpret:
        lines.append("# found in the interpreter: run with TRITIUM_INTERPRET=1 to see it there")
    lines += ["import numpy as np", ""]
    lines += [_function_line(launch, "launch"), _function_line(reference, "reference"), ""]
    for k, v in {**case.dims, **case.scalars}.items():
        lines.append(f"{k} = {v!r}")
    saved = {}
    for name, d in case.arrays.items():
        dt = _np_dtype_text(d.dtype)
        poison = "np.nan" if d.dtype.kind == "f" else _literal(poison_of(d.dtype).item())
        values = d.values() if d.is_input else None
        literal = values is not None and values.size <= MAX_LITERAL
        if literal and d.layout == "exact":
            lines.append(f"{name} = np.array({_literal(values.tolist())}, dtype={dt})")
            continue
        lines.append(f"{name} = {d.view_expr(f'np.full({d.buffer_shape}, {poison}, dtype={dt})')}")
        if literal:
            lines.append(f"{name}[...] = np.array({_literal(values.tolist())}, dtype={dt})")
        elif values is not None:
            saved[name] = values
            lines.append(f'{name}[...] = saved["{name}"]')
    if saved:
        fd, path = tempfile.mkstemp(prefix="tritium-check-", suffix=".npz")
        os.close(fd)
        np.savez(path, **saved)
        lines.insert(
            lines.index("import numpy as np") + 1, f'saved = np.load("{path}")  # the large inputs'
        )
    inputs = [n for n, d in case.arrays.items() if d.is_input]
    everything = list(case.arrays) + list(case.dims) + list(case.scalars)
    ref_args = ", ".join(
        f"{k}={k}.copy()" if k in inputs else f"{k}={k}"
        for k in inputs + list(case.dims) + list(case.scalars)
        if pass_names(reference, k)
    )
    lines += [
        f"expected = reference({ref_args})",
        call_text(launch, "launch", everything, pass_names),
    ]
    for i, name in enumerate(outputs):
        exp = {"single": "expected", "tuple": f"expected[{i}]", "dict": f'expected["{name}"]'}[
            expected_form
        ]
        if case.arrays[name].dtype.kind == "f":
            r, a = tolerance(case.arrays[name].dtype, rtol, atol, name)
            lines.append(f"np.testing.assert_allclose({name}, {exp}, rtol={r:g}, atol={a:g})")
        else:
            lines.append(
                f"np.testing.assert_array_equal({name}, np.asarray({exp}).astype({name}.dtype))"
            )
    return "\n".join(lines)
