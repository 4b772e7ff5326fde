"""Mathematical constants to 45 digits, split into a head and a tail for exact range
reductions, and the bits of 2/pi for Payne-Hanek (computed here with integers)."""

from __future__ import annotations

from fractions import Fraction

LN2 = Fraction("0.693147180559945309417232121458176568075500134")
LOG2E = Fraction("1.44269504088896340735992468100189213742664595")
LN10 = Fraction("2.30258509299404568401799145468436420760110149")
LOG2_10 = Fraction("3.32192809488736234787031942948939017586483139")
LOG10_2 = Fraction("0.301029995663981195213738894724493026768189881")
LOG10_E = Fraction("0.434294481903251827651128918916605082294397005")
PI = Fraction("3.14159265358979323846264338327950288419716940")


def round_bits(v: Fraction, bits: int) -> float:
    """`v` rounded to `bits` significant bits (nearest)."""
    if v == 0:
        return 0.0
    e = (abs(v.numerator).bit_length() - abs(v.denominator).bit_length()) - bits
    while abs(v) / Fraction(2) ** e >= 2**bits:
        e += 1
    while abs(v) / Fraction(2) ** e < 2 ** (bits - 1):
        e -= 1
    return float(round(v / Fraction(2) ** e) * Fraction(2) ** e)


def split(v: Fraction, head_bits: int, tail_bits: int = 53) -> tuple[float, float]:
    """(hi, lo): hi = v to `head_bits` bits (so k * hi is exact for small integers k),
    lo = the rest to `tail_bits` bits."""
    hi = round_bits(v, head_bits)
    return hi, round_bits(v - Fraction(hi), tail_bits)


def two_over_pi_bits(n: int) -> int:
    """floor(2/pi * 2^n): the first n bits of 2/pi after the binary point (Machin's
    formula in fixed point, with guard bits)."""
    g = n + 64
    one = 1 << g

    def arctan_inv(k: int) -> int:  # arctan(1/k) * 2^g
        total, term, sign, i = 0, one // k, 1, 1
        while term:
            total += sign * (term // i)
            term //= k * k
            sign, i = -sign, i + 2
        return total

    pi = 16 * arctan_inv(5) - 4 * arctan_inv(239)  # pi * 2^g
    return ((2 << (2 * g)) // pi) >> (g - n)
