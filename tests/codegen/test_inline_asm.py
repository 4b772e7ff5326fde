"""`tl.inline_asm_elementwise`: the TTIR op, PTX that ptxas assembles (packed i8 words, two
results, a broadcast scalar operand), the GPU against numpy (marker `gpu`) with masks and
odd sizes, and the interpreter's located refusal (as upstream's)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tests.frontend.helpers import ttir_text


@tritium.jit
def shl3_kernel(X, Y, N, BLOCK: tl.constexpr, PACK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(X + offs, mask=m)
    # as upstream's test: four i8 in one .b32, each shifted left by 3 (bits masked first)
    y = tl.inline_asm_elementwise(
        "and.b32 $0, $1, 0x1F1F1F1F; shl.b32 $0, $0, 3;",
        "=r,r",
        [x],
        dtype=tl.int8,
        is_pure=True,
        pack=PACK,
    )
    tl.store(Y + offs, y, mask=m)


@tritium.jit
def two_results_kernel(X, S, A, B, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(X + offs, mask=m)
    a, b = tl.inline_asm_elementwise(
        "{ add.f32 $0, $2, $3; mul.f32 $1, $2, $2; }",
        "=f,=f,f,f",
        [x, S],  # S: a scalar broadcast to x's shape
        dtype=(tl.float32, tl.float32),
        is_pure=True,
        pack=1,
    )
    tl.store(A + offs, a, mask=m)
    tl.store(B + offs, b, mask=m)


def _assemble(ptxas, ptx: str, tmp_path) -> None:
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    res = subprocess.run(
        [ptxas, "-arch=sm_89", str(src), "-o", str(tmp_path / "k.cubin")],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr


def test_ttir():
    text = ttir_text(shl3_kernel, "*i8,*i8,i32", {"BLOCK": 128, "PACK": 4})
    assert (
        'tt.elementwise_inline_asm "and.b32 $0, $1, 0x1F1F1F1F; shl.b32 $0, $0, 3;" '
        '{constraints = "=r,r", packed_element = 4 : i32, pure = true} %x_2 : '
        "tensor<128xi8> -> tensor<128xi8>" in text
    )
    text = ttir_text(two_results_kernel, "*fp32,fp32,*fp32,*fp32,i32", {"BLOCK": 64})
    assert "tt.splat %S : f32 -> tensor<64xf32>" in text
    assert "-> tensor<64xf32>, tensor<64xf32>" in text


@pytest.mark.parametrize("pack, num_warps", [(4, 1), (4, 4), (2, 1), (1, 2)])
def test_packed_words_assemble(pack, num_warps, ptxas, tmp_path):
    ptx = tritium.compile(
        shl3_kernel, "*i8:16,*i8:16,i32", {"BLOCK": 128, "PACK": pack},
        stop="ptx", num_warps=num_warps,
    ).asm["ptx"]  # fmt: skip
    calls = ptx.count("and.b32 %r")
    per_thread = 128 // (32 * num_warps)
    # one asm per group of `pack` of a thread's elements (padded when pack > per thread)
    assert calls == max(1, -(-per_thread // pack)), ptx
    _assemble(ptxas, ptx, tmp_path)


def test_two_results_assemble(ptxas, tmp_path):
    ptx = tritium.compile(
        two_results_kernel, "*fp32:16,fp32,*fp32:16,*fp32:16,i32", {"BLOCK": 128},
        stop="ptx", num_warps=1,
    ).asm["ptx"]  # fmt: skip
    assert ptx.count("mul.f32") == 4  # four elements per thread, pack=1
    _assemble(ptxas, ptx, tmp_path)


def test_interpreter_refuses_with_the_line(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    x = np.arange(8, dtype=np.int8)
    with pytest.raises(tritium.NotSupportedError) as e:
        shl3_kernel[(1,)](x, np.zeros_like(x), 8, BLOCK=8, PACK=4)
    msg = str(e.value)
    assert "test_inline_asm.py:23:9: error: tl.inline_asm_elementwise runs PTX" in msg


def test_bad_arguments():
    @tritium.jit
    def bad(X, KIND: tl.constexpr):
        x = tl.load(X + tl.arange(0, 8))
        if KIND == 0:
            tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], tl.int32, True, 0)
        else:
            tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", x, tl.int32, True, 1)

    with pytest.raises(tritium.CompilationError, match="pack must be at least 1"):
        ttir_text(bad, "*i32", {"KIND": 0})
    with pytest.raises(tritium.CompilationError, match="args must be a list"):
        ttir_text(bad, "*i32", {"KIND": 1})


@pytest.mark.gpu
@pytest.mark.parametrize("n, pack, num_warps", [(1000, 4, 4), (37, 4, 1), (300, 2, 2), (129, 1, 4)])
def test_gpu_packed_shift(n, pack, num_warps, monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "0")
    rng = np.random.default_rng(n)
    x = rng.integers(-128, 128, n, dtype=np.int8)
    y = np.full(n + 5, 7, np.int8)  # the 5 past n must stay
    block = 128
    shl3_kernel[(tritium.cdiv(n, block),)](x, y, n, BLOCK=block, PACK=pack, num_warps=num_warps)
    want = ((x.view(np.uint8) & 0x1F) << 3).astype(np.uint8).view(np.int8)
    np.testing.assert_array_equal(y[:n], want)
    assert (y[n:] == 7).all()


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 100, 256])
def test_gpu_two_results(n, monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "0")
    x = np.linspace(-3, 3, n).astype(np.float32)
    a, b = np.zeros(n, np.float32), np.zeros(n, np.float32)
    two_results_kernel[(tritium.cdiv(n, 64),)](x, 1.5, a, b, n, BLOCK=64)
    np.testing.assert_array_equal(a, x + np.float32(1.5))
    np.testing.assert_array_equal(b, x * x)
