"""Elementwise semantics of the interpreter (`interpreter/arith.py`, `interpreter/values.py`):
integer wrap-around, C-style and unsigned division, shifts, casts, bf16/fp16, NaN rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.runtime.interpreter_helpers import (
    I32_MAX,
    I32_MIN,
    bf16_bits,
    i32,
    parse_module,
    run_binary,
    run_scalar,
)
from tritium.runtime.interpreter import interpret

RNG = np.random.default_rng(1)


# ------------------------------------------------------------------ integers


def test_i32_arithmetic_wraps():
    a = i32([I32_MAX, I32_MIN, 65536, -5, 123456789])
    b = i32([1, -1, 65536, 7, 1000])

    def want(f):
        return i32([(f(x, y) + 2**31) % 2**32 - 2**31 for x, y in zip(a.tolist(), b.tolist())])

    np.testing.assert_array_equal(run_binary("arith.addi", a, b, "i32"), want(lambda x, y: x + y))
    np.testing.assert_array_equal(run_binary("arith.subi", a, b, "i32"), want(lambda x, y: x - y))
    np.testing.assert_array_equal(run_binary("arith.muli", a, b, "i32"), want(lambda x, y: x * y))


def _c_div(x, y):
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


@pytest.mark.parametrize("ty", ["i8", "i32", "i64"])
def test_signed_division_truncates_toward_zero(ty):
    pairs = [(-7, 2), (7, -2), (-7, -2), (7, 2), (-8, 2), (0, -3), (-1, 5), (100, 7), (-100, 7)]
    dt = {"i8": np.int8, "i32": np.int32, "i64": np.int64}[ty]
    a, b = np.array([p[0] for p in pairs], dt), np.array([p[1] for p in pairs], dt)
    div = run_binary("arith.divsi", a, b, ty)
    rem = run_binary("arith.remsi", a, b, ty)
    floor = run_binary("arith.floordivsi", a, b, ty)
    ceil = run_binary("arith.ceildivsi", a, b, ty)
    for i, (x, y) in enumerate(pairs):
        assert div[i] == _c_div(x, y)
        assert rem[i] == x - y * _c_div(x, y)  # remainder has the dividend's sign
        assert floor[i] == x // y
        assert ceil[i] == -(-x // y)


def test_unsigned_ops_treat_bits_as_unsigned():
    a = i32([-1, -2, 7, I32_MIN, 5])
    b = i32([2, 3, -1, 2, 5])
    ua, ub = a.view(np.uint32).astype(np.int64), b.view(np.uint32).astype(np.int64)
    np.testing.assert_array_equal(run_binary("arith.divui", a, b, "i32"), i32(ua // ub))
    np.testing.assert_array_equal(run_binary("arith.remui", a, b, "i32"), i32(ua % ub))
    np.testing.assert_array_equal(run_binary("arith.maxui", a, b, "i32"), i32(np.maximum(ua, ub)))
    np.testing.assert_array_equal(run_binary("arith.minui", a, b, "i32"), i32(np.minimum(ua, ub)))
    np.testing.assert_array_equal(run_binary("arith.maxsi", a, b, "i32"), np.maximum(a, b))
    np.testing.assert_array_equal(run_binary("arith.minsi", a, b, "i32"), np.minimum(a, b))
    ult = run_binary("arith.cmpi ult,", a, b, "i32", np.bool_, "i1")
    slt = run_binary("arith.cmpi slt,", a, b, "i32", np.bool_, "i1")
    np.testing.assert_array_equal(ult, ua < ub)
    np.testing.assert_array_equal(slt, a < b)
    np.testing.assert_array_equal(run_binary("tt.mulhiui", a, b, "i32"), i32((ua * ub) >> 32))


def test_mulhiui_i64():
    a = np.array([-1, 2**62 + 12345, 3, -(2**63)], np.int64)
    b = np.array([-1, 2**40 + 7, 5, 2], np.int64)
    got = run_binary("tt.mulhiui", a, b, "i64")
    for i in range(len(a)):
        want = (int(a[i]) % 2**64) * (int(b[i]) % 2**64) >> 64
        assert int(got[i]) % 2**64 == want


def test_shifts_and_bitwise():
    a = i32([1, -8, -8, 0x7FFFFFFF, 5, -1, 12])
    b = i32([31, 1, 31, 4, 32, 40, 2])  # amounts >= 32 shift everything out (PTX clamps)
    shl = run_binary("arith.shli", a, b, "i32")
    shrsi = run_binary("arith.shrsi", a, b, "i32")
    shrui = run_binary("arith.shrui", a, b, "i32")
    for i, (x, s) in enumerate(zip(a.tolist(), b.tolist())):
        ux = x % 2**32
        assert shl[i] == i32([(ux << s) % 2**32 if s < 32 else 0])[0]
        assert shrsi[i] == (x >> min(s, 31))
        assert shrui[i] == i32([ux >> s if s < 32 else 0])[0]
    np.testing.assert_array_equal(run_binary("arith.andi", a, b, "i32"), a & b)
    np.testing.assert_array_equal(run_binary("arith.ori", a, b, "i32"), a | b)
    np.testing.assert_array_equal(run_binary("arith.xori", a, b, "i32"), a ^ b)


def test_i8_through_uint8_buffer_wraps():
    raw = np.array([200, 127, 0, 255, 128], np.uint8)  # read as i8: -56, 127, 0, -1, -128
    one = np.ones(5, np.uint8)
    out = run_binary("arith.addi", raw, one, "i8", np.uint8)
    np.testing.assert_array_equal(out.view(np.int8), [-55, -128, 1, 0, -127])


# ------------------------------------------------------------------ casts


def test_integer_casts():
    x8 = np.array([-128, -1, 0, 1, 127], np.int8)
    ext = run_scalar("%y = arith.extsi %x : i8 to i32", x8, "i8", "i32", np.int32)
    np.testing.assert_array_equal(ext, [-128, -1, 0, 1, 127])
    extu = run_scalar("%y = arith.extui %x : i8 to i32", x8, "i8", "i32", np.int32)
    np.testing.assert_array_equal(extu, [128, 255, 0, 1, 127])
    x32 = i32([300, -129, 255, I32_MIN, -1])
    tr = run_scalar("%y = arith.trunci %x : i32 to i8", x32, "i32", "i8", np.int8)
    np.testing.assert_array_equal(tr, [44, 127, -1, 0, -1])
    b = run_scalar("%y = arith.trunci %x : i32 to i1", x32, "i32", "i1", np.bool_)
    np.testing.assert_array_equal(b, [False, True, True, False, True])
    bools = np.array([True, False], np.bool_)
    sx = run_scalar("%y = arith.extsi %x : i1 to i32", bools, "i1", "i32", np.int32)
    np.testing.assert_array_equal(sx, [-1, 0])
    ux = run_scalar("%y = arith.extui %x : i1 to i64", bools, "i1", "i64", np.int64)
    np.testing.assert_array_equal(ux, [1, 0])


def test_tensor_casts_and_remf():
    text = """
