"""Tiled matmul C = A @ B (fp32 in, fp32 out) with a K loop and masks for ragged edges."""

import numpy as np

import tritium
import tritium.language as tl


@tritium.jit
def matmul_tiled_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)

    for k_start in range(0, K, BLOCK_K):
        offs_k = k_start + tl.arange(0, BLOCK_K)
        a_tile = tl.load(
            a_ptr + offs_m[:, None] * K + offs_k[None, :],
            mask=(offs_m[:, None] < M) & (offs_k[None, :] < K),
            other=0.0,
        )
        b_tile = tl.load(
            b_ptr + offs_k[:, None] * N + offs_n[None, :],
            mask=(offs_k[:, None] < K) & (offs_n[None, :] < N),
            other=0.0,
        )
        acc += tl.dot(a_tile, b_tile, allow_tf32=True)

    out_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=out_mask)


def matmul(a, b, block_m=64, block_n=64, block_k=32):
    M, K = a.shape
    _, N = b.shape
    c = np.full((M, N), np.nan, dtype=np.float32)
    grid = (tritium.cdiv(M, block_m), tritium.cdiv(N, block_n))
    matmul_tiled_kernel[grid](a, b, c, M, N, K, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k)
    return c


def check(rng):
    a = rng.standard_normal((200, 136), dtype=np.float32)
    b = rng.standard_normal((136, 90), dtype=np.float32)
    c = matmul(a, b)
    ref = a.astype(np.float64) @ b
    err = np.linalg.norm(c - ref) / np.linalg.norm(ref)
    assert err < 5e-3, err  # tf32 inputs
    return a.nbytes + b.nbytes + c.nbytes


if __name__ == "__main__":
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from examples._common import run_example

    run_example("tiled matmul (tf32)", check)
