"""A strided, masked matmul for the narrow tl.dot types (int8 -> int32, fp8 e4m3 / e5m2 ->
fp32 or fp16, fp16 -> fp16 accumulators) and its numpy harness, shared by the interpreter,
PTX and GPU tests.

    run_lowp(a_codes, b_codes, "fp8e4nv", "fp8e5", "fp32", b_order="col", ...) -> C (numpy)

fp8 operands travel as uint8 codes through `tritium.reinterpret`; int8 and fp16 ones as
themselves. The reference decodes fp8 codes with `decode` below, written from the format
definitions independently of the interpreter's tables, and multiplies in float64.
"""

from __future__ import annotations

import numpy as np

import tritium
import tritium.language as tl

TL = {
    "i8": tl.int8,
    "fp8e4nv": tl.float8e4nv,
    "fp8e5": tl.float8e5,
    "fp16": tl.float16,
    "fp32": tl.float32,
    "i32": tl.int32,
}
NP_OUT = {"i32": np.int32, "fp32": np.float32, "fp16": np.float16}


@tritium.jit
def lowp_matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    OUT: tl.constexpr, IMPRECISE: tl.constexpr,
):  # fmt: skip
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=OUT)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, out_dtype=OUT, max_num_imprecise_acc=IMPRECISE)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def decode(codes: np.ndarray, kind: str) -> np.ndarray:
    """float64 values of fp8 codes, from the definitions: e4m3fn (bias 7, S.1111.111 NaN,
    no inf) and e5m2 (bias 15, IEEE-like)."""
    c = codes.astype(np.int64)
    sign = np.where(c & 0x80, -1.0, 1.0)
    ebits, mbits, bias = (4, 3, 7) if kind == "fp8e4nv" else (5, 2, 15)
    e = (c >> mbits) & ((1 << ebits) - 1)
    m = (c & ((1 << mbits) - 1)).astype(np.float64)
    normal = np.ldexp(1.0 + m / (1 << mbits), e - bias)
    sub = np.ldexp(m, 1 - bias - mbits)
    v = np.where(e == 0, sub, normal)
    top = (1 << ebits) - 1
    if kind == "fp8e4nv":
        v = np.where((e == top) & (m == 7), np.nan, v)
    else:
        v = np.where(e == top, np.where(m == 0, np.inf, np.nan), v)
    return sign * v


def random_operand(rng, shape, kind: str, max_abs: float = np.inf) -> np.ndarray:
    """Random operand data of `kind`: int8 values, fp16 values, or fp8 codes (uint8) drawn
    uniformly from the format's finite codes of magnitude <= max_abs (subnormals included)."""
    if kind == "i8":
        return rng.integers(-128, 128, shape, dtype=np.int8)
    if kind == "fp16":
        return rng.standard_normal(shape).astype(np.float16)
    all_codes = np.arange(256, dtype=np.uint8)
    v = decode(all_codes, kind)
    ok = all_codes[np.isfinite(v) & (np.abs(v) <= max_abs)]
    return rng.choice(ok, shape).astype(np.uint8)


def values(x: np.ndarray, kind: str) -> np.ndarray:
    """float64 values of operand data."""
    return decode(x, kind) if kind.startswith("fp8") else x.astype(np.float64)


def stored(x: np.ndarray, order: str) -> tuple[np.ndarray, int, int]:
    if order == "row":
        return np.ascontiguousarray(x), x.shape[1], 1
    return np.ascontiguousarray(x.T), 1, x.shape[0]


def run_lowp(
    a: np.ndarray, b: np.ndarray, a_kind: str, b_kind: str, out: str,
    a_order: str = "row", b_order: str = "row", block=(64, 64, 64),
    num_warps: int = 4, num_stages: int = 3, imprecise=None, compiled: list | None = None,
) -> np.ndarray:  # fmt: skip
    """C = A @ B with lowp_matmul_kernel; `compiled`: a list the launched CompiledKernel
    is appended to (its PTX)."""
    M, K = a.shape
    N = b.shape[1]
    sa, sam, sak = stored(a, a_order)
    sb, sbk, sbn = stored(b, b_order)
    if a_kind.startswith("fp8"):
        sa = tritium.reinterpret(sa, TL[a_kind])
    if b_kind.startswith("fp8"):
        sb = tritium.reinterpret(sb, TL[b_kind])
    c = np.full((M, N), -7, NP_OUT[out])  # poison: every element must be written
    bm, bn, bk = block
    grid = (tritium.cdiv(M, bm), tritium.cdiv(N, bn))
    args = (sa, sb, c, M, N, K, sam, sak, sbk, sbn, N, 1)
    consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, OUT=TL[out], IMPRECISE=imprecise,
                  num_warps=num_warps, num_stages=num_stages)  # fmt: skip
    lowp_matmul_kernel[grid](*args, **consts)
    if compiled is not None:  # (the kernel just launched: warmup finds it compiled)
        compiled.append(lowp_matmul_kernel.warmup(*args, grid=grid, **consts))
    return c


def reference(a, b, a_kind: str, b_kind: str) -> np.ndarray:
    """float64 (int64 for int8) A @ B of the values the kernel sees."""
    if a_kind == "i8":
        return a.astype(np.int64) @ b.astype(np.int64)
    return values(a, a_kind) @ values(b, b_kind)


def check(c: np.ndarray, ref: np.ndarray, out: str, K: int, tensor_cores: bool = False) -> None:
    """int32: exact. fp32 accumulation of exact products: relative error ~1e-6 in numpy;
    the tensor cores' fp8 accumulation is not IEEE fp32 (Hopper's keeps ~13 fraction bits
    across K steps: upstream's max_num_imprecise_acc), so 1e-3 there. fp16 accumulators
    round at every step: ~2**-11 * sqrt(K) relative."""
    if out == "i32":
        np.testing.assert_array_equal(c, ref.astype(np.int32))
        return
    err = float(np.linalg.norm(c.astype(np.float64) - ref) / max(np.linalg.norm(ref), 1e-30))
    bound = (1e-3 if tensor_cores else 1e-5) if out == "fp32" else 2e-3 + 1e-4 * np.sqrt(K)
    assert np.isfinite(c).all() and err < bound, f"relative error {err:.3g} >= {bound:.3g}"


__all__ = ["check", "decode", "lowp_matmul_kernel", "random_operand", "reference", "run_lowp"]
