"""Reduction and layout-conversion kernels written with the frontend, with numpy
references: the GPU tests launch them, the CPU tests compile them to PTX and run the
same checks in the interpreter (which checks the references themselves)."""

from __future__ import annotations

import numpy as np

import tritium
import tritium.language as tl

K_HASH = 1_000_003


@tritium.jit
def _hash_combine(h1, p1, h2, p2):
    # An associative, non-commutative combine: the polynomial hash of the sequence.
    return h1 * p2 + h2, p1 * p2


@tritium.jit
def reduce2d_kernel(
    x_ptr,
    out_ptr,
    rows,
    cols,
    stride,
    OP: tl.constexpr,
    AXIS: tl.constexpr,
    BR: tl.constexpr,
    BC: tl.constexpr,
    FILL: tl.constexpr,
):
    r = tl.arange(0, BR)
    c = tl.arange(0, BC)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    x = tl.load(x_ptr + r[:, None] * stride + c[None, :], mask=mask, other=FILL)
    if OP == "sum":
        v = tl.sum(x, axis=AXIS)
    elif OP == "max":
        v = tl.max(x, axis=AXIS)
    elif OP == "min":
        v = tl.min(x, axis=AXIS)
    elif OP == "argmax":
        v = tl.argmax(x, axis=AXIS)
    elif OP == "argmin":
        v = tl.argmin(x, axis=AXIS)
    elif OP == "xor":
        v = tl.xor_sum(x, axis=AXIS)
    else:  # "hash": padding is the identity (0, 1)
        p = tl.where(mask, K_HASH, 1)
        v, _ = tl.reduce((x, p), AXIS, _hash_combine)
    if AXIS == 0:
        tl.store(out_ptr + c, v, mask=c < cols)
    else:
        tl.store(out_ptr + r, v, mask=r < rows)


@tritium.jit
def reduce3d_kernel(
    x_ptr, out_ptr, AXIS: tl.constexpr, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr
):
    i = tl.arange(0, B0)[:, None, None]
    j = tl.arange(0, B1)[None, :, None]
    k = tl.arange(0, B2)[None, None, :]
    x = tl.load(x_ptr + i * (B1 * B2) + j * B2 + k)
    v = tl.sum(x, axis=AXIS)
    if AXIS == 0:
        a = tl.arange(0, B1)[:, None] * B2 + tl.arange(0, B2)[None, :]
    elif AXIS == 1:
        a = tl.arange(0, B0)[:, None] * B2 + tl.arange(0, B2)[None, :]
    else:
        a = tl.arange(0, B0)[:, None] * B1 + tl.arange(0, B1)[None, :]
    tl.store(out_ptr + a, v)


@tritium.jit
def full_reduce_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Every program sums the whole array in a loop (a reduction per iteration: the
    barrier before the next iteration's smem writes), then max and argmax of one block."""
    offs = tl.arange(0, BLOCK)
    total = 0.0
    for start in range(0, n, BLOCK):
        x = tl.load(x_ptr + start + offs, mask=start + offs < n, other=0.0)
        total += tl.sum(x)
    y = tl.load(x_ptr + offs, mask=offs < n, other=-float("inf"))
    pid = tl.program_id(0)
    tl.store(out_ptr + 3 * pid, total)
    tl.store(out_ptr + 3 * pid + 1, tl.max(y))
    tl.store(out_ptr + 3 * pid + 2, tl.argmax(y, axis=0).to(tl.float32))


@tritium.jit
def transpose_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    """out = x.T: loads contiguous along columns, stores contiguous along rows, so the
    two accesses get different layouts and a ttg.convert_layout between them."""
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + r * C + c)
    tl.store(out_ptr + c * R + r, x * 2.0)


# --------------------------------------------------------------------------- references

FILLS = {"sum": 0, "max": "lo", "min": "hi", "argmax": "lo", "argmin": "hi", "xor": 0, "hash": 0}


def fill_value(op: str, dtype) -> float | int:
    f = FILLS[op]
    if f == 0:
        return 0
    if np.issubdtype(dtype, np.floating):
        return -float("inf") if f == "lo" else float("inf")
    info = np.iinfo(dtype)
    return int(info.min if f == "lo" else info.max)


def out_dtype(op: str, dtype):
    return np.int32 if op in ("argmax", "argmin") else dtype


