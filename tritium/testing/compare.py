"""`assert_close(x, y, atol=None, rtol=None, err_msg="")`: upstream's comparison helper.

    tritium.testing.assert_close(out, expected)                   # |x - y| <= 1e-2
    tritium.testing.assert_close(out, expected, atol=1e-3, rtol=1e-3)

`x` and `y` may be numpy arrays, tritium `DeviceArray`s, torch tensors (any device; bf16
is compared as float32), cupy arrays or Python numbers. `atol` (default 1e-2) and `rtol`
(default 0) may be numbers or functions of `x`'s dtype. Arrays are compared with
`numpy.testing.assert_allclose` (NaNs equal), so a failure lists the mismatched elements;
two scalars fail with "`err_msg` x is not close to y (atol=..., rtol=...)".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tritium.runtime.array_kinds import kind_of

__all__ = ["assert_close", "to_numpy"]


def to_numpy(a: Any) -> np.ndarray:
    """A host numpy copy (or view) of an array of any kind tritium accepts, or a number."""
    kind = kind_of(a)
    if kind is None:
        return np.asarray(a)
    if kind.name == "numpy":
        return a
    if kind.name == "torch":
        t = a.detach()
        if str(t.dtype) == "torch.bfloat16":
            t = t.float()
        return t.cpu().numpy()
    if kind.name == "device_array":
        return a.numpy()
    if kind.name == "cupy":
        return a.get()
    return np.asarray(a)


def _dtype(a: Any) -> Any:
    return getattr(a, "dtype", type(a))


def assert_close(x: Any, y: Any, atol=None, rtol=None, err_msg: str = "") -> None:
    """Raise AssertionError unless |x - y| <= atol + rtol * |y| everywhere."""
    atol = 1e-2 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    atol = atol(_dtype(x)) if callable(atol) else atol
    rtol = rtol(_dtype(x)) if callable(rtol) else rtol
    xs, ys = to_numpy(x), to_numpy(y)
    if xs.size > 1 or ys.size > 1:
        np.testing.assert_allclose(xs, ys, atol=atol, rtol=rtol, equal_nan=True, err_msg=err_msg)
        return
    if not np.allclose(xs, ys, atol=atol, rtol=rtol, equal_nan=True):
        raise AssertionError(f"{err_msg} {xs} is not close to {ys} (atol={atol}, rtol={rtol})")
