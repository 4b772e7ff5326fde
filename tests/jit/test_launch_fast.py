"""The generated `kernel[grid](...)` fast path (tritium/jit/launch.py), on a fake
CUDA device (tests/runtime/launcher_helpers.py): real compiles, real parameter packing,
the driver call recorded and the kernel run in Python on host memory.

What must hold: after a specialisation has been launched twice, launches skip
`JITFunction.run` (and so the Launcher) entirely, and give exactly what the general path
gives: same kernel, same parameter bytes, same errors; anything the fast path does not
handle (other argument types, other options, bad grids, launch errors, the interpreter
switch) still behaves as before."""

from __future__ import annotations

import struct
import sys
import threading

import numpy as np
import pytest

import tritium
from examples.vector_add import add_kernel
from tests.runtime.launcher_helpers import FakeDevice, f32_at, fake_device_array
from tritium.errors import ArgumentError, LaunchError
from tritium.runtime import driver
from tritium.runtime.launcher import Launcher


def _run_add(raw, grid):
    """add_kernel's effect from its parameter bytes: with n, or with n specialised to 1."""
    x, y, out = (struct.unpack("<Q", r)[0] for r in raw[:3])
    n = struct.unpack("<i", raw[3][:4])[0] if len(raw) == 4 else 1
    f32_at(out, n)[:] = f32_at(x, n) + f32_at(y, n)


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    dev = FakeDevice(monkeypatch)
    dev.nparams_by_fn = {}

    def load(lau):  # what Launcher._load does, on the fake device
        name = f"{lau.name}/{len(lau.params)}"
        dev.nparams_by_fn[name] = len(lau.params)
        dev.kernels[name] = _run_add
        dev.bind(lau, name)

    monkeypatch.setattr(Launcher, "_load", load)
    return dev


@pytest.fixture
def kernel():
    return fresh_kernel()


def fresh_kernel():
    """A fresh JITFunction of vector add (launch state starts empty), counting general calls."""
    k = tritium.jit(add_kernel.fn)
    k.general_calls = 0
    run = k.run

    def counted(*a, **kw):
        k.general_calls += 1
        return run(*a, **kw)

    k.run = counted
    return k


def arrays(fake, n, offset=0):
    """x, y, out as fake DeviceArrays; x = 0..n-1, y = 100, out poisoned with NaN."""
    out = []
    for fill in (None, 100.0, np.nan):
        addr = fake.mem_alloc(4 * (n + 8)) + 4 * offset
        a = fake_device_array(addr, (n,), np.float32)
        f32_at(addr, n)[:] = np.arange(n) if fill is None else fill
        out.append(a)
    return out


def result(a):
    return f32_at(a.ptr, a.shape[0]).copy()


def test_an_equal_key_part_that_is_another_object_takes_the_dict_path(fake, kernel):
    """The inline test of the first key compares small ints by identity (launch.py): a
    device read as another int object equal to 0 misses it, and the dict lookup then finds
    the same entry, so the launch stays on the fast path."""

    class Ordinal(int):  # an int equal to 0 that is not CPython's cached 0
        pass

    x, y, out = arrays(fake, 64)
    for _ in range(3):
        kernel[(1,)](x, y, out, 64, BLOCK_SIZE=64)
    assert kernel.general_calls == 2 and "x_ptr.device is _t_v" in kernel._launch._tritium_source
    x.device = y.device = out.device = Ordinal(0)
    for _ in range(3):
        f32_at(out.ptr, 64)[:] = np.nan
        kernel[(1,)](x, y, out, 64, BLOCK_SIZE=64)
        np.testing.assert_array_equal(result(out), np.arange(64) + 100.0)
    assert kernel.general_calls == 2 and len(fake.launches) == 6


def test_third_launch_skips_the_general_path(fake, kernel):
    x, y, out = arrays(fake, 100)
    for _ in range(5):
        f32_at(out.ptr, 100)[:] = np.nan
        kernel[(1,)](x, y, out, 100, BLOCK_SIZE=128)
        np.testing.assert_array_equal(result(out), np.arange(100) + 100.0)
    assert kernel.general_calls == 2  # the first call, and the one that made the entry
    assert len(fake.launches) == 5
    last = fake.launches[-1]
    assert last["grid"] == (1, 1, 1) and last["block"] == (128, 1, 1)
    assert [struct.unpack("<Q", r)[0] for r in last["raw"][:3]] == [x.ptr, y.ptr, out.ptr]
    assert struct.unpack("<q", last["raw"][3])[0] == 100  # i32 in a zero-padded slot
    assert "data_ptr" not in kernel._launch._tritium_source  # generated for DeviceArrays
    assert ".ptr" in kernel._launch._tritium_source


