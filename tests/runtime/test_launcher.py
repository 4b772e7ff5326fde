"""Launcher: parameter packing, range checks and error messages on the CPU (through a fake
device whose memory is host memory and whose "kernels" are Python functions reading the
packed parameter slots), and real launches of hand-written PTX on a GPU (`-m gpu`)."""

from __future__ import annotations

import ctypes
import os
import pathlib
import struct
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from tritium.errors import ArgumentError, LaunchError
from tritium.runtime import driver, launcher
from tritium.runtime.arrays import DeviceArray
from tritium.runtime.launcher import Launcher, Param, _bf16_bits, dtype_to_triton

# --------------------------------------------------------------------------- hand-written PTX

PTX_HEADER = ".version 7.0\n.target sm_80\n.address_size 64\n"

ADD_PTX = (
    PTX_HEADER
    + """
// out[i] = x[i] + y[i] for i < n; one element per thread.
.visible .entry add_kernel(.param .u64 x_ptr, .param .u64 y_ptr, .param .u64 out_ptr, .param .s32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<8>;
    ld.param.s32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra DONE;
    mul.wide.s32 %rd1, %r5, 4;
    ld.param.u64 %rd2, [x_ptr];
    cvta.to.global.u64 %rd2, %rd2;
    add.s64 %rd2, %rd2, %rd1;
    ld.param.u64 %rd3, [y_ptr];
    cvta.to.global.u64 %rd3, %rd3;
    add.s64 %rd3, %rd3, %rd1;
    ld.param.u64 %rd4, [out_ptr];
    cvta.to.global.u64 %rd4, %rd4;
    add.s64 %rd4, %rd4, %rd1;
    ld.global.f32 %f1, [%rd2];
    ld.global.f32 %f2, [%rd3];
    add.f32 %f3, %f1, %f2;
    st.global.f32 [%rd4], %f3;
DONE:
    ret;
}
"""
)

SCALE_STRIDED_PTX = (
    PTX_HEADER
    + """
// x[i * stride] *= 2 for i < n.
.visible .entry scale_strided_kernel(.param .u64 x_ptr, .param .s32 stride, .param .s32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<4>;
    ld.param.s32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra DONE;
    ld.param.s32 %r6, [stride];
    mul.lo.s32 %r7, %r5, %r6;
    mul.wide.s32 %rd1, %r7, 4;
    ld.param.u64 %rd2, [x_ptr];
    cvta.to.global.u64 %rd2, %rd2;
    add.s64 %rd2, %rd2, %rd1;
    ld.global.f32 %f1, [%rd2];
    add.f32 %f2, %f1, %f1;
    st.global.f32 [%rd2], %f2;
DONE:
    ret;
}
"""
)

# out[k] = (double) of the k-th scalar parameter, one of each type tritium packs. Declared as
# LLVM's NVPTX backend declares them (i1 as .u8, fp16/bf16 as 16-bit).
SCALARS_PTX = (
    PTX_HEADER
    + """
.visible .entry scalars_kernel(.param .u64 out_ptr, .param .u8 p_i1, .param .s8 p_i8,
    .param .s16 p_i16, .param .s32 p_i32, .param .s64 p_i64, .param .u8 p_u8, .param .u16 p_u16,
    .param .u32 p_u32, .param .u64 p_u64, .param .b16 p_fp16, .param .b16 p_bf16,
    .param .f32 p_fp32, .param .f64 p_fp64)
{
    .reg .b16 %h<3>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<4>;
    .reg .f32 %f<4>;
    .reg .f64 %d<14>;
    ld.param.u64 %rd1, [out_ptr];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u8 %r1, [p_i1];
    and.b32 %r1, %r1, 1;
    cvt.rn.f64.u32 %d0, %r1;
    ld.param.s8 %r2, [p_i8];
    cvt.rn.f64.s32 %d1, %r2;
    ld.param.s16 %r3, [p_i16];
    cvt.rn.f64.s32 %d2, %r3;
    ld.param.s32 %r4, [p_i32];
    cvt.rn.f64.s32 %d3, %r4;
    ld.param.s64 %rd2, [p_i64];
    cvt.rn.f64.s64 %d4, %rd2;
    ld.param.u8 %r5, [p_u8];
    cvt.rn.f64.u32 %d5, %r5;
    ld.param.u16 %r6, [p_u16];
    cvt.rn.f64.u32 %d6, %r6;
    ld.param.u32 %r7, [p_u32];
    cvt.rn.f64.u32 %d7, %r7;
    ld.param.u64 %rd3, [p_u64];
    cvt.rn.f64.u64 %d8, %rd3;
    ld.param.b16 %h1, [p_fp16];
    cvt.f32.f16 %f1, %h1;
    cvt.f64.f32 %d9, %f1;
    ld.param.b16 %h2, [p_bf16];
    cvt.u32.u16 %r8, %h2;
    shl.b32 %r9, %r8, 16;
    mov.b32 %f2, %r9;
    cvt.f64.f32 %d10, %f2;
    ld.param.f32 %f3, [p_fp32];
    cvt.f64.f32 %d11, %f3;
    ld.param.f64 %d12, [p_fp64];
    st.global.f64 [%rd1], %d0;
    st.global.f64 [%rd1+8], %d1;
    st.global.f64 [%rd1+16], %d2;
    st.global.f64 [%rd1+24], %d3;
    st.global.f64 [%rd1+32], %d4;
    st.global.f64 [%rd1+40], %d5;
    st.global.f64 [%rd1+48], %d6;
    st.global.f64 [%rd1+56], %d7;
    st.global.f64 [%rd1+64], %d8;
    st.global.f64 [%rd1+72], %d9;
    st.global.f64 [%rd1+80], %d10;
    st.global.f64 [%rd1+88], %d11;
    st.global.f64 [%rd1+96], %d12;
    ret;
}
"""
)

