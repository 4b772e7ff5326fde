"""fp8 casts: one kernel that rounds a float tensor to fp8 and widens it back, and the
inputs that exercise every rounding case (shared by the interpreter, PTX and GPU tests).

    codes, wide = run_casts(x, "fp32", "fp8e4nv", rounding=None)   # uint8 codes, fp32 values
"""

from __future__ import annotations

import numpy as np

import tritium
import tritium.language as tl

TL = {"fp32": tl.float32, "fp16": tl.float16, "bf16": tl.bfloat16}
TL |= {"fp8e4nv": tl.float8e4nv, "fp8e5": tl.float8e5}
BF16_PTR = tl.pointer_type(tl.bfloat16)


@tritium.jit
def fp8_cast_kernel(x_ptr, codes_ptr, wide_ptr, n, SRC: tl.constexpr, F8: tl.constexpr,
                    ROUNDING: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(SRC)  # fp32 data, exact in SRC
    y = x.to(F8, fp_downcast_rounding=ROUNDING)
    tl.store(codes_ptr + offs, y, mask=mask)
    tl.store(wide_ptr + offs, y.to(tl.float32), mask=mask)


def cast_inputs(rng, src: str, n: int = 4096) -> np.ndarray:
    """float32 values exact in `src`: every fp8 value, the midpoints between neighbours
    (ties), values just beside them, the saturation edges, infinities, NaN, subnormals and
    random values over the whole range."""
    from tests.codegen.lowp_dot_kernels import decode

    grid = []
    for e4 in (True, False):
        v = decode(np.arange(256, dtype=np.uint8), "fp8e4nv" if e4 else "fp8e5")
        v = np.unique(v[np.isfinite(v)])
        mid = (v[1:] + v[:-1]) / 2
        grid += [v, mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf)]
    edges = [448.0, 464.0, 480.0, 500.0, 57344.0, 61440.0, 65504.0, 1e30, np.inf, -np.inf]
    edges += [np.nan, 2.0**-9, 2.0**-10, 2.0**-16, 2.0**-17, 1e-30, 0.0, -0.0]
    rand = rng.standard_normal(n) * np.exp2(rng.uniform(-20, 18, n))
    x = np.concatenate(grid + [np.array(edges), rand]).astype(np.float32)
    x = np.concatenate([x, -x])
    if src == "fp16":
        with np.errstate(over="ignore"):  # past 65504: inf, as the fp16 data would be
            x = x.astype(np.float16).astype(np.float32)
    elif src == "bf16":
        bits = x.view(np.uint32)
        bits = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
        x = np.where(np.isnan(x), x, bits.view(np.float32)).astype(np.float32)
    return x


def run_casts(x: np.ndarray, src: str, f8: str, rounding=None, block: int = 512):
    n = x.size
    codes = np.full(n, 0xAA, np.uint8)
    wide = np.full(n, -7.0, np.float32)
    fp8_cast_kernel[(tritium.cdiv(n, block),)](
        x, tritium.reinterpret(codes, TL[f8]), wide, n,
        SRC=TL[src], F8=TL[f8], ROUNDING=rounding, BLOCK=block,
    )  # fmt: skip
    return codes, wide


def same_codes(a: np.ndarray, b: np.ndarray, f8: str) -> np.ndarray:
    """Element-wise equality of fp8 codes, any NaN code equal to any other NaN code."""
    from tests.codegen.lowp_dot_kernels import decode

    nan_a, nan_b = np.isnan(decode(a, f8)), np.isnan(decode(b, f8))
    return (a == b) | (nan_a & nan_b)


__all__ = ["cast_inputs", "fp8_cast_kernel", "run_casts", "same_codes"]
