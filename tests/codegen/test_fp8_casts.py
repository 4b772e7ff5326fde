"""fp8 casts (tl.float8e4nv, tl.float8e5): the interpreter's rounding against a float64
reference written from the format definitions, the PTX conversions for sm_89, located
errors for what no target has, and `tritium.reinterpret`."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tests.codegen.fp8_cast_kernels import TL, cast_inputs, fp8_cast_kernel, run_casts, same_codes
from tests.codegen.lowp_dot_kernels import decode
from tritium.codegen import tools
from tritium.runtime.array_kinds import element_type


def nearest_even_saturating(x: np.ndarray, f8: str) -> np.ndarray:
    """The expected codes, by brute force over all 256 codes: nearest value, ties to the
    even code, |x| past the largest finite value (inf included) -> the largest, NaN -> NaN."""
    table = decode(np.arange(256, dtype=np.uint8), f8)
    finite = np.isfinite(table)
    top = np.max(table[finite])
    xs = np.clip(x.astype(np.float64), -top, top)
    out = np.zeros(x.shape, np.uint8)
    for i, v in enumerate(xs):
        if np.isnan(v):
            out[i] = 0x7F
            continue
        dist = np.where(finite, np.abs(table - v), np.inf)
        best = np.flatnonzero(dist == dist.min())
        best = best[np.signbit(table[best]) == np.signbit(v)] if len(best) > 1 else best
        even = best[best % 2 == 0]
        out[i] = (even if len(even) else best)[0]
    return out


@pytest.mark.parametrize("src", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("f8", ["fp8e4nv", "fp8e5"])
def test_interpreter_rounds_to_nearest_even_with_saturation(monkeypatch, src, f8):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    x = cast_inputs(np.random.default_rng(1), src, n=512)
    codes, wide = run_casts(x, src, f8)
    want = nearest_even_saturating(x, f8)
    ok = same_codes(codes, want, f8)
    assert ok.all(), list(zip(x[~ok][:8], codes[~ok][:8], want[~ok][:8]))
    np.testing.assert_array_equal(wide, decode(codes, f8).astype(np.float32))  # exact upcast


def test_interpreter_rtz_to_e5m2_truncates_the_fp16(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    x = np.array([1.0, 1.2, 1.49, -1.49, 1e9, -np.inf, 65504.0, 2.0**-17, 0.3], np.float32)
    codes, _ = run_casts(x, "fp32", "fp8e5", rounding="rtz")
    v = decode(codes, "fp8e5")
    assert np.all(np.abs(v) <= np.abs(x.astype(np.float64)) + 0.0)  # toward zero
    np.testing.assert_array_equal(v[:4], [1.0, 1.0, 1.25, -1.25])
    assert v[4] == 57344.0 and v[5] == -np.inf and v[6] == 57344.0  # rz overflow: the max


@pytest.mark.parametrize("src", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("f8,fmt", [("fp8e4nv", "e4m3"), ("fp8e5", "e5m2")])
def test_ptx_conversions(ptxas, src, f8, fmt):
    sig = f"*fp32:16,*{f8}:16,*fp32:16,i32"
    consts = dict(SRC=TL[src], F8=TL[f8], ROUNDING=None, BLOCK=512)
    ptx = tritium.compile(fp8_cast_kernel, signature=sig, constexprs=consts, stop="ptx").asm["ptx"]
    down = f"cvt.rn.satfinite.{fmt}x2.{'f16x2' if src == 'fp16' else 'f32'}"
    assert down in ptx and f"cvt.rn.f16x2.{fmt}x2" in ptx and ".local" not in ptx
    assert tools.ptxas(ptx, "sm_89")[:4] == b"\x7fELF"
    assert tools.ptxas(ptx, "sm_90")[:4] == b"\x7fELF"


def test_rtz_ptx_and_e4m3_rtz_error(ptxas):
    sig = "*fp32:16,*fp8e5:16,*fp32:16,i32"
    consts = dict(SRC=tl.float32, F8=tl.float8e5, ROUNDING="rtz", BLOCK=256)
    ptx = tritium.compile(fp8_cast_kernel, signature=sig, constexprs=consts, stop="ptx").asm["ptx"]
    assert "cvt.rz.f16.f32" in ptx and "satfinite" not in ptx
    consts["F8"] = tl.float8e4nv
    with pytest.raises(tritium.NotSupportedError, match="toward zero"):
        tritium.compile(fp8_cast_kernel, signature=sig.replace("fp8e5", "fp8e4nv"),
                        constexprs=consts, stop="ptx")  # fmt: skip


def test_fp8_casts_before_sm89_are_located_errors():
    sig = "*fp32:16,*fp8e5:16,*fp32:16,i32"
    consts = dict(SRC=tl.float32, F8=tl.float8e5, ROUNDING=None, BLOCK=256)
    with pytest.raises(
        tritium.NotSupportedError, match=r"fp8_cast_kernels.py:\d+:\d+: error: .*sm_89"
    ):
        tritium.compile(fp8_cast_kernel, signature=sig, constexprs=consts, arch="sm_86", stop="ptx")


@tritium.jit
def _fp8_kernel(x_ptr, y_ptr, OP: tl.constexpr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    if OP == "add":
        x = x + x
    elif OP == "lit":
        x = x * 2
    elif OP == "mixed":
        x = x + tl.load(y_ptr + offs)
    tl.store(x_ptr + offs, x)


@pytest.mark.parametrize("op", ["add", "lit"])
def test_fp8_arithmetic_is_a_located_error(op):
    with pytest.raises(
        tritium.CompilationError,
        match=r"test_fp8_casts.py:\d+:\d+: error: no arithmetic on fp8e4nv",
    ):
        tritium.compile(
            _fp8_kernel, signature="*fp8e4nv,*fp8e4nv", constexprs={"OP": op}, stop="ttir"
        )


def test_two_fp8_formats_meet_in_fp16():
    ttir = tritium.compile(
        _fp8_kernel, signature="*fp8e4nv,*fp8e5", constexprs={"OP": "mixed"}, stop="ttir"
    ).asm["ttir"]
    assert "tt.fp_to_fp %x_2 : tensor<16xf8E4M3FN> -> tensor<16xf16>" in ttir
    assert "tt.fp_to_fp %x_5 : tensor<16xf8E5M2> -> tensor<16xf16>" in ttir
    assert "arith.addf %x_6, %x_7 : tensor<16xf16>" in ttir
    assert "rounding = rtne : tensor<16xf16> -> tensor<16xf8E4M3FN>" in ttir  # the store


@pytest.mark.parametrize("name", ["fp8e4b15", "fp8e4b8", "fp8e5b16"])
def test_other_fp8_formats_are_rejected_with_a_location(name):
    with pytest.raises(tritium.CompilationError, match=f"{name} is not supported"):
        tritium.compile(
            _fp8_kernel, signature=f"*{name},*{name}", constexprs={"OP": "copy"}, stop="ttir"
        )


def test_reinterpret():
    codes = np.arange(8, dtype=np.uint8)
    view = tritium.reinterpret(codes, tl.float8e5)
    assert isinstance(view, np.ndarray) and view._tritium_dtype == "float8_e5m2"
    assert np.shares_memory(view, codes) and view[2:]._tritium_dtype == "float8_e5m2"
    assert element_type(view) == "fp8e5" and element_type(codes) == "u8"
    with pytest.raises(tritium.ArgumentError, match="cannot be read as fp8e4nv"):
        tritium.reinterpret(np.zeros(4, np.float16), tl.float8e4nv)
    with pytest.raises(tritium.ArgumentError, match="tl scalar dtype"):
        tritium.reinterpret(codes, "fp8e5")


def test_reinterpreted_array_copies_in_and_out(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    x = np.array([0.5, -3.0, 448.0, 1e4], np.float32)
    codes, wide = run_casts(x, "fp32", "fp8e4nv")
    np.testing.assert_array_equal(codes, [0x30, 0xC4, 0x7E, 0x7E])
    np.testing.assert_array_equal(wide, [0.5, -3.0, 448.0, 448.0])


@tritium.jit
def _widen_kernel(x_ptr, h_ptr, b_ptr, F8: tl.constexpr):
    offs = tl.arange(0, 256)
    y = tl.load(x_ptr + offs).to(F8)
    tl.store(h_ptr + offs, y.to(tl.float16))
    tl.store(b_ptr + offs, y.to(tl.bfloat16))


@pytest.mark.parametrize("f8,fmt", [("fp8e4nv", "e4m3"), ("fp8e5", "e5m2")])
def test_fp8_to_fp16_and_bf16_ptx(ptxas, f8, fmt):
    ptx = tritium.compile(
        _widen_kernel, signature="*fp32:16,*fp16:16,*bf16:16", constexprs={"F8": TL[f8]}, stop="ptx"
    ).asm["ptx"]
    assert f"cvt.rn.f16x2.{fmt}x2" in ptx and "cvt.rn.bf16x2.f32" in ptx and ".local" not in ptx
    assert tools.ptxas(ptx, "sm_89")[:4] == b"\x7fELF"


def test_fp8_to_fp16_and_bf16_in_the_interpreter(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    x = np.linspace(-500, 500, 256).astype(np.float32)
    h = np.zeros(256, np.float16)
    b = np.zeros(256, np.uint16)
    _widen_kernel[(1,)](x, h, tritium.reinterpret(b, tl.bfloat16), F8=tl.float8e4nv)
    want = decode(nearest_even_saturating(x, "fp8e4nv"), "fp8e4nv")
    np.testing.assert_array_equal(h.astype(np.float64), want)  # exact in fp16 and bf16
    np.testing.assert_array_equal((b.astype(np.uint32) << 16).view(np.float32), want)
