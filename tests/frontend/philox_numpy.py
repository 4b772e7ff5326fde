"""An independent numpy Philox (Salmon et al., SC'11), checked against Random123's
known-answer vectors, and numpy versions of `tl.randint4x` / `rand` / `randn` built on it.

Written from the published algorithm, not from tritium's kernel code: a round multiplies
words 0 and 2 by their constants into 2w-bit products, the high halves are xored with the
other counter words and the key, the low halves move over; the key is bumped by the Weyl
constants between rounds (Random123's order: bump before rounds 2..R).
"""

from __future__ import annotations

import numpy as np

M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1
PHILOX_4x32 = {"mul": (0xD2511F53, 0xCD9E8D57), "weyl": (0x9E3779B9, 0xBB67AE85)}
PHILOX_4x64 = {
    "mul": (0xD2E7470EE14C6C93, 0xCA5A826395121157),
    "weyl": (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B),
}

# Random123's tests/kat_vectors (github.com/DEShawResearch/random123, the file the library's
# own kat tests read): name, rounds, counter[4], key[2] -> output[4], all hex words.
KAT_VECTORS = """
philox4x32 7 00000000 00000000 00000000 00000000 00000000 00000000   5f6fb709 0d893f64 4f121f81 4f730a48
philox4x32 7 ffffffff ffffffff ffffffff ffffffff ffffffff ffffffff   5207ddc2 45165e59 4d8ee751 8c52f662
philox4x32 7 243f6a88 85a308d3 13198a2e 03707344 a4093822 299f31d0   4dfccaba 190a87f0 c47362ba b6b5242a
philox4x32 10 00000000 00000000 00000000 00000000 00000000 00000000   6627e8d5 e169c58d bc57ac4c 9b00dbd8
philox4x32 10 ffffffff ffffffff ffffffff ffffffff ffffffff ffffffff   408f276d 41c83b0e a20bc7c6 6d5451fd
philox4x32 10 243f6a88 85a308d3 13198a2e 03707344 a4093822 299f31d0   d16cfe09 94fdcceb 5001e420 24126ea1
philox4x64 7 0000000000000000 0000000000000000 0000000000000000 0000000000000000 0000000000000000 0000000000000000   5dc8ee6268ec62cd 139bc570b6c125a0 84d6deb4fb65f49e aff7583376d378c2
philox4x64 7 ffffffffffffffff ffffffffffffffff ffffffffffffffff ffffffffffffffff ffffffffffffffff ffffffffffffffff   071dd84367903154 48e2bbdc722b37d1 6afa9890bb89f76c 9194c8d8ada56ac7
philox4x64 7 243f6a8885a308d3 13198a2e03707344 a4093822299f31d0 082efa98ec4e6c89 452821e638d01377 be5466cf34e90c6c   513a366704edf755 f05d9924c07044d3 bef2cb9cbea74c6c 8db948de4caa1f8a
philox4x64 10 0000000000000000 0000000000000000 0000000000000000 0000000000000000 0000000000000000 0000000000000000   16554d9eca36314c db20fe9d672d0fdc d7e772cee186176b 7e68b68aec7ba23b
philox4x64 10 ffffffffffffffff ffffffffffffffff ffffffffffffffff ffffffffffffffff ffffffffffffffff ffffffffffffffff   87b092c3013fe90b 438c3c67be8d0224 9cc7d7c69cd777b6 a09caebf594f0ba0
philox4x64 10 243f6a8885a308d3 13198a2e03707344 a4093822299f31d0 082efa98ec4e6c89 452821e638d01377 be5466cf34e90c6c   a528f45403e61d95 38c72dbd566e9788 a5a1610e72fd18b5 57bd43b5e52b7fe6
"""


def kat_vectors():
    """[(name, rounds, counter (4 ints), key (2 ints), expected (4 ints))]."""
    out = []
    for line in KAT_VECTORS.strip().splitlines():
        name, rounds, *words = line.split()
        w = [int(x, 16) for x in words]
        out.append((name, int(rounds), tuple(w[:4]), tuple(w[4:6]), tuple(w[6:])))
    return out


