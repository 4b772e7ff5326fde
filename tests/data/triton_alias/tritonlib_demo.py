"""A program written for upstream Triton, not edited for tritium: tests/test_triton_alias.py
runs it as `python -m tritium run tritonlib_demo.py ARGS` (and `-m tritonlib_demo`)."""

import sys

import numpy as np
import triton
import tritonlib


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 50)).astype(np.float32)
    w = rng.standard_normal(50).astype(np.float32)
    ref = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(tritonlib.rms_norm(x, w), ref, rtol=1e-5, atol=1e-5)

    a, b = rng.standard_normal(100).astype(np.float32), rng.standard_normal(100).astype(np.float32)
    gelu = 0.5 * a * (1 + np.tanh(0.7978845608028654 * (a + 0.044715 * a**3)))
    np.testing.assert_allclose(tritonlib.geglu(a, b), gelu * b, rtol=1e-5, atol=1e-6)

    v = np.arange(40, dtype=np.int32)
    np.testing.assert_array_equal(tritonlib.block_sums(v, 16), [120, 376, 284])

    print(f"triton {triton.__version__} served by tritium {triton.__tritium_version__}")
    print("args", sys.argv[1:])
    print("ok")


if __name__ == "__main__":
    main()
