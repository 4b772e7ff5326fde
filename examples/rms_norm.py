"""RMSNorm: y = x / sqrt(mean(x^2) + eps) * w, one program per row."""

import numpy as np

import tritium
import tritium.language as tl


@tritium.jit
def rms_norm_simple_kernel(
    X, W, Y, stride_x_row, stride_y_row, n_cols, eps, BLOCK_SIZE: tl.constexpr
):
    row_idx = tl.program_id(axis=0)

    X += row_idx * stride_x_row
    Y += row_idx * stride_y_row

    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    x = tl.load(X + col_offsets, mask=mask, other=0.0)
    w = tl.load(W + col_offsets, mask=mask, other=1.0)

    x_squared = x * x
    mean_x_squared = tl.sum(x_squared) / n_cols
    rms = tl.sqrt(mean_x_squared + eps)
    x_normalized = x / rms
    y = x_normalized * w

    tl.store(Y + col_offsets, y, mask=mask)


def rms_norm(x: np.ndarray, w: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    n_rows, n_cols = x.shape
    y = np.full_like(x, np.nan)
    block = tritium.next_power_of_2(n_cols)
    rms_norm_simple_kernel[(n_rows,)](
        x, w, y, x.strides[0] // 4, y.strides[0] // 4, n_cols, eps, BLOCK_SIZE=block
    )
    return y


def reference(x, w, eps=1e-6):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * w


def check(rng):
    x = rng.standard_normal((67, 1536), dtype=np.float32)
    w = rng.standard_normal(1536, dtype=np.float32)
    np.testing.assert_allclose(rms_norm(x, w), reference(x, w), rtol=1e-5, atol=1e-6)
    return x.nbytes * 2 + w.nbytes


if __name__ == "__main__":
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from examples._common import run_example

    run_example("RMSNorm", check)
