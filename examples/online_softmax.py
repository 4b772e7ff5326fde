"""Online softmax over rows longer than one block: a first loop keeps a running max and
rescaled sum, a second loop writes exp(x - max) / sum."""

import numpy as np

import tritium
import tritium.language as tl


@tritium.jit
def online_softmax_kernel(
    input_ptr, output_ptr, n_cols, input_row_stride, output_row_stride, BLOCK_SIZE: tl.constexpr
):
    row_idx = tl.program_id(0)
    row_input_ptr = input_ptr + row_idx * input_row_stride
    row_output_ptr = output_ptr + row_idx * output_row_stride

    max_val = -float("inf")
    sum_exp = 0.0
    for block_start in range(0, n_cols, BLOCK_SIZE):
        offsets = block_start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(row_input_ptr + offsets, mask=offsets < n_cols, other=-float("inf"))
        new_max = tl.maximum(max_val, tl.max(x, axis=0))
        sum_exp = sum_exp * tl.exp(max_val - new_max) + tl.sum(tl.exp(x - new_max), axis=0)
        max_val = new_max

    for block_start in range(0, n_cols, BLOCK_SIZE):
        offsets = block_start + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_cols
        x = tl.load(row_input_ptr + offsets, mask=mask, other=-float("inf"))
        tl.store(row_output_ptr + offsets, tl.exp(x - max_val) / sum_exp, mask=mask)


def online_softmax(x: np.ndarray, block: int = 1024) -> np.ndarray:
    n_rows, n_cols = x.shape
    out = np.full_like(x, np.nan)
    online_softmax_kernel[(n_rows,)](
        x, out, n_cols, x.strides[0] // 4, out.strides[0] // 4, BLOCK_SIZE=block
    )
    return out


def reference(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def check(rng):
    x = rng.standard_normal((19, 5000), dtype=np.float32)
    np.testing.assert_allclose(online_softmax(x, 1024), reference(x), rtol=1e-5, atol=1e-8)
    return x.nbytes * 3


if __name__ == "__main__":
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from examples._common import run_example

    run_example("online softmax", check)