# Thread t writes t at byte nbytes - 4(t+1) of dynamic shared memory (its top end), reads it
# back into out[t]: runs only if all nbytes were granted.
SMEM_PTX = (
    PTX_HEADER
    + """
.extern .shared .align 16 .b8 smem[];
.visible .entry smem_kernel(.param .u64 out_ptr, .param .s32 nbytes)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %tid.x;
    ld.param.s32 %r2, [nbytes];
    add.s32 %r3, %r1, 1;
    shl.b32 %r3, %r3, 2;
    sub.s32 %r4, %r2, %r3;
    mov.u32 %r5, smem;
    add.s32 %r6, %r5, %r4;
    st.shared.u32 [%r6], %r1;
    bar.sync 0;
    ld.shared.u32 %r7, [%r6];
    ld.param.u64 %rd1, [out_ptr];
    cvta.to.global.u64 %rd1, %rd1;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r7;
    ret;
}
"""
)

# Stores 42 to the address it is given: with a bogus one, CUDA_ERROR_ILLEGAL_ADDRESS.
BAD_STORE_PTX = (
    PTX_HEADER
    + """
.visible .entry bad_store_kernel(.param .u64 addr)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [addr];
    mov.u32 %r1, 42;
    st.global.u32 [%rd1], %r1;
    ret;
}
"""
)

EMPTY_PTX = (
    PTX_HEADER
    + """
.visible .entry empty_kernel(.param .u64 x_ptr, .param .u64 y_ptr, .param .u64 out_ptr, .param .s32 n)
{
    ret;
}
"""
)

ADD_PARAMS = [
    {"name": "x_ptr", "type": "*fp32"},
    {"name": "y_ptr", "type": "*fp32"},
    {"name": "out_ptr", "type": "*fp32"},
    {"name": "n", "type": "i32"},
]
SCALAR_TYPES = [
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "fp16",
    "bf16",
    "fp32",
    "fp64",
]


def meta(name, params, num_warps=4, shared=0):
    return {
        "name": name,
        "num_warps": num_warps,
        "threads_per_warp": 32,
        "shared": shared,
        "params": params,
    }


def add_launcher(**kw):
    return Launcher({"ptx": ADD_PTX}, meta("add_kernel", ADD_PARAMS, **kw))


def strided_launcher():
    params = [
        {"name": "x", "type": "*fp32"},
        {"name": "s", "type": "i32"},
        {"name": "n", "type": "i32"},
    ]
    return Launcher({"ptx": SCALE_STRIDED_PTX}, meta("scale_strided_kernel", params))


def scalars_launcher():
    params = [{"name": "out_ptr", "type": "*fp64"}] + [
        {"name": f"p_{t}", "type": t} for t in SCALAR_TYPES
    ]
    return Launcher({"ptx": SCALARS_PTX}, meta("scalars_kernel", params))


# --------------------------------------------------------------------------- a fake device


