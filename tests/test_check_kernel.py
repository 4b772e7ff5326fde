"""`tritium.testing.check_kernel` itself: it passes right kernels, catches each kind of
wrong one (unwritten elements, reads past the end, ignored strides, writes outside a
view or into an input, wrong values), shrinks, and prints a reproducer that runs and
fails the same way."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
from hypothesis import settings

import tritium
import tritium.language as tl
from tritium.errors import ArgumentError
from tritium.testing import KernelCheckFailure, array, check_kernel
from tritium.testing.check.report import reproducer
from tritium.testing.check.spec import Case, Drawn

FIXED = settings(derandomize=True, database=None, deadline=None, max_examples=40)


@tritium.jit
def copy_kernel(x_ptr, out_ptr, n, BUG: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if BUG == "last":  # the last element is never written
        mask = offs < n - 1
    if BUG == "unmasked":  # reads and writes past the end
        mask = offs < BLOCK * tl.num_programs(0)
    x = tl.load(x_ptr + offs, mask=mask)
    if BUG == "value":  # wrong for large values only
        x = tl.where(x > 50, x + 1, x)
    if BUG == "input":  # scribbles on its input
        tl.store(x_ptr + offs, x * 0, mask=mask)
    tl.store(out_ptr + offs, x * 2, mask=mask)


def copy_launch(x, out, bug=""):
    n = x.size
    copy_kernel[(tritium.cdiv(n, 32),)](x, out, n, BUG=bug, BLOCK=32)


def copy_reference(x):
    return x.astype(np.float64) * 2


def check_copy(bug, **kw):
    check_kernel(
        lambda x, out: copy_launch(x, out, bug),
        copy_reference,
        inputs={"x": array("n")},
        outputs={"out": array("n")},
        dims={"n": (1, 200)},
        device="interpreter",
        settings=FIXED,
        **kw,
    )


def failure(bug, **kw) -> str:
    with pytest.raises(KernelCheckFailure) as info:
        check_copy(bug, **kw)
    return str(info.value)


def test_a_right_kernel_passes(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "0")
    check_copy("")  # device="interpreter": TRITIUM_INTERPRET is 1 during the check only
    assert not tritium.config.interpret()


def test_unwritten_elements_are_found_and_shrunk():
    msg = failure("last")
    assert (
        "out: 1 of 1 elements were never written (they still hold the poison), first at (0,)" in msg
    )
    assert "n = 1\n" in msg  # shrunk to the smallest size


def test_reads_past_the_end_are_found():
    msg = failure("unmasked")
    assert "launch raised OutOfBoundsError" in msg or "wrote outside the array" in msg


def test_wrong_values_are_found():
    msg = failure("value", dtypes=["float32"])
    assert re.search(r"out: 1 of \d+ elements differ beyond rtol=1\.3e-06, atol=1e-05: at", msg)


def test_writes_into_an_input_are_found():
    assert "x: the kernel wrote into this input" in failure("input")


@tritium.jit
def rows_kernel(x_ptr, out_ptr, cols, stride_x, stride_out, BLOCK: tl.constexpr, BUG: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    if BUG:  # assumes contiguous rows
        stride_x = cols
    x = tl.load(x_ptr + row * stride_x + offs, mask=mask)
    tl.store(out_ptr + row * stride_out + offs, x + 1, mask=mask)


def rows_launch(x, out, bug):
    rows, cols = x.shape
    s = x.itemsize
    rows_kernel[(rows,)](x, out, cols, x.strides[0] // s, out.strides[0] // s, BLOCK=256, BUG=bug)


@pytest.mark.parametrize("bug", [False, True])
def test_ignored_row_strides_are_found(bug):
    def run():
        check_kernel(
            lambda x, out: rows_launch(x, out, bug),
            lambda x: x.astype(np.float64) + 1,
            inputs={"x": array("rows", "cols", layout="rows")},
            outputs={"out": array("rows", "cols", layout="rows")},
            dims={"rows": (1, 4), "cols": (1, 256)},
            device="interpreter",
            settings=FIXED,
        )

    if not bug:
        run()
        return
    with pytest.raises(KernelCheckFailure) as info:
        run()
    assert "x=<float32 (2, 1) strided>" in str(info.value)  # the smallest padded case


@tritium.jit
def scale_inplace_kernel(x_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


@tritium.jit
def two_outputs_kernel(x_ptr, lo_ptr, hi_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(lo_ptr + offs, x & 0xFF, mask=mask)
    tl.store(hi_ptr + offs, x >> 8, mask=mask)


def test_in_place_updates_scalars_and_several_outputs():
    check_kernel(
        lambda x, n, factor: scale_inplace_kernel[(tritium.cdiv(n, 64),)](x, n, factor, BLOCK=64),
        lambda x, factor: x.astype(np.float64) * np.float32(factor),
        inputs={"x": array("n")},
        outputs={"x": array("n")},
        dims={"n": (1, 300)},
        scalars={"factor": (-3.0, 3.0)},
        device="interpreter",
        settings=FIXED,
    )
    for form in ("tuple", "dict"):

        def reference(x, form=form):
            lo, hi = x & 0xFF, x >> 8
            return (lo, hi) if form == "tuple" else {"hi": hi, "lo": lo}

        check_kernel(
            lambda x, lo, hi, n: two_outputs_kernel[(tritium.cdiv(n, 64),)](x, lo, hi, n, BLOCK=64),
            reference,
            inputs={"x": array("n", dtype="int32")},
            outputs={"lo": array("n", dtype="int32"), "hi": array("n", dtype=["int32", "int64"])},
            dims={"n": (1, 300)},
            device="interpreter",
            settings=FIXED,
        )


def test_the_reproducer_runs_and_fails_the_same_way(monkeypatch):
    msg = failure("last")
    code = msg.split("Reproducer:\n", 1)[1]
    assert "# found in the interpreter: run with TRITIUM_INTERPRET=1" in code
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    # a lambda cannot be imported: the reproducer says where it is; the reference can
    assert "# launch = ...  (paste `check_copy.<locals>.<lambda>` from " in code
    assert f"from {copy_reference.__module__} import copy_reference as reference" in code
    namespace = {"launch": lambda x, out: copy_launch(x, out, "last")}
    with pytest.raises(AssertionError, match="nan location mismatch"):
        exec(compile(code, "<reproducer>", "exec"), namespace)
    assert np.isnan(namespace["out"]).all() and namespace["n"] == 1


def test_large_inputs_go_to_an_npz_file_in_the_reproducer():
    n = 1000
    case = Case(
        {"n": n},
        np.dtype(np.float32),
        {},
        {
            "x": Drawn(
                "x",
                (n,),
                np.dtype(np.float32),
                (n + 3,),
                (slice(2, n + 2),),
                reshape=True,
                seed=5,
                kind="uniform",
            ),
            "out": Drawn("out", (n,), np.dtype(np.float32), (n,), (slice(0, n),), is_input=False),
        },
    )
    text = reproducer(
        case, copy_launch, copy_reference, ["out"], "single", True, None, None, lambda f, k: True
    )
    path = re.search(r'saved = np.load\("([^"]+)"\)', text).group(1)
    np.testing.assert_array_equal(np.load(path)["x"], case.arrays["x"].values())
    assert "x = np.full((1003,), np.nan, dtype=np.float32)[2:1002].reshape((1000,))" in text


def test_unknown_parameters_and_bad_specs_are_argument_errors():
    with pytest.raises(ArgumentError, match="launch's parameter `m` is not an array"):
        check_kernel(
            lambda x, out, m: None,
            copy_reference,
            inputs={"x": array("n")},
            outputs={"out": array("n")},
            dims={"n": 4},
        )
    with pytest.raises(ArgumentError, match="layout must be one of"):
        array("n", layout="fortran")
    with pytest.raises(ArgumentError, match="names dimension `m`"):
        check_kernel(
            copy_launch,
            copy_reference,
            inputs={"x": array("m")},
            outputs={"out": array("m")},
            dims={"n": 4},
            settings=FIXED,
        )


def test_a_missing_hypothesis_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    with pytest.raises(
        ImportError,
        match="check_kernel needs hypothesis, which is not installed: pip install hypothesis",
    ):
        check_copy("")
