"""Counter-based random numbers (`tl.randint`, `tl.rand`, `tl.randn`, ...), as upstream's
`triton.language.random`: written in the Triton language itself, inlined like any helper.

    r = tl.rand(seed, offsets)   ->  Philox-4x32-10 on the counter (offsets, 0, 0, 0) with
                                     the key (low, high word of seed), then the first word
                                     of the result mapped to [0, 1)

The generator is Philox-4x32 (Salmon et al., "Parallel random numbers: as easy as
1, 2, 3", SC'11; the Random123 library). It is stateless: the same (seed, offset) gives
the same numbers on every launch, in the interpreter and on the GPU, and the streams are
bit-identical to upstream Triton 3.6's. The exact steps, which these functions keep:

* key: the seed widened to uint64 (sign-extended when it is a signed integer), its low
  and high 32-bit words; counter: the offset's low word, its high word (0 for a 32-bit
  offset), 0, 0. One round: (c0, c1, c2, c3) <- (hi(B*c2) ^ c1 ^ k0, B*c2,
  hi(A*c0) ^ c3 ^ k1, A*c0) with A = 0xD2511F53, B = 0xCD9E8D57, then the key is bumped
  by the Weyl constants (0x9E3779B9, 0xBB67AE85). `n_rounds` rounds (10 by default).
* `tl.philox` on 64-bit counters runs Philox-4x64 instead (its own constants, key
  (seed, 0)); `randint4x` always uses the 32-bit generator, whatever the offset's width.
* uint -> float: the word read as a signed integer, negatives folded (`~x`, i.e.
  -x - 1), converted to float32 and scaled by 4.6566127342e-10 (2^-31 a hair small, so
  the largest value rounds below 1.0): U[0, 1), never 1.0. 64-bit words use
  1.0842020432385337e-19.
* normal: Box-Muller on two uniforms, u1 clamped to at least 1e-7:
  sqrt(-2 log u1) * (cos, sin)(2 pi u2).
"""

from __future__ import annotations

from tritium.frontend import builtins as tl
from tritium.frontend.builtins.base import builtin
from tritium.frontend.core import constexpr, int32, int64, uint32, uint64, unwrap
from tritium.frontend.iterators import static_range
from tritium.frontend.kernel_source import KernelSource
from tritium.frontend.semantic import SemanticError

N_ROUNDS_DEFAULT = 10

# Philox-4x32 and Philox-4x64 constants (Random123): the round multipliers and the
# Weyl sequence that bumps the key between rounds.
_ROUND_A_32 = constexpr(0xD2511F53)
_ROUND_B_32 = constexpr(0xCD9E8D57)
_KEY_A_32 = constexpr(0x9E3779B9)
_KEY_B_32 = constexpr(0xBB67AE85)
_ROUND_A_64 = constexpr(0xD2E7470EE14C6C93)
_ROUND_B_64 = constexpr(0xCA5A826395121157)
_KEY_A_64 = constexpr(0x9E3779B97F4A7C15)
_KEY_B_64 = constexpr(0xBB67AE8584CAA73B)


@builtin
def _as_tensor(x, _semantic=None, _generator=None):
    """A number (a constexpr seed or counter, e.g. a specialised `1`) as a scalar tensor
    of its literal type; a tensor as itself."""
    return _semantic.to_tensor(x)


@builtin
def _check_int(x, what, _semantic=None, _generator=None):
    x = _semantic.to_tensor(x)
    if not x.dtype.is_int() or x.dtype.is_bool():
        raise SemanticError(f"{unwrap(what)} must be an integer, got {x.dtype}")
    return constexpr(x.dtype.int_bitwidth)


@KernelSource
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """`n_rounds` rounds of Philox on the counter (c0, c1, c2, c3) with the key (k0, k1):
    all uint32 (Philox-4x32) or all uint64 (Philox-4x64). Returns the four words."""
    if c0.dtype == uint32:
        mul_a: constexpr = _ROUND_A_32
        mul_b: constexpr = _ROUND_B_32
        weyl_a: constexpr = _KEY_A_32
        weyl_b: constexpr = _KEY_B_32
    else:
        tl.static_assert(c0.dtype == uint64, "philox_impl takes uint32 or uint64 words")
        mul_a: constexpr = _ROUND_A_64
        mul_b: constexpr = _ROUND_B_64
        weyl_a: constexpr = _KEY_A_64
        weyl_b: constexpr = _KEY_B_64
    for _ in static_range(n_rounds):
        a_lo = c0 * mul_a
        b_lo = c2 * mul_b
        new_c0 = tl.umulhi(c2, mul_b) ^ c1 ^ k0
        new_c2 = tl.umulhi(c0, mul_a) ^ c3 ^ k1
        c0 = new_c0
        c1 = b_lo
        c2 = new_c2
        c3 = a_lo
        k0 = k0 + weyl_a
        k1 = k1 + weyl_b
    return c0, c1, c2, c3