def test_each_specialisation_gets_its_own_entry(fake, kernel):
    x, y, out = arrays(fake, 64)
    ox, oy, oout = arrays(fake, 64, offset=1)  # 4-byte aligned only
    for _ in range(3):
        for args, n in [
            ((x, y, out), 64),
            ((ox, oy, oout), 64),
            ((x, y, out), 1),
            ((x, y, out), 33),
        ]:
            f32_at(args[2].ptr, 64)[:] = np.nan
            kernel[(1,)](*args, n, BLOCK_SIZE=64)
            got = result(args[2])
            np.testing.assert_array_equal(got[:n], np.arange(n) + 100.0)
            assert np.isnan(got[n:]).all()
    # 4 specialisations (n=64 and n=33 differ in divisibility by 16), compiled once each
    assert len(kernel.runners) == 4
    assert kernel.general_calls == 1 + 4  # the first call, then one per specialisation
    nparams = {len(launch["raw"]) for launch in fake.launches}
    assert nparams == {3, 4}  # n == 1 became a constant: the kernel reads 3 parameters


def test_int_widths_are_keyed_and_packed(fake, kernel):
    # addresses the fake device does not own: launches are recorded, not run
    x = fake_device_array(0x10000, (4,), np.float32)
    values = [2**31 + 16, 2**40 + 16, -5, -(2**31), 2**63 + 16, 7]
    for _ in range(3):
        for n in values:
            kernel[(1,)](x, x, x, n, BLOCK_SIZE=16)
            got = fake.launches[-1]["raw"][3]
            if n >= 2**63:
                assert struct.unpack("<Q", got)[0] == n  # u64
            elif -(2**31) <= n < 2**31:
                assert struct.unpack("<i", got[:4])[0] == n and got[4:] == bytes(4)  # i32
            else:
                assert struct.unpack("<q", got)[0] == n  # i64
    # i64 (2**31 + 16, 2**40 + 16: both divisible by 16), i32 (-5, 7: neither), i32 divisible
    # by 16 (-2**31), u64: 4 kernels; each specialisation made its entry once
    assert len(kernel.runners) == 4
    assert kernel.general_calls == 1 + 4  # the first call, then one per fast key


def test_grids(fake, kernel):
    x, y, out = arrays(fake, 256)
    meta_seen = []

    def grid(meta):
        meta_seen.append(dict(meta))
        return (tritium.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)

    for g, want in [
        ((4,), (4, 1, 1)),
        ((4, 2), (4, 2, 1)),
        ((4, 2, 3), (4, 2, 3)),
        (grid, (4, 1, 1)),
    ]:
        for _ in range(3):
            kernel[g](x, y, out, 256, BLOCK_SIZE=64, num_warps=4)
            assert fake.launches[-1]["grid"] == want
    assert kernel.general_calls == 2  # all grid forms on the fast path
    assert meta_seen[-1]["BLOCK_SIZE"] == 64 and meta_seen[-1]["num_warps"] == 4
    assert meta_seen[-1]["x_ptr"] is x
    n = len(fake.launches)
    kernel[(0,)](x, y, out, 256, BLOCK_SIZE=64, num_warps=4)  # empty grid: nothing launched
    assert len(fake.launches) == n
    for bad, message in [
        ((-1,), "grid x = -1 is negative"),
        ((1, 65536), "grid y = 65536 exceeds"),
        ((2**31,), "grid x = 2147483648 exceeds"),
        ((1, 2, 3, 4), "1 to 3 dimensions"),
        ((1.5,), "tuple of 1 to 3 ints"),
    ]:
        with pytest.raises(ArgumentError, match=message):
            kernel[bad](x, y, out, 256, BLOCK_SIZE=64, num_warps=4)
    assert len(fake.launches) == n


def test_options_streams_and_types_off_the_fast_path(fake, kernel):
    x, y, out = arrays(fake, 32)
    for _ in range(3):
        kernel[(1,)](x, y, out, 32, BLOCK_SIZE=32, stream=7)
    assert fake.launches[-1]["stream"] == ("stream", 7)
    calls = kernel.general_calls
    kernel[(1,)](x, y, out, 32, BLOCK_SIZE=32, num_ctas=1)  # an option outside the key
    assert kernel.general_calls == calls + 1
    for _ in range(3):
        kernel[(1,)](x, y, out, 32, BLOCK_SIZE=32, num_warps=2)  # in the key: its own entry
    assert fake.launches[-1]["block"] == (64, 1, 1)
    assert kernel.general_calls == calls + 2
    # numpy arrays: staged by the general path every time; device arrays stay fast
    host = np.arange(32, dtype=np.float32)
    res = np.full(32, np.nan, np.float32)
    kernel[(1,)](host, host, res, 32, BLOCK_SIZE=32)
    np.testing.assert_array_equal(res, 2 * host)
    calls = kernel.general_calls
    for _ in range(3):
        kernel[(1,)](x, y, out, 32, BLOCK_SIZE=32)
    assert kernel.general_calls == calls  # the function generated for DeviceArrays stayed
    np.testing.assert_array_equal(result(out), np.arange(32) + 100.0)


