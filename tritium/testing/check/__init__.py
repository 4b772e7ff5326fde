"""Property-test your own kernel against your numpy reference, with hypothesis.

    import numpy as np
    import tritium
    from tritium.testing import array, check_kernel

    def launch(x, y, out):                       # runs the kernel; writes `out` in place
        n = x.size
        add_kernel[(tritium.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)

    def reference(x, y):                         # numpy; returns the expected `out`
        return x.astype(np.float64) + y

    check_kernel(
        launch, reference,
        inputs={"x": array("n"), "y": array("n")},
        outputs={"out": array("n")},
        dims={"n": (1, 10_000)},                 # sizes: awkward ones first (1, 17, 1025, ...)
        dtypes=["float32", "float16"],           # drawn once per example
    )

Each example draws the dimensions, the dtype, the scalars, and for every array a memory
layout (an exact buffer, or a view inside a larger buffer: poison before and after,
padded rows, a step, transposed, as `array(layout=...)` allows), input values (small
integers or uniform over a drawn range, a few NaN / inf / -0.0 / extreme values) and
poisoned outputs (NaN with a payload, 0x5A bytes for integers). It runs the reference on
copies of the inputs, launches (on the GPU when there is one, in the interpreter
otherwise or with `device="interpreter"`), then checks every output against the
reference with the tolerance of its dtype (torch.testing's defaults; `rtol=`, `atol=`
override, per output with a dict), that no output element still holds the poison, that
no input changed, and that nothing around a view was written. The first failure is shrunk
by hypothesis and raised as a `KernelCheckFailure` whose message lists what is wrong and
ends with a runnable reproducer: the concrete arrays, laid out as in the failing launch.

`launch` gets every array by name, and each dimension or scalar its signature names;
`reference` gets the inputs (copies), and each dimension or scalar it names, and returns
the expected output: an array, or a tuple (in `outputs` order) or dict of them. An array
named both in `inputs` and `outputs` is updated in place (not poisoned). hypothesis is
imported only when `check_kernel` runs.
"""

from __future__ import annotations

import inspect

import numpy as np

from tritium.errors import ArgumentError, TritiumError
from tritium.testing.check.report import bits, problems, reproducer
from tritium.testing.check.spec import ArraySpec, array, np_dtype

__all__ = ["KernelCheckFailure", "array", "check_kernel"]


class KernelCheckFailure(TritiumError, AssertionError):
    """The kernel disagreed with the reference (or failed) on the example in the message."""


def _hypothesis():
    try:
        import hypothesis
        from hypothesis import strategies  # noqa: F401
    except ImportError:
        raise ImportError(
            "tritium.testing.check_kernel needs hypothesis, which is not installed: "
            "pip install hypothesis (or pip install 'tritium[dev]')"
        ) from None
    return hypothesis


