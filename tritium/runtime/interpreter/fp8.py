"""fp8 in the interpreter: exact encode / decode tables written from the format definitions.

    e4m3fn (tl.float8e4nv, f8E4M3FN): S.EEEE.MMM, bias 7, no infinities, NaN = S.1111.111,
        largest finite 448 (0x7E), smallest subnormal 2**-9
    e5m2   (tl.float8e5, f8E5M2):     S.EEEEE.MM, bias 15, IEEE-like: inf = S.11111.00,
        NaN = S.11111.xx (xx != 0), largest finite 57344 (0x7B), smallest subnormal 2**-16

An fp8 value is held as the float32 of its exact value (as bf16 is); memory holds its
byte. `encode` rounds any float64-exact input (fp16 / bf16 / fp32 values) as the GPU's
`cvt.rn.satfinite.{e4m3,e5m2}x2` does: to nearest, ties to the even code, finite values and
infinities beyond the largest finite value saturate to it, NaN -> 0x7F. `encode_rtz` is the
round-toward-zero downcast to e5m2 (upstream's only rtz fp8 conversion): fp16 (rtz) first,
then the upper byte of its bits, exactly what the GPU does.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from xdsl.dialects.builtin import Float8E4M3FNType, Float8E5M2Type

from tritium.errors import TritiumError

# exponent bits, mantissa bits, bias, code of the largest finite magnitude
_FORMATS = {Float8E4M3FNType: (4, 3, 7, 0x7E), Float8E5M2Type: (5, 2, 15, 0x7B)}
NAN_CODE = 0x7F


def _format(elem):
    f = _FORMATS.get(type(elem))
    if f is None:
        raise TritiumError(f"interpreter: fp8 format {elem} is not supported")
    return f


def _value(code: int, ebits: int, mbits: int, bias: int, max_code: int) -> float:
    mag = code & 0x7F
    e, m = mag >> mbits, mag & ((1 << mbits) - 1)
    if mag > max_code:  # e4m3fn: only 0x7F (NaN); e5m2: 0x7C inf, 0x7D-0x7F NaN
        v = np.inf if (ebits == 5 and m == 0) else np.nan
    elif e == 0:
        v = m * 2.0 ** (1 - bias - mbits)
    else:
        v = (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
    return -v if code & 0x80 else v


@cache
def decode_table(cls) -> np.ndarray:
    """float32[256]: the value of every byte of the format."""
    f = _FORMATS[cls]
    return np.array([_value(c, *f) for c in range(256)], np.float32)


def decode(raw, elem) -> np.ndarray:
    _format(elem)
    return decode_table(type(elem))[np.asarray(raw, np.uint8)]


def encode(x, elem, saturate: bool = True) -> np.ndarray:
    """uint8 codes of `x`, rounded to nearest even with saturation (see the docstring);
    `saturate=False` keeps infinities (e5m2's own: storing a value already in the format)."""
    ebits, _, _, max_code = _format(elem)
    table = decode_table(type(elem))[: max_code + 1].astype(np.float64)  # 0 .. max, increasing
    x = np.asarray(x, np.float64)
    a = np.minimum(np.abs(x), table[-1])
    hi = np.clip(np.searchsorted(table, a, side="left"), 0, max_code)
    lo = np.maximum(hi - 1, 0)
    below, above = a - table[lo], table[hi] - a
    take_hi = (above < below) | ((above == below) & (hi % 2 == 0))
    code = np.where(take_hi, hi, lo).astype(np.uint8)
    code = np.where(np.signbit(x), code | np.uint8(0x80), code)
    if not saturate and ebits == 5:
        code = np.where(np.isinf(x), (code & np.uint8(0x80)) | np.uint8(0x7C), code)
    return np.where(np.isnan(x), np.uint8(NAN_CODE), code).astype(np.uint8)


def encode_rtz(x, src_is_fp16: bool) -> np.ndarray:
    """e5m2 codes of fp16 / fp32 values rounded toward zero: fp32 -> fp16 toward zero
    (overflow stays at 65504, as cvt.rz does), then the fp16's upper byte."""
    x = np.asarray(x)
    if not src_is_fp16:
        x = x.astype(np.float32)
        h = x.astype(np.float16)
        over = np.abs(h.astype(np.float32)) > np.abs(x)
        x = np.where(over, np.nextafter(h, np.float16(0)), h)
    return (np.asarray(x, np.float16).view(np.uint16) >> 8).astype(np.uint8)


def round_to(x, elem) -> np.ndarray:
    """float32 values of `x` rounded to the fp8 format (rtne, saturating)."""
    return decode(encode(x, elem), elem)


__all__ = ["NAN_CODE", "decode", "decode_table", "encode", "encode_rtz", "round_to"]