def test_argument_errors_are_the_general_paths(fake, kernel):
    x, y, out = arrays(fake, 8)
    for _ in range(3):
        kernel[(1,)](x, y, out, 8, BLOCK_SIZE=8)
    with pytest.raises(ArgumentError, match=r"missing argument\(s\): n_elements"):
        kernel[(1,)](x, y, out, BLOCK_SIZE=8)
    with pytest.raises(ArgumentError, match="unexpected keyword argument 'BLOCKSIZE'"):
        kernel[(1,)](x, y, out, 8, BLOCKSIZE=8)
    with pytest.raises(ArgumentError, match="takes 5 arguments but 6 were given"):
        kernel[(1,)](x, y, out, 8, 8, 9)
    with pytest.raises(TypeError, match=r"add_kernel\(\) got multiple values for argument 'x_ptr'"):
        kernel[(1,)](x, y, out, 8, BLOCK_SIZE=8, x_ptr=x)
    with pytest.raises(ArgumentError, match="does not fit in 64 bits"):
        kernel[(1,)](x, y, out, 2**70, BLOCK_SIZE=8)
    with pytest.raises(ArgumentError, match="arrays of dtype complex64 cannot be passed"):
        kernel[(1,)](fake_device_array(x.ptr, (8,), np.complex64), y, out, 8, BLOCK_SIZE=8)
    x64 = fake_device_array(x.ptr, (4,), np.float64)
    for _ in range(3):  # another dtype: another kernel, never the fp32 one's entry
        kernel[(1,)](x64, y, out, 8, BLOCK_SIZE=8)
    assert len(kernel.runners) == 2


def test_launch_errors_name_the_cuda_error(fake, kernel):
    x, y, out = arrays(fake, 8)
    for _ in range(3):
        kernel[(1,)](x, y, out, 8, BLOCK_SIZE=8)
    fake.results = [int(driver.cuda().CUresult.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)] * 2
    with pytest.raises(LaunchError, match="CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES.*add_kernel"):
        kernel[(1,)](x, y, out, 8, BLOCK_SIZE=8)
    kernel[(1,)](x, y, out, 8, BLOCK_SIZE=8)  # and the next launch works again
    np.testing.assert_array_equal(result(out), np.arange(8) + 100.0)


def test_the_interpreter_switch_is_read_on_every_launch(fake, kernel, monkeypatch):
    x, y, out = arrays(fake, 8)
    for _ in range(3):
        kernel[(1,)](x, y, out, 8, BLOCK_SIZE=8)
    n = len(fake.launches)
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    host = np.arange(8, dtype=np.float32)
    res = np.full(8, np.nan, np.float32)
    kernel[(1,)](host, host, res, 8, BLOCK_SIZE=8)
    kernel[(1,)](host, host, res, 8, BLOCK_SIZE=8)
    np.testing.assert_array_equal(res, 2 * host)
    assert len(fake.launches) == n  # interpreted: no driver launch
    monkeypatch.setenv("TRITIUM_INTERPRET", "0")
    kernel[(1,)](x, y, out, 8, BLOCK_SIZE=8)
    assert len(fake.launches) == n + 1


def test_concurrent_launches_never_share_a_parameter_buffer(fake, kernel):
    per_thread = [arrays(fake, 16) for _ in range(8)]
    for i, (x, _, _) in enumerate(per_thread):
        f32_at(x.ptr, 16)[:] += 1000 * i  # each thread's own values
    for x, y, out in per_thread:
        for _ in range(2):
            kernel[(1,)](x, y, out, 16, BLOCK_SIZE=16)
    errors = []

    def work(i, x, y, out):
        want = np.arange(16) + 1000.0 * i + 100.0
        try:
            for _ in range(200):
                f32_at(out.ptr, 16)[:] = np.nan
                kernel[(1,)](x, y, out, 16, BLOCK_SIZE=16)  # the fake runs it at once
                np.testing.assert_array_equal(result(out), want)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i, *a)) for i, a in enumerate(per_thread)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often: between packing and the launch too
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[0]
    # more threads than buffers in the pool: some launches took the Launcher's locked path


def test_kernels_with_option_named_parameters_still_launch(fake):
    @tritium.jit
    def k(x_ptr, y_ptr, out_ptr, num_warps, BLOCK: tritium.language.constexpr):
        offs = tritium.language.arange(0, BLOCK)
        v = tritium.language.load(x_ptr + offs) + tritium.language.load(y_ptr + offs)
        tritium.language.store(out_ptr + offs, v + num_warps * 0)

    x, y, out = arrays(fake, 8)
    for _ in range(3):
        k[(1,)](x, y, out, 8, BLOCK=8)
    assert fake.launches and not hasattr(k._launch, "_tritium_source")