def _takes(fn, name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _check_signature(fn, what: str, given: list[str]) -> None:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is not p.empty:
            continue
        if p.name not in given:
            raise ArgumentError(
                f"check_kernel: {what}'s parameter `{p.name}` is not an array, dimension or "
                f"scalar of the check (it receives {given})"
            )


def _interprets(device: str) -> bool:
    """Whether the kernels run in the interpreter: `device` is auto, gpu or interpreter."""
    from tritium import config
    from tritium.runtime.driver import gpu_available

    if device == "auto":
        return config.interpret() or not gpu_available()
    if device == "interpreter":
        return True
    if device == "gpu":
        if not gpu_available():
            raise ArgumentError("check_kernel(device='gpu'): no CUDA GPU is usable here")
        return False
    raise ArgumentError(
        f"check_kernel: device must be 'auto', 'gpu' or 'interpreter', got {device!r}"
    )


def _expected(result, outputs: list[str]):
    """The reference's result as {output: array} and its form (single, tuple, dict)."""
    if isinstance(result, dict):
        missing = [o for o in outputs if o not in result]
        if missing:
            raise ArgumentError(f"check_kernel: the reference's dict lacks output(s) {missing}")
        return result, "dict"
    if isinstance(result, (tuple, list)) and len(outputs) > 1:
        if len(result) != len(outputs):
            raise ArgumentError(
                f"check_kernel: the reference returned {len(result)} values for {len(outputs)} outputs"
            )
        return dict(zip(outputs, result)), "tuple"
    if len(outputs) != 1:
        raise ArgumentError(f"check_kernel: the reference must return {len(outputs)} outputs")
    return {outputs[0]: result}, "single"


def check_kernel(
    launch,
    reference,
    *,
    inputs: dict,
    outputs: dict,
    dims: dict | None = None,
    dtypes=("float32",),
    scalars: dict | None = None,
    rtol=None,
    atol=None,
    max_examples: int = 50,
    device: str = "auto",
    settings=None,
) -> None:
    """Check `launch` against `reference` on `max_examples` drawn examples (see the module
    docstring). `dims` and `scalars` map names to a value, a (low, high) range or a list
    of choices; `settings` is a `hypothesis.settings` that replaces the defaults
    (max_examples, no deadline; one failure is reported, without hypothesis's explain
    phase, either way). Raises `KernelCheckFailure` with a reproducer."""
    hypothesis = _hypothesis()
    from tritium import config
    from tritium.testing.check.strategy import cases

    dims, scalars = dict(dims or {}), dict(scalars or {})
    for name, spec in {**inputs, **outputs}.items():
        if not isinstance(spec, ArraySpec):
            raise ArgumentError(
                f"check_kernel: `{name}` must be described by array(...), got {spec!r}"
            )
    if not outputs:
        raise ArgumentError("check_kernel: give at least one output")
    dtypes = [np_dtype(d) for d in (dtypes if isinstance(dtypes, (list, tuple)) else [dtypes])]
    out_names = list(outputs)
    names = list(dict.fromkeys([*inputs, *outputs, *dims, *scalars]))
    _check_signature(launch, "launch", names)
    _check_signature(reference, "reference", [*inputs, *dims, *scalars])

    def one_example(case, interpret: bool) -> None:
        buffers, views = {}, {}
        for name, d in case.arrays.items():
            buffers[name], views[name] = d.build()
        given = {**views, **case.dims, **case.scalars}
        ref_in = {k: views[k].copy() for k, d in case.arrays.items() if d.is_input}
        ref_kw = {
            k: v for k, v in {**ref_in, **case.dims, **case.scalars}.items() if _takes(reference, k)
        }
        with np.errstate(all="ignore"):
            expected, form = _expected(reference(**ref_kw), out_names)
        before = {k: bits(v) for k, v in ref_in.items()}

        def fail(found: list[str]):
            text = reproducer(
                case, launch, reference, out_names, form, interpret, rtol, atol, _takes
            )
            return KernelCheckFailure(
                "the kernel disagrees with the reference:\n  "
                + "\n  ".join(found)
                + "\n\nReproducer:\n"
                + text
            )

        try:
            launch(**{k: v for k, v in given.items() if _takes(launch, k)})
        except Exception as e:  # a kernel error is a failure to shrink too
            raise fail([f"launch raised {type(e).__name__}: {e}"]) from e
        found = problems(case, buffers, views, before, expected, out_names, rtol, atol)
        if found:
            raise fail(found)

    strategy = cases(dict(inputs), dict(outputs), dims, dtypes, scalars)
    if settings is None:
        hc = hypothesis.HealthCheck
        settings = hypothesis.settings(
            max_examples=max_examples,
            deadline=None,
            suppress_health_check=[hc.too_slow, hc.data_too_large, hc.large_base_example],
        )
    # one failure, shrunk, with its reproducer (hypothesis's explain phase adds nothing)
    settings = hypothesis.settings(
        settings,
        report_multiple_bugs=False,
        phases=[p for p in settings.phases if p is not hypothesis.Phase.explain],
    )
    interpret = _interprets(device)
    with config.interpreting(interpret):

        @settings
        @hypothesis.given(strategy)
        def check(case):
            one_example(case, interpret)

        check()
