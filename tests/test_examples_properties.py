"""The examples' kernels property-tested with `tritium.testing.check_kernel` against their
numpy references: odd sizes, padded rows and views inside poisoned buffers, NaN / inf
inputs, dtypes. In the interpreter here; on the GPU with `-m gpu`."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
from examples import layer_norm, rms_norm, softmax, vector_add
from tritium.testing import array, check_kernel

DEVICES = [
    pytest.param("interpreter", id="interpreter"),
    pytest.param("gpu", id="gpu", marks=pytest.mark.gpu),
]


# ------------------------------------------------------------------ vector add
def add_launch(x, y, out):
    n = x.size
    vector_add.add_kernel[(tritium.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)


def add_reference(x, y):
    if x.dtype.kind == "f":
        return x.astype(np.float64) + y
    return x + y  # integers wrap around, in numpy as in the kernel


@pytest.mark.parametrize("device", DEVICES)
def test_vector_add(device):
    check_kernel(
        add_launch,
        add_reference,
        inputs={"x": array("n"), "y": array("n")},
        outputs={"out": array("n")},
        dims={"n": (1, 3000)},
        dtypes=["float32", "float16", "int32"],
        max_examples=25,
        device=device,
    )


# ------------------------------------------------------------------ softmax (padded rows)
def softmax_launch(x, out):
    n_rows, n_cols = x.shape
    softmax.softmax_kernel[(n_rows,)](
        out,
        x,
        x.strides[0] // x.itemsize,
        out.strides[0] // out.itemsize,
        n_cols,
        BLOCK_SIZE=tritium.next_power_of_2(n_cols),
    )


@pytest.mark.parametrize("device", DEVICES)
def test_softmax(device):
    check_kernel(
        softmax_launch,
        softmax.reference,  # NaN / inf rows: NaN in both
        inputs={"x": array("rows", "cols", layout="rows")},
        outputs={"out": array("rows", "cols", layout="rows")},
        dims={"rows": (1, 9), "cols": (1, 600)},
        max_examples=25,
        device=device,
    )


# ------------------------------------------------------------------ layer norm (loops over a row)
def layer_norm_launch(x, w, b, y, eps):
    n_rows, n = x.shape
    layer_norm.layer_norm_kernel[(n_rows,)](x, y, w, b, n, n, eps, BLOCK_SIZE=128)


def layer_norm_reference(x, w, b, eps):
    return layer_norm.reference(x, w, b, eps)


@pytest.mark.parametrize("device", DEVICES)
def test_layer_norm(device):
    values = (-100.0, 100.0)  # no inf: two fp32 maxima overflow the fp32 mean, not numpy's
    check_kernel(
        layer_norm_launch,
        layer_norm_reference,
        inputs={
            "x": array("rows", "n", elements=values),
            "w": array("n", elements=values),
            "b": array("n", elements=values),
        },
        outputs={"y": array("rows", "n")},
        dims={"rows": (1, 5), "n": (1, 700)},
        scalars={"eps": [1e-5, 1e-2]},
        rtol=1e-4,
        atol=1e-4,
        max_examples=20,
        device=device,
    )


# ------------------------------------------------------------------ rms norm
def rms_norm_launch(x, w, y, eps):
    n_rows, n_cols = x.shape
    rms_norm.rms_norm_simple_kernel[(n_rows,)](
        x,
        w,
        y,
        x.strides[0] // 4,
        y.strides[0] // 4,
        n_cols,
        eps,
        BLOCK_SIZE=tritium.next_power_of_2(n_cols),
    )


def rms_norm_reference(x, w, eps):
    return rms_norm.reference(x, w, eps)


@pytest.mark.parametrize("device", DEVICES)
def test_rms_norm(device):
    check_kernel(
        rms_norm_launch,
        rms_norm_reference,
        inputs={
            "x": array("rows", "cols", layout="rows", elements=(-50.0, 50.0)),
            "w": array("cols", elements=(-2.0, 2.0)),
        },
        outputs={"y": array("rows", "cols", layout="rows")},
        dims={"rows": (1, 6), "cols": (1, 900)},
        scalars={"eps": (1e-6, 1e-3)},
        rtol=1e-5,
        atol=1e-5,
        max_examples=20,
        device=device,
    )
