"""Shape ops against numpy, in the interpreter and (marker `gpu`) on the GPU: `tl.join`,
`split`, `interleave`, `cat`, `gather` (any axis; warp shuffles or shared memory),
`histogram` (with a mask), `sort` / `topk` / `flip` / `bitonic_merge` (any dim),
`swizzle2d`, `zeros` / `full` of every dtype. Odd sizes come in through masked loads and
stores (tensor shapes are powers of two). The PTX of every kernel assembles with ptxas,
and the layouts the passes choose make join / split / cat register moves and a gather
whose axis lives in a warp a shuffle (no shared memory)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import tritium
import tritium.language as tl


@pytest.fixture(params=["interpreter", pytest.param("gpu", marks=pytest.mark.gpu)])
def mode(request, monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1" if request.param == "interpreter" else "0")
    return request.param


# dtype name -> (tl dtype, numpy storage of its bits). Kernels load the bits as integers
# and bitcast them to the dtype, so bf16 (which numpy lacks) is covered too.
DTYPES = {
    "int8": (tl.int8, np.int8),
    "uint8": (tl.uint8, np.uint8),
    "int16": (tl.int16, np.int16),
    "int32": (tl.int32, np.int32),
    "uint32": (tl.uint32, np.uint32),
    "int64": (tl.int64, np.int64),
    "fp16": (tl.float16, np.int16),
    "bf16": (tl.bfloat16, np.int16),
    "fp32": (tl.float32, np.int32),
    "fp64": (tl.float64, np.int64),
    "fp8e4nv": (tl.float8e4nv, np.int8),
    "fp8e5": (tl.float8e5, np.int8),
}
BITS = {np.int8: tl.int8, np.uint8: tl.uint8, np.int16: tl.int16, np.int32: tl.int32,
        np.uint32: tl.uint32, np.int64: tl.int64}  # fmt: skip


def bits(dtype: str, shape, seed: int = 0) -> np.ndarray:
    """Random bit patterns of `dtype` (NaN-free for the floats)."""
    rng = np.random.default_rng(seed)
    storage = DTYPES[dtype][1]
    if dtype in ("fp16", "fp32", "fp64"):
        return rng.standard_normal(shape).astype(dtype.replace("fp", "float")).view(storage)
    if dtype == "bf16":
        f = rng.standard_normal(shape).astype(np.float32)
        return (f.view(np.uint32) >> 16).astype(np.uint16).view(np.int16)
    if dtype.startswith("fp8"):  # bit 6 clear: the exponent is never all ones (no NaN / inf)
        return (rng.integers(0, 256, shape) & 0xBF).astype(np.uint8).view(np.int8)
    info = np.iinfo(storage)
    return rng.integers(info.min, info.max, shape, dtype=storage, endpoint=True)


def values(dtype: str, b: np.ndarray) -> np.ndarray:
    """The numbers the bits stand for (bf16 as float32), for ordering."""
    if dtype == "bf16":
        return (b.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    if dtype.startswith("fp"):
        return b.view(dtype.replace("fp", "float"))
    return b


# --------------------------------------------------------------------------- join / split / cat


@tritium.jit
def join_split_kernel(x_ptr, y_ptr, j_ptr, s_ptr, i_ptr, n, N: tl.constexpr, DT: tl.constexpr,
                      IT: tl.constexpr):  # fmt: skip
    offs = tl.arange(0, N)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m).to(DT, bitcast=True)
    y = tl.load(y_ptr + offs, mask=m).to(DT, bitcast=True)
    j = tl.join(x, y)
    two = tl.arange(0, 2)[None, :]
    tl.store(j_ptr + offs[:, None] * 2 + two, j.to(IT, bitcast=True), mask=m[:, None])
    a, b = tl.split(j)  # swapped on the way out
    tl.store(s_ptr + offs, b.to(IT, bitcast=True), mask=m)
    tl.store(s_ptr + N + offs, a.to(IT, bitcast=True), mask=m)
    il = tl.interleave(x, y)
    r = tl.arange(0, 2 * N)
    tl.store(i_ptr + r, il.to(IT, bitcast=True), mask=r < 2 * n)


# every dtype on one shape, every shape on a few dtypes
def _cases(dtypes, shapes, main_dtypes=("fp32",)):
    out = [(d, *shapes[0]) for d in dtypes]
    out += [(d, *shape) for shape in shapes[1:] for d in main_dtypes]
    return out


@pytest.mark.parametrize("dtype, size, n, warps", _cases(
    list(DTYPES), [(64, 50, 4), (1024, 1000, 4), (4, 3, 1), (32, 32, 2)], ("fp32", "int8")))
def test_join_split_interleave(mode, dtype, size, n, warps):
    dt, st = DTYPES[dtype]
    x, y = bits(dtype, size, 1), bits(dtype, size, 2)
    j = np.zeros((size, 2), st)
    s = np.zeros(2 * size, st)
    il = np.zeros(2 * size, st)
    join_split_kernel[(1,)](x, y, j, s, il, n, N=size, DT=dt, IT=BITS[st], num_warps=warps)
    np.testing.assert_array_equal(j[:n], np.stack([x[:n], y[:n]], -1))
    assert not j[n:].any()
    np.testing.assert_array_equal(s[:n], y[:n])
    np.testing.assert_array_equal(s[size : size + n], x[:n])
    np.testing.assert_array_equal(il[: 2 * n], np.stack([x, y], -1).ravel()[: 2 * n])


@tritium.jit
def join_2d_kernel(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    j = tl.join(x, -x)
    a, b = tl.split(tl.permute(j, (1, 0, 2)))
    tl.store(o_ptr + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], a - 2 * b)


def test_join_split_2d(mode):
    x = np.random.default_rng(3).standard_normal((16, 32)).astype(np.float32)
    o = np.zeros((32, 16), np.float32)
    join_2d_kernel[(1,)](x, o, M=16, N=32)
    np.testing.assert_array_equal(o, 3 * x.T)


@tritium.jit
def cat_kernel(x_ptr, y_ptr, o_ptr, n, N: tl.constexpr, DT: tl.constexpr, IT: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs, mask=offs < n).to(DT, bitcast=True)
    y = tl.load(y_ptr + offs, mask=offs < n).to(DT, bitcast=True)
    c = tl.cat(x, y, can_reorder=True)
    r = tl.arange(0, 2 * N)
    tl.store(o_ptr + r, c.to(IT, bitcast=True), mask=(r % N) < n)


@pytest.mark.parametrize("dtype, size, n, warps", _cases(
    ["int8", "int16", "fp32", "bf16", "fp64", "uint32", "fp8e5"],
    [(16, 11, 4), (1, 1, 1), (64, 64, 4), (256, 200, 2), (2048, 2047, 8)]))
def test_cat(mode, dtype, size, n, warps):
    dt, st = DTYPES[dtype]
    x, y = bits(dtype, size, 4), bits(dtype, size, 5)
    o = np.zeros(2 * size, st)
    cat_kernel[(1,)](x, y, o, n, N=size, DT=dt, IT=BITS[st], num_warps=warps)
    want = np.concatenate([np.where(np.arange(size) < n, x, 0), np.where(np.arange(size) < n, y, 0)])
    np.testing.assert_array_equal(o, want.astype(st))


# --------------------------------------------------------------------------- gather


@tritium.jit
def gather_1d_kernel(x_ptr, i_ptr, o_ptr, s, m, S: tl.constexpr, M: tl.constexpr,
                     DT: tl.constexpr, IT: tl.constexpr):  # fmt: skip
    xs = tl.arange(0, S)
    x = tl.load(x_ptr + xs, mask=xs < s, other=0).to(DT, bitcast=True)
    ms = tl.arange(0, M)
    idx = tl.load(i_ptr + ms, mask=ms < m, other=0)
    tl.store(o_ptr + ms, tl.gather(x, idx, 0).to(IT, bitcast=True), mask=ms < m)


# (S, s, M, m, warps): source size / valid, index count / valid; also run on the host by
# test_gather_lowering.py
GATHER_1D = [(32, 30, 128, 100, 4), (8, 5, 16, 16, 1), (64, 64, 512, 333, 4), (256, 255, 64, 7, 8),
             (128, 100, 32, 32, 2), (16, 16, 8, 5, 1), (512, 500, 1024, 1000, 8)]


@pytest.mark.parametrize("dtype, S, s, M, m, warps", _cases(
    ["int8", "int16", "int32", "int64", "fp16", "bf16", "fp32", "fp64", "fp8e4nv"],
    GATHER_1D, ("fp32", "int64")))
def test_gather_1d(mode, dtype, S, s, M, m, warps):
    dt, st = DTYPES[dtype]
    x = bits(dtype, S, 6)
    idx = np.random.default_rng(7).integers(0, s, M).astype(np.int32)
    o = np.zeros(M, st)
    gather_1d_kernel[(1,)](x, idx, o, s, m, S=S, M=M, DT=dt, IT=BITS[st], num_warps=warps)
    np.testing.assert_array_equal(o[:m], x[idx[:m]])
    assert not o[m:].any()


@tritium.jit
def gather_2d_kernel(x_ptr, i_ptr, o_ptr, R: tl.constexpr, C: tl.constexpr, IR: tl.constexpr,
                     IC: tl.constexpr, AXIS: tl.constexpr):  # fmt: skip
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    io = tl.arange(0, IR)[:, None] * IC + tl.arange(0, IC)[None, :]
    idx = tl.load(i_ptr + io)
    tl.store(o_ptr + io, tl.gather(x, idx, AXIS))


# (R, C, IR, IC, axis, warps): source R x C, indices IR x IC; also run on the host by
# test_gather_lowering.py
GATHER_2D = [
    (8, 64, 8, 32, 1, 4), (64, 8, 16, 8, 0, 4), (32, 32, 32, 32, 1, 4), (4, 128, 4, 16, 1, 1),
    (32, 16, 64, 8, 0, 8), (2, 8, 2, 64, 1, 2),
    # axis 1: indices narrower / wider than the source, fewer rows; 1 to 8 warps
    (16, 8, 16, 4, 1, 1), (16, 64, 16, 32, 1, 4), (32, 128, 8, 256, 1, 1), (32, 2, 16, 256, 1, 1),
    (8, 2, 4, 256, 1, 4), (1, 64, 1, 16, 1, 8), (256, 8, 256, 8, 1, 8), (16, 64, 16, 16, 1, 2),
    (4, 16, 4, 128, 1, 8),
    # axis 0: the same, transposed
    (128, 4, 32, 4, 0, 1), (8, 4, 128, 2, 0, 1), (4, 8, 64, 8, 0, 1), (8, 32, 64, 32, 0, 2),
    (16, 64, 16, 16, 0, 8), (256, 2, 64, 2, 0, 2),
]  # fmt: skip


@pytest.mark.parametrize("R, C, IR, IC, axis, warps", GATHER_2D)
def test_gather_2d(mode, R, C, IR, IC, axis, warps):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((R, C)).astype(np.float32)
    idx = rng.integers(0, (R, C)[axis], (IR, IC)).astype(np.int64)
    o = np.zeros((IR, IC), np.float32)
    gather_2d_kernel[(1,)](x, idx, o, R=R, C=C, IR=IR, IC=IC, AXIS=axis, num_warps=warps)
    sub = x[:IR] if axis == 1 else x[:, :IC]
    np.testing.assert_array_equal(o, np.take_along_axis(sub, idx, axis))


def test_gather_index_out_of_range_is_reported(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    x = np.arange(32, dtype=np.int32).view(np.int32)
    idx = np.full(16, 40, np.int32)
    o = np.zeros(16, np.int32)
    with pytest.raises(tritium.errors.OutOfBoundsError, match="tt.gather: index 40"):
        gather_1d_kernel[(1,)](x, idx, o, 32, 16, S=32, M=16, DT=tl.int32, IT=tl.int32)


# --------------------------------------------------------------------------- histogram


@tritium.jit
def histogram_kernel(x_ptr, h_ptr, n, N: tl.constexpr, BINS: tl.constexpr, MASKED: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-1)
    if MASKED:
        h = tl.histogram(x, BINS, mask=(offs < n) & (x % 3 != 0))
    else:
        h = tl.histogram(x, BINS)
    tl.store(h_ptr + tl.arange(0, BINS), h)


@pytest.mark.parametrize("dtype, N, n, bins, warps", _cases(
    [np.int32, np.int8, np.int64, np.uint16],
    [(1024, 1000, 16, 4), (64, 37, 64, 4), (8, 8, 2, 1), (256, 255, 512, 8)], (np.int32,)))
@pytest.mark.parametrize("masked", [False, True])
def test_histogram(mode, dtype, N, n, bins, warps, masked):
    rng = np.random.default_rng(9)
    hi = min(bins + 8, np.iinfo(dtype).max)  # some values past the last bin
    x = rng.integers(0, hi, N).astype(dtype)
    if np.issubdtype(dtype, np.signedinteger):
        x[::7] = -3  # and some below the first
    h = np.full(bins, -1, np.int32)
    histogram_kernel[(1,)](x, h, n, N=N, BINS=bins, MASKED=masked, num_warps=warps)
    v = x[:n].astype(np.int64)
    keep = (v >= 0) & (v < bins)
    if masked:
        keep &= v % 3 != 0
    np.testing.assert_array_equal(h, np.bincount(v[keep], minlength=bins))


# --------------------------------------------------------------------------- sort / topk / flip


@tritium.jit
def sort_kernel(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr,
                DESC: tl.constexpr, DT: tl.constexpr, IT: tl.constexpr):  # fmt: skip
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs).to(DT, bitcast=True)
    tl.store(o_ptr + offs, tl.sort(x, DIM, descending=DESC).to(IT, bitcast=True))


@pytest.mark.parametrize("dtype, M, N, dim, desc, warps", _cases(
    ["int8", "uint8", "int32", "int64", "fp16", "bf16", "fp32", "fp64"],
    [(4, 64, 1, True, 4), (4, 64, 1, False, 4), (64, 4, 0, False, 4), (16, 16, 0, True, 8),
     (1, 128, 1, False, 2), (32, 2, 1, True, 1)]))
def test_sort(mode, dtype, M, N, dim, desc, warps):
    dt, st = DTYPES[dtype]
    x = bits(dtype, (M, N), 10)
    o = np.zeros((M, N), st)
    sort_kernel[(1,)](x, o, M=M, N=N, DIM=dim, DESC=desc, DT=dt, IT=BITS[st], num_warps=warps)
    want = np.sort(values(dtype, x), axis=dim, kind="stable")
    if desc:
        want = np.flip(want, dim)
    np.testing.assert_array_equal(values(dtype, o), want)


@tritium.jit
def topk_kernel(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(o_ptr + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :], tl.topk(x, K))


@pytest.mark.parametrize("M, N, K, warps", [(4, 64, 8, 4), (8, 32, 1, 4), (2, 128, 128, 2),
                                            (16, 16, 4, 8)])  # fmt: skip
def test_topk(mode, M, N, K, warps):
    x = np.random.default_rng(11).permutation(M * N).reshape(M, N).astype(np.float32)
    o = np.zeros((M, K), np.float32)
    topk_kernel[(1,)](x, o, M=M, N=N, K=K, num_warps=warps)
    np.testing.assert_array_equal(o, -np.sort(-x, axis=1)[:, :K])


@tritium.jit
def flip_merge_kernel(x_ptr, f_ptr, b_ptr, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(f_ptr + offs, tl.flip(x, DIM))
    # an ascending run then a descending one is bitonic: one merge sorts it
    up = tl.sort(x, 1)
    tl.store(b_ptr + offs, tl.bitonic_merge(tl.where(tl.arange(0, N)[None, :] < N // 2, up,
                                                     tl.flip(up, 1)), 1, descending=True))  # fmt: skip


@pytest.mark.parametrize("M, N, dim, warps", [(8, 16, 0, 4), (8, 16, 1, 4), (2, 64, 1, 8),
                                              (64, 2, 0, 1)])  # fmt: skip
def test_flip_and_bitonic_merge(mode, M, N, dim, warps):
    x = np.random.default_rng(12).standard_normal((M, N)).astype(np.float32)
    f, b = np.zeros_like(x), np.zeros_like(x)
    flip_merge_kernel[(1,)](x, f, b, M=M, N=N, DIM=dim, num_warps=warps)
    np.testing.assert_array_equal(f, np.flip(x, dim))
    up = np.sort(x, 1)
    half = np.where(np.arange(N)[None, :] < N // 2, up, up[:, ::-1])
    np.testing.assert_array_equal(b, -np.sort(-half, 1))


# --------------------------------------------------------------------------- swizzle2d, zeros, full


@tritium.jit
def swizzle_kernel(i_ptr, j_ptr, SI: tl.constexpr, SJ: tl.constexpr, G: tl.constexpr):
    i = tl.arange(0, SI)[:, None]
    j = tl.arange(0, SJ)[None, :]
    ni, nj = tl.swizzle2d(i, j, SI, SJ, G)
    tl.store(i_ptr + i * SJ + j, ni)
    tl.store(j_ptr + i * SJ + j, nj)


def swizzle_reference(si, sj, g):
    ij = np.arange(si)[:, None] * sj + np.arange(sj)[None, :]
    group = ij // (g * sj)
    off = group * g
    size = np.minimum(si - off, g)
    ij = ij % (g * sj)
    return off + ij % size, ij // size


@pytest.mark.parametrize("si, sj, g", [(4, 4, 2), (8, 4, 3), (16, 8, 1), (8, 8, 8)])
def test_swizzle2d(mode, si, sj, g):
    ni, nj = np.zeros((si, sj), np.int32), np.zeros((si, sj), np.int32)
    swizzle_kernel[(1,)](ni, nj, SI=si, SJ=sj, G=g)
    want_i, want_j = swizzle_reference(si, sj, g)
    np.testing.assert_array_equal(ni, want_i)
    np.testing.assert_array_equal(nj, want_j)


@tritium.jit
def full_kernel(z_ptr, f_ptr, n, N: tl.constexpr, DT: tl.constexpr, IT: tl.constexpr,
                VALUE: tl.constexpr):  # fmt: skip
    offs = tl.arange(0, N)
    tl.store(z_ptr + offs, tl.zeros((N,), DT).to(IT, bitcast=True), mask=offs < n)
    tl.store(f_ptr + offs, tl.full((N,), VALUE, DT).to(IT, bitcast=True), mask=offs < n)


FULL_VALUES = {"int8": -7, "uint8": 200, "int16": -300, "int32": -70000, "uint32": 3000000000,
               "int64": -(1 << 40), "fp16": 1.5, "bf16": -2.25, "fp32": 3.25, "fp64": 1e300}  # fmt: skip


@pytest.mark.parametrize("dtype", [d for d in DTYPES if not d.startswith("fp8")])
def test_zeros_and_full(mode, dtype):
    dt, st = DTYPES[dtype]
    v = FULL_VALUES[dtype]
    z, f = np.full(128, 1, st), np.zeros(128, st)
    full_kernel[(1,)](z, f, 100, N=128, DT=dt, IT=BITS[st], VALUE=v)
    assert not z[:100].any() and (z[100:] == 1).all()
    if dtype == "bf16":
        want = (np.array([v], np.float32).view(np.uint32) >> 16).astype(np.uint16).view(np.int16)
    elif dtype.startswith("fp"):
        want = np.array([v], dtype.replace("fp", "float")).view(st)
    else:
        want = np.array([v]).astype(st)
    np.testing.assert_array_equal(f[:100], np.broadcast_to(want, 100))
    assert not f[100:].any()


@tritium.jit
def full_bool_kernel(o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    t = tl.full((N,), True, tl.int1)
    z = tl.zeros((N,), tl.int1)
    tl.store(o_ptr + offs, tl.where(t, 2, 0) + tl.where(z, 1, 0))


def test_full_of_bool(mode):
    o = np.zeros(64, np.int32)
    full_bool_kernel[(1,)](o, N=64)
    assert (o == 2).all()


# --------------------------------------------------------------------------- PTX and layouts


def _ptx_cases():
    yield join_split_kernel, "*i16,*i16,*i16,*i16,*i16,i32", {"N": 256, "DT": tl.bfloat16, "IT": tl.int16}
    yield join_split_kernel, "*i64,*i64,*i64,*i64,*i64,i32", {"N": 64, "DT": tl.float64, "IT": tl.int64}
    yield join_2d_kernel, "*fp32,*fp32", {"M": 16, "N": 32}
    yield cat_kernel, "*i8,*i8,*i8,i32", {"N": 16, "DT": tl.int8, "IT": tl.int8}
    yield cat_kernel, "*i32,*i32,*i32,i32", {"N": 1024, "DT": tl.float32, "IT": tl.int32}
    for S, M in ((32, 128), (256, 64)):
        yield gather_1d_kernel, "*i16,*i32,*i16,i32,i32", {"S": S, "M": M, "DT": tl.float16, "IT": tl.int16}
    yield gather_2d_kernel, "*fp32,*i64,*fp32", {"R": 32, "C": 16, "IR": 64, "IC": 8, "AXIS": 0}
    yield gather_2d_kernel, "*fp32,*i64,*fp32", {"R": 8, "C": 64, "IR": 8, "IC": 32, "AXIS": 1}
    yield histogram_kernel, "*i8,*i32,i32", {"N": 1024, "BINS": 16, "MASKED": True}
    yield histogram_kernel, "*i64,*i32,i32", {"N": 64, "BINS": 512, "MASKED": False}
    yield sort_kernel, "*i16,*i16", {"M": 4, "N": 64, "DIM": 1, "DESC": True, "DT": tl.bfloat16, "IT": tl.int16}
    yield sort_kernel, "*i64,*i64", {"M": 16, "N": 16, "DIM": 0, "DESC": False, "DT": tl.float64, "IT": tl.int64}
    yield topk_kernel, "*fp32,*fp32", {"M": 4, "N": 64, "K": 8}
    yield flip_merge_kernel, "*fp32,*fp32,*fp32", {"M": 8, "N": 16, "DIM": 0}
    yield swizzle_kernel, "*i32,*i32", {"SI": 8, "SJ": 4, "G": 3}
    yield full_kernel, "*i16,*i16,i32", {"N": 128, "DT": tl.bfloat16, "IT": tl.int16, "VALUE": 1.5}


@pytest.mark.parametrize("fn, sig, consts", list(_ptx_cases()),
                         ids=lambda v: getattr(v, "__name__", None) or "")  # fmt: skip
def test_shape_op_kernels_assemble(ptxas, tmp_path, fn, sig, consts):
    ck = tritium.compile(fn, sig, consts, stop="ptx")
    src = tmp_path / "k.ptx"
    src.write_text(ck.asm["ptx"])
    subprocess.run([ptxas, "-arch=sm_89", str(src), "-o", str(tmp_path / "k.cubin")],
                   check=True, capture_output=True)  # fmt: skip


@tritium.jit
def join_split_only(x_ptr, y_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a, b = tl.split(tl.join(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))
    c = tl.cat(b, a, can_reorder=True)
    tl.store(o_ptr + tl.arange(0, 2 * N), c)


@pytest.mark.parametrize("n, warps", [(16, 4), (128, 4), (4096, 8)])
def test_join_split_cat_move_no_data_between_threads(n, warps):
    ck = tritium.compile(join_split_only, "*fp32,*fp32,*fp32", {"N": n}, num_warps=warps,
                         stop="ptx")  # fmt: skip
    ttgir = ck.asm["ttgir"]
    assert "tt.join" in ttgir and "tt.split" in ttgir and "tt.cat" in ttgir
    assert "sizePerThread = [1, 2]" in ttgir  # the size-2 dim in each thread's registers
    for line in ttgir.splitlines():
        if "ttg.convert_layout" in line:  # only the coalesced stores may want another layout
            assert "tt.join" not in line and "tt.split" not in line
    assert "bar.sync" not in ck.asm["ptx"] and "st.shared" not in ck.asm["ptx"]


def test_gather_within_a_warp_is_shuffles():
    ck = tritium.compile(gather_1d_kernel, "*fp32,*i32,*fp32,i32,i32",
                         {"S": 32, "M": 256, "DT": tl.float32, "IT": tl.float32}, stop="ptx")  # fmt: skip
    ptx = ck.asm["ptx"]
    assert "shfl.sync.idx" in ptx
    assert "bar.sync" not in ptx and "ld.shared" not in ptx


def test_gather_across_warps_goes_through_shared_memory():
    ck = tritium.compile(gather_2d_kernel, "*fp32,*i64,*fp32",
                         {"R": 32, "C": 16, "IR": 64, "IC": 8, "AXIS": 0}, num_warps=8,
                         stop="ptx")  # fmt: skip
    ptx = ck.asm["ptx"]
    assert "ld.shared" in ptx and "bar.sync" in ptx


def test_histogram_counts_with_shared_atomics():
    ck = tritium.compile(histogram_kernel, "*i32,*i32,i32", {"N": 1024, "BINS": 16, "MASKED": True},
                         stop="ptx")  # fmt: skip
    ptx = ck.asm["ptx"]
    assert "red.shared.add.u32" in ptx
    assert ptx.count("bar.sync") == 2
