"""fp16 matmul C = A @ B (fp32 accumulation, C in C's dtype: fp16 here, bf16 works alike)
with grouped program ordering.

Programs walk the output GROUP_M block-rows at a time, column by column, so the A and B
tiles a wave of programs reads stay in L2 (upstream's matmul tutorial). Strides make any
row- or column-major A, B and C work; masks cover sizes that are not block multiples.
"""

import numpy as np

import tritium
import tritium.language as tl


@tritium.jit
def matmul_fp16_grouped_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul(a, b, block_m=128, block_n=128, block_k=32, group_m=8, num_warps=4, num_stages=3):
    """a: (M, K), b: (K, N) fp16 arrays (any strides); returns C (M, N) fp16."""
    M, K = a.shape
    _, N = b.shape
    c = np.full((M, N), np.nan, dtype=np.float16)
    grid = (tritium.cdiv(M, block_m) * tritium.cdiv(N, block_n),)
    item = a.itemsize
    matmul_fp16_grouped_kernel[grid](
        a, b, c, M, N, K,
        a.strides[0] // item, a.strides[1] // item,
        b.strides[0] // item, b.strides[1] // item,
        c.strides[0] // item, c.strides[1] // item,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m,
        num_warps=num_warps, num_stages=num_stages,
    )  # fmt: skip
    return c


def check(rng):
    a = rng.standard_normal((200, 136)).astype(np.float16)
    b = rng.standard_normal((136, 90)).astype(np.float16)
    c = matmul(a, b, block_m=64, block_n=64, block_k=32, group_m=2)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = np.linalg.norm(c.astype(np.float64) - ref) / np.linalg.norm(ref)
    assert err < 1e-2, err  # fp16 inputs and output, fp32 accumulation
    return a.nbytes + b.nbytes + c.nbytes


if __name__ == "__main__":
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from examples._common import run_example

    run_example("grouped fp16 matmul", check)
