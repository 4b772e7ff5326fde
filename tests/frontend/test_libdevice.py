"""The libdevice namespace (`tl.extra.libdevice`, `tl.extra.cuda.libdevice`): upstream's
names and signatures, the TTIR each call becomes (`tt.extern_elementwise` with the
libdevice symbol), dispatch on dtypes, errors, and results in the interpreter against
numpy (the GPU: tests/codegen/test_gpu_libdevice.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tests.codegen.libdevice_kernels import kernel, run, signature
from tritium.errors import CompilationError, NotSupportedError
from tritium.frontend.libdevice import LIBDEVICE_ONLY, SIGNATURES
from tritium.language.extra import libdevice
from tritium.language.extra.cuda import libdevice as cuda_libdevice


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")


def test_one_implementation_under_both_names():
    assert tl.extra.libdevice is libdevice and tl.extra.cuda.libdevice is cuda_libdevice
    for name in SIGNATURES:
        assert getattr(libdevice, name) is getattr(cuda_libdevice, name)
    # upstream 3.6's CUDA libdevice module, by name (plus fmin / fmax)
    for name in ("tanh", "erf", "erfc", "pow", "log1p", "expm1", "isnan", "isinf", "round",
                 "rint", "nearbyint", "llrint", "div_rn", "div_rz", "fast_expf", "fast_dividef",
                 "double2float_rd", "float_as_int", "byte_perm", "lgamma", "j0", "isfinited"):  # fmt: skip
        assert callable(getattr(libdevice, name)), name


def _ttir(names, args, ret="fp32"):
    k = kernel(tuple(names), len(args))
    return tritium.compile(k, signature(args, ret), {"N": 16, "BLOCK": 16}, stop="ttir").asm["ttir"]


def test_ttir_names_the_symbol_by_dtype():
    assert 'symbol = "__nv_tanhf"' in _ttir(["tanh"], ("fp32",))
    assert 'symbol = "__nv_tanh"' in _ttir(["tanh"], ("fp64",), "fp64")
    assert 'symbol = "__nv_powif"' in _ttir(["pow"], ("fp32", "int32"))
    assert 'symbol = "__nv_pow"' in _ttir(["pow"], ("fp32", "fp64"), "fp64")  # promoted
    text = _ttir(["erf"], ("fp16",), "fp16")  # via fp32, rounded back
    assert 'symbol = "__nv_erff"' in text and "arith.extf" in text and "arith.truncf" in text
    assert "tt.extern_elementwise" in _ttir(["isnan"], ("fp32",), "int32")


def test_functions_only_libdevice_has_are_upstreams_ttir():
    assert all(name in SIGNATURES for name in LIBDEVICE_ONLY)
    assert 'symbol = "__nv_lgammaf"' in _ttir(["lgamma"], ("fp32",))
    assert 'symbol = "__nv_jn"' in _ttir(["jn"], ("int32", "fp64"), "fp64")


def test_wrong_dtype_says_what_it_takes():
    with pytest.raises(CompilationError, match=r"libdevice.clz takes \(int32\) or \(int64\)"):
        _ttir(["clz"], ("fp32",), "int32")


FLOAT_CASES = {  # name: (reference, domain)
    "tanh": (np.tanh, (-10, 10)), "erf": (np.vectorize(math.erf), (-4, 4)),
    "erfc": (np.vectorize(math.erfc), (-3, 9)), "exp": (np.exp, (-20, 20)),
    "expm1": (np.expm1, (-3, 3)), "log1p": (np.log1p, (-0.9, 10)), "log10": (np.log10, (0.01, 1e6)),
    "sinh": (np.sinh, (-5, 5)), "acosh": (np.arccosh, (1, 50)), "atan": (np.arctan, (-9, 9)),
    "cbrt": (np.cbrt, (-100, 100)), "round": (lambda x: np.trunc(x + np.copysign(0.5, x)), (-9, 9)),
    "rint": (np.rint, (-9, 9)), "trunc": (np.trunc, (-9, 9)), "exp10": (lambda x: 10.0**x, (-5, 5)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.01, 100)), "fast_expf": (np.exp, (-5, 5)),
}  # fmt: skip


@pytest.mark.parametrize("dtype", ["fp32", "fp64"])
def test_unary_functions_in_the_interpreter(interp, dtype):
    names = sorted(n for n in FLOAT_CASES if not (dtype == "fp64" and n.startswith("fast_")))
    rng = np.random.default_rng(0)
    dt = np.float32 if dtype == "fp32" else np.float64
    for name in names:
        ref, (lo, hi) = FLOAT_CASES[name]
        x = rng.uniform(lo, hi, 256).astype(dt)
        got = run([name], [x], dtype)[0]
        np.testing.assert_allclose(got, ref(x.astype(np.float64)), rtol=2e-6 if dtype == "fp32" else 1e-14, err_msg=name)


def test_special_functions_in_the_interpreter(interp):
    """The functions only NVIDIA's libdevice has on the GPU (runtime/libdevice_special.py),
    against known values and identities (no scipy here)."""
    x = np.array([0.5, 1.0, 2.5, 7.0, -0.5, -3.5, 30.0, 0.001], np.float64)
    got = run(["lgamma", "tgamma", "normcdf", "erfcx"], [x], "fp64")
    lg = [math.lgamma(v) for v in x]
    np.testing.assert_allclose(got[0], lg, rtol=1e-14)
    np.testing.assert_allclose(got[1], [math.gamma(v) for v in x], rtol=1e-14)
    np.testing.assert_allclose(got[2], [0.5 * math.erfc(-v / math.sqrt(2)) for v in x], rtol=1e-14)
    np.testing.assert_allclose(got[3][[1, 7]], [0.42758357615580705, math.exp(1e-6) * math.erfc(1e-3)], rtol=1e-13)
    np.testing.assert_allclose(got[3][6], 1 / (30 * math.sqrt(math.pi)) * (1 - 1 / 1800), rtol=1e-6)
    p = np.array([1e-12, 0.1, 0.3, 0.5, 0.9, 0.999999, -0.7, 0.0], np.float64)
    inv = run(["erfinv", "erfcinv", "normcdfinv"], [p], "fp64")
    np.testing.assert_allclose([math.erf(v) for v in inv[0]], p, rtol=1e-14, atol=1e-300)
    ok = p > 0
    np.testing.assert_allclose([math.erfc(v) for v in inv[1][ok]], p[ok], rtol=1e-13)
    np.testing.assert_allclose([0.5 * math.erfc(-v / math.sqrt(2)) for v in inv[2][ok]], p[ok], rtol=1e-12)
    edges = np.array([1.0, -1.0, 2.0, 0.0], np.float32)
    e = run(["erfinv", "normcdfinv", "lgamma", "tgamma"], [edges], "fp32")
    assert e[0][0] == np.inf and e[0][1] == -np.inf and np.isnan(e[0][2]) and e[0][3] == 0
    assert e[1][0] == np.inf and np.isnan(e[1][1]) and np.isnan(e[1][2]) and e[1][3] == -np.inf
    assert e[2][3] == np.inf and e[3][3] == np.inf  # the pole at 0 (lgamma +inf, tgamma(+0) +inf)
    # Bessel functions of the first kind: values from Abramowitz & Stegun's tables
    b = np.array([1.0, 2.0, 10.0, 30.0, -1.0, 0.0, 100.0, 1000.5], np.float64)
    j = run(["j0", "j1", "cyl_bessel_i0", "cyl_bessel_i1"], [b], "fp64")
    np.testing.assert_allclose(j[0][:4], [0.7651976865579666, 0.2238907791412357,
                                          -0.2459357644513483, -0.0863679835810403], rtol=1e-12)
    np.testing.assert_allclose(j[1][[0, 4, 5]], [0.4400505857449335, -0.4400505857449335, 0.0], atol=1e-15)
    np.testing.assert_allclose(j[2][:2], [1.2660658777520082, 2.2795853023360673], rtol=1e-13)
    np.testing.assert_allclose(j[3][[0, 4]], [0.5651591039924851, -0.5651591039924851], rtol=1e-13)
    n = np.array([0, 2, 20, 5], np.int32)
    jn = run(["jn"], [n, np.array([1.0, 1.0, 1.0, 100.0], np.float64)], "fp64")[0]
    np.testing.assert_allclose(jn, [0.7651976865579666, 0.1149034849319005,
                                    3.873503008524658e-25, -0.07419573696451459], rtol=1e-11)


def test_the_interpreter_names_what_it_cannot_compute(interp):
    with pytest.raises(NotSupportedError, match="__nv_y0f.*TRITIUM_LIBDEVICE") as e:
        run(["y0"], [np.ones(16, np.float32)], "fp32")
    assert ".py:" in str(e.value)


def test_binary_functions_and_broadcast_scalars(interp):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.1, 5, 128).astype(np.float32)
    y = rng.uniform(-3, 3, 128).astype(np.float32)
    got = run(["pow", "atan2", "hypot", "fmod", "copysign", "fdim"], [x, y], "fp32")
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    want = [np.power(x64, y64), np.arctan2(x64, y64), np.hypot(x64, y64), np.fmod(x64, y64),
            np.copysign(x64, y64), np.where(x64 > y64, x64 - y64, 0.0)]  # fmt: skip
    np.testing.assert_allclose(got, np.array(want), rtol=2e-6)


def test_predicates_and_integer_results(interp):
    x = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 3.5] * 2, np.float32)
    got = run(["isnan", "isinf", "finitef", "signbit"], [x], "int32")
    np.testing.assert_array_equal(got[0], np.isnan(x))
    np.testing.assert_array_equal(got[1], np.isinf(x))
    np.testing.assert_array_equal(got[2], np.isfinite(x))
    np.testing.assert_array_equal(got[3], np.signbit(x))
    y = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1e10, -7.2, 3.7] * 2, np.float32)
    np.testing.assert_array_equal(run(["llrint"], [y], "int64")[0], np.rint(y).astype(np.int64))


def test_rounding_modes_and_conversions(interp):
    x = np.array([1.0, -1.0, 2.0, 1e-3, 3.0, -7.0, 1e30, 5.0], np.float32)
    y = np.array([3.0, 3.0, 3.0, 7.0, -11.0, 3.0, 7e-6, 0.1], np.float32)
    got = run(["div_rn", "div_rz", "div_rd", "div_ru"], [x, y], "fp32")
    q = x.astype(np.float64) / y.astype(np.float64)
    rn = (x / y).astype(np.float32)
    assert np.array_equal(got[0], rn)
    for row, mode in zip(got[1:], ("rz", "rd", "ru")):
        exact = row.astype(np.float64) == q
        below = row.astype(np.float64) < q
        if mode == "rd":
            assert np.all(exact | below)
        elif mode == "ru":
            assert np.all(exact | ~below)
        else:
            assert np.all(exact | (np.abs(row.astype(np.float64)) < np.abs(q)))
        assert np.all(np.abs(row.astype(np.float64) - q) <= np.abs(np.spacing(row)))
    d = np.array([1 / 3, -1 / 3, 2.0**-149 / 3, 1e300, 0.1, -0.1, 2.5, -2.5], np.float64)
    down, up = run(["double2float_rd", "double2float_ru"], [d], "fp32")
    assert float(down[0]) < 1 / 3 < float(up[0]) and np.nextafter(down[0], np.float32(1)) == up[0]
    assert down[2] == 0 and up[2] == np.float32(2.0**-149)
    ints = run(["double2int_rn", "double2int_rz", "double2int_rd", "double2int_ru"], [d], "int32")
    np.testing.assert_array_equal(ints[:, 6:], [[2, -2], [2, -2], [2, -3], [3, -2]])
    assert ints[0][3] == 2**31 - 1  # saturates


def test_integer_functions(interp):
    rng = np.random.default_rng(2)
    a = rng.integers(-(2**31), 2**31, 64, dtype=np.int64).astype(np.int32)
    b = rng.integers(-(2**31), 2**31, 64, dtype=np.int64).astype(np.int32)
    got = run(["mulhi", "hadd", "rhadd"], [a, b], "int32")
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    np.testing.assert_array_equal(got[0], (a64 * b64) >> 32)
    np.testing.assert_array_equal(got[1], (a64 + b64) >> 1)
    np.testing.assert_array_equal(got[2], (a64 + b64 + 1) >> 1)
    got = run(["clz", "popc", "ffs", "brev"], [a], "int32")
    u = a.view(np.uint32).astype(np.int64)
    np.testing.assert_array_equal(got[0], [32 - int(v).bit_length() for v in u])
    np.testing.assert_array_equal(got[1], [bin(int(v)).count("1") for v in u])
    np.testing.assert_array_equal(got[2], [(int(v) & -int(v)).bit_length() for v in u])
    np.testing.assert_array_equal(got[3].view(np.uint32), [int(f"{int(v):032b}"[::-1], 2) for v in u])


def test_fp16_is_computed_in_fp32(interp):
    x = np.linspace(-3, 3, 64).astype(np.float16)
    got = run(["tanh", "erf"], [x], "fp16")
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(got[0], np.tanh(x64).astype(np.float16), rtol=1e-3)
    np.testing.assert_allclose(got[1], np.vectorize(math.erf)(x64).astype(np.float16), rtol=1e-3)