def reference(op: str, x: np.ndarray, axis: int) -> np.ndarray:
    if op == "hash":
        m = np.moveaxis(x.astype(np.int64), axis, -1)
        h = np.zeros(m.shape[:-1], np.int64)
        for i in range(m.shape[-1]):
            h = (h * K_HASH + m[..., i]) % 2**32
        return ((h + 2**31) % 2**32 - 2**31).astype(np.int32)
    if op == "xor":
        return np.bitwise_xor.reduce(x, axis=axis)
    wide = x.astype(np.float64) if np.issubdtype(x.dtype, np.floating) else x.astype(np.int64)
    fn = {"sum": np.sum, "max": np.max, "min": np.min, "argmax": np.argmax, "argmin": np.argmin}
    return fn[op](wide, axis=axis)


def random_input(rng, shape, dtype, ties: bool = False) -> np.ndarray:
    if np.issubdtype(dtype, np.floating):
        x = rng.standard_normal(shape)
        if ties:
            x = np.round(x)
        return x.astype(dtype)
    hi = 3 if ties else 1000
    return rng.integers(-hi, hi + 1, shape).astype(dtype)


def check_reduce2d(rng, op, axis, rows, cols, dtype, num_warps=4, ties=False) -> None:
    x = random_input(rng, (rows, cols), dtype, ties)
    br, bc = tritium.next_power_of_2(rows), tritium.next_power_of_2(cols)
    n_out = cols if axis == 0 else rows
    odt = out_dtype(op, dtype)
    out = np.full(n_out, 0 if np.issubdtype(odt, np.integer) else np.nan, odt)
    reduce2d_kernel[(1,)](
        x, out, rows, cols, cols, OP=op, AXIS=axis, BR=br, BC=bc, FILL=fill_value(op, dtype),
        num_warps=num_warps,
    )  # fmt: skip
    ref = reference(op, x, axis)
    where = f"{op} axis={axis} {rows}x{cols} {np.dtype(dtype).name} warps={num_warps}"
    if op in ("argmax", "argmin", "hash", "xor") or not np.issubdtype(dtype, np.floating):
        np.testing.assert_array_equal(out, np.asarray(ref).astype(odt), err_msg=where)
    elif op == "sum":
        # fp32: relative error 1e-5 of the sum of magnitudes; fp16 rounds every partial.
        tol = 1e-5 if dtype == np.float32 else 2e-3
        scale = np.abs(x.astype(np.float64)).sum(axis=axis) + 1
        assert np.all(np.abs(out - ref) <= tol * scale), where
    else:
        np.testing.assert_array_equal(out.astype(np.float64), ref, err_msg=where)


def check_reduce3d(rng, axis, shape, num_warps=4) -> None:
    x = rng.standard_normal(shape).astype(np.float32)
    out = np.full([s for d, s in enumerate(shape) if d != axis], np.nan, np.float32)
    reduce3d_kernel[(1,)](
        x, out, AXIS=axis, B0=shape[0], B1=shape[1], B2=shape[2], num_warps=num_warps
    )
    ref = x.astype(np.float64).sum(axis=axis)
    assert np.all(np.abs(out - ref) <= 1e-5 * (np.abs(x).sum(axis=axis) + 1)), (axis, shape)


def check_full_reduce(rng, n, block, programs=3, num_warps=4) -> None:
    x = rng.standard_normal(n).astype(np.float32)
    x[5] = 7.0  # a clear maximum
    x[min(n, block) - 1] = 7.0  # ...and a tie at a higher index: argmax takes the lower
    out = np.full(3 * programs, np.nan, np.float32)
    full_reduce_kernel[(programs,)](x, out, n, BLOCK=block, num_warps=num_warps)
    total = x.astype(np.float64).sum()
    for p in range(programs):
        assert abs(out[3 * p] - total) <= 1e-5 * (np.abs(x).sum() + 1)
        assert out[3 * p + 1] == x[:block].max() and out[3 * p + 2] == 5.0


def check_transpose(rng, r, c, num_warps=4) -> None:
    x = rng.standard_normal((r, c)).astype(np.float32)
    out = np.full((c, r), np.nan, np.float32)
    transpose_kernel[(1,)](x, out, R=r, C=c, num_warps=num_warps)
    np.testing.assert_array_equal(out, (x * 2).T)
