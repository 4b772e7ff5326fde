"""RMSNorm forward (as Liger-Kernel's) and a block-sum kernel using `triton.cdiv` inside
the kernel."""

import numpy as np
import triton
import triton.language as tl

from tritonlib.utils import TRITON_3_4_OR_LATER, calculate_settings

if TRITON_3_4_OR_LATER:
    try:
        from triton.language.extra.libdevice import rsqrt
    except ModuleNotFoundError:
        from triton.language.extra.cuda.libdevice import rsqrt
else:
    from triton.language.math import rsqrt


@triton.jit
def _square(x):
    return x * x


@triton.heuristics({"EVEN_N": lambda args: args["n_cols"] == args["BLOCK_SIZE"]})
@triton.jit
def _rms_norm_fwd(Y, X, W, stride, n_cols, eps, BLOCK_SIZE: tl.constexpr, EVEN_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    if EVEN_N:
        x = tl.load(X + row * stride + cols)
    else:
        x = tl.load(X + row * stride + cols, mask=mask, other=0.0)
    rstd = rsqrt(tl.sum(_square(x), axis=0) / n_cols + eps)
    w = tl.load(W + cols, mask=mask, other=0.0)
    tl.store(Y + row * stride + cols, x * rstd * w, mask=mask)


def rms_norm(x: np.ndarray, w: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    n_rows, n_cols = x.shape
    block, num_warps = calculate_settings(n_cols)
    y = np.empty_like(x)
    _rms_norm_fwd[(n_rows,)](
        y, x, w, x.strides[0] // x.itemsize, n_cols, eps, BLOCK_SIZE=block, num_warps=num_warps
    )
    return y


@triton.jit
def _block_sums(X, OUT, N: tl.constexpr, BLOCK: tl.constexpr):
    # triton.cdiv inside a kernel, on constexprs (upstream's is a constexpr_function)
    for b in tl.static_range(triton.cdiv(N, BLOCK)):
        offs = b * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(X + offs, mask=offs < N, other=0)
        tl.store(OUT + b, tl.sum(x, axis=0) + tl.core.CONSTEXPR_0)


def block_sums(x: np.ndarray, block: int) -> np.ndarray:
    out = np.zeros(triton.cdiv(x.size, block), x.dtype)
    _block_sums[(1,)](x, out, N=x.size, BLOCK=block)
    return out
