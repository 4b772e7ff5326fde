"""Fused row softmax: one program per row, the whole row in one block."""

import numpy as np

import tritium
import tritium.language as tl


@tritium.jit
def softmax_kernel(
    output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols, BLOCK_SIZE: tl.constexpr
):
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    input_ptrs = row_start_ptr + col_offsets
    row = tl.load(input_ptrs, mask=col_offsets < n_cols, other=-float("inf"))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    output_row_start_ptr = output_ptr + row_idx * output_row_stride
    output_ptrs = output_row_start_ptr + col_offsets
    tl.store(output_ptrs, softmax_output, mask=col_offsets < n_cols)


def softmax(x: np.ndarray) -> np.ndarray:
    n_rows, n_cols = x.shape
    out = np.full_like(x, np.nan)
    block = tritium.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](
        out,
        x,
        x.strides[0] // x.itemsize,
        out.strides[0] // out.itemsize,
        n_cols,
        BLOCK_SIZE=block,
        num_warps=4 if block <= 2048 else 8,
    )
    return out


def reference(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def check(rng):
    x = rng.standard_normal((123, 781), dtype=np.float32)
    np.testing.assert_allclose(softmax(x), reference(x), rtol=1e-5, atol=1e-7)
    return x.nbytes * 2


if __name__ == "__main__":
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from examples._common import run_example

    run_example("fused softmax", check)
