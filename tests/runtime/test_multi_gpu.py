"""Several GPUs in one process, on fake ones (tests/runtime/fake_gpus.py): contexts,
device arrays, module loading and the Launcher go to the device of their data, and never
touch another device's context or change the thread's current device."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from tests.runtime.fake_gpus import NO_CONTEXT
from tests.runtime.launcher_helpers import ADD_PARAMS, ADD_PTX, CAI, meta
from tritium.errors import ArgumentError
from tritium.runtime import array_kinds, arrays, devices, driver, memory
from tritium.runtime.launcher import Launcher


def add_launcher(**kw):
    return Launcher({"ptx": ADD_PTX}, meta("add_kernel", ADD_PARAMS), **kw)


def test_opening_a_device_retains_only_its_context(fake_gpus):
    gpus = fake_gpus
    dev = driver.opened(1)
    assert (dev.ordinal, dev.arch, dev.name) == (1, "sm_90", "Fake GPU 1")
    assert gpus.retained == {1} and gpus.current() is NO_CONTEXT
    assert driver.device_arch(1) == "sm_90" and gpus.retained == {1}


def test_using_pushes_over_the_current_context_and_pops(fake_gpus):
    gpus = fake_gpus
    driver.device(0)  # the thread picks device 0
    with driver.using(driver.opened(1)):
        assert gpus.current_device() == 1
    assert gpus.current_device() == 0 and devices.picked() == 0


def test_using_on_a_thread_without_context_leaves_it_current_unpicked(fake_gpus):
    gpus = fake_gpus
    with driver.using(driver.opened(1)):
        pass
    assert gpus.current_device() == 1 and devices.picked() is None
    assert devices.current_device() == 0  # still TRITIUM_DEVICE's default


def test_device_arrays_live_and_copy_on_their_device(fake_gpus):
    gpus = fake_gpus
    driver.device(0)
    a = arrays.to_device(np.arange(8, dtype=np.float32), device=1)
    assert a.device == 1 and gpus.device_of(a.ptr) == 1 and memory.pointer_device(a.ptr) == 1
    np.testing.assert_array_equal(a.numpy(), np.arange(8))
    assert gpus.current_device() == 0  # its copies ran in device 1's context, then popped
    assert arrays.zeros(4).device == 0  # the current device: the thread's pick
    ptr = a.ptr
    a.free()
    assert ptr not in gpus.allocations
    assert "device=1" in repr(arrays.empty(2, device=1))


def test_the_current_device_is_tritium_device_then_the_threads_pick(fake_gpus, monkeypatch):
    gpus = fake_gpus
    monkeypatch.setenv("TRITIUM_DEVICE", "1")
    assert devices.current_device() == 1
    assert arrays.empty(4).device == 1 and gpus.retained == {1}
    driver.device(0)
    assert devices.current_device() == 0
    seen = []
    t = threading.Thread(target=lambda: seen.append(devices.current_device()))
    t.start()
    t.join()
    assert seen == [1]  # a pick is per thread


def test_torchs_current_device_and_stream(fake_torch, monkeypatch):
    torch = fake_torch
    monkeypatch.setenv("TRITIUM_DEVICE", "0")
    driver.device(0)
    torch.current, torch.streams = 1, {1: 0x77}
    assert devices.current_device() == 1  # torch's, over the thread's pick
    assert devices.current_stream(1) == 0x77 and devices.current_stream(0) == 0
    assert arrays.empty(4).device == 1


def test_without_torch_cuda_there_is_no_torch_stream(fake_torch):
    torch = fake_torch
    torch.cuda.is_initialized = lambda: False  # imported, CUDA not used (yet)
    torch.current = 1
    assert devices.current_device() == 0 and devices.current_stream(1) is None


def test_the_launcher_runs_where_its_arguments_are(fake_gpus):
    gpus = fake_gpus
    gpus.nparams = {"add_kernel": 4}
    driver.device(0)
    x = arrays.to_device(np.ones(4, np.float32), device=1)
    lau = add_launcher()
    for _ in range(3):  # device 0 is current: each launch is retried in device 1's context
        lau((1,), [x, x, x, 4])
    assert lau.device == 1 and [d for d, _ in gpus.loads] == [1]
    assert [launch["device"] for launch in gpus.launches] == [1, 1, 1]
    assert int.from_bytes(gpus.launches[0]["raw"][0], "little") == x.ptr
    assert gpus.current_device() == 0 and devices.picked() == 0  # the thread's device stays


def test_first_use_of_device_1_never_touches_device_0(fake_gpus):
    gpus = fake_gpus
    x = arrays.to_device(np.ones(4, np.float32), device=1)
    lau = add_launcher()
    lau((1,), [x, x, x, 4])
    lau((1,), [x, x, x, 4])
    assert gpus.retained == {1} and len(gpus.launches) == 2


def test_arguments_on_two_devices_are_refused_naming_both(fake_gpus):
    gpus = fake_gpus
    x0 = arrays.to_device(np.ones(4, np.float32), device=0)
    x1 = arrays.to_device(np.ones(4, np.float32), device=1)
    with pytest.raises(
        ArgumentError, match=r"argument 'x_ptr' is on cuda:0 but argument 'y_ptr' is on cuda:1"
    ):
        add_launcher()((1,), [x0, x1, x0, 4])
    assert gpus.launches == []


def test_a_launcher_given_a_device_checks_arguments_against_it(fake_gpus):
    x1 = arrays.to_device(np.ones(4, np.float32), device=1)
    with pytest.raises(
        ArgumentError, match=r"'x_ptr' .* is on cuda:1, but this launch runs on cuda:0"
    ):
        add_launcher(device=0)((1,), [x1, x1, x1, 4])


def test_numpy_arguments_are_staged_on_the_current_device(fake_gpus, monkeypatch):
    gpus = fake_gpus
    monkeypatch.setenv("TRITIUM_DEVICE", "1")
    gpus.nparams = {"add_kernel": 4}
    host = np.ones(4, np.float32)
    add_launcher()((1,), [host, host, host, 4])
    assert [launch["device"] for launch in gpus.launches] == [1] and gpus.retained == {1}
    staged = int.from_bytes(gpus.launches[0]["raw"][0], "little")
    assert staged != host.ctypes.data and staged % 256 == host.ctypes.data % 256


def test_foreign_arrays_report_their_device(fake_gpus):
    x = arrays.to_device(np.ones(4, np.float32), device=1)
    assert array_kinds.device_of(CAI(x.ptr)) == 1
    assert array_kinds.device_of(CAI(0x1234)) is None  # not memory CUDA knows
    assert array_kinds.device_of(np.ones(2)) is None and array_kinds.device_of(3) is None


def test_modules_load_once_per_device(fake_gpus):
    gpus = fake_gpus
    d0, d1 = driver.opened(0), driver.opened(1)
    m0, m1 = driver.load_module(ADD_PTX, d0), driver.load_module(ADD_PTX, d1)
    assert driver.load_module(ADD_PTX, d0) is m0 and driver.load_module(ADD_PTX, d1) is m1
    assert [d for d, _ in gpus.loads] == [0, 1]
    assert m0.context is gpus.contexts[0] and m1.context is gpus.contexts[1]
    assert gpus.current() is gpus.contexts[0]  # none was current: the first load's stays


def test_a_saved_kernel_launches_on_each_arguments_device(fake_gpus):
    from tritium.aot_runtime import SavedKernel

    gpus = fake_gpus
    k = SavedKernel(ADD_PTX, meta("add_kernel", ADD_PARAMS))
    xs = [arrays.to_device(np.ones(4, np.float32), device=d) for d in (1, 0, 1)]
    for x in xs:
        k[(1,)](x, x, x, 4)
    assert [launch["device"] for launch in gpus.launches] == [1, 0, 1]
    assert k.launcher.device == 1 and sorted(d for d, _ in gpus.loads) == [0, 1]
