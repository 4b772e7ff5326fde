"""Causal softmax with an early return: row r of a (batch * seq, seq) score matrix only
attends to columns <= r % seq; rows past n_rows return at once."""

import numpy as np

import tritium
import tritium.language as tl


@tritium.jit
def softmax_causal_simple_kernel(
    input_ptr,
    output_ptr,
    n_rows,
    n_cols,
    seq_len,
    input_row_stride,
    output_row_stride,
    BLOCK_SIZE: tl.constexpr,
):
    row_idx = tl.program_id(axis=0)

    if row_idx >= n_rows:
        return

    position = row_idx % seq_len

    input_row_start = input_ptr + row_idx * input_row_stride
    output_row_start = output_ptr + row_idx * output_row_stride

    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    row_vals = tl.load(input_row_start + col_offsets, mask=mask, other=-float("inf"))
    is_future = col_offsets > position
    row_vals = tl.where(is_future, -float("inf"), row_vals)

    row_max = tl.max(row_vals, axis=0)
    numerator = tl.exp(row_vals - row_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator

    tl.store(output_row_start + col_offsets, softmax_output, mask=mask)


def causal_softmax(x: np.ndarray, seq_len: int, grid_rows: int | None = None) -> np.ndarray:
    n_rows, n_cols = x.shape
    out = np.full_like(x, np.nan)
    block = tritium.next_power_of_2(n_cols)
    grid = (grid_rows or n_rows,)
    softmax_causal_simple_kernel[grid](
        x, out, n_rows, n_cols, seq_len, x.strides[0] // 4, out.strides[0] // 4, BLOCK_SIZE=block
    )
    return out


def reference(x: np.ndarray, seq_len: int) -> np.ndarray:
    x = x.astype(np.float64)
    n_rows, n_cols = x.shape
    pos = np.arange(n_rows) % seq_len
    future = np.arange(n_cols)[None, :] > pos[:, None]
    x = np.where(future, -np.inf, x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def check(rng):
    seq = 48
    x = rng.standard_normal((3 * seq, seq), dtype=np.float32)
    out = causal_softmax(x, seq, grid_rows=3 * seq + 5)  # extra programs exercise the early return
    np.testing.assert_allclose(out, reference(x, seq), rtol=1e-5, atol=1e-7)
    return x.nbytes * 2


if __name__ == "__main__":
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from examples._common import run_example

    run_example("causal softmax", check)
