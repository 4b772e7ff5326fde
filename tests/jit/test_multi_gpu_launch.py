"""`kernel[grid](...)` on several (fake) GPUs with (fake) torch tensors
(tests/runtime/fake_gpus.py): real compiles, the real driver code, the fake driver deciding
which context a function belongs to and recording each launch's device and stream.

What must hold: a launch runs on its tensors' device, on torch's current stream there;
arguments on two devices are refused naming both, also once both devices have warm
fast-path entries; one compile per arch and one module load per device; a program that
only uses device 1 never touches device 0's context; autotuning is per device; the
interpreter touches no GPU."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tests.jit.test_launch_fast import fresh_kernel
from tritium.errors import ArgumentError
from tritium.runtime import arrays, devices, driver


def set_device(torch, gpus, d):
    """What torch.cuda.set_device(d) does: device d's context current, torch's device d."""
    torch.current = d
    gpus.cuDevicePrimaryCtxRetain(d)
    gpus.cuCtxSetCurrent(gpus.contexts[d])


def devices_launched(gpus):
    return [launch["device"] for launch in gpus.launches]


def test_the_fast_path_serves_each_device_where_it_is_current(fake_torch, fake_gpus):
    torch = fake_torch
    gpus = fake_gpus
    k = fresh_kernel()
    for d in (0, 1):
        set_device(torch, gpus, d)
        x = torch.empty(64, d)
        for _ in range(5):
            k[(1,)](x, x, x, 64, BLOCK_SIZE=64)
    assert devices_launched(gpus) == [0] * 5 + [1] * 5
    # the first call; then one per device, which made its entry
    assert k.general_calls == 3
    assert sorted(d for d, _ in gpus.loads) == [0, 1] and len(k.runners) == 2
    assert "get_device()" in k._launch._tritium_source


def test_a_launch_on_a_device_that_is_not_current_still_runs_there(fake_torch, fake_gpus):
    torch = fake_torch
    gpus = fake_gpus
    k = fresh_kernel()
    set_device(torch, gpus, 0)
    x1 = torch.empty(64, 1)
    for _ in range(4):
        k[(1,)](x1, x1, x1, 64, BLOCK_SIZE=64)
    assert devices_launched(gpus) == [1] * 4
    # device 1's context was pushed for the load and each launch, then popped
    assert gpus.current_device() == 0 and devices.current_device() == 0


def test_first_use_of_device_1_never_touches_device_0(fake_torch, fake_gpus):
    torch = fake_torch
    gpus = fake_gpus
    k = fresh_kernel()
    x1 = torch.empty(64, 1)
    for _ in range(3):
        k[(1,)](x1, x1, x1, 64, BLOCK_SIZE=64)
    assert gpus.retained == {1} and devices_launched(gpus) == [1] * 3


def test_arguments_on_two_devices_are_refused_also_after_warm_entries(fake_torch, fake_gpus):
    torch = fake_torch
    gpus = fake_gpus
    k = fresh_kernel()
    x0, x1 = torch.empty(64, 0), torch.empty(64, 1)
    for _ in range(3):
        k[(1,)](x0, x0, x0, 64, BLOCK_SIZE=64)
        k[(1,)](x1, x1, x1, 64, BLOCK_SIZE=64)
    n = len(gpus.launches)
    for args in [(x0, x1, x0), (x1, x1, x0)]:
        for _ in range(2):
            with pytest.raises(
                ArgumentError, match=r"is on cuda:[01] but argument '\w+' is on cuda:[01]"
            ):
                k[(1,)](*args, 64, BLOCK_SIZE=64)
    with pytest.raises(
        ArgumentError, match="'x_ptr' is on cuda:0 but argument 'y_ptr' is on cuda:1"
    ):
        k[(1,)](x0, x1, x0, 64, BLOCK_SIZE=64)
    assert len(gpus.launches) == n


def test_launches_go_to_torchs_current_stream_of_their_device(fake_torch, fake_gpus):
    torch = fake_torch
    gpus = fake_gpus
    k = fresh_kernel()
    torch.streams = {0: 0x100, 1: 0x200}
    set_device(torch, gpus, 1)
    x1 = torch.empty(64, 1)
    for _ in range(4):
        k[(1,)](x1, x1, x1, 64, BLOCK_SIZE=64)
    assert [launch["stream"] for launch in gpus.launches] == [0x200] * 4
    assert set(torch.stream_reads) == {1} and k.general_calls == 2
    k[(1,)](x1, x1, x1, 64, BLOCK_SIZE=64, stream=0x300)  # a stream given wins
    assert gpus.launches[-1]["stream"] == 0x300
    torch.streams[1] = 0x201  # `with torch.cuda.stream(s):` on device 1
    for _ in range(3):
        k[(1,)](x1, x1, x1, 64, BLOCK_SIZE=64)
    assert [launch["stream"] for launch in gpus.launches[-3:]] == [0x201] * 3
    x0 = torch.empty(64, 0)  # device 0 (not current): its own current stream
    k[(1,)](x0, x0, x0, 64, BLOCK_SIZE=64)
    assert gpus.launches[-1]["stream"] == 0x100 and gpus.launches[-1]["device"] == 0


@tritium.jit
def fill_kernel(n, BLOCK: tl.constexpr):
    pass


def test_a_launch_without_device_arguments_runs_on_torchs_current_device(fake_torch, fake_gpus):
    torch = fake_torch
    gpus = fake_gpus
    for d in (1, 0, 1):
        set_device(torch, gpus, d)
        for _ in range(3):
            fill_kernel[(1,)](7, BLOCK=16)
    assert devices_launched(gpus) == [1] * 3 + [0] * 3 + [1] * 3
    assert sorted(d for d, _ in gpus.loads) == [0, 1]


def test_devices_of_different_archs_get_their_own_compile(fake_torch, fake_gpus):
    torch = fake_torch
    gpus = fake_gpus
    gpus.archs = [(9, 0), (8, 0)]
    k = fresh_kernel()
    for d in (0, 1, 0, 1):
        x = torch.empty(64, d)
        k[(1,)](x, x, x, 64, BLOCK_SIZE=64)
    by_device = {r.launcher.device: r.launcher for r in k.runners.values()}
    assert sorted(by_device) == [0, 1]
    assert b"sm_90" in by_device[0].image and b"sm_80" in by_device[1].image
    assert devices_launched(gpus) == [0, 1, 0, 1]
    assert len({image for _, image in gpus.loads}) == 2 and len(gpus.loads) == 2


def test_autotuning_is_per_device(fake_torch, fake_gpus):
    torch = fake_torch
    gpus = fake_gpus
    timed = []

    def bench(call):
        call()
        launch = gpus.launches[-1]
        timed.append(launch["device"])
        return {2: 2.0, 1: 1.0}[launch["grid"][0]]  # BLOCK_SIZE 128 (one program) is faster

    configs = [tritium.Config({"BLOCK_SIZE": 64}), tritium.Config({"BLOCK_SIZE": 128})]
    tuner = tritium.autotune(configs, key=["n_elements"], do_bench=bench)(fresh_kernel())
    grid = lambda meta: (tritium.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)  # noqa: E731
    for d in (0, 1, 0, 1):
        x = torch.empty(128, d)
        tuner[grid](x, x, x, 128)
    assert timed == [0, 0, 1, 1]  # both configs timed on each device, on that device
    assert sorted(key[-1] for key in tuner.cache) == [0, 1]
    assert tuner.best_config.kwargs == {"BLOCK_SIZE": 128}
    assert [launch["grid"][0] for launch in gpus.launches[-2:]] == [1, 1]


def test_autotuning_times_on_the_launch_device_with_the_pool(fake_torch, fake_gpus, monkeypatch):
    """The built-in timer (CUDA events, runtime/timing.py) and the concurrent compiles of a
    sweep (compile_pool.py) on device 1 while device 0 is current: the events belong to
    device 1's context, the pool's runners launch there, and device 0 stays current."""
    torch = fake_torch
    gpus = fake_gpus
    monkeypatch.setenv("TRITIUM_COMPILE_WORKERS", "2")
    set_device(torch, gpus, 0)
    configs = [tritium.Config({"BLOCK_SIZE": 64}), tritium.Config({"BLOCK_SIZE": 128})]
    k = fresh_kernel()
    tuner = tritium.autotune(configs, key=["n_elements"], warmup=1, rep=1)(k)
    grid = lambda meta: (tritium.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)  # noqa: E731
    x = torch.empty(128, 1)
    tuner[grid](x, x, x, 128)
    assert gpus.events and set(gpus.events) == {1}
    assert set(devices_launched(gpus)) == {1}
    assert sorted(r.device for r in k.runners.values()) == [1, 1]
    assert gpus.current_device() == 0 and devices.current_device() == 0


def test_the_interpreter_touches_no_gpu(fake_torch, fake_gpus, monkeypatch):
    torch = fake_torch
    gpus = fake_gpus
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    k = fresh_kernel()
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    for _ in range(3):
        k[(1,)](x, x, out, 32, BLOCK_SIZE=32)
    np.testing.assert_array_equal(out, 2 * x)
    assert gpus.calls == [] and torch.stream_reads == [] and gpus.retained == set()


def test_the_interpreter_copies_device_arrays_on_their_device(fake_gpus, monkeypatch):
    """Interpreted, DeviceArrays on device 1 (device 0 current) are synchronized and copied
    in and back out in device 1's context (runtime/interpreter/live_arrays.py)."""
    gpus = fake_gpus
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    driver.device(0)
    x = arrays.to_device(np.arange(32, dtype=np.float32), device=1)
    out = arrays.zeros(32, np.float32, device=1)
    gpus.syncs.clear()
    fresh_kernel()[(1,)](x, x, out, 32, BLOCK_SIZE=32)
    np.testing.assert_array_equal(out.numpy(), 2 * np.arange(32, dtype=np.float32))
    assert gpus.syncs == [1] and gpus.current_device() == 0 and gpus.launches == []
