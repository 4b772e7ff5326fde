"""`tl.randint` / `randint4x` / `rand` / `rand4x` / `randn` / `randn4x` / `philox` in the
interpreter against an independent numpy Philox (tests/frontend/philox_numpy.py, itself
checked against Random123's known-answer vectors), plus their TTIR, PTX and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tests.frontend import philox_numpy as ref
from tests.frontend.helpers import op_names, ttir
from tritium.codegen import tools
from tritium.errors import CompilationError

SEEDS = [0, 1, 42, -1, -(2**31), 2**31 - 1, 2**31, 0xDEADBEEF, 2**40 + 12345, -(2**50), 2**63 + 7]
BASES = [0, 1, -4096, 2**31 - 100, 2**32 - 7, 2**40 + 3, -(2**35), 2**62]


@pytest.fixture(autouse=True)
def interpret(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")


@tritium.jit
def philox_kernel(c_ptr, out_ptr, seed, N: tl.constexpr, ROUNDS: tl.constexpr):
    i = tl.arange(0, N)
    c0 = tl.load(c_ptr + 4 * i)
    c1 = tl.load(c_ptr + 4 * i + 1)
    c2 = tl.load(c_ptr + 4 * i + 2)
    c3 = tl.load(c_ptr + 4 * i + 3)
    r0, r1, r2, r3 = tl.philox(seed, c0, c1, c2, c3, ROUNDS)
    tl.store(out_ptr + 4 * i, r0)
    tl.store(out_ptr + 4 * i + 1, r1)
    tl.store(out_ptr + 4 * i + 2, r2)
    tl.store(out_ptr + 4 * i + 3, r3)


@tritium.jit
def philox_impl_kernel(c_ptr, k_ptr, out_ptr, N: tl.constexpr, ROUNDS: tl.constexpr):
    i = tl.arange(0, N)
    k0 = tl.load(k_ptr)
    k1 = tl.load(k_ptr + 1)
    c0 = tl.load(c_ptr + 4 * i)
    c1 = tl.load(c_ptr + 4 * i + 1)
    c2 = tl.load(c_ptr + 4 * i + 2)
    c3 = tl.load(c_ptr + 4 * i + 3)
    r0, r1, r2, r3 = tl.philox_impl(c0, c1, c2, c3, k0, k1, n_rounds=ROUNDS)
    tl.store(out_ptr + 4 * i, r0)
    tl.store(out_ptr + 4 * i + 1, r1)
    tl.store(out_ptr + 4 * i + 2, r2)
    tl.store(out_ptr + 4 * i + 3, r3)


@tritium.jit
def randint4x_kernel(out_ptr, seed, base, N: tl.constexpr, ROUNDS: tl.constexpr):
    i = tl.arange(0, N)
    a, b, c, d = tl.randint4x(seed, base + i, ROUNDS)
    tl.store(out_ptr + i, a)
    tl.store(out_ptr + N + i, b)
    tl.store(out_ptr + 2 * N + i, c)
    tl.store(out_ptr + 3 * N + i, d)


@tritium.jit
def streams_kernel(int_ptr, rand_ptr, randn_ptr, seed, base, N: tl.constexpr):
    """randint, rand and randn of one offset block, and the 4x versions, 2D."""
    pid = tl.program_id(0)
    rows = tl.arange(0, N // 16)[:, None]
    cols = tl.arange(0, 16)[None, :]
    idx = pid * N + rows * 16 + cols
    offs = base + idx
    tl.store(int_ptr + idx, tl.randint(seed, offs))
    tl.store(rand_ptr + idx, tl.rand(seed, offs))
    tl.store(randn_ptr + idx, tl.randn(seed, offs))


@tritium.jit
def streams4x_kernel(rand_ptr, randn_ptr, seed, base, N: tl.constexpr):
    i = tl.arange(0, N)
    u = tl.rand4x(seed, base + i)
    n = tl.randn4x(seed, base + i)
    for j in tl.static_range(4):
        tl.store(rand_ptr + j * N + i, u[j])
        tl.store(randn_ptr + j * N + i, n[j])


@tritium.jit
def uniform_kernel(x_ptr, out_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(out_ptr + i, tl.uint_to_uniform_float(tl.load(x_ptr + i)))


def offset_bits(base: int) -> int:
    """The width of `base + tl.arange(...)`: a Python int argument is an i32 when it fits."""
    return 32 if -(2**31) <= base < 2**31 else 64


# ------------------------------------------------------------------ the reference itself
@pytest.mark.parametrize("name,rounds,counter,key,expected", ref.kat_vectors())
def test_numpy_reference_matches_random123_known_answers(name, rounds, counter, key, expected):
    fn = ref.philox4x32 if name == "philox4x32" else ref.philox4x64
    assert [int(x) for x in fn(counter, key, rounds)] == list(expected)


# ------------------------------------------------------------------ Philox itself in a kernel
@pytest.mark.parametrize(
    "rounds,counter,key,expected",
    [(r, c, k, e) for n, r, c, k, e in ref.kat_vectors() if n == "philox4x32"],
)
def test_tl_philox_known_answers(rounds, counter, key, expected):
    c = np.tile(np.array(counter, np.uint32), 16)
    out = np.zeros_like(c)
    seed = key[0] | key[1] << 32  # the key is (low word, high word) of the seed
    philox_kernel[(1,)](c, out, seed, N=16, ROUNDS=rounds)
    assert [int(x) for x in out[:4]] == list(expected)
    assert (out.reshape(16, 4) == out[:4]).all()


@pytest.mark.parametrize(
    "rounds,counter,key,expected",
    [(r, c, k, e) for n, r, c, k, e in ref.kat_vectors() if n == "philox4x64"],
)
def test_tl_philox_impl_4x64_known_answers(rounds, counter, key, expected):
    c = np.tile(np.array(counter, np.uint64), 4)
    out = np.zeros_like(c)
    philox_impl_kernel[(1,)](c, np.array(key, np.uint64), out, N=4, ROUNDS=rounds)
    assert [int(x) for x in out[:4]] == list(expected)


def test_tl_philox_with_64_bit_counters_is_philox_4x64_keyed_by_the_seed():
    rng = np.random.default_rng(0)
    c = rng.integers(0, 2**63, size=4 * 8, dtype=np.int64)
    out = np.zeros(4 * 8, np.uint64)
    seed = 0x0123456789ABCDEF
    philox_kernel[(1,)](c, out, seed, N=8, ROUNDS=10)
    for i in range(8):
        want = ref.philox4x64(c[4 * i : 4 * i + 4], (seed, 0))
        assert [int(x) for x in out[4 * i : 4 * i + 4]] == want


def test_tl_philox_reinterprets_signed_32_bit_counters():
    c = np.array([-1, -2, 7, -(2**31)] * 4, np.int32)
    out = np.zeros(16, np.uint32)
    philox_kernel[(1,)](c, out, -5, N=4, ROUNDS=10)
    want = ref.philox4x32([int(x) & ref.M32 for x in c[:4]], ref.seed_key(-5))
    assert [int(x) for x in out[:4]] == [int(w) for w in want]


# ------------------------------------------------------------------ randint4x
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("base", BASES)
def test_randint4x_matches_numpy_philox(seed, base):
    n = 64
    out = np.zeros(4 * n, np.uint32)
    randint4x_kernel[(1,)](out, seed, base, N=n, ROUNDS=10)
    want = ref.randint4x(seed, base + np.arange(n), offset_bits(base))
    for j in range(4):
        np.testing.assert_array_equal(out[j * n : (j + 1) * n], want[j], err_msg=f"word {j}")


@pytest.mark.parametrize("rounds", [1, 3, 7, 10, 12])
def test_randint4x_n_rounds(rounds):
    n = 32
    out = np.zeros(4 * n, np.uint32)
    randint4x_kernel[(1,)](out, 1234, 99, N=n, ROUNDS=rounds)
    want = ref.randint4x(1234, 99 + np.arange(n), rounds=rounds)
    np.testing.assert_array_equal(out.reshape(4, n), np.stack(want))


def test_64_bit_offsets_use_the_high_word():
    """Offsets 2**32 apart share their low word but not their numbers."""
    n = 16
    lo, hi = np.zeros(4 * n, np.uint32), np.zeros(4 * n, np.uint32)
    randint4x_kernel[(1,)](lo, 7, 2**33, N=n, ROUNDS=10)
    randint4x_kernel[(1,)](hi, 7, 2**34, N=n, ROUNDS=10)
    assert not np.array_equal(lo, hi)
    low_only = np.zeros(4 * n, np.uint32)
    randint4x_kernel[(1,)](low_only, 7, 0, N=n, ROUNDS=10)
    assert not np.array_equal(lo, low_only)


# ------------------------------------------------------------------ randint, rand, randn
@pytest.mark.parametrize("seed", [0, 1, -7, 2**32 + 1, 2**63 + 1])
@pytest.mark.parametrize("base", [0, 5000, 2**36 + 17])
def test_randint_rand_randn_match_numpy(seed, base):
    n, grid = 128, 3
    ints = np.zeros(n * grid, np.uint32)
    unif = np.full(n * grid, np.nan, np.float32)
    norm = np.full(n * grid, np.nan, np.float32)
    streams_kernel[(grid,)](ints, unif, norm, seed, base, N=n)
    w = ref.randint4x(seed, base + np.arange(n * grid), offset_bits(base))
    np.testing.assert_array_equal(ints, w[0])
    u1, u2 = ref.uniform(w[0]), ref.uniform(w[1])
    np.testing.assert_array_equal(unif.view(np.uint32), u1.view(np.uint32))  # bit for bit
    n1, _ = ref.normal_pair(u1, u2)
    np.testing.assert_allclose(norm, n1, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("seed,base", [(3, 0), (-(2**40), 2**40 + 1)])
def test_rand4x_randn4x_match_numpy(seed, base):
    n = 256
    unif = np.full(4 * n, np.nan, np.float32)
    norm = np.full(4 * n, np.nan, np.float32)
    streams4x_kernel[(1,)](unif, norm, seed, base, N=n)
    w = ref.randint4x(seed, base + np.arange(n), offset_bits(base))
    u = [ref.uniform(x) for x in w]
    np.testing.assert_array_equal(unif.view(np.uint32), np.concatenate(u).view(np.uint32))
    n1, n2 = ref.normal_pair(u[0], u[1])
    n3, n4 = ref.normal_pair(u[2], u[3])
    np.testing.assert_allclose(norm, np.concatenate([n1, n2, n3, n4]), rtol=2e-6, atol=2e-6)


def test_randn_is_the_cosine_half_of_randn4x():
    n = 64
    ints = np.zeros(n, np.uint32)
    unif = np.zeros(n, np.float32)
    norm = np.zeros(n, np.float32)
    streams_kernel[(1,)](ints, unif, norm, 11, 0, N=n)
    u4 = np.zeros(4 * n, np.float32)
    n4 = np.zeros(4 * n, np.float32)
    streams4x_kernel[(1,)](u4, n4, 11, 0, N=n)
    np.testing.assert_array_equal(norm, n4[:n])
    np.testing.assert_array_equal(unif, u4[:n])


@tritium.jit
def seed_kinds_kernel(seed_ptr, out_ptr, N: tl.constexpr, SEED: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(out_ptr + i, tl.randint(SEED, i))  # a compile-time seed
    tl.store(out_ptr + N + i, tl.randint(tl.load(seed_ptr), i))  # a seed read from memory
    tl.store(out_ptr + 2 * N + i, tl.randint(7, i.to(tl.int64) + 2**33))  # a literal, i64 offsets


def test_constexpr_literal_and_loaded_seeds():
    n = 32
    out = np.zeros(3 * n, np.uint32)
    seed = np.array([-(2**60) + 3], np.int64)
    seed_kinds_kernel[(1,)](seed, out, N=n, SEED=2**35 + 9)
    np.testing.assert_array_equal(out[:n], ref.randint4x(2**35 + 9, np.arange(n))[0])
    np.testing.assert_array_equal(out[n : 2 * n], ref.randint4x(int(seed[0]), np.arange(n))[0])
    want = ref.randint4x(7, np.arange(n) + 2**33, offset_bits=64)[0]
    np.testing.assert_array_equal(out[2 * n :], want)


# ------------------------------------------------------------------ the float mapping
def test_uint_to_uniform_float_edges():
    """The extreme words map inside [0, 1): 0 and 0xFFFFFFFF (-1) to 0, 0x7FFFFFFF and
    0x80000000 (INT_MIN, which -x - 1 folds without overflow) to the largest value, < 1."""
    x = np.array([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0x40000000, 12345] * 2)
    x = x.astype(np.uint32)
    out = np.full(x.size, np.nan, np.float32)
    uniform_kernel[(1,)](x, out, N=x.size)
    np.testing.assert_array_equal(out.view(np.uint32), ref.uniform(x).view(np.uint32))
    assert out[0] == 0.0 and out[4] == 0.0
    assert out[2] == out[3] == np.float32(np.nextafter(np.float32(1), np.float32(0)))
    assert (out < 1.0).all() and (out >= 0.0).all()


def test_uint_to_uniform_float_64_bit_words():
    x = np.array([0, 1, 2**63 - 1, 2**63, 2**64 - 1, 2**62, 3, 2**40], np.uint64)
    out = np.full(x.size, np.nan, np.float32)
    uniform_kernel[(1,)](x, out, N=x.size)
    np.testing.assert_array_equal(out.view(np.uint32), ref.uniform(x, 64).view(np.uint32))
    assert (out < 1.0).all() and (out >= 0.0).all()


# ------------------------------------------------------------------ statistics
def test_rand_and_randn_statistics():
    n, grid = 4096, 16
    ints = np.zeros(n * grid, np.uint32)
    unif = np.zeros(n * grid, np.float32)
    norm = np.zeros(n * grid, np.float32)
    streams_kernel[(grid,)](ints, unif, norm, 2024, 0, N=n)
    m = unif.size
    assert unif.min() >= 0.0 and unif.max() < 1.0
    # mean and variance of U(0, 1) within 6 standard errors
    assert abs(unif.mean() - 0.5) < 6 * np.sqrt(1 / 12 / m)
    assert abs(unif.var() - 1 / 12) < 6 * np.sqrt(1 / 180 / m)
    hist, _ = np.histogram(unif, bins=16, range=(0, 1))
    chi2 = ((hist - m / 16) ** 2 / (m / 16)).sum()
    assert chi2 < 50  # 15 degrees of freedom: p < 1e-5 above this
    assert abs(norm.mean()) < 6 / np.sqrt(m)
    assert abs(norm.var() - 1) < 6 * np.sqrt(2 / m)
    assert np.isfinite(norm).all() and np.abs(norm).max() < 6.0  # sqrt(-2 ln 1e-7) = 5.68
    assert abs(np.mean(norm**3)) < 6 * np.sqrt(15 / m)  # symmetric
    assert len(np.unique(ints)) > 0.999 * m  # distinct offsets, distinct numbers


def test_words_of_randint4x_are_uncorrelated():
    n = 4096
    out = np.zeros(4 * n, np.uint32)
    randint4x_kernel[(1,)](out, 99, 0, N=n, ROUNDS=10)
    words = out.reshape(4, n).astype(np.float64)
    corr = np.corrcoef(words)
    assert np.abs(corr - np.eye(4)).max() < 6 / np.sqrt(n)


def test_seeds_give_different_streams():
    n = 256
    a, b = np.zeros(4 * n, np.uint32), np.zeros(4 * n, np.uint32)
    randint4x_kernel[(1,)](a, 2**32, 0, N=n, ROUNDS=10)  # differs from 0 in the high word only
    randint4x_kernel[(1,)](b, 0, 0, N=n, ROUNDS=10)
    assert (a != b).mean() > 0.99


# ------------------------------------------------------------------ TTIR, PTX, errors
@tritium.jit
def rand_store_kernel(out_ptr, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.rand(seed, offs))


def test_rand_ttir_is_ten_philox_rounds_then_the_float_mapping():
    m = ttir(rand_store_kernel, "*fp32, i32", {"BLOCK": 128})
    names = op_names(m)
    assert names.count("tt.mulhiui") == 20  # two per round
    assert "arith.sitofp" in names and "arith.mulf" in names and "arith.select" in names
    assert "arith.extsi" in names  # the i32 seed, sign-extended to the 64-bit key


def test_rand_compiles_to_ptx_with_mul_hi(ptxas):
    k = tritium.compile(
        rand_store_kernel, signature={"out_ptr": "*fp32", "seed": "i64"}, constexprs={"BLOCK": 256}
    )
    ptx = k.asm["ptx"]
    assert ptx.count("mul.hi.u32") >= 20
    assert tools.ptxas(ptx, "sm_89")[:4] == b"\x7fELF"


def test_philox_4x64_compiles_to_ptx(ptxas):
    k = tritium.compile(
        philox_impl_kernel,
        signature={"c_ptr": "*u64", "k_ptr": "*u64", "out_ptr": "*u64"},
        constexprs={"N": 32, "ROUNDS": 10},
    )
    assert k.asm["ptx"].count("mul.hi.u64") == 20  # two per round
    assert tools.ptxas(k.asm["ptx"], "sm_89")[:4] == b"\x7fELF"


@tritium.jit
def float_seed_kernel(out_ptr, seed, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.rand(seed, offs))


@tritium.jit
def float_offset_kernel(out_ptr, seed, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.rand(seed, offs.to(tl.float32)))


def test_a_float_seed_is_a_located_error():
    # located where the library checks it (random.py), as for any inlined @jit function
    msg = r"random\.py:\d+:\d+: error: the seed of tl.philox must be an integer, got fp32"
    with pytest.raises(CompilationError, match=msg):
        float_seed_kernel[(1,)](np.zeros(16, np.float32), 1.5, BLOCK=16)


def test_a_float_offset_is_a_located_error():
    msg = r"random\.py:\d+:\d+: error: the offset of tl.randint4x must be an integer, got fp32"
    with pytest.raises(CompilationError, match=msg):
        float_offset_kernel[(1,)](np.zeros(16, np.float32), 3, BLOCK=16)
