"""Vector add: out = x + y, one block of BLOCK_SIZE elements per program.

Runs on the GPU when there is one, in the interpreter otherwise (or with TRITIUM_INTERPRET=1).
"""

import numpy as np

import tritium
import tritium.language as tl


@tritium.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


def add(x, y, block_size=1024):
    out = np.empty_like(x)
    n = x.size
    add_kernel[(tritium.cdiv(n, block_size),)](x, y, out, n, BLOCK_SIZE=block_size)
    return out


def check(rng):
    n = 98_432
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = add(x, y)
    np.testing.assert_allclose(out, x.astype(np.float64) + y, rtol=1e-6)
    return n * 3 * 4


if __name__ == "__main__":
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from examples._common import run_example

    run_example("vector add", check)