class FakeDevice:
    """Device memory = host memory; a launch runs a Python function on the packed params.

    `launch` has cuLaunchKernel's signature: it reads the kernelParams void* array the
    launcher built, so the tests see exactly the bytes the driver would."""

    def __init__(self, monkeypatch, kernels=None, result=0):
        self.buffers: dict[int, tuple[ctypes.Array, int]] = {}
        self.launches: list[dict] = []
        self.kernels = kernels or {}
        self.result = result
        self.results: list[int] = []  # results for the next launches, then `result`
        monkeypatch.setattr(driver, "mem_alloc", self.mem_alloc)
        monkeypatch.setattr(driver, "mem_free", self.mem_free)
        monkeypatch.setattr(driver, "memcpy_htod_async", self.memcpy)
        monkeypatch.setattr(driver, "memcpy_dtoh_async", self.memcpy)
        monkeypatch.setattr(driver, "synchronize", lambda s=None: None)
        monkeypatch.setattr(driver, "stream", lambda s=None: ("stream", s))
        monkeypatch.setattr(driver, "gpu_available", lambda: False)  # also on a GPU machine

    def mem_alloc(self, n):
        buf = ctypes.create_string_buffer(n + 256)
        addr = -(-ctypes.addressof(buf) // 256) * 256  # 256-aligned, like cuMemAlloc
        self.buffers[addr] = (buf, n)
        return addr

    def mem_free(self, ptr, quiet=False):
        self.buffers.pop(ptr)

    def owns(self, addr):
        return any(a <= addr < a + n for a, (_, n) in self.buffers.items())

    @staticmethod
    def memcpy(dst, src, n, s=None):
        ctypes.memmove(dst, src, n)

    def bind(self, lau: Launcher, name: str | None = None):
        """Make `lau` launch here (what Launcher._load does with the real driver)."""
        lau._function = name or lau.name
        lau._launch = self.launch
        lau._stream0 = ("stream", None)
        return lau

    def launch(self, fn, gx, gy, gz, bx, by, bz, shared, stream, argv, extra):
        for g in (gx, gy, gz):  # what cuda-python's unsigned int conversion does
            if not isinstance(g, int):
                raise TypeError(f"an integer is required, got {type(g).__name__}")
            if not 0 <= g < 2**32:
                raise OverflowError("value too large to convert to unsigned int")
        slots = [ctypes.c_void_p.from_address(argv + 8 * i).value for i in range(self.nparams(fn))]
        raw = [ctypes.string_at(p, 8) for p in slots]
        self.launches.append(
            dict(
                fn=fn, grid=(gx, gy, gz), block=(bx, by, bz), shared=shared, stream=stream, raw=raw
            )
        )
        result = self.results.pop(0) if self.results else self.result
        if result:
            return (driver.cuda().CUresult(result),)
        if fn in self.kernels and self.owns(struct.unpack("<Q", raw[0])[0]):
            self.kernels[fn](raw, (gx, gy, gz))  # (tests with made-up addresses run nothing)
        return (driver.cuda().CUresult(0),)

    def nparams(self, fn):
        return self.nparams_by_fn.get(fn, 4)

    nparams_by_fn: dict = {}


def f32_at(addr, n):
    return np.frombuffer((ctypes.c_float * n).from_address(addr), np.float32)


def fake_add(raw, grid):
    x, y, out = (struct.unpack("<Q", r)[0] for r in raw[:3])
    (n,) = struct.unpack("<i", raw[3][:4])
    f32_at(out, n)[:] = f32_at(x, n) + f32_at(y, n)


def fake_scale_strided(raw, grid):
    (x,) = struct.unpack("<Q", raw[0])
    (stride,) = struct.unpack("<i", raw[1][:4])
    (n,) = struct.unpack("<i", raw[2][:4])
    if n:
        lo = min(0, (n - 1) * stride)  # in elements, relative to x
        v = f32_at(x + 4 * lo, abs((n - 1) * stride) + 1)
        v[-lo :: stride if stride > 0 else stride][:n] *= 2


@pytest.fixture
def fake(monkeypatch):
    dev = FakeDevice(
        monkeypatch, {"add_kernel": fake_add, "scale_strided_kernel": fake_scale_strided}
    )
    dev.nparams_by_fn = {"add_kernel": 4, "scale_strided_kernel": 3, "scalars_kernel": 14}
    return dev


def fake_device_array(ptr, shape, dtype):
    """A DeviceArray over an existing address (no allocation, so no GPU needed)."""
    a = DeviceArray.__new__(DeviceArray)
    a.shape, a.dtype, a.ptr = tuple(shape), np.dtype(dtype), ptr
    a.strides = np.empty(shape, dtype).strides
    a.nbytes = int(np.prod(shape)) * a.dtype.itemsize
    return a


class CAI:
    """A minimal foreign device array: only __cuda_array_interface__."""

    def __init__(self, ptr, typestr="<f4", shape=(4,)):
        self.__cuda_array_interface__ = {
            "data": (ptr, False),
            "typestr": typestr,
            "shape": shape,
            "version": 3,
        }


# --------------------------------------------------------------------------- CPU tests


def test_launcher_construction_does_not_touch_cuda():
    lau = add_launcher(num_warps=8, shared=1024)
    assert lau.block == (256, 1, 1) and lau.shared == 1024 and lau.name == "add_kernel"
    assert lau._function is None
    assert lau._struct.format == "<QQQi4x" and lau._struct.size == 32
    assert "x_ptr: *fp32" in repr(lau)


def test_cubin_is_preferred_over_ptx():
    lau = Launcher({"ptx": "text", "cubin": b"\x7fELF"}, meta("k", []))
    assert lau.image == b"\x7fELF"
    assert Launcher({"ptx": "text", "cubin": None}, meta("k", [])).image == "text"


@pytest.mark.parametrize("bad", ["*fp33", "f32", "i33", "tensor", "*"])
def test_unknown_param_types_are_rejected(bad):
    with pytest.raises(ArgumentError, match="unknown"):
        Param("x", bad)


def test_dtype_to_triton():
    assert dtype_to_triton(np.dtype(np.float32)) == "fp32"
    assert dtype_to_triton(np.dtype(bool)) == "i1"
    assert dtype_to_triton(np.dtype("<u2")) == "u16"
    assert dtype_to_triton("torch.bfloat16") == "bf16"
    assert dtype_to_triton(np.dtype("c8")) is None


@pytest.mark.parametrize(
    "x, bits",
    [
        (1.0, 0x3F80),
        (-2.0, 0xC000),
        (3.140625, 0x4049),
        (0.0, 0),
        (-0.0, 0x8000),
        (float("inf"), 0x7F80),
    ],
)
def test_bf16_bits(x, bits):
    assert _bf16_bits(x) == bits


def test_bf16_rounds_to_nearest_even():
    f = struct.unpack("<f", struct.pack("<I", 0x3F808000))[0]  # exactly halfway: even is 0x3F80
    assert _bf16_bits(f) == 0x3F80
    f = struct.unpack("<f", struct.pack("<I", 0x3F818000))[0]  # halfway: even is 0x3F82
    assert _bf16_bits(f) == 0x3F82
    assert _bf16_bits(float("nan")) == 0x7FC0


# (param type, value, the bytes the kernel must see)
PACK_CASES = [
    ("i1", True, b"\x01"),
    ("i8", -5, struct.pack("<b", -5)),
    ("i16", -300, struct.pack("<h", -300)),
    ("i32", -(2**31), struct.pack("<i", -(2**31))),
    ("i64", 2**63 - 1, struct.pack("<q", 2**63 - 1)),
    ("u8", 255, b"\xff"),
    ("u16", 65535, struct.pack("<H", 65535)),
    ("u32", 2**32 - 1, struct.pack("<I", 2**32 - 1)),
    ("u64", 2**64 - 1, struct.pack("<Q", 2**64 - 1)),
    ("fp16", 1.5, struct.pack("<e", 1.5)),
    ("bf16", 1.0, struct.pack("<H", 0x3F80)),
    ("fp32", 0.1, struct.pack("<f", 0.1)),
    ("fp64", 2.5, struct.pack("<d", 2.5)),
]


def test_every_scalar_type_is_packed_into_its_slot(fake):
    assert [t for t, _, _ in PACK_CASES] == SCALAR_TYPES
    lau = fake.bind(scalars_launcher())
    out = fake_device_array(0x1000, (13,), np.float64)
    lau((1, 1, 1), [out, *(v for _, v, _ in PACK_CASES)])
    raw = fake.launches[-1]["raw"]
    assert raw[0] == struct.pack("<Q", 0x1000)
    for (t, _, want), got in zip(PACK_CASES, raw[1:]):
        assert got == want.ljust(8, b"\0"), t  # each value zero-padded to its 8-byte slot


def test_numpy_scalars_and_bools_pack(fake):
    lau = fake.bind(scalars_launcher())
    out = fake_device_array(0x1000, (13,), np.float64)
    vals = [np.bool_(True), np.int8(-1), np.int16(2), np.int32(3), np.int64(4), np.uint8(5)]
    vals += [np.uint16(6), np.uint32(7), np.uint64(8), np.float16(0.5), np.float32(2.0)]
    vals += [np.float32(0.25), 3]
    lau((1,), [out, *vals])
    raw = fake.launches[-1]["raw"]
    assert raw[2][:1] == b"\xff" and raw[5][:8] == struct.pack("<q", 4)
    assert raw[11][:2] == struct.pack("<H", 0x4000)  # bf16 2.0
    assert raw[13] == struct.pack("<d", 3.0)  # an int for an fp64 param


@pytest.mark.parametrize(
    "index, value, message",
    [
        (
            4,
            2**31,
            r"'p_i32' \(#4\).* = 2147483648 does not fit i32 \(range \[-2147483648, 2147483647\]\)",
        ),
        (4, -(2**31) - 1, "does not fit i32"),
        (2, 128, "does not fit i8"),
        (8, -1, "does not fit u32"),
        (9, 2**64, "does not fit u64"),
        (5, 2**63, "does not fit i64"),
        (4, 1.5, "must be an integer for type i32, got float"),
        (4, "3", "must be an integer"),
        (10, 1e5, "overflows fp16"),
        (12, 1e39, "overflows fp32"),
        (11, 1e39, "overflows bf16"),
        (13, "x", "must be a number for type fp64"),
        (4, np.arange(3), "is an array"),
    ],
)
def test_scalar_range_and_kind_errors(fake, index, value, message):
    lau = fake.bind(scalars_launcher())
    lau._ready = True  # the fast path alone (no check_args first) must still refuse, not wrap
    out = fake_device_array(0x1000, (13,), np.float64)
    args = [out, True, 1, 2, 3, 4, 5, 6, 7, 8, 1.0, 1.0, 1.0, 1.0]
    args[index] = value
    with pytest.raises(ArgumentError, match=message):
        lau((1, 1, 1), args)
    assert not fake.launches
    with pytest.raises(ArgumentError, match=message):
        lau.check_args(args)


def test_i1_out_of_range_is_caught_by_check_args():
    out = fake_device_array(0x1000, (13,), np.float64)
    args = [out, 2, 1, 2, 3, 4, 5, 6, 7, 8, 1.0, 1.0, 1.0, 1.0]
    with pytest.raises(ArgumentError, match="does not fit i1"):
        scalars_launcher().check_args(args)


def test_inf_and_nan_pass_for_float_params(fake):
    lau = fake.bind(scalars_launcher())
    out = fake_device_array(0x1000, (13,), np.float64)
    lau(
        (1,),
        [out, 0, 0, 0, 0, 0, 0, 0, 0, 0, float("inf"), float("nan"), float("-inf"), float("nan")],
    )
    raw = fake.launches[-1]["raw"]
    assert raw[10][:2] == struct.pack("<e", float("inf")) and raw[11][:2] == b"\xc0\x7f"


def test_pointer_kinds(fake):
    lau = fake.bind(add_launcher())
    x = fake_device_array(0x1000, (4,), np.float32)
    y = CAI(0x2000)
    lau((1,), [x, y, None, 4])
    raw = fake.launches[-1]["raw"]
    assert [struct.unpack("<Q", r)[0] for r in raw[:3]] == [0x1000, 0x2000, 0]
    assert launcher._POINTER_GETTERS[CAI] is launcher._cai_ptr  # registered: next call is fast
    lau((1,), [x, CAI(0x3000), x, 4])
    assert struct.unpack("<Q", fake.launches[-1]["raw"][1])[0] == 0x3000


@pytest.mark.parametrize(
    "args, message",
    [
        (
            [1, None, None, 4],
            r"'x_ptr' \(#0\) of type \*fp32 must be a numpy array, a tritium DeviceArray.*got int",
        ),
        (
            [np.zeros(4), None, None, 4],
            r"'x_ptr' \(#0\).* is an array of float64 \(fp64\), but the kernel was compiled for \*fp32",
        ),
        ([None, CAI(0x10, "<i4"), None, 4], r"'y_ptr' \(#1\).*array of int32 \(i32\).*\*fp32"),
        ([None, None, np.zeros(4, np.complex64), 4], r"complex64 \(no Triton type\)"),
        ([None, None, None], r"takes 4 arguments \(x_ptr, y_ptr, out_ptr, n\), got 3"),
        ([None, None, None, 4, 5], "got 5"),
        (
            [None, None, None, np.zeros(4, np.float32)],
            "'n' .* is an array, but the parameter is a scalar of type i32",
        ),
    ],
)
def test_check_args_messages(args, message):
    with pytest.raises(ArgumentError, match=message):
        add_launcher().check_args(args)


def test_first_call_checks_args_later_calls_do_not(fake, monkeypatch):
    lau = add_launcher()
    calls = []
    monkeypatch.setattr(lau, "_load", lambda: (calls.append("load"), fake.bind(lau)))
    with pytest.raises(ArgumentError, match="float64"):
        lau((1,), [np.zeros(4), None, None, 4])
    assert not calls  # nothing loaded for a bad first call
    a = np.zeros(4, np.float32)
    lau((1,), [a, a, a, 4])
    assert calls == ["load"] and lau._ready
    checks = []
    monkeypatch.setattr(lau, "check_args", lambda args: checks.append(1))
    lau((1,), [a, a, a, 4])
    assert not checks


def test_debug_mode_checks_every_call(fake, monkeypatch):
    monkeypatch.setenv("TRITIUM_DEBUG", "1")
    lau = add_launcher()
    assert lau.debug
    monkeypatch.setattr(lau, "_load", lambda: fake.bind(lau))
    a = np.zeros(4, np.float32)
    lau((1,), [a, a, a, 4])
    assert not lau._ready
    with pytest.raises(ArgumentError, match="float64"):
        lau((1,), [np.zeros(4), a, a, 4])


def test_numpy_args_are_copied_in_and_out(fake):
    lau = fake.bind(add_launcher())
    x = np.arange(8, dtype=np.float32)
    y = np.full(8, 10, np.float32)
    out = np.zeros(8, np.float32)
    lau((1,), [x, y, out, 8])
    np.testing.assert_array_equal(out, x + 10)
    assert not fake.buffers  # every staging buffer freed
    assert struct.unpack("<Q", fake.launches[-1]["raw"][0])[0] != x.ctypes.data  # a device copy


def test_numpy_in_place_aliasing_shares_one_copy(fake):
    lau = fake.bind(add_launcher())
    x = np.arange(8, dtype=np.float32)
    y = np.ones(8, np.float32)
    lau((1,), [x, y, x, 8])  # x += y
    np.testing.assert_array_equal(x, np.arange(8) + 1)
    raw = fake.launches[-1]["raw"]
    assert raw[0] == raw[2]


def test_numpy_overlapping_views_keep_their_offsets(fake):
    lau = fake.bind(add_launcher())
    buf = np.arange(10, dtype=np.float32)
    lau((1,), [buf[:-1], buf[:-1], buf[1:], 9])  # out[i] = 2 * buf[i], shifted by one
    np.testing.assert_array_equal(buf, [0, 0, 2, 4, 6, 8, 10, 12, 14, 16])
    raw = fake.launches[-1]["raw"]
    x, out = struct.unpack("<Q", raw[0])[0], struct.unpack("<Q", raw[2])[0]
    assert out - x == 4


def test_numpy_strided_view_copies_its_span(fake):
    lau = fake.bind(strided_launcher())
    base = np.arange(12, dtype=np.float32)
    view = base[1::3]  # 1, 4, 7, 10
    lau((1,), [view, 3, 4])
    expected = np.arange(12, dtype=np.float32)
    expected[1::3] *= 2
    np.testing.assert_array_equal(base, expected)
    neg = base[::-2]  # 11, 9, ..., 1: a negative stride, the span runs below the first element
    expected = base.copy()
    lau((1,), [neg, -2, 6])
    expected[1::2] *= 2
    np.testing.assert_array_equal(base, expected)


def test_staged_copies_keep_host_alignment(fake):
    lau = fake.bind(add_launcher())
    buf = np.zeros(64, np.float32)
    x, y, out = buf[1:9], buf[4:12], buf[20:28]  # one shared span starting 4 bytes off
    lau((1,), [x, y, out, 8])
    addrs = [struct.unpack("<Q", r)[0] for r in fake.launches[-1]["raw"][:3]]
    for host, dev in zip([x, y, out], addrs):
        assert dev % 256 == host.ctypes.data % 256


def test_read_only_numpy_is_not_copied_back(fake):
    lau = fake.bind(add_launcher())
    x = np.arange(4, dtype=np.float32)
    x.flags.writeable = False
    out = np.zeros(4, np.float32)
    lau((1,), [x, x, out, 4])
    np.testing.assert_array_equal(out, 2 * np.arange(4))


def test_zero_size_numpy_passes_null(fake):
    lau = fake.bind(add_launcher())
    e = np.zeros(0, np.float32)
    lau((1,), [e, e, e, 0])
    assert fake.launches[-1]["raw"][0] == b"\0" * 8


def test_grid_forms(fake):
    lau = fake.bind(add_launcher())
    x = fake_device_array(0x1000, (4,), np.float32)
    grids = [((3, 2, 1), (3, 2, 1)), ((5,), (5, 1, 1)), ((5, 6), (5, 6, 1)), (7, (7, 1, 1))]
    for grid, want in [*grids, ([2, 2, 2], (2, 2, 2))]:
        lau(grid, [x, x, x, 4])
        assert fake.launches[-1]["grid"] == want
        assert fake.launches[-1]["block"] == (128, 1, 1)
    for bad in [(1, 2, 3, 4), (), "abc", None]:
        with pytest.raises(ArgumentError, match="grid"):
            lau(bad, [x, x, x, 4])


def test_stream_is_passed(fake):
    lau = fake.bind(add_launcher())
    x = fake_device_array(0x1000, (4,), np.float32)
    lau((1,), [x, x, x, 4])
    assert fake.launches[-1]["stream"] == ("stream", None)
    lau((1,), [x, x, x, 4], stream=1234)
    assert fake.launches[-1]["stream"] == ("stream", 1234)


def test_failed_launch_names_cuda_error_and_kernel(fake):
    fake.result = 701  # CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
    lau = fake.bind(add_launcher())
    x = fake_device_array(0x1000, (4,), np.float32)
    with pytest.raises(
        LaunchError,
        match=r"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES in kernel 'add_kernel' \(cuLaunchKernel\).*grid=\(2, 1, 1\), block=\(128, 1, 1\)",
    ) as info:
        lau((2,), [x, x, x, 4])
    assert info.value.cuda_error == "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"
    assert info.value.kernel == "add_kernel"


def test_empty_grid_launches_nothing(fake):
    fake.result = 1  # what the driver says for a zero grid dimension: CUDA_ERROR_INVALID_VALUE
    lau = fake.bind(add_launcher())
    x = fake_device_array(0x1000, (4,), np.float32)
    lau((0, 1, 1), [x, x, x, 4])  # no error
    with pytest.raises(LaunchError, match="CUDA_ERROR_INVALID_VALUE"):
        lau((1, 1, 1), [x, x, x, 4])


def test_new_thread_gets_the_context_and_one_retry(fake, monkeypatch):
    lau = fake.bind(add_launcher())
    lau._device = driver.Device(
        3, "Fake", (9, 0), 1, 1024, 49152, 232448, (2**31 - 1, 65535, 65535), 32, 1, None, None
    )
    made = []
    monkeypatch.setattr(driver, "current_ordinal", lambda: made[-1] if made else None)
    monkeypatch.setattr(driver, "make_current", lambda dev: made.append(dev.ordinal))
    x = fake_device_array(0x1000, (4,), np.float32)
    fake.results = [201]  # CUDA_ERROR_INVALID_CONTEXT: no context current on this thread
    lau((1,), [x, x, x, 4])
    assert made == [3] and len(fake.launches) == 2
    fake.results = [201, 201]  # the context is current and it still fails: no endless retry
    with pytest.raises(LaunchError, match="CUDA_ERROR_INVALID_CONTEXT"):
        lau((1,), [x, x, x, 4])
    assert made == [3] and len(fake.launches) == 3


def test_launch_records_last_kernel(fake):
    lau = fake.bind(add_launcher())
    x = fake_device_array(0x1000, (4,), np.float32)
    lau((1,), [x, x, x, 4])
    assert driver.launch_state.kernel == "add_kernel"


def test_handwritten_ptx_assembles(ptxas, tmp_path):
    for i, ptx in enumerate(
        [ADD_PTX, SCALE_STRIDED_PTX, SCALARS_PTX, SMEM_PTX, BAD_STORE_PTX, EMPTY_PTX]
    ):
        path = tmp_path / f"k{i}.ptx"
        path.write_text(ptx)
        subprocess.run(
            [ptxas, "-arch=sm_80", str(path), "-o", str(tmp_path / f"k{i}.cubin")], check=True
        )


def test_host_side_launch_cost_is_printed(fake, capsys):
    """Not a timing assertion: prints the Python-side cost above a no-op launch function."""
    lau = add_launcher()
    noop_result = (driver.cuda().CUresult(0),)
    lau._function, lau._stream0, lau._ready = "f", None, True
    lau._launch = lambda *a: noop_result
    x = fake_device_array(0x1000, (4,), np.float32)
    args, n = (x, x, x, 4), 20000
    t0 = time.perf_counter()
    for _ in range(n):
        lau((4, 1, 1), args)
    per = (time.perf_counter() - t0) / n * 1e6
    with capsys.disabled():
        print(f"\n[launcher] Python-side cost per launch (no-op driver): {per:.2f} us")
    assert fake.launches == []  # the fake's launch was bypassed


# --------------------------------------------------------------------------- GPU tests


def _device_arrays(*hosts):
    from tritium.runtime import arrays

    return [arrays.to_device(h) for h in hosts]


@pytest.mark.gpu
def test_gpu_add_numpy():
    rng = np.random.default_rng(0)
    n = 1000
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    add_launcher()(((n + 127) // 128, 1, 1), [x, y, out, n])
    np.testing.assert_allclose(out.astype(np.float64), x.astype(np.float64) + y, rtol=1e-6)


@pytest.mark.gpu
def test_gpu_add_numpy_in_place_and_views():
    x = np.arange(300, dtype=np.float32)
    y = np.ones(300, np.float32)
    add_launcher()((3,), [x, y, x, 300])
    np.testing.assert_array_equal(x, np.arange(300) + 1)
    lau = strided_launcher()
    base = np.arange(30, dtype=np.float32)
    lau((1,), [base[2::3], 3, 10])
    want = np.arange(30, dtype=np.float32)
    want[2::3] *= 2
    np.testing.assert_array_equal(base, want)


@pytest.mark.gpu
def test_gpu_add_device_arrays_and_stream():
    n = 4097
    x, y = np.arange(n, dtype=np.float32), np.full(n, 0.5, np.float32)
    dx, dy, dout = _device_arrays(x, y, np.zeros(n, np.float32))
    lau = add_launcher(num_warps=8)
    lau(((n + 255) // 256, 1, 1), [dx, dy, dout, n])
    np.testing.assert_array_equal(dout.numpy(), x + y)
    cu = driver.cuda()
    err, s = cu.cuStreamCreate(0)
    driver.check(err, "cuStreamCreate")
    try:
        lau(((n + 255) // 256, 1, 1), [dout, dy, dout, n], stream=int(s))
        driver.synchronize(int(s))
        np.testing.assert_array_equal(dout.numpy(), x + 2 * y)
    finally:
        cu.cuStreamDestroy(s)


@pytest.mark.gpu
def test_gpu_add_torch_and_cupy():
    n = 1000
    ran = False
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        x = torch.arange(n, dtype=torch.float32, device="cuda")
        out = torch.empty_like(x)
        add_launcher()((8,), [x, x, out, n])
        torch.cuda.synchronize()
        assert torch.equal(out, 2 * x)
        with pytest.raises(ArgumentError, match="torch tensor on the CPU"):
            add_launcher()((8,), [x.cpu(), x, out, n])
        ran = True
    try:
        import cupy
    except ImportError:
        cupy = None
    if cupy is not None:
        x = cupy.arange(n, dtype=cupy.float32)
        out = cupy.empty_like(x)
        add_launcher()((8,), [x, x, out, n])
        driver.synchronize()
        assert bool((out == 2 * x).all())
        ran = True
    if not ran:
        pytest.skip("neither torch (with CUDA) nor cupy is importable")


@pytest.mark.gpu
def test_gpu_every_scalar_type():
    out = np.zeros(13, np.float64)
    values = [True, -5, -300, -(2**31), -(2**40), 255, 65535, 2**32 - 1, 2**53, 1.5, -2.0, 0.1, 2.5]
    scalars_launcher()((1,), [out, *values])
    want = [
        1,
        -5,
        -300,
        -(2**31),
        -(2**40),
        255,
        65535,
        2**32 - 1,
        2**53,
        1.5,
        -2.0,
        float(np.float32(0.1)),
        2.5,
    ]
    np.testing.assert_array_equal(out, want)


@pytest.mark.gpu
def test_gpu_large_dynamic_shared_memory():
    dev = driver.device()
    nbytes = min(100 * 1024, dev.max_shared_per_block_optin)
    assert nbytes > 48 * 1024, "every GPU tritium targets allows > 48 KiB per block when asked"
    out = np.zeros(128, np.int32)
    params = [{"name": "out", "type": "*i32"}, {"name": "nbytes", "type": "i32"}]
    lau = Launcher({"ptx": SMEM_PTX}, meta("smem_kernel", params, shared=nbytes))
    lau((1,), [out, nbytes])
    np.testing.assert_array_equal(out, np.arange(128))
    params = [{"name": "out", "type": "*i32"}, {"name": "nbytes", "type": "i32"}]
    too_big = Launcher(
        {"ptx": SMEM_PTX}, meta("smem_kernel", params, shared=dev.max_shared_per_block_optin + 1024)
    )
    with pytest.raises(LaunchError, match="bytes of shared memory per block"):
        too_big((1,), [out, 4])


@pytest.mark.gpu
def test_gpu_launch_errors_are_named():
    dx = _device_arrays(np.zeros(4, np.float32))[0]
    dev = driver.device()
    lau = add_launcher()
    with pytest.raises(
        LaunchError, match=r"CUDA_ERROR_INVALID_VALUE in kernel 'add_kernel'.*exceeds"
    ):
        lau((1, dev.max_grid[1] + 1, 1), [dx, dx, dx, 4])
    lau((0, 1, 1), [dx, dx, dx, 4])  # an empty grid is a no-op
    with pytest.raises(LaunchError, match="threads per block"):
        add_launcher(num_warps=64)((1,), [dx, dx, dx, 4])
    with pytest.raises(LaunchError, match="CUDA_ERROR_NOT_FOUND"):
        Launcher({"ptx": ADD_PTX}, meta("no_such_kernel", ADD_PARAMS))((1,), [dx, dx, dx, 4])


@pytest.mark.gpu
def test_gpu_host_pointer_is_refused():
    host = np.zeros(4, np.float32)
    with pytest.raises(ArgumentError, match="not memory CUDA knows"):
        add_launcher()((1,), [CAI(host.ctypes.data), None, None, 4])


@pytest.mark.gpu
def test_gpu_launch_from_another_thread():
    x = np.arange(256, dtype=np.float32)
    dx, dout = _device_arrays(x, np.zeros(256, np.float32))
    lau = add_launcher()
    lau((2,), [dx, dx, dout, 256])  # loaded on this thread
    errors = []

    def work():
        try:
            lau((2,), [dx, dout, dout, 256])
            driver.synchronize()
        except Exception as exc:  # reported below
            errors.append(exc)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert not errors, errors
    np.testing.assert_array_equal(dout.numpy(), 3 * x)


ILLEGAL_ADDRESS_SCRIPT = """
import sys
from tritium.errors import LaunchError
from tritium.runtime import driver
from tritium.runtime.launcher import Launcher
ptx = {ptx!r}
lau = Launcher({{"ptx": ptx}}, {{"name": "bad_store_kernel", "num_warps": 1, "threads_per_warp": 32,
                               "shared": 0, "params": [{{"name": "addr", "type": "i64"}}]}})
lau((1, 1, 1), [16])
try:
    driver.synchronize()
except LaunchError as exc:
    print("FIRST:", exc)
try:
    driver.mem_alloc(16)
except LaunchError as exc:
    print("SECOND:", exc)
"""


@pytest.mark.gpu
def test_gpu_illegal_address_is_named():
    """In a subprocess: an illegal address poisons the context for the rest of the process."""
    script = textwrap.dedent(ILLEGAL_ADDRESS_SCRIPT.format(ptx=BAD_STORE_PTX))
    root = pathlib.Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        env=env,
    )
    out = proc.stdout
    assert "FIRST: CUDA_ERROR_ILLEGAL_ADDRESS" in out, out + proc.stderr
    assert "bad_store_kernel" in out and "context is lost" in out and "restart" in out
    assert "SECOND: CUDA_ERROR_ILLEGAL_ADDRESS" in out and "lost earlier" in out


@pytest.mark.gpu
def test_gpu_launch_overhead_is_printed(capsys):
    """Prints tritium's launch cost next to a bare cuLaunchKernel; asserts no timing."""
    dx = _device_arrays(np.zeros(4, np.float32))[0]
    lau = Launcher({"ptx": EMPTY_PTX}, meta("empty_kernel", ADD_PARAMS))
    args, grid, n = [dx, dx, dx, 4], (1, 1, 1), 5000
    lau(grid, args)
    driver.synchronize()
    fn, launch, s0, argv = lau._function, lau._launch, lau._stream0, lau._argv_addr

    def per_launch(body):
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            body()
            driver.synchronize()
            best = min(best, (time.perf_counter() - t0) / n * 1e6)
        return best

    def bare():
        for _ in range(n):
            launch(fn, 1, 1, 1, 128, 1, 1, 0, s0, argv, 0)

    def tritium():
        for _ in range(n):
            lau(grid, args)

    b, t = per_launch(bare), per_launch(tritium)
    with capsys.disabled():
        print(
            f"\n[launcher] bare cuLaunchKernel {b:.2f} us, tritium Launcher {t:.2f} us (+{t - b:.2f} us)"
        )