module {
  tt.func public @k(%px: !tt.ptr<f32>, %pi: !tt.ptr<i64>, %pf: !tt.ptr<f32>) {
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %p1 = tt.splat %px : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %p2 = tt.addptr %p1, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %x = tt.load %p2 : tensor<8x!tt.ptr<f32>>
    %i = arith.fptosi %x : tensor<8xf32> to tensor<8xi32>
    %w = arith.extsi %i : tensor<8xi32> to tensor<8xi64>
    %q1 = tt.splat %pi : !tt.ptr<i64> -> tensor<8x!tt.ptr<i64>>
    %q2 = tt.addptr %q1, %r : tensor<8x!tt.ptr<i64>>, tensor<8xi32>
    tt.store %q2, %w : tensor<8x!tt.ptr<i64>>
    %f = arith.sitofp %i : tensor<8xi32> to tensor<8xf32>
    %m = arith.remf %x, %f : tensor<8xf32>
    %s1 = tt.splat %pf : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %s2 = tt.addptr %s1, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    tt.store %s2, %m : tensor<8x!tt.ptr<f32>>
    tt.return
  }
}"""
    x = np.float32([-7.5, -2.25, -1.5, 1.5, 2.75, 3.0, 5.5, 100.25])
    wi, rf = np.zeros(8, np.int64), np.zeros(8, np.float32)
    interpret(parse_module(text), (1,), [x, wi, rf])
    np.testing.assert_array_equal(wi, np.trunc(x))
    np.testing.assert_array_equal(rf, np.fmod(x, np.trunc(x)))  # C fmod: dividend's sign


def test_int_float_casts():
    x = i32([-1, 7, I32_MIN, 16777217])
    np.testing.assert_array_equal(
        run_scalar("%y = arith.sitofp %x : i32 to f32", x, "i32", "f32", np.float32),
        np.float32([-1, 7, -(2.0**31), 16777216]),
    )
    np.testing.assert_array_equal(
        run_scalar("%y = arith.uitofp %x : i32 to f32", x, "i32", "f32", np.float32),
        np.float32([2.0**32, 7, 2.0**31, 16777216]),
    )
    f = np.float32([-2.7, 2.7, np.nan, np.inf, -np.inf, 3e9, -3e9, -0.5])
    si = run_scalar("%y = arith.fptosi %x : f32 to i32", f, "f32", "i32", np.int32)
    np.testing.assert_array_equal(si, [-2, 2, 0, I32_MAX, I32_MIN, I32_MAX, I32_MIN, 0])
    ui = run_scalar("%y = arith.fptoui %x : f32 to i32", f, "f32", "i32", np.int32)
    np.testing.assert_array_equal(ui.view(np.uint32), [0, 2, 0, 2**32 - 1, 0, 3e9, 0, 0])


def test_float_casts_and_bitcasts():
    f = np.float32([1.0, 1.00390625, 1.01171875, -3.14159, 65520.0, 1e-8, 2.0**-24 * 1.5])
    bf = run_scalar("%y = arith.truncf %x : f32 to bf16", f, "f32", "bf16", np.uint16)
    np.testing.assert_array_equal(bf, bf16_bits(f))  # ties go to even: 1.0039 -> 1.0
    back = run_scalar("%y = arith.extf %x : bf16 to f32", bf, "bf16", "f32", np.float32)
    np.testing.assert_array_equal(back, (bf.astype(np.uint32) << 16).view(np.float32))
    h = run_scalar("%y = arith.truncf %x : f32 to f16", f, "f32", "f16", np.float16)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(h, f.astype(np.float16))  # 65520 overflows to inf
    rtz = run_scalar(
        "%y = tt.fp_to_fp %x, rounding = rtz : f32 -> f16", f, "f32", "f16", np.float16
    )
    for x, r in zip(f.tolist(), rtz.tolist()):
        assert abs(r) <= abs(x) and math.copysign(1, r) == math.copysign(1, x)
        assert math.isfinite(r)  # 65520 -> 65504, the largest f16
    assert (
        rtz[4] == 65504.0 and rtz[1] == np.float16(1.00390625) and rtz[3] == np.float16(-3.140625)
    )
    bits = run_scalar("%y = arith.bitcast %x : f32 to i32", f, "f32", "i32", np.int32)
    np.testing.assert_array_equal(bits, f.view(np.int32))
    tb = run_scalar("%y = tt.bitcast %x : f32 -> i32", f, "f32", "i32", np.int32)
    np.testing.assert_array_equal(tb, f.view(np.int32))


# ------------------------------------------------------------------ floats


def test_bf16_arithmetic_rounds_after_each_op():
    x = RNG.standard_normal(16).astype(np.float32)
    y = RNG.standard_normal(16).astype(np.float32) * 1e-2
    xb, yb = bf16_bits(x), bf16_bits(y)
    got = run_binary("arith.addf", xb, yb, "bf16")
    xv = (xb.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    yv = (yb.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    np.testing.assert_array_equal(got, bf16_bits(xv + yv))


def test_fp16_arithmetic_in_float16():
    x = (RNG.standard_normal(32) * 100).astype(np.float16)
    y = (RNG.standard_normal(32) * 100).astype(np.float16)
    np.testing.assert_array_equal(run_binary("arith.mulf", x, y, "f16"), x * y)
    np.testing.assert_array_equal(run_binary("arith.divf", x, y, "f16"), x / y)


CMPF = {
    "false": lambda a, b: False, "true": lambda a, b: True,
    "oeq": lambda a, b: a == b, "ogt": lambda a, b: a > b, "oge": lambda a, b: a >= b,
    "olt": lambda a, b: a < b, "ole": lambda a, b: a <= b,
    "one": lambda a, b: not (math.isnan(a) or math.isnan(b)) and a != b,
    "ord": lambda a, b: not (math.isnan(a) or math.isnan(b)),
    "ueq": lambda a, b: math.isnan(a) or math.isnan(b) or a == b,
    "ugt": lambda a, b: math.isnan(a) or math.isnan(b) or a > b,
    "uge": lambda a, b: math.isnan(a) or math.isnan(b) or a >= b,
    "ult": lambda a, b: math.isnan(a) or math.isnan(b) or a < b,
    "ule": lambda a, b: math.isnan(a) or math.isnan(b) or a <= b,
    "une": lambda a, b: math.isnan(a) or math.isnan(b) or a != b,
    "uno": lambda a, b: math.isnan(a) or math.isnan(b),
}  # fmt: skip


@pytest.mark.parametrize("pred", sorted(CMPF))
def test_cmpf_predicates_with_nan(pred):
    vals = [1.0, 2.0, np.nan, -np.inf, 0.0, -0.0]
    a = np.float32([x for x in vals for _ in vals])
    b = np.float32([y for _ in vals for y in vals])
    got = run_binary(f"arith.cmpf {pred},", a, b, "f32", np.bool_, "i1")
    want = [CMPF[pred](float(x), float(y)) for x, y in zip(a, b)]
    np.testing.assert_array_equal(got, want)


def test_nan_ignoring_and_propagating_min_max():
    a = np.float32([1.0, np.nan, np.nan, -2.0])
    b = np.float32([np.nan, 3.0, np.nan, 5.0])
    np.testing.assert_array_equal(run_binary("arith.maxnumf", a, b, "f32"), [1, 3, np.nan, 5])
    np.testing.assert_array_equal(run_binary("arith.minnumf", a, b, "f32"), [1, 3, np.nan, -2])
    np.testing.assert_array_equal(
        run_binary("arith.maximumf", a, b, "f32"), [np.nan, np.nan, np.nan, 5]
    )
    np.testing.assert_array_equal(
        run_binary("arith.minimumf", a, b, "f32"), [np.nan, np.nan, np.nan, -2]
    )


UNARY = {
    "math.exp": np.exp, "math.exp2": np.exp2, "math.log": np.log, "math.log2": np.log2,
    "math.sqrt": np.sqrt, "math.rsqrt": lambda x: 1 / np.sqrt(x), "math.absf": np.abs,
    "math.sin": np.sin, "math.cos": np.cos, "math.tan": np.tan, "math.tanh": np.tanh,
    "math.erf": np.vectorize(math.erf), "math.floor": np.floor, "math.ceil": np.ceil,
    "arith.negf": np.negative, "tt.precise_sqrt": np.sqrt,
}  # fmt: skip


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_float_math(op):
    n = 64
    x = ((RNG.random(n) * 4 + 0.01) * np.where(np.arange(n) % 2, 1, -1)).astype(np.float32)
    if op in ("math.log", "math.log2", "math.sqrt", "math.rsqrt", "tt.precise_sqrt"):
        x = np.abs(x)
    text = f"""