def philox4x32(counter, key, rounds=10):
    """Philox-4x32 on arrays of words (anything numpy broadcasts): four uint32 arrays."""
    c = [np.asarray(x, dtype=np.uint64) & np.uint64(M32) for x in counter]
    k = [np.asarray(x, dtype=np.uint64) & np.uint64(M32) for x in key]
    (ma, mb), (wa, wb) = PHILOX_4x32["mul"], PHILOX_4x32["weyl"]
    m32, s32 = np.uint64(M32), np.uint64(32)
    for r in range(rounds):
        if r:
            k = [(k[0] + np.uint64(wa)) & m32, (k[1] + np.uint64(wb)) & m32]
        p0 = c[0] * np.uint64(ma)  # < 2**64: no wrap-around
        p2 = c[2] * np.uint64(mb)
        c = [(p2 >> s32) ^ c[1] ^ k[0], p2 & m32, (p0 >> s32) ^ c[3] ^ k[1], p0 & m32]
    return [x.astype(np.uint32) for x in np.broadcast_arrays(*c)]


def philox4x64(counter, key, rounds=10):
    """Philox-4x64 on Python ints (128-bit products are exact there): four ints."""
    c = [int(x) & M64 for x in counter]
    k = [int(x) & M64 for x in key]
    (ma, mb), (wa, wb) = PHILOX_4x64["mul"], PHILOX_4x64["weyl"]
    for r in range(rounds):
        if r:
            k = [(k[0] + wa) & M64, (k[1] + wb) & M64]
        p0, p2 = c[0] * ma, c[2] * mb
        c = [(p2 >> 64) ^ c[1] ^ k[0], p2 & M64, (p0 >> 64) ^ c[3] ^ k[1], p0 & M64]
    return c


# ------------------------------------------------------------------ the tl functions' streams
def seed_key(seed: int):
    """The Philox-4x32 key of a seed: its low and high words once it is a uint64 (a
    negative seed is sign-extended, as the kernel's signed seed argument is)."""
    s = seed & M64
    return s & M32, s >> 32


def randint4x(seed: int, offsets, offset_bits: int = 32, rounds: int = 10):
    """The four uint32 blocks of `tl.randint4x(seed, offsets)` for offsets of a signed
    `offset_bits`-bit type: the counter is (low word, high word or 0, 0, 0)."""
    off = np.asarray(offsets, dtype=np.int64)
    lo = off.astype(np.uint64) & np.uint64(M32)
    if offset_bits > 32:
        hi = (off.astype(np.uint64) >> np.uint64(32)) & np.uint64(M32)
    else:
        hi = np.zeros_like(lo)
    zero = np.zeros_like(lo)
    return philox4x32((lo, hi, zero, zero), seed_key(seed), rounds)


def uniform(words, bits: int = 32):
    """`tl.uint_to_uniform_float` of uint32 (uint64) words, in float32 as the kernel
    computes it: the word as a signed integer, negatives folded onto 0..2**(bits-1)-1
    (x -> -x - 1), converted to float32 (round to nearest), times the float32 scale."""
    if bits == 32:
        x = np.asarray(words, dtype=np.uint32).view(np.int32).astype(np.int64)
        scale = np.float32(4.6566127342e-10)
    else:
        x = np.asarray(words, dtype=np.uint64).view(np.int64)
        scale = np.float32(1.0842020432385337e-19)
    x = np.where(x < 0, -(x + 1), x)
    return x.astype(np.float32) * scale


def normal_pair(u1, u2):
    """Box-Muller in float64 on float32 uniforms (u1 clamped to 1e-7 first, in float32)."""
    u1 = np.maximum(np.float32(1e-7), np.asarray(u1, np.float32)).astype(np.float64)
    theta = np.float64(np.float32(6.283185307179586)) * np.asarray(u2, np.float64)
    r = np.sqrt(-2.0 * np.log(u1))
    return r * np.cos(theta), r * np.sin(theta)
