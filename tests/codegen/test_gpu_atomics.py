"""Atomics end to end against numpy: on the GPU (marker `gpu`) and, for the same
kernels, in the interpreter. Poisoned outputs, masks, odd sizes, duplicate addresses,
returned old values, scalar atomics and layouts that replicate elements across threads."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl


@pytest.fixture(params=["interpreter", pytest.param("gpu", marks=pytest.mark.gpu)])
def mode(request, monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1" if request.param == "interpreter" else "0")
    return request.param


@tritium.jit
def histogram_kernel(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    bucket = tl.load(x_ptr + offs, mask=m, other=0)
    tl.atomic_add(hist_ptr + bucket, 1, mask=m)


def test_histogram(mode):
    rng = np.random.default_rng(0)
    n = 10_007
    x = rng.integers(0, 37, n).astype(np.int32)
    hist = np.zeros(37, np.int32)
    histogram_kernel[(tritium.cdiv(n, 256),)](x, hist, n, BLOCK=256)
    np.testing.assert_array_equal(hist, np.bincount(x, minlength=37))


@tritium.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_of_block_sums(mode, dtype):
    rng = np.random.default_rng(1)
    n = 5_001
    x = rng.standard_normal(n).astype(dtype)
    out = np.zeros(1, dtype)
    sum_kernel[(tritium.cdiv(n, 512),)](x, out, n, BLOCK=512)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(out[0], x.astype(np.float64).sum(), rtol=tol, atol=tol)


@tritium.jit
def ticket_kernel(counter_ptr, old_ptr, n, K: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    old = tl.atomic_add(counter_ptr + offs % K, 1, mask=m)
    tl.store(old_ptr + offs, old, mask=m)


@pytest.mark.parametrize("block, warps", [(256, 4), (32, 4), (16, 8)])
def test_old_values_are_tickets(mode, block, warps):
    # duplicates in a block; blocks of 32 or 16 elements replicate across warps
    n, k = 1_003, 7
    counter = np.zeros(k, np.int32)
    old = np.full(n, -1, np.int32)
    ticket_kernel[(tritium.cdiv(n, block),)](counter, old, n, K=k, BLOCK=block, num_warps=warps)
    want = np.bincount(np.arange(n) % k, minlength=k)
    np.testing.assert_array_equal(counter, want)
    for j in range(k):  # each address handed out 0, 1, ..., count-1 exactly once
        np.testing.assert_array_equal(np.sort(old[np.arange(n) % k == j]), np.arange(want[j]))


@tritium.jit
def scalar_ticket_kernel(counter_ptr, out_ptr, BLOCK: tl.constexpr):
    t = tl.atomic_add(counter_ptr, 1)  # one ticket per program, seen by every thread
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], tl.int32) + t)


def test_scalar_atomic_result_reaches_every_thread(mode):
    programs, block = 50, 128
    counter = np.zeros(1, np.int32)
    out = np.full(programs * block, -1, np.int32)
    scalar_ticket_kernel[(programs,)](counter, out, BLOCK=block)
    assert counter[0] == programs
    per_program = out.reshape(programs, block)
    assert (per_program == per_program[:, :1]).all()  # the same ticket in every thread
    np.testing.assert_array_equal(np.sort(per_program[:, 0]), np.arange(programs))


@tritium.jit
def rmw_kernel(p_ptr, v_ptr, old_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(v_ptr + offs, mask=m)
    p = p_ptr + offs % 5  # 5 addresses, many updates each
    if OP == "max":
        old = tl.atomic_max(p, v, mask=m)
    elif OP == "min":
        old = tl.atomic_min(p, v, mask=m)
    elif OP == "and":
        old = tl.atomic_and(p, v, mask=m)
    elif OP == "or":
        old = tl.atomic_or(p, v, mask=m)
    elif OP == "xor":
        old = tl.atomic_xor(p, v, mask=m)
    else:
        old = tl.atomic_xchg(p, v, mask=m)
    tl.store(old_ptr + offs, old, mask=m)


REDUCE = {"max": np.maximum, "min": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or,
          "xor": np.bitwise_xor}  # fmt: skip


@pytest.mark.parametrize(
    "op, dtype",
    [("max", np.int32), ("min", np.int64), ("max", np.uint32), ("min", np.uint32),
     ("max", np.float32), ("min", np.float32), ("max", np.float64), ("and", np.int32),
     ("or", np.int64), ("xor", np.int32), ("xchg", np.float32), ("xchg", np.int64)],
)  # fmt: skip
def test_read_modify_write_operations(mode, op, dtype):
    rng = np.random.default_rng(2)
    n = 777
    if np.issubdtype(dtype, np.floating):
        v = rng.standard_normal(n).astype(dtype) * 100  # negative and positive
        init = rng.standard_normal(5).astype(dtype)
    elif np.issubdtype(dtype, np.unsignedinteger):
        v = rng.integers(0, 2**32 - 1, n, dtype=np.uint64).astype(dtype)  # the top bit too
        init = rng.integers(0, 2**32 - 1, 5, dtype=np.uint64).astype(dtype)
    else:
        info = np.iinfo(dtype)
        v = rng.integers(info.min, info.max, n, dtype=dtype)
        init = rng.integers(info.min, info.max, 5, dtype=dtype)
    p = init.copy()
    old = np.zeros(n, dtype)
    rmw_kernel[(tritium.cdiv(n, 128),)](p, v, old, n, OP=op, BLOCK=128)
    addr = np.arange(n) % 5
    for j in range(5):
        mine = v[addr == j]
        if op == "xchg":  # the final value is one of the written ones; the old values plus
            # the final one are exactly the initial one plus everything written
            got = np.sort(np.concatenate([old[addr == j], p[j : j + 1]]))
            np.testing.assert_array_equal(got, np.sort(np.concatenate([init[j : j + 1], mine])))
            continue
        np.testing.assert_array_equal(
            p[j], REDUCE[op].reduce(np.concatenate([init[j : j + 1], mine]))
        )
        if op in ("max", "min"):  # every old value is between init and the final value
            olds = old[addr == j]
            lo, hi = (init[j], p[j]) if op == "max" else (p[j], init[j])
            assert ((olds >= lo) & (olds <= hi)).all()


@tritium.jit
def cas_kernel(lock_ptr, winner_ptr, olds_ptr):
    pid = tl.program_id(0)
    old = tl.atomic_cas(lock_ptr, 0, pid + 1)
    tl.store(olds_ptr + pid, old)
    if old == 0:
        tl.store(winner_ptr, pid)


def test_compare_and_swap_has_one_winner(mode):
    programs = 64
    lock = np.zeros(1, np.int32)
    winner = np.full(1, -1, np.int32)
    olds = np.full(programs, -1, np.int32)
    cas_kernel[(programs,)](lock, winner, olds)
    w = winner[0]
    assert 0 <= w < programs and lock[0] == w + 1
    assert olds[w] == 0 and (np.delete(olds, w) == w + 1).all()


@tritium.jit
def method_kernel(hist_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    (hist_ptr + tl.load(x_ptr + offs, mask=m, other=0)).atomic_add(1, mask=m)
    hist_ptr.atomic_max(100)  # a scalar pointer too


def test_atomics_are_pointer_methods(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    x = np.array([3, 1, 3, 0, 3], np.int32)
    hist = np.zeros(4, np.int32)
    method_kernel[(1,)](hist, x, 5, BLOCK=8)
    np.testing.assert_array_equal(hist, [100, 1, 0, 3])
    text = tritium.compile(method_kernel, "*i32,*i32,i32", {"BLOCK": 8}, stop="ttir").asm["ttir"]
    assert "tt.atomic_rmw add, acq_rel, gpu" in text and "tt.atomic_rmw max, acq_rel, gpu" in text
