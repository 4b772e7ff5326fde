"""Batched (3D) `tl.dot` against numpy, in the interpreter and (marker `gpu`) on the GPU,
for every operand / accumulator type the 2D dot takes; odd batch and matrix sizes come
in through masks. On the GPU the result layout puts the warps along the batch and the
dot is lowered with FMAs (mma.sync takes 2D dots only); the PTX assembles."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import tritium
import tritium.language as tl

BF16_PTR = tl.pointer_type(tl.bfloat16)


@pytest.fixture(params=["interpreter", pytest.param("gpu", marks=pytest.mark.gpu)])
def mode(request, monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1" if request.param == "interpreter" else "0")
    return request.param


@tritium.jit
def bmm_kernel(a_ptr, b_ptr, c_ptr, nb, m, n, k, B: tl.constexpr, M: tl.constexpr,
               N: tl.constexpr, K: tl.constexpr, OUT: tl.constexpr, PRECISION: tl.constexpr,
               BF16: tl.constexpr, ACC: tl.constexpr):  # fmt: skip
    if BF16:  # numpy has no bfloat16: the bits travel as int16
        a_ptr = a_ptr.to(BF16_PTR, bitcast=True)
        b_ptr = b_ptr.to(BF16_PTR, bitcast=True)
    rb = tl.arange(0, B)[:, None, None]
    rm = tl.arange(0, M)[None, :, None]
    rn = tl.arange(0, N)[None, None, :]
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rb * m * k + rm * k + rk[None, None, :],
                mask=(rb < nb) & (rm < m) & (rk[None, None, :] < k), other=0)  # fmt: skip
    b = tl.load(b_ptr + rb * k * n + rk[None, :, None] * n + rn,
                mask=(rb < nb) & (rk[None, :, None] < k) & (rn < n), other=0)  # fmt: skip
    out = rb * m * n + rm * n + rn
    om = (rb < nb) & (rm < m) & (rn < n)
    if ACC:
        c = tl.load(c_ptr + out, mask=om, other=0)
        c = tl.dot(a, b, c, input_precision=PRECISION, out_dtype=OUT)
    else:
        c = tl.dot(a, b, input_precision=PRECISION, out_dtype=OUT)
    tl.store(c_ptr + out, c, mask=om)


def _bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits (truncation of values that are exact in bfloat16)."""
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16).view(np.int16)


# kind -> (numpy input, numpy output, tl out dtype, precision, bf16, rtol)
KINDS = {
    "fp32-ieee": (np.float32, np.float32, tl.float32, "ieee", False, 1e-5),
    "fp32-tf32": (np.float32, np.float32, tl.float32, "tf32", False, 5e-3),
    "fp16": (np.float16, np.float32, tl.float32, "ieee", False, 1e-3),
    "bf16": (np.float32, np.float32, tl.float32, "ieee", True, 1e-3),
    "fp16-acc16": (np.float16, np.float16, tl.float16, "ieee", False, 1e-2),
    "int8": (np.int8, np.int32, tl.int32, "ieee", False, 0),
    "fp64": (np.float64, np.float64, tl.float64, "ieee", False, 1e-12),
}


