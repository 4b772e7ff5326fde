"""Whole programs differentially: record every kernel launch tritium makes, replay each on
upstream Triton with the same inputs, compare the outputs.

    with Recorder(per_kernel=2) as rec:        # kernel[grid](...) is recorded meanwhile
        examples.softmax.check(rng)            # an example, or a pytest session (-m gpu)
    rows = [replay(launch, up) for launch in rec.launches]      # up: upstream.Upstream
    print(table(rows))

A `Launch` holds the kernel, the grid, every argument as it was before the launch
(arrays copied: numpy arrays; torch tensors as numpy, bf16 as its bits) and every array
after it (tritium's results). The upstream side gets `upstream_source(kernel)`: the
kernel's module reduced to what a kernel needs (imports of tritium / triton / math, the
`@jit` functions with autotune and heuristics decorators dropped, and module constants),
`tritium` renamed `triton`. An autotuned kernel is replayed with the config tritium
chose (its launch is recorded on the inner kernel). Every array argument is compared
after both launches: the same bits is "agree"; within a tolerance of its dtype
(`TOLERANCE`: reductions and dots may sum in another order) "agree (close)"; else
"differ (values)"; an array argument tritium cannot hand over (a device pointer, a
tensor descriptor) or a kernel upstream does not run is "upstream-refuses" with why.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tritium.testing.differential.upstream import Failed

# (rtol, atol) per numpy dtype kind and size: a few units of the type's precision,
# scaled for sums of thousands of terms in another order
TOLERANCE = {"f2": (2e-2, 1e-2), "f4": (1e-4, 1e-5), "f8": (1e-9, 1e-12), "bf16": (5e-2, 1e-2)}
# a kernel with tl.dot: fp32 operands are tf32 by default (10-bit mantissas): tritium
# rounds them so in its interpreter as on the GPU, upstream's interpreter does not
TOLERANCE_DOT = {"f4": (1e-2, 1e-2)}


@dataclass
class Launch:
    kernel: object  # the JITFunction
    grid: tuple
    args: list  # numpy arrays (copies before the launch) and Python values, in order
    kwargs: dict  # constexprs and launch options (num_warps, ...)
    views: dict = field(default_factory=dict)  # argument index -> "bfloat16" (bits as int16)
    after: dict = field(default_factory=dict)  # argument index -> tritium's array after
    where: str = ""  # the example or test that launched it
    refused: str = ""  # why it cannot be replayed

    @property
    def name(self) -> str:
        return getattr(self.kernel, "__name__", "?")


@dataclass
class Row:
    kernel: str
    where: str
    result: str  # "agree", "agree (close)", "differ (values)", "differ (known: NAME)",
    # "upstream-refuses", "tritium-fails" (the example's own check)
    detail: str = ""


def _as_numpy(v):
    """(a numpy copy, view) of an array argument, or (None, why) when it is not one."""
    if isinstance(v, np.ndarray):
        return v.copy(), None
    mod = type(v).__module__
    if mod.startswith("torch"):
        import torch

        t = v.detach().cpu()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().copy(), "bfloat16"
        return t.numpy().copy(), None
    return None, f"argument of type {type(v).__name__} cannot be handed to upstream"


class Recorder:
    """Records `kernel[grid](...)` of every tritium kernel while active (at most
    `per_kernel` launches of each kernel, the first ones); `where` names what runs."""

    def __init__(self, per_kernel: int = 2):
        self.per_kernel = per_kernel
        self.launches: list[Launch] = []
        self.where = ""
        self._counts: dict = {}

    def __enter__(self) -> Recorder:
        from tritium.jit.jit import JITFunction

        self._original = JITFunction.__getitem__
        recorder = self

        def getitem(kernel, grid):
            launch = recorder._original(kernel, grid)
            if recorder._counts.get(id(kernel), 0) >= recorder.per_kernel:
                return launch

            def recorded(*args, **kwargs):
                return recorder._run(kernel, grid, launch, args, kwargs)

            return recorded

        JITFunction.__getitem__ = getitem
        return self

    def __exit__(self, *exc) -> None:
        from tritium.jit.jit import JITFunction

        JITFunction.__getitem__ = self._original

    def _run(self, kernel, grid, launch, args, kwargs):
        self._counts[id(kernel)] = self._counts.get(id(kernel), 0) + 1
        rec = Launch(kernel, grid, [], dict(kwargs), where=self.where)
        live = []
        for i, a in enumerate(args):
            if isinstance(a, bool | int | float) or a is None:
                rec.args.append(a)
                continue
            arr, view = _as_numpy(a)
            if arr is None:
                rec.refused = view
                break
            rec.args.append(arr)
            live.append((i, a))
            if view:
                rec.views[i] = view
        out = launch(*args, **kwargs)
        if not rec.refused:
            if callable(grid):  # upstream gets the grid tritium computed
                meta = dict(zip(kernel.arg_names, args))
                meta.update(kwargs)
                rec.grid = tuple(grid(meta))
            rec.grid = tuple(rec.grid) if isinstance(rec.grid, tuple | list) else (rec.grid,)
            rec.after = {i: _as_numpy(a)[0] for i, a in live}
        self.launches.append(rec)
        return out


# ------------------------------------------------------------------ upstream's source


def _jit_decorated(node: ast.FunctionDef) -> bool:
    for d in node.decorator_list:
        f = d.func if isinstance(d, ast.Call) else d
        if (
            isinstance(f, ast.Attribute)
            and f.attr == "jit"
            or isinstance(f, ast.Name)
            and f.id == "jit"
        ):
            return True
    return False


_KERNEL_MODULES = ("tritium", "triton", "math")
_TOP_LEVEL = {"jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2", "constexpr"}


def _constant(node: ast.expr, known: set) -> bool:
    """Whether `node` needs only literals, `tl` / `tritium` / `math` and earlier constants."""
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return names <= known and not any(isinstance(n, ast.Lambda) for n in ast.walk(node))


def upstream_source(kernel) -> str:
    """The kernel's module as upstream Triton runs it: imports of tritium (as triton),
    math; module constants; the @jit functions without their other decorators."""
    path = inspect.getsourcefile(kernel.fn if hasattr(kernel, "fn") else kernel)
    tree = ast.parse(Path(path).read_text())
    known = {"tl", "tritium", "triton", "math", "True", "False", "None"}
    keep: list[str] = ["import triton", "import triton.language as tl", "import math"]
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            mod = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
            if (mod or "").split(".")[0] in _KERNEL_MODULES:
                if isinstance(node, ast.ImportFrom) and mod.split(".")[:2] != ["tritium", "language"]:
                    # a kernel needs the language, and from the top level these names only
                    names = [a for a in node.names if mod == "tritium" and a.name in _TOP_LEVEL]
                    if not names:
                        continue
                    node = ast.ImportFrom("triton", names, 0)
                text = ast.unparse(node).replace("tritium", "triton")
                if text not in keep:
                    keep.append(text)
                known |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if all(isinstance(t, ast.Name) for t in targets) and _constant(node.value, known):
                keep.append(ast.unparse(node))
                known |= {t.id for t in targets}
        elif isinstance(node, ast.FunctionDef) and _jit_decorated(node):
            node.decorator_list = [d for d in node.decorator_list
                                   if "jit" in ast.unparse(d)]  # fmt: skip
            keep.append(ast.unparse(node))
            known.add(node.name)
    imports = [k for k in keep if k.startswith(("import ", "from "))]
    rest = [k for k in keep if not k.startswith(("import ", "from "))]
    text = "\n".join(imports) + "\n\n\n" + "\n\n\n".join(rest)
    return text.replace("tritium.", "triton.").replace("tritium ", "triton ") + "\n"


# ------------------------------------------------------------------ replay and compare


def _close(t: np.ndarray, u: np.ndarray, view: str | None, dot: bool) -> tuple[bool, str]:
    if view == "bfloat16":
        t, u = (np.left_shift(x.view(np.uint16).astype(np.uint32), 16).view(np.float32)
                for x in (t, u))  # fmt: skip
        key = "bf16"
    else:
        key = f"{t.dtype.kind}{t.dtype.itemsize}"
    if key not in TOLERANCE:
        return False, "integers differ"
    rtol, atol = (TOLERANCE_DOT if dot and key in TOLERANCE_DOT else TOLERANCE)[key]
    with np.errstate(invalid="ignore", over="ignore"):
        t64, u64 = t.astype(np.float64), u.astype(np.float64)
        ok = np.isclose(t64, u64, rtol=rtol, atol=atol, equal_nan=True)
    err = np.nanmax(np.abs(t64 - u64)) if t.size else 0.0
    return (
        bool(ok.all()),
        f"max |difference| {err:.3g} ({int((~ok).sum())} of {t.size} outside rtol {rtol}, atol {atol})",
    )


def compare_launch(launch: Launch, theirs: list, dot: bool = False, bf16: bool = False) -> Row:
    """Compare tritium's arrays after the launch with upstream's (same order); `dot`:
    the kernel's module has a tl.dot (TOLERANCE_DOT); `bf16`: it reads 16-bit integer
    arrays as bfloat16 (their values are compared as such)."""
    exact, notes = True, []
    for (i, mine), other in zip(sorted(launch.after.items()), theirs):
        if mine.shape != other.shape or mine.dtype != other.dtype:
            return Row(launch.name, launch.where, "differ (shape or dtype)",
                       f"argument {i}: {mine.dtype}{mine.shape} vs {other.dtype}{other.shape}")  # fmt: skip
        if mine.tobytes() == other.tobytes():
            continue
        exact = False
        view = launch.views.get(i)
        if view is None and bf16 and mine.dtype.itemsize == 2 and mine.dtype.kind in "iu":
            view = "bfloat16"  # numpy has no bf16: its bits travel as (u)int16
        ok, why = _close(mine, other, view, dot)
        name = launch.kernel.arg_names[i] if i < len(launch.kernel.arg_names) else str(i)
        if not ok:
            return Row(launch.name, launch.where, "differ (values)", f"{name}: {why}")
        notes.append(f"{name}: {why}")
    return Row(launch.name, launch.where, "agree" if exact else "agree (close)", "; ".join(notes))


def _value(v):
    """A scalar argument or constexpr as JSON: numbers, strings, None, lists, tuples as
    {"tuple": [...]}, dtypes as {"dtype": "fp16"} (the worker makes them upstream's)."""
    from tritium.frontend.core import dtype

    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, tuple):
        return {"tuple": [_value(x) for x in v]}
    if isinstance(v, list):
        return [_value(x) for x in v]
    if type(v) is dtype:
        return {"dtype": str(v)}
    raise TypeError(f"a {type(v).__name__} argument cannot be handed to upstream")