module {{
  tt.func public @k(%pa: !tt.ptr<f32>, %pc: !tt.ptr<f32>) {{
    %r = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32>
    %pa1 = tt.splat %pa : !tt.ptr<f32> -> tensor<{n}x!tt.ptr<f32>>
    %pa2 = tt.addptr %pa1, %r : tensor<{n}x!tt.ptr<f32>>, tensor<{n}xi32>
    %pc1 = tt.splat %pc : !tt.ptr<f32> -> tensor<{n}x!tt.ptr<f32>>
    %pc2 = tt.addptr %pc1, %r : tensor<{n}x!tt.ptr<f32>>, tensor<{n}xi32>
    %a = tt.load %pa2 : tensor<{n}x!tt.ptr<f32>>
    %c = {op} %a : tensor<{n}xf32>
    tt.store %pc2, %c : tensor<{n}x!tt.ptr<f32>>
    tt.return
  }}
}}"""
    out = np.full(n, np.nan, np.float32)
    interpret(parse_module(text), (1,), [x, out])
    np.testing.assert_allclose(out, UNARY[op](x.astype(np.float64)), rtol=1e-6, atol=1e-7)


def test_fma_powf_divf():
    a = np.float32([1.5, 2.0, 3.0, 0.25])
    b = np.float32([2.0, -3.0, 0.5, 8.0])
    np.testing.assert_allclose(
        run_binary("math.powf", a, b, "f32"), a.astype(np.float64) ** b, rtol=1e-6
    )
    np.testing.assert_array_equal(run_binary("arith.divf", a, b, "f32"), a / b)
    np.testing.assert_array_equal(run_binary("tt.precise_divf", a, b, "f32"), a / b)
    body = "%m = arith.constant -1.000000e+00 : f32\n    %y = math.fma %x, %x, %m : f32"
    got = run_scalar(body, np.float32([1 + 2**-12]), "f32", "f32", np.float32)
    assert got[0] == 2**-11 + 2**-24  # fused: x*x alone would round the 2**-24 away