def _run(kind, nb, m, n, k, B, M, N, K, warps, acc=False):
    ti, to, out, prec, bf16, rtol = KINDS[kind]
    rng = np.random.default_rng(nb * 1000 + m * 10 + n + k)
    if ti == np.int8:
        a = rng.integers(-8, 8, (nb, m, k)).astype(np.int8)
        b = rng.integers(-8, 8, (nb, k, n)).astype(np.int8)
    else:  # small integers and halves: exact in every float type, so sums are exact
        a = (rng.integers(-8, 8, (nb, m, k)) / 2).astype(ti)
        b = (rng.integers(-8, 8, (nb, k, n)) / 2).astype(ti)
    c0 = (rng.integers(-4, 4, (nb, m, n))).astype(to)
    c = c0.copy() if acc else np.zeros((nb, m, n), to)
    args = (_bf16_bits(a), _bf16_bits(b)) if bf16 else (a, b)
    bmm_kernel[(1,)](*args, c, nb, m, n, k, B=B, M=M, N=N, K=K, OUT=out, PRECISION=prec,
                     BF16=bf16, ACC=acc, num_warps=warps)  # fmt: skip
    want = np.matmul(a.astype(np.float64), b.astype(np.float64)) + (c0 if acc else 0)
    if ti == np.int8:
        np.testing.assert_array_equal(c, want.astype(np.int32))
    else:
        np.testing.assert_allclose(c.astype(np.float64), want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("kind", list(KINDS))
def test_batched_dot_every_type(mode, kind):
    _run(kind, 4, 16, 32, 16, 4, 16, 32, 16, 4)


@pytest.mark.parametrize("nb, m, n, k, B, M, N, K, warps", [
    (3, 13, 17, 9, 4, 16, 32, 16, 4),    # odd sizes, masked
    (8, 16, 16, 32, 8, 16, 16, 32, 8),   # one warp per batch
    (2, 32, 32, 16, 2, 32, 32, 16, 4),   # two warps per batch
    (1, 64, 64, 32, 1, 64, 64, 32, 4),   # one batch: all warps on the matrix
    (16, 16, 16, 16, 16, 16, 16, 16, 2), # several batches per warp
])  # fmt: skip
def test_batched_dot_shapes(mode, nb, m, n, k, B, M, N, K, warps):
    _run("fp32-ieee", nb, m, n, k, B, M, N, K, warps)


@pytest.mark.parametrize("kind", ["fp16", "int8"])
def test_batched_dot_with_accumulator(mode, kind):
    _run(kind, 5, 16, 16, 20, 8, 16, 16, 32, 4, acc=True)


def test_batched_dot_layout_puts_warps_on_the_batch():
    ck = tritium.compile(bmm_kernel, "*fp32,*fp32,*fp32,i32,i32,i32,i32",
                         {"B": 4, "M": 16, "N": 32, "K": 16, "OUT": tl.float32,
                          "PRECISION": "ieee", "BF16": False, "ACC": False}, stop="ptx")  # fmt: skip
    dot = next(line for line in ck.asm["ttgir"].splitlines() if "tt.dot" in line)
    enc = dot.rsplit("->", 1)[1]
    layout = next(
        line for line in ck.asm["ttgir"].splitlines()
        if line.startswith(f"#{enc.split('#')[1].split('>')[0].strip()} =")
    )  # fmt: skip
    assert "warpsPerCTA = [4, 1, 1]" in layout


@pytest.mark.parametrize("kind", list(KINDS))
def test_batched_dot_assembles(ptxas, tmp_path, kind):
    ti, to, out, prec, bf16, _ = KINDS[kind]
    names = {np.float32: "fp32", np.float16: "fp16", np.int8: "i8", np.int32: "i32",
             np.float64: "fp64"}  # fmt: skip
    a = "i16" if bf16 else names[ti]
    sig = f"*{a},*{a},*{names[to]},i32,i32,i32,i32"
    consts = {"B": 4, "M": 32, "N": 32, "K": 16, "OUT": out, "PRECISION": prec, "BF16": bf16,
              "ACC": True}  # fmt: skip
    ck = tritium.compile(bmm_kernel, sig, consts, stop="ptx")
    src = tmp_path / "k.ptx"
    src.write_text(ck.asm["ptx"])
    subprocess.run([ptxas, "-arch=sm_89", str(src), "-o", str(tmp_path / "k.cubin")],
                   check=True, capture_output=True)  # fmt: skip


@pytest.mark.parametrize("fp8", ["fp8e4nv", "fp8e5"])
def test_batched_fp8_dot_assembles(ptxas, tmp_path, fp8):
    consts = {"B": 4, "M": 16, "N": 16, "K": 32, "OUT": tl.float32, "PRECISION": "ieee",
              "BF16": False, "ACC": False}  # fmt: skip
    ck = tritium.compile(bmm_kernel, f"*{fp8},*{fp8},*fp32,i32,i32,i32,i32", consts, stop="ptx")
    src = tmp_path / "k.ptx"
    src.write_text(ck.asm["ptx"])
    subprocess.run([ptxas, "-arch=sm_89", str(src), "-o", str(tmp_path / "k.cubin")],
                   check=True, capture_output=True)  # fmt: skip
