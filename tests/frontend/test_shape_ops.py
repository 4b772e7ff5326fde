"""The frontend of `tl.join`, `split`, `interleave`, `cat`, `gather`, `histogram` and the
library's `sort` / `topk` / `flip`: the TTIR they build (upstream's ops and shapes) and
their located errors. Their values are checked against numpy in
tests/codegen/test_gpu_shape_ops.py (interpreter and GPU)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tests.frontend.helpers import op_names, result_types, ttir, ttir_text
from tritium.errors import CompilationError


@tritium.jit
def join_kernel(x_ptr, o_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    j = tl.join(x, x + 1)
    a, b = tl.split(j)
    tl.store(o_ptr + tl.arange(0, N), a * b)


def test_join_and_split_build_upstream_ops():
    text = ttir_text(join_kernel, "*fp32,*fp32", {"N": 64})
    assert re.search(r"= tt.join %\w+, %\w+ : tensor<64xf32> -> tensor<64x2xf32>", text)
    assert re.search(r"%\w+, %\w+ = tt.split %\w+ : tensor<64x2xf32> -> tensor<64xf32>", text)


@tritium.jit
def scalars_kernel(o_ptr, s, t):
    j = tl.join(s, t)  # two scalars: a tensor of 2
    a, b = tl.split(j)  # and back to scalars
    tl.store(o_ptr + tl.arange(0, 2), j)
    tl.store(o_ptr + 2, a - b)


def test_join_of_scalars_and_split_to_scalars(monkeypatch):
    m = ttir(scalars_kernel, "*i32,i32,i32")
    assert "tensor<2xi32>" in result_types(m, "tt.reshape")
    assert op_names(m).count("tt.reduce") == 2  # tensor<1> -> scalar, as upstream
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    o = np.zeros(3, np.int32)
    scalars_kernel[(1,)](o, 7, 3)
    np.testing.assert_array_equal(o, [7, 3, 4])


@tritium.jit
def broadcast_join_kernel(o_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    j = tl.join(r[:, None], r[None, :] * 10)
    tl.store(o_ptr + (r[:, None] * N + r[None, :])[:, :, None] * 2 + tl.arange(0, 2)[None, None, :], j)


def test_join_broadcasts_its_operands(monkeypatch):
    m = ttir(broadcast_join_kernel, "*i32", {"N": 4})
    assert "tensor<4x4x2xi32>" in result_types(m, "tt.join")
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    o = np.zeros((4, 4, 2), np.int32)
    broadcast_join_kernel[(1,)](o, N=4)
    r = np.arange(4)
    np.testing.assert_array_equal(o[..., 0], np.broadcast_to(r[:, None], (4, 4)))
    np.testing.assert_array_equal(o[..., 1], np.broadcast_to(r[None, :] * 10, (4, 4)))


@tritium.jit
def interleave_kernel(o_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(o_ptr + tl.arange(0, 2 * N), tl.interleave(r, -r))


def test_interleave_is_join_then_reshape():
    names = op_names(ttir(interleave_kernel, "*i32", {"N": 8}))
    assert names.index("tt.join") < names.index("tt.reshape")


@tritium.jit
def cat_kernel(o_ptr, N: tl.constexpr, REORDER: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(o_ptr + tl.arange(0, 2 * N), tl.cat(r, r + N, can_reorder=REORDER))


@tritium.jit
def cat_2d_kernel(o_ptr, N: tl.constexpr):
    r = tl.arange(0, N)[:, None] + tl.arange(0, N)[None, :]
    tl.store(o_ptr + tl.arange(0, N)[:, None], tl.cat(r, r, can_reorder=True))


def test_cat():
    assert "tensor<32xi32>" in result_types(ttir(cat_kernel, "*i32", {"N": 16, "REORDER": True}), "tt.cat")
    with pytest.raises(CompilationError, match=r"test_shape_ops.py:\d+:\d+: error: tl.cat: .*can_reorder=True"):
        ttir(cat_kernel, "*i32", {"N": 16, "REORDER": False})
    with pytest.raises(CompilationError, match="two 1D tensors"):
        ttir(cat_2d_kernel, "*i32", {"N": 4})


@tritium.jit
def gather_kernel(x_ptr, i_ptr, o_ptr, AXIS: tl.constexpr, R: tl.constexpr, IR: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * 16 + tl.arange(0, 16)[None, :])
    i = tl.load(i_ptr + tl.arange(0, IR)[:, None] * 16 + tl.arange(0, 16)[None, :])
    tl.store(o_ptr + tl.arange(0, IR)[:, None] * 16 + tl.arange(0, 16)[None, :], tl.gather(x, i, AXIS))


@tritium.jit
def gather_float_index_kernel(x_ptr, o_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(o_ptr + tl.arange(0, 16), tl.gather(x, x, 0))


def test_gather():
    text = ttir_text(gather_kernel, "*fp32,*i32,*fp32", {"AXIS": 0, "R": 8, "IR": 4})
    want = r"tt.gather %\w+\[%\w+\] \{axis = 0 : i32\} : \(tensor<8x16xf32>, tensor<4x16xi32>\) -> tensor<4x16xf32>"
    assert re.search(want, text)
    negative = ttir_text(gather_kernel, "*fp32,*i32,*fp32", {"AXIS": -2, "R": 8, "IR": 4})
    assert "{axis = 0 : i32}" in negative
    with pytest.raises(CompilationError, match="axis 2 is out of range"):
        ttir(gather_kernel, "*fp32,*i32,*fp32", {"AXIS": 2, "R": 8, "IR": 4})
    assert "tt.gather" in ttir_text(gather_kernel, "*fp32,*i32,*fp32", {"AXIS": 1, "R": 8, "IR": 4})
    with pytest.raises(CompilationError, match=r"index dimension 0 \(8\) is larger than the source's \(4\)"):
        ttir(gather_kernel, "*fp32,*i32,*fp32", {"AXIS": 1, "R": 4, "IR": 8})
    with pytest.raises(CompilationError, match="the index must be integers"):
        ttir(gather_float_index_kernel, "*fp32,*fp32")


@tritium.jit
def histogram_kernel(x_ptr, o_ptr, n, MASK: tl.constexpr):
    offs = tl.arange(0, 128)
    x = tl.load(x_ptr + offs)
    h = tl.histogram(x, 16, mask=offs < n) if MASK else x.histogram(16)
    tl.store(o_ptr + tl.arange(0, 16), h)


def test_histogram():
    masked = ttir_text(histogram_kernel, "*i32,*i32,i32", {"MASK": True})
    assert re.search(r"tt.histogram %\w+, %\w+ : tensor<128xi32> -> tensor<16xi32>", masked)
    plain = ttir_text(histogram_kernel, "*i32,*i32,i32", {"MASK": False})
    assert re.search(r"tt.histogram %\w+ : tensor<128xi32> -> tensor<16xi32>", plain)
    with pytest.raises(CompilationError, match="tl.histogram needs a 1D integer tensor"):
        ttir(histogram_kernel, "*fp32,*i32,i32", {"MASK": True})


@tritium.jit
def sort_kernel(x_ptr, o_ptr, N: tl.constexpr, DIM: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 4)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(o_ptr + tl.arange(0, 4)[:, None] * N + tl.arange(0, N)[None, :], tl.sort(x, DIM))


def test_sort_reshapes_to_a_hypercube_and_swaps_with_xor_sums():
    m = ttir(sort_kernel, "*fp32,*fp32", {"N": 8, "DIM": 1})
    assert "tensor<4x2x2x2xf32>" in result_types(m, "tt.reshape")
    assert "tt.sort" not in op_names(m)  # a library function, as upstream's
    assert op_names(m).count("tt.reduce") == 6  # 3 + 2 + 1 compare-and-swaps
    with pytest.raises(CompilationError, match="dim 2 is out of range"):
        ttir(sort_kernel, "*fp32,*fp32", {"N": 8, "DIM": 2})


@tritium.jit
def _member_kernel(x_ptr, sorted_ptr, flipped_ptr, sig_ptr, B: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, B))
    tl.store(sorted_ptr + tl.arange(0, B), v.sort(descending=1))
    tl.store(flipped_ptr + tl.arange(0, B), v.flip(0))
    tl.store(sig_ptr + tl.arange(0, B), v.sigmoid())


def test_library_functions_are_tensor_members_as_upstream(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    x = np.random.default_rng(5).standard_normal(32).astype(np.float32)
    s, f, g = (np.full_like(x, np.nan) for _ in range(3))
    _member_kernel[(1,)](x, s, f, g, B=32)
    np.testing.assert_array_equal(s, np.sort(x)[::-1])
    np.testing.assert_array_equal(f, x[::-1])
    np.testing.assert_allclose(g, 1 / (1 + np.exp(-x.astype(np.float64))), rtol=1e-5)
