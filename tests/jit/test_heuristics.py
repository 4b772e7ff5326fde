"""`@tritium.heuristics` (tritium/jit/heuristics.py): values computed per launch in the
interpreter (BLOCK from n, EVEN_N dropping the masks), their order, stacking with
`@tritium.autotune` both ways round, upstream's rules for values also passed by the
caller, errors, and the JIT fast path kept (on the fake device of test_launch_fast)."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from examples.vector_add import add_kernel
from tests.runtime.launcher_helpers import FakeDevice, f32_at, fake_device_array
from tritium.errors import ArgumentError, OutOfBoundsError
from tritium.jit.heuristics import Heuristics, JITHeuristics
from tritium.runtime.launcher import Launcher


@pytest.fixture(autouse=True)
def interpret(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")


def scale_fn(x_ptr, out_ptr, info_ptr, n, FACTOR: tl.constexpr, BLOCK: tl.constexpr,
             EVEN_N: tl.constexpr):  # fmt: skip
    """out = x * FACTOR; program 0 records (BLOCK, EVEN_N, FACTOR) in info."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN_N:  # no masks: an access past n would be an OutOfBoundsError in the interpreter
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * FACTOR)
    else:
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * FACTOR, mask=m)
    if tl.program_id(0) == 0:
        tl.store(info_ptr, BLOCK)
        tl.store(info_ptr + 1, EVEN_N)
        tl.store(info_ptr + 2, FACTOR)


