"""A strided matmul kernel covering every `tl.dot` configuration, and its numpy harness
(shared by the interpreter, PTX and GPU tests of tl.dot).

    run_matmul(a, b, "fp16", precision, a_order="col", ...) -> C (numpy), computed by
    matmul_kernel on the GPU or, with TRITIUM_INTERPRET=1, in the interpreter.

A and B are stored row- or column-major (`order`), and the kernel reaches them through
strides, so both orders of each operand go through the same code. The accumulator is
fp32; C is written as fp32, or fp16 when OUT_F16 (`.to(tl.float16)` epilogue).
"""

from __future__ import annotations

import numpy as np

import tritium
import tritium.language as tl

# (the frontend does not evaluate `tl.pointer_type(...)` inside a kernel; a global works)
BF16_PTR = tl.pointer_type(tl.bfloat16)


@tritium.jit
def matmul_kernel(
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
    PRECISION: tl.constexpr,
    OUT_F16: tl.constexpr,
    BF16: tl.constexpr,
):
    if BF16:  # numpy has no bfloat16: the bits travel as int16, read through *bf16
        a_ptr = a_ptr.to(BF16_PTR, bitcast=True)
        b_ptr = b_ptr.to(BF16_PTR, bitcast=True)
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    if OUT_F16:
        tl.store(c_ptrs, acc.to(tl.float16), mask=c_mask)
    else:
        tl.store(c_ptrs, acc, mask=c_mask)


TOLERANCE = {"ieee": 1e-5, "tf32": 5e-3, "fp16": 1e-2, "bf16": 1e-2}


def bf16_round(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (nearest even), still as float32."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    bits = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return bits.view(np.float32)


def stored(x: np.ndarray, order: str) -> tuple[np.ndarray, int, int]:
    """`x` (rows x cols) kept row- or column-major: (storage, row stride, col stride)."""
    if order == "row":
        s = np.ascontiguousarray(x)
        return s, x.shape[1], 1
    s = np.ascontiguousarray(x.T)  # element (r, c) at c * rows + r
    return s, 1, x.shape[0]


def run_matmul(
    a: np.ndarray,
    b: np.ndarray,
    kind: str,
    precision: str = "tf32",
    a_order: str = "row",
    b_order: str = "row",
    block=(32, 32, 32),
    num_warps: int = 4,
    num_stages: int = 3,
    out_f16: bool = False,
    compiled: list | None = None,
) -> np.ndarray:
    """C = A @ B with matmul_kernel; `a`, `b` are float32 holding values exact in `kind`.
    `compiled`: a list the launched CompiledKernel is appended to (its PTX, registers)."""
    M, K = a.shape
    N = b.shape[1]
    np_dtype = {"fp16": np.float16, "fp32": np.float32}.get(kind)

    def cast(x):
        if kind == "bf16":  # the bf16 bits (x holds bf16-exact values) as int16
            bits = np.ascontiguousarray(x, np.float32).view(np.uint32) >> 16
            return bits.astype(np.uint16).view(np.int16)
        return x.astype(np_dtype)

    sa, sam, sak = stored(cast(a), a_order)
    sb, sbk, sbn = stored(cast(b), b_order)
    c = np.full((M, N), np.nan, dtype=np.float16 if out_f16 else np.float32)
    bm, bn, bk = block
    grid = (tritium.cdiv(M, bm), tritium.cdiv(N, bn))
    args = (sa, sb, c, M, N, K, sam, sak, sbk, sbn, N, 1)
    consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, PRECISION=precision, OUT_F16=out_f16,
                  BF16=kind == "bf16", num_warps=num_warps, num_stages=num_stages)  # fmt: skip
    matmul_kernel[grid](*args, **consts)
    if compiled is not None:  # (the kernel just launched: warmup finds it compiled)
        compiled.append(matmul_kernel.warmup(*args, grid=grid, **consts))
    return c


def reference(a: np.ndarray, b: np.ndarray, kind: str, precision: str) -> np.ndarray:
    """float64 A @ B of the values the kernel sees (tf32 rounding is part of the error)."""
    return a.astype(np.float64) @ b.astype(np.float64)


def relative_error(c: np.ndarray, ref: np.ndarray) -> float:
    return float(np.linalg.norm(c.astype(np.float64) - ref) / max(np.linalg.norm(ref), 1e-30))


def inputs(rng, M: int, N: int, K: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """float32 operands whose values are exact in `kind`."""
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    if kind == "fp16":
        a, b = a.astype(np.float16).astype(np.float32), b.astype(np.float16).astype(np.float32)
    elif kind == "bf16":
        a, b = bf16_round(a), bf16_round(b)
    return a, b


def tolerance(kind: str, precision: str) -> float:
    return TOLERANCE[precision] if kind == "fp32" else TOLERANCE[kind]
