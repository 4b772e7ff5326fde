"""Integer shifts, division and remainder (issue 19, rule 9): the interpreter computes what
the GPU computes, bit for bit, for every width and signedness.

The rules, as the lowering emits them (tritium/codegen/lower/elementwise.py) and PTX runs
them: a shift amount is read as unsigned; one >= the width gives 0 (`>>` of a signed value:
its sign in every bit). Division truncates toward zero, the remainder has the dividend's
sign, MIN // -1 wraps to MIN (and MIN % -1 is 0). By zero, PTX leaves the result
unspecified; the GPU (an H100) gives all ones for x // 0 (-1 signed) and x for x % 0, and
so does the interpreter. One exception, measured: LLVM divides 64-bit operands that both
fit in 32 unsigned bits with a 32-bit division, so a 64-bit x in [0, 2**32) gives
x // 0 = 2**32 - 1.
"""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl

DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
B = 128


@tritium.jit
def int_ops(x, y, shl, shr, quo, rem, B: tl.constexpr):
    offs = tl.arange(0, B)
    a = tl.load(x + offs)
    b = tl.load(y + offs)
    tl.store(shl + offs, a << b)
    tl.store(shr + offs, a >> b)
    tl.store(quo + offs, a // b)
    tl.store(rem + offs, a % b)


def operands(dt, seed=0):
    """Edge values and random ones; amounts from 0 past the width, negative and huge."""
    info = np.iinfo(dt)
    w = info.bits
    rng = np.random.default_rng(seed)
    edges = [info.min, info.max, 0, 1, 2, info.max // 2, info.min // 2 if info.min else 3]
    if info.min < 0:
        edges += [-1, -2, -7]
    a = np.array(edges + list(rng.integers(info.min, info.max, B - len(edges), dtype=dt)), dt)
    amounts = list(range(w + 3)) + [w * 2, info.max, 0]
    if info.min < 0:
        amounts += [-1, -w, info.min]
    divisors = [0, 1, 2, 3, 7, info.max] + ([-1, -2, -3, info.min] if info.min < 0 else [])
    b = np.array([amounts[i % len(amounts)] for i in range(B // 2)], dt)
    b = np.concatenate([b, np.array([divisors[i % len(divisors)] for i in range(B // 2)], dt)])
    b = rng.permutation(b)
    b[:4] = 0  # small dividends (edges 0, 1, 2, max or min) by zero
    return a, b


def model(a: int, b: int, dt) -> tuple[int, int, int, int]:
    """The four results for one pair of elements, by the rules in the module docstring."""
    info = np.iinfo(dt)
    w = info.bits

    def wrap(v):
        v &= (1 << w) - 1
        return v - (1 << w) if info.min < 0 and v >= 1 << (w - 1) else v

    amt = b & ((1 << w) - 1)
    shl = wrap(a << amt) if amt < w else 0
    shr = a >> min(amt, w - 1) if info.min < 0 else (a >> amt if amt < w else 0)
    if b == 0:
        quo = wrap(0xFFFFFFFF if w == 64 and 0 <= a < 2**32 else -1)
        rem = a
    else:
        q = abs(a) // abs(b)
        quo = wrap(q if (a < 0) == (b < 0) else -q)
        rem = wrap(a - quo * b) if not (a == info.min and b == -1) else 0
    return shl, shr, quo, rem


def run(dt, a, b):
    outs = [np.zeros(B, dt) for _ in range(4)]
    int_ops[(1,)](a, b, *outs, B=B)
    return outs


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_interpreter_follows_the_rules(dt, monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    a, b = operands(dt)
    got = run(dt, a, b)
    want = [model(int(x), int(y), dt) for x, y in zip(a, b)]
    for k, name in enumerate(["<<", ">>", "//", "%"]):
        expected = np.array([w[k] for w in want], dt)
        bad = np.flatnonzero(got[k] != expected)
        assert bad.size == 0, [
            f"{a[i]} {name} {b[i]} = {got[k][i]}, expected {expected[i]}" for i in bad[:5]
        ]


@pytest.mark.gpu
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_gpu_matches_interpreter_bit_for_bit(dt, monkeypatch):
    a, b = operands(dt, seed=3)
    gpu = run(dt, a, b)
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    cpu = run(dt, a, b)
    for k, name in enumerate(["<<", ">>", "//", "%"]):
        bad = np.flatnonzero(gpu[k] != cpu[k])
        assert bad.size == 0, [
            f"{a[i]} {name} {b[i]}: GPU {gpu[k][i]}, interpreter {cpu[k][i]}" for i in bad[:8]
        ]


@tritium.jit
def mixed_shifts(x, y, out, B: tl.constexpr):
    offs = tl.arange(0, B)
    a = tl.load(x + offs)
    b = tl.load(y + offs)
    tl.store(out + offs, (a << b) + (a >> b) + (b >> a))


MIXED = [(np.int8, np.int32), (np.uint16, np.int64), (np.int32, np.uint8), (np.uint32, np.int16)]


@pytest.mark.gpu
@pytest.mark.parametrize("xt,yt", MIXED, ids=lambda d: np.dtype(d).name)
def test_gpu_mixed_operand_types_match_interpreter(xt, yt, monkeypatch):
    rng = np.random.default_rng(5)
    a = rng.integers(np.iinfo(xt).min, np.iinfo(xt).max, B, dtype=xt)
    b = rng.integers(0, 70, B).astype(yt)
    out_t = np.result_type(xt, yt) if np.result_type(xt, yt).itemsize <= 8 else np.int64
    gpu = np.zeros(B, out_t)
    mixed_shifts[(1,)](a, b, gpu, B=B)
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    cpu = np.zeros(B, out_t)
    mixed_shifts[(1,)](a, b, cpu, B=B)
    np.testing.assert_array_equal(gpu, cpu)
