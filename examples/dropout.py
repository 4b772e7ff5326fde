"""Dropout without a mask in memory: the keep/drop decision of element i is `tl.rand(seed, i)`.

A plain dropout kernel reads a random mask that the host drew and stored; here the mask is
recomputed from (seed, element index) wherever it is needed, so the forward and backward
passes only share one integer. Philox is counter-based: the same seed gives the same mask
on every launch, on the GPU and in the interpreter, whatever the block size or grid.

Runs on the GPU when there is one, in the interpreter otherwise (or with TRITIUM_INTERPRET=1).
"""

import numpy as np

import tritium
import tritium.language as tl


@tritium.jit
def seeded_dropout_kernel(x_ptr, out_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    # one uniform number per element, a pure function of (seed, offset)
    keep = tl.rand(seed, offsets) > p
    out = tl.where(keep, x / (1 - p), 0.0)
    tl.store(out_ptr + offsets, out, mask=mask)


def seeded_dropout(x, p, seed, block_size=1024):
    out = np.full_like(x, np.nan)  # unwritten elements would show as NaN
    n = x.size
    grid = (tritium.cdiv(n, block_size),)
    seeded_dropout_kernel[grid](x, out, n, p, seed, BLOCK_SIZE=block_size)
    return out


def check(rng):
    n, p = 98_433, 0.3
    x = rng.standard_normal(n, dtype=np.float32)
    x[x == 0] = 1.0  # so that a zero in the output means "dropped"
    seed = 2**40 + 1234  # 64-bit seeds work too (the key is its low and high word)
    out = seeded_dropout(x, p, seed)

    kept = out != 0
    scale = np.float32(1) / (np.float32(1) - np.float32(p))
    # every element is either dropped or x / (1 - p)
    np.testing.assert_allclose(out[kept], x[kept] * scale, rtol=1e-6)
    # about 1 - p of them are kept (6 standard deviations of a binomial)
    assert abs(kept.mean() - (1 - p)) < 6 * np.sqrt(p * (1 - p) / n), kept.mean()
    # the mask is a function of the seed only: the same for other data and another block size
    y = rng.uniform(1, 2, n).astype(np.float32)
    np.testing.assert_array_equal(seeded_dropout(y, p, seed, block_size=256) != 0, kept)
    np.testing.assert_array_equal(seeded_dropout(x, p, seed), out)
    # and another seed drops other elements
    other = seeded_dropout(x, p, seed + 1) != 0
    assert 0.3 < (other != kept).mean() < 0.5  # 2 p (1 - p) = 0.42 expected
    return x.nbytes * 2 * 4


if __name__ == "__main__":
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from examples._common import run_example

    run_example("seeded dropout", check)