BLOCK_FROM_N = {
    "BLOCK": lambda meta: min(tritium.next_power_of_2(meta["n"]), 128),
    "EVEN_N": lambda meta: meta["n"] % meta["BLOCK"] == 0,  # sees BLOCK: listed after it
}
GRID = lambda meta: (tritium.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731


def launch(kernel, n: int, grid=GRID, *args, **kwargs):
    """Run `kernel` on x = 0..n-1 (exactly n elements); returns (out, info)."""
    x = np.arange(n, dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    info = np.full(3, -1, np.int32)
    kernel[grid](x, out, info, n, *args, **kwargs)
    return out, info


@pytest.mark.parametrize(
    "n, block, even", [(256, 128, 1), (384, 128, 1), (300, 128, 0), (48, 64, 0), (64, 64, 1)]
)
def test_block_and_even_n_from_n(n, block, even):
    kernel = tritium.heuristics(BLOCK_FROM_N)(tritium.jit(scale_fn))
    assert isinstance(kernel, JITHeuristics) and isinstance(kernel, tritium.JITFunction)
    out, info = launch(kernel, n, FACTOR=3)
    np.testing.assert_array_equal(out, 3 * np.arange(n, dtype=np.float32))
    assert info.tolist() == [block, even, 3]


def test_even_n_really_drops_the_masks():
    # the kernel compiles (tritium.compile takes the wrapped kernel) with and without them
    kernel = tritium.heuristics(BLOCK_FROM_N)(tritium.jit(scale_fn))
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "info_ptr": "*i32", "n": "i32"}
    for even in (True, False):
        const = {"FACTOR": 2, "BLOCK": 64, "EVEN_N": even}
        ttir = tritium.compile(kernel, signature=sig, constexprs=const, stop="ttir").asm["ttir"]
        assert ("arith.cmpi slt" in ttir) is not even
    # a heuristic that lies (EVEN_N for n = 300) makes the unmasked branch run past n
    lying = tritium.heuristics({"BLOCK": lambda m: 128, "EVEN_N": lambda m: True})
    with pytest.raises(OutOfBoundsError):
        launch(lying(tritium.jit(scale_fn)), 300, FACTOR=1)


def test_meta_holds_the_arguments_options_and_earlier_values():
    seen = []

    def block(meta):
        seen.append(dict(meta))
        return 64

    kernel = tritium.heuristics({"BLOCK": block, "EVEN_N": lambda m: m["BLOCK"] == 64})(
        tritium.jit(scale_fn)
    )
    out, info = launch(kernel, 64, GRID, FACTOR=2, num_warps=2)
    assert info.tolist() == [64, 1, 2]
    (meta,) = seen
    assert sorted(meta) == ["FACTOR", "info_ptr", "n", "num_warps", "out_ptr", "x_ptr"]
    assert meta["n"] == 64 and meta["num_warps"] == 2 and meta["FACTOR"] == 2


def test_run_takes_the_grid_by_keyword():
    kernel = tritium.heuristics(BLOCK_FROM_N)(tritium.jit(scale_fn))
    x, out, info = np.ones(100, np.float32), np.zeros(100, np.float32), np.zeros(3, np.int32)
    kernel.run(x, out, info, 100, grid=GRID, FACTOR=5)
    np.testing.assert_array_equal(out, 5.0)
    assert info.tolist() == [128, 0, 5]


def test_a_launch_option_may_be_computed():
    kernel = tritium.heuristics({**BLOCK_FROM_N, "num_warps": lambda m: 2})(tritium.jit(scale_fn))
    out, info = launch(kernel, 200, FACTOR=1)
    assert info.tolist() == [128, 0, 1]


def test_a_keyword_value_is_replaced_as_upstream():
    # upstream's Heuristics.run sets kwargs[name] = heuristic(...): the caller's BLOCK goes
    kernel = tritium.heuristics(BLOCK_FROM_N)(tritium.jit(scale_fn))
    out, info = launch(kernel, 256, GRID, FACTOR=2, BLOCK=32, EVEN_N=False)
    assert info.tolist() == [128, 1, 2]
    np.testing.assert_array_equal(out, 2 * np.arange(256, dtype=np.float32))


def test_a_positional_value_is_an_error():
    kernel = tritium.heuristics(BLOCK_FROM_N)(tritium.jit(scale_fn))
    with pytest.raises(ArgumentError, match="multiple values for argument 'BLOCK'"):
        launch(kernel, 256, GRID, 2, 64)  # FACTOR=2, BLOCK=64 positionally
    with pytest.raises(TypeError):  # (ArgumentError is a TypeError, as upstream's)
        launch(kernel, 256, GRID, 2, 64)


def test_unknown_names_and_bad_values_are_errors():
    with pytest.raises(ArgumentError, match="no parameter named 'BLOK'"):
        tritium.heuristics({"BLOK": lambda m: 64})(tritium.jit(scale_fn))
    with pytest.raises(ArgumentError, match="must be a function"):
        tritium.heuristics({"BLOCK": 64})(tritium.jit(scale_fn))
    with pytest.raises(ArgumentError, match="dict"):
        tritium.heuristics([("BLOCK", lambda m: 64)])
    with pytest.raises(ArgumentError, match="decorates a @tritium.jit"):
        tritium.heuristics(BLOCK_FROM_N)(scale_fn)  # a plain function
    # a heuristic reading an argument that was not passed fails as upstream's: KeyError
    kernel = tritium.heuristics({"BLOCK": lambda m: m["BLOCK_N"], "EVEN_N": lambda m: 1})(
        tritium.jit(scale_fn)
    )
    with pytest.raises(KeyError, match="BLOCK_N"):
        launch(kernel, 64, (1,), FACTOR=1)


def test_calling_the_kernel_directly_is_an_error():
    kernel = tritium.heuristics(BLOCK_FROM_N)(tritium.jit(scale_fn))
    with pytest.raises(RuntimeError, match=r"launch it with scale_fn\[grid\]"):
        kernel(1, 2)


# ---------------------------------------------------------------------- with autotune

CONFIGS_64_FIRST = [tritium.Config({"BLOCK": 64}), tritium.Config({"BLOCK": 128})]
CONFIGS_128_FIRST = CONFIGS_64_FIRST[::-1]
EVEN_N = {"EVEN_N": lambda meta: meta["n"] % meta["BLOCK"] == 0}


@pytest.mark.parametrize(
    "configs, block, even", [(CONFIGS_64_FIRST, 64, 1), (CONFIGS_128_FIRST, 128, 0)]
)
def test_under_autotune_the_heuristics_see_the_config(configs, block, even):
    # upstream's usual order: @autotune @heuristics @jit; the interpreter takes configs[0]
    kernel = tritium.autotune(configs, key=["n"])(tritium.heuristics(EVEN_N)(tritium.jit(scale_fn)))
    out, info = launch(kernel, 192, FACTOR=2)
    assert info.tolist() == [block, even, 2]
    np.testing.assert_array_equal(out, 2 * np.arange(192, dtype=np.float32))
    assert kernel.best_config == configs[0]


def test_above_autotune_the_heuristics_run_first():
    # @heuristics @autotune @jit: FACTOR from n, BLOCK from the tuner, EVEN_N passed
    tuner = tritium.autotune(CONFIGS_64_FIRST, key=["n"])(tritium.jit(scale_fn))
    kernel = tritium.heuristics({"FACTOR": lambda m: 3 if m["n"] > 100 else 2})(tuner)
    assert isinstance(kernel, Heuristics) and not isinstance(kernel, tritium.JITFunction)
    assert kernel.arg_names == tuner.arg_names
    out, info = launch(kernel, 192, EVEN_N=True)
    assert info.tolist() == [64, 1, 3]
    np.testing.assert_array_equal(out, 3 * np.arange(192, dtype=np.float32))
    assert kernel.best_config == CONFIGS_64_FIRST[0]  # the tuner's attributes show through
    with pytest.raises(ArgumentError, match="come from the autotune configs"):
        tritium.heuristics({"BLOCK": lambda m: 64})(tuner)[GRID](
            np.ones(4, np.float32),
            np.ones(4, np.float32),
            np.ones(3, np.int32),
            4,
            EVEN_N=1,
            FACTOR=1,
        )


def test_under_autotune_every_timed_config_gets_its_values(monkeypatch):
    # outside the interpreter, with a fake timer and the JIT launch recorded
    monkeypatch.delenv("TRITIUM_INTERPRET")
    calls = []
    jit = tritium.jit(scale_fn)
    monkeypatch.setattr(jit, "run", lambda *a, grid, **kw: calls.append(kw))

    def bench(call):
        call()
        return {64: 2.0, 128: 1.0}[calls[-1]["BLOCK"]]

    kernel = tritium.autotune(CONFIGS_64_FIRST, key=["n"], do_bench=bench)(
        tritium.heuristics(EVEN_N)(jit)
    )
    x = fake_device_array(0x10000, (192,), np.float32)  # not numpy: nothing is staged
    kernel[GRID](x, x, fake_device_array(0x20000, (3,), np.int32), 192, FACTOR=1)
    assert [(kw["BLOCK"], kw["EVEN_N"]) for kw in calls] == [(64, True), (128, False), (128, False)]


# ---------------------------------------------------------------------- the fast path


def test_the_jit_fast_path_is_kept(monkeypatch):
    monkeypatch.delenv("TRITIUM_INTERPRET")
    dev = FakeDevice(monkeypatch)

    def run_add(raw, grid):
        import struct

        x, y, out = (struct.unpack("<Q", r)[0] for r in raw[:3])
        n = struct.unpack("<i", raw[3][:4])[0]
        f32_at(out, n)[:] = f32_at(x, n) + f32_at(y, n)

    def load(lau):  # Launcher._load on the fake device
        name = f"{lau.name}/{len(lau.params)}"
        dev.kernels[name] = run_add
        dev.bind(lau, name)

    monkeypatch.setattr(Launcher, "_load", load)
    jit = tritium.jit(add_kernel.fn)
    general = []
    run = jit.run
    monkeypatch.setattr(jit, "run", lambda *a, **kw: (general.append(1), run(*a, **kw))[1])
    kernel = tritium.heuristics({"BLOCK_SIZE": lambda m: tritium.next_power_of_2(m["n_elements"])})(
        jit
    )
    n = 100
    x, y, out = (fake_device_array(dev.mem_alloc(4 * n), (n,), np.float32) for _ in range(3))
    f32_at(x.ptr, n)[:] = np.arange(n)
    f32_at(y.ptr, n)[:] = 100.0
    for _ in range(5):
        f32_at(out.ptr, n)[:] = np.nan
        kernel[(1,)](x, y, out, n)
        np.testing.assert_array_equal(f32_at(out.ptr, n), np.arange(n) + 100.0)
    assert len(general) == 2  # as a bare kernel: the first call and the one making the entry
    assert len(dev.launches) == 5 and dev.launches[-1]["block"] == (128, 1, 1)