def replay(launch: Launch, up) -> Row:
    """Run one recorded launch on upstream (an `upstream.Upstream`) and compare."""
    if launch.refused:
        return Row(launch.name, launch.where, "upstream-refuses", launch.refused)
    try:
        source = upstream_source(launch.kernel)
    except (OSError, TypeError, SyntaxError) as exc:
        return Row(launch.name, launch.where, "upstream-refuses", f"no source: {exc}")
    arrays = sorted(launch.after)
    try:
        args = [a if isinstance(a, np.ndarray) else _value(a) for a in launch.args]
        kwargs = {k: _value(v) for k, v in launch.kwargs.items()}
    except TypeError as exc:
        return Row(launch.name, launch.where, "upstream-refuses", str(exc))
    r = up.run(source, launch.name, launch.grid, args, kwargs, outputs=arrays,
               views=launch.views)  # fmt: skip
    if isinstance(r, Failed):
        first = r.error.splitlines()[0] if r.error else "?"
        return Row(launch.name, launch.where, "upstream-refuses", textwrap.shorten(first, 160))
    row = compare_launch(launch, r.outputs, "tl.dot(" in source, "bfloat16" in source)
    if row.result.startswith("differ") and getattr(up, "mode", "interpret") == "interpret":
        for name, needles in KNOWN_INTERPRETER.items():
            if all(n in source for n in needles):
                row.result = f"differ (known: {name})"
    return row


# Upstream interpreter bugs (differential/known.py) a whole kernel can show: the known
# entry's name -> what the kernel's source has for it to apply.
KNOWN_INTERPRETER = {"interpreter-bf16-dot": ("tl.dot(", "bfloat16")}


def table(rows: list[Row]) -> str:
    """A markdown table, then a count per result."""
    lines = ["| kernel | where | result | detail |", "|---|---|---|---|"]
    for r in rows:
        detail = r.detail.replace("|", "\\|")
        lines.append(f"| `{r.kernel}` | {r.where} | {r.result} | {detail} |")
    counts: dict = {}
    for r in rows:
        counts[r.result] = counts.get(r.result, 0) + 1
    lines.append("")
    lines.append(", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    return "\n".join(lines)
