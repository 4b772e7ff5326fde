"""fp16 matmul C = A @ B whose block sizes, warps and pipeline depth are autotuned.

`@tritium.autotune` times each config on the first launch for a given (M, N, K) and
caches the fastest; the grid is a function of the chosen config. In the interpreter
(TRITIUM_INTERPRET=1) the first config is used without timing.
"""

import numpy as np

import tritium
import tritium.language as tl


@tritium.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    c_ptrs = c_ptr + offs_m[:, None] * N + offs_n[None, :]
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


CONFIGS = [
    tritium.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=3),
    tritium.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=4, num_stages=4),
    tritium.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, num_warps=8, num_stages=3),
]
tuned_matmul_kernel = tritium.autotune(CONFIGS, key=["M", "N", "K"])(matmul_kernel)


def matmul(a, b):
    """a: (M, K), b: (K, N) C-contiguous fp16 arrays; returns C (M, N) fp16."""
    M, K = a.shape
    _, N = b.shape
    c = np.full((M, N), np.nan, dtype=np.float16)

    def grid(meta):
        return (tritium.cdiv(M, meta["BLOCK_M"]), tritium.cdiv(N, meta["BLOCK_N"]))

    tuned_matmul_kernel[grid](a, b, c, M, N, K)
    return c


def check(rng):
    a = rng.standard_normal((200, 144)).astype(np.float16)
    b = rng.standard_normal((144, 96)).astype(np.float16)
    c = matmul(a, b)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = np.linalg.norm(c.astype(np.float64) - ref) / np.linalg.norm(ref)
    assert err < 1e-2, err  # fp16 inputs and output, fp32 accumulation
    return a.nbytes + b.nbytes + c.nbytes


if __name__ == "__main__":
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from examples._common import run_example

    run_example("autotuned fp16 matmul", check)
    print(f"best config: {tuned_matmul_kernel.best_config}")