@KernelSource
def philox(seed, c0, c1, c2, c3, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """Philox on the counter (c0, c1, c2, c3) keyed by `seed`. 32-bit counters (of any
    signedness, reinterpreted as uint32) run Philox-4x32 with the key (low, high word of
    the seed); 64-bit counters run Philox-4x64 with the key (seed, 0)."""
    _check_int(seed, "the seed of tl.philox")
    width: constexpr = _check_int(c0, "the counter of tl.philox")
    seed = _as_tensor(seed).to(uint64)
    c0 = _as_tensor(c0)
    c1 = _as_tensor(c1)
    c2 = _as_tensor(c2)
    c3 = _as_tensor(c3)
    if width == 32:
        word: constexpr = uint32
        k0 = (seed & 0xFFFFFFFF).to(uint32)
        k1 = (seed >> 32).to(uint32)
    else:
        tl.static_assert(width == 64, "tl.philox takes 32- or 64-bit counters")
        word: constexpr = uint64
        k0 = seed
        k1 = seed * 0
    c0 = c0.to(word, bitcast=True)
    c1 = c1.to(word, bitcast=True)
    c2 = c2.to(word, bitcast=True)
    c3 = c3.to(word, bitcast=True)
    return philox_impl(c0, c1, c2, c3, k0, k1, n_rounds)


@KernelSource
def randint4x(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of random uint32 for a scalar `seed` and a block of `offset`s: Philox-4x32
    on the counter (low word of offset, high word of offset, 0, 0). The cheapest entry point:
    one Philox evaluation gives four numbers."""
    width: constexpr = _check_int(offset, "the offset of tl.randint4x")
    offset = _as_tensor(offset)
    lo = offset.to(uint32)
    zero = lo * 0
    if width > 32:
        hi = (offset >> 32).to(uint32)
    else:
        hi = zero
    return philox(seed, lo, hi, zero, zero, n_rounds)


@KernelSource
def randint(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """One block of random uint32: the first word of `randint4x(seed, offset)`."""
    first, _, _, _ = randint4x(seed, offset, n_rounds)
    return first


@KernelSource
def uint_to_uniform_float(x):
    """Random 32- or 64-bit integers to float32 uniformly distributed in [0, 1)."""
    width: constexpr = _check_int(x, "the argument of tl.uint_to_uniform_float")
    if width == 32:
        x = x.to(int32, bitcast=True)
        scale: constexpr = 4.6566127342e-10
    else:
        tl.static_assert(width == 64, "tl.uint_to_uniform_float takes 32- or 64-bit integers")
        x = x.to(int64, bitcast=True)
        scale: constexpr = 1.0842020432385337e-19
    x = tl.where(x < 0, ~x, x)  # ~x == -x - 1, without the overflow of -INT_MIN
    return x * scale


@KernelSource
def rand(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """A block of float32 uniform in [0, 1) for a scalar `seed` and a block of `offset`s."""
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


@KernelSource
def rand4x(seed, offsets, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of float32 uniform in [0, 1), from one `randint4x`."""
    i1, i2, i3, i4 = randint4x(seed, offsets, n_rounds)
    return (
        uint_to_uniform_float(i1),
        uint_to_uniform_float(i2),
        uint_to_uniform_float(i3),
        uint_to_uniform_float(i4),
    )


@KernelSource
def pair_uniform_to_normal(u1, u2):
    """Box-Muller: two uniforms in [0, 1) to two independent standard normals."""
    u1 = tl.maximum(1.0e-7, u1)
    theta = 6.283185307179586 * u2
    radius = tl.sqrt(-2.0 * tl.log(u1))
    return radius * tl.cos(theta), radius * tl.sin(theta)


@KernelSource
def randn(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """A block of float32 drawn from N(0, 1): Box-Muller on the first two words of
    `randint4x(seed, offset)`, keeping the cosine half."""
    i1, i2, _, _ = randint4x(seed, offset, n_rounds)
    n1, _ = pair_uniform_to_normal(uint_to_uniform_float(i1), uint_to_uniform_float(i2))
    return n1


@KernelSource
def randn4x(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of float32 drawn from N(0, 1): Box-Muller on the pairs of `rand4x`."""
    u1, u2, u3, u4 = rand4x(seed, offset, n_rounds)
    n1, n2 = pair_uniform_to_normal(u1, u2)
    n3, n4 = pair_uniform_to_normal(u3, u4)
    return n1, n2, n3, n4
