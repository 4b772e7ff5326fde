"""Launcher: parameter packing, range checks and error messages on the CPU (through a fake
device whose memory is host memory and whose "kernels" are Python functions reading the
packed parameter slots), and real launches of hand-written PTX on a GPU (`-m gpu`)."""

from __future__ import annotations

import contextlib
import struct
import subprocess
import time

import numpy as np
import pytest

from tests.runtime.launcher_helpers import *  # noqa: F403
from tritium.dtype_names import dtype_to_triton
from tritium.errors import ArgumentError, LaunchError
from tritium.runtime import array_kinds, driver
from tritium.runtime.launcher import Launcher, Param, _bf16_bits

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
    assert array_kinds.DEVICE_POINTERS[CAI] is array_kinds._cai_pointer  # next: fast
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


def test_a_launch_outside_its_context_is_retried_once_inside_it(fake, monkeypatch):
    """CUDA refuses a launch whose function belongs to a context that is not current
    (CUDA_ERROR_INVALID_CONTEXT: a thread new to CUDA, or another device current): the
    Launcher retries once in its device's context (driver.using), then reports."""
    lau = fake.bind(add_launcher())
    lau._device = driver.Device(
        3, "Fake", (9, 0), 1, 1024, 49152, 232448, (2**31 - 1, 65535, 65535), 32, 1, None, 0x30
    )
    current = [0x10]  # another device's context is current on this thread
    used = []

    @contextlib.contextmanager
    def using(dev):
        used.append(dev.ordinal)
        saved, current[0] = current[0], int(dev.context)
        yield dev
        current[0] = saved  # popped: the thread's context is as before

    monkeypatch.setattr(driver, "current_context", lambda: current[0])
    monkeypatch.setattr(driver, "using", using)
    x = fake_device_array(0x1000, (4,), np.float32)
    fake.results = [201]  # CUDA_ERROR_INVALID_CONTEXT
    lau((1,), [x, x, x, 4])
    assert used == [3] and len(fake.launches) == 2 and current == [0x10]
    fake.results = [201, 201]  # in its own context and it still fails: no endless retry
    with pytest.raises(LaunchError, match="CUDA_ERROR_INVALID_CONTEXT"):
        lau((1,), [x, x, x, 4])
    assert used == [3, 3] and len(fake.launches) == 4
    current[0] = 0x30  # its context is current: an error is reported at once
    fake.results = [201]
    with pytest.raises(LaunchError, match="CUDA_ERROR_INVALID_CONTEXT"):
        lau((1,), [x, x, x, 4])
    assert used == [3, 3] and len(fake.launches) == 5


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
