"""Triton's random numbers in numpy, for the fuzzer's model: written from the algorithm
(Philox-4x32-10, Salmon et al., SC'11) and upstream Triton's documented mapping, not from
tritium's frontend (the model must stay independent of what it checks).

    words = philox(seed, offsets)      # four uint32 arrays for a scalar seed, int32 offsets
    randint(seed, offsets)             # the first word (uint32)
    rand(seed, offsets)                # float32 in [0, 1): exact, bit for bit
    randn(seed, offsets)               # float32 N(0, 1) by Box-Muller: float64 here, so
                                       # within a bound (`RANDN_BOUND`) of fp32 libm results

Key: the seed widened to uint64 (sign-extended), its low and high words; counter: the
offset's bits as uint32, then 0, 0, 0. Ten rounds. uint32 -> float: the word read as
int32, negatives folded to -x - 1, converted to float32 (rounding to nearest) and
multiplied by float32(4.6566127342e-10).
"""

from __future__ import annotations

import numpy as np

ROUND_A, ROUND_B = 0xD2511F53, 0xCD9E8D57
KEY_A, KEY_B = 0x9E3779B9, 0xBB67AE85
MASK = 0xFFFFFFFF
SCALE = np.float32(4.6566127342e-10)


def _mul(a: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """(high, low) 32-bit words of a * m for uint32 `a`."""
    wide = a.astype(np.uint64) * np.uint64(m)
    return (wide >> np.uint64(32)).astype(np.uint32), (wide & np.uint64(MASK)).astype(np.uint32)


def philox(seed: int, offsets, rounds: int = 10) -> tuple:
    seed &= (1 << 64) - 1  # a negative seed is sign-extended to 64 bits
    k0, k1 = seed & MASK, seed >> 32
    c0 = np.asarray(offsets).astype(np.int32).view(np.uint32)
    zero = np.zeros_like(c0)
    c1, c2, c3 = zero, zero, zero
    for _ in range(rounds):
        hi_b, lo_b = _mul(c2, ROUND_B)
        hi_a, lo_a = _mul(c0, ROUND_A)
        c0, c1, c2, c3 = hi_b ^ c1 ^ np.uint32(k0), lo_b, hi_a ^ c3 ^ np.uint32(k1), lo_a
        k0, k1 = (k0 + KEY_A) & MASK, (k1 + KEY_B) & MASK
    return c0, c1, c2, c3


def randint(seed: int, offsets) -> np.ndarray:
    return philox(seed, offsets)[0]


def uniform(words: np.ndarray) -> np.ndarray:
    x = words.view(np.int32)
    x = np.where(x < 0, -(x.astype(np.int64)) - 1, x).astype(np.int32)
    return (x.astype(np.float32) * SCALE).astype(np.float32)


def rand(seed: int, offsets) -> np.ndarray:
    return uniform(randint(seed, offsets))


def randn(seed: int, offsets) -> np.ndarray:
    w = philox(seed, offsets)
    u1 = np.maximum(np.float32(1.0e-7), uniform(w[0])).astype(np.float64)
    u2 = uniform(w[1]).astype(np.float64)
    theta = (np.float32(6.283185307179586) * u2.astype(np.float32)).astype(np.float64)
    return (np.sqrt(-2.0 * np.log(u1)) * np.cos(theta)).astype(np.float32)


def randn_bound(v: np.ndarray) -> np.ndarray:
    """How far an fp32 Box-Muller (log, sqrt, cos in fp32, each a few ulps) may be from
    `randn`'s value: the radius (|v| / |cos|, at most 5.7) carries relative error and
    cos(theta) absolute error, both a few 2**-24."""
    return (np.abs(v.astype(np.float64)) + 6.0) * 2.0**-20
