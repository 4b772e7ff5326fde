"""libdevice functions and tl.math on the GPU against numpy / mpmath, f32 and f64, over
random and edge inputs, with the ulp bounds the host measurements state
(test_libm_accuracy.BOUNDS); the functions with a rounding mode, the conversions and the
integer functions must equal the interpreter's exact emulation bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from tests.codegen import test_libm_accuracy as acc
from tests.codegen.libdevice_kernels import run
from tests.codegen.libm_host import ulps

pytestmark = pytest.mark.gpu
N = 4096


def _inputs(name: str, is64: bool):
    rng = np.random.default_rng(7)
    dt = np.float64 if is64 else np.float32
    xs = acc._domain(name, rng, N, is64)
    xs = xs if isinstance(xs, tuple) else (xs,)
    with np.errstate(all="ignore"):
        xs = [np.asarray(a, dt) for a in xs]
    edge = np.array(acc.SPECIAL + [np.finfo(dt).smallest_subnormal, np.finfo(dt).max], dt)
    out = []
    for k, a in enumerate(xs):
        a = np.concatenate([np.roll(edge, k), a])[:N]
        out.append(np.ascontiguousarray(a))
    return out


@pytest.mark.parametrize("dtype", ["fp32", "fp64"])
@pytest.mark.parametrize("name", acc.NAMES)
def test_accuracy_on_the_gpu(name, dtype):
    is64 = dtype == "fp64"
    xs = _inputs(name, is64)
    got = run([name], xs, dtype)[0]
    wide = [a.astype(np.float64) for a in xs]
    finite = np.all([np.isfinite(a) for a in wide], axis=0)
    wide_f = [a[finite] for a in wide]
    ref = acc._mp_ref(name, *wide_f) if is64 else acc._np_ref(name, *wide_f)
    err = ulps(got[finite], ref, np.float64 if is64 else np.float32)
    nan_ok = np.isnan(ref[0] if is64 else ref) & np.isnan(got[finite])
    err = np.where(nan_ok, 0.0, err)
    bound = acc.BOUNDS[name][1 if is64 else 0]
    assert np.nanmax(err) <= bound, (name, dtype, float(np.nanmax(err)))
    # non-finite inputs: NaN, infinities and zeros as numpy says (IEEE / C99)
    with np.errstate(all="ignore"):
        want = np.asarray(acc._np_ref(name, *[a[~finite] for a in wide])).astype(got.dtype)
    g = got[~finite]
    assert np.array_equal(np.isnan(g), np.isnan(want)), (name, dtype)
    same = ~np.isnan(want)
    assert np.array_equal(g[same], want[same]), (name, dtype)


def _both(names, xs, ret, monkeypatch):
    gpu = run(names, xs, ret)
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    ref = run(names, xs, ret)
    monkeypatch.delenv("TRITIUM_INTERPRET")
    return gpu, ref


@pytest.mark.parametrize("dtype", ["fp32", "fp64"])
def test_rounding_modes_match_the_exact_emulation(dtype, monkeypatch):
    rng = np.random.default_rng(8)
    dt = np.float32 if dtype == "fp32" else np.float64
    x = (np.exp2(rng.uniform(-40, 40, 512)) * rng.choice([-1, 1], 512)).astype(dt)
    y = (np.exp2(rng.uniform(-40, 40, 512)) * rng.choice([-1, 1], 512)).astype(dt)
    names = [f"{op}_{m}" for op in ("add", "sub", "mul", "div") for m in ("rn", "rz", "rd", "ru")]
    gpu, ref = _both(names, [x, y], dtype, monkeypatch)
    np.testing.assert_array_equal(gpu, ref)
    names = [f"{op}_{m}" for op in ("rcp", "sqrt") for m in ("rn", "rz", "rd", "ru")]
    gpu, ref = _both(names, [np.abs(x)], dtype, monkeypatch)
    np.testing.assert_array_equal(gpu, ref)
    names = [f"fma_{m}" for m in ("rn", "rz", "rd", "ru")]
    gpu, ref = _both(names, [x, y, rng.permutation(x)], dtype, monkeypatch)
    np.testing.assert_array_equal(gpu, ref)


def test_conversions_match_the_exact_emulation(monkeypatch):
    rng = np.random.default_rng(9)
    d = np.concatenate([rng.uniform(-3e9, 3e9, 256), rng.standard_normal(256) * 100])
    modes = ("rn", "rz", "rd", "ru")
    for names, ret in (([f"double2float_{m}" for m in modes], "fp32"),
                       ([f"double2int_{m}" for m in modes], "int32"),
                       ([f"double2ll_{m}" for m in modes], "int64")):  # fmt: skip
        gpu, ref = _both(names, [d], ret, monkeypatch)
        np.testing.assert_array_equal(gpu, ref)
    i64 = rng.integers(-(2**62), 2**62, 512, dtype=np.int64)
    gpu, ref = _both([f"ll2float_{m}" for m in modes], [i64], "fp32", monkeypatch)
    np.testing.assert_array_equal(gpu, ref)
    i32 = rng.integers(-(2**31), 2**31, 512, dtype=np.int64).astype(np.int32)
    gpu, ref = _both([f"int2float_{m}" for m in modes], [i32], "fp32", monkeypatch)
    np.testing.assert_array_equal(gpu, ref)


def test_integer_functions_match_the_interpreter(monkeypatch):
    rng = np.random.default_rng(10)
    a = rng.integers(-(2**31), 2**31, 512, dtype=np.int64).astype(np.int32)
    b = rng.integers(-(2**31), 2**31, 512, dtype=np.int64).astype(np.int32)
    gpu, ref = _both(["mulhi", "mul24", "hadd", "rhadd"], [a, b], "int32", monkeypatch)
    np.testing.assert_array_equal(gpu, ref)
    gpu, ref = _both(["clz", "popc", "ffs", "brev", "abs"], [a], "int32", monkeypatch)
    np.testing.assert_array_equal(gpu, ref)
    gpu, ref = _both(["byte_perm"], [a, b, a & 0x7777], "int32", monkeypatch)
    np.testing.assert_array_equal(gpu, ref)


def test_predicates_and_fast_functions(monkeypatch):
    x = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 3.5] * 64, np.float32)
    gpu, ref = _both(["isnan", "isinf", "finitef", "signbit"], [x], "int32", monkeypatch)
    np.testing.assert_array_equal(gpu, ref)
    y = np.linspace(0.5, 4, 512).astype(np.float32)
    gpu, ref = _both(["fast_expf", "fast_logf", "fast_sinf", "fast_cosf"], [y], "fp32", monkeypatch)
    np.testing.assert_allclose(gpu, ref, rtol=2e-5, atol=2e-6)  # approximate instructions
