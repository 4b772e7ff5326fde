"""`@tritium.autotune`: config selection and caching with a fake timer (the kernel's launch
recorded, numpy staging simulated on the host), hooks, pruning, errors, the interpreter
(first config), and on the GPU a tuned matmul."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.errors import ArgumentError, CompilationError
from tritium.jit import autotune as at


@tritium.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * factor, mask=m)


CONFIGS = [
    tritium.Config({"BLOCK": 64}, num_warps=2),
    tritium.Config({"BLOCK": 128}, num_warps=4, num_stages=2),
    tritium.Config({"BLOCK": 256}, num_warps=8),
]
GRID = lambda meta: (tritium.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731


class HostView:
    """Stands in for the GPU copy of a numpy argument (autotune._DeviceView)."""

    def __init__(self, host):
        self.data = host.copy()
        self.dtype = host.dtype
        self.freed = False

    def zero(self):
        self.data.fill(0)

    def download(self):
        return self.data.copy()

    def upload(self, saved):
        self.data[...] = saved

    def free(self):
        self.freed = True


class Recorder:
    """Replaces the JITFunction's launch: records each call, runs `effect(args, kw)`."""

    def __init__(self, effect=None):
        self.calls: list[tuple[tuple, dict]] = []
        self.effect = effect

    def __call__(self, *args, grid, **kw):
        # one shape for every call: runtime parameters positional, constexprs and options
        # by keyword (kernel[grid] passes everything by keyword to run)
        runtime = [n for n in scale_kernel.arg_names if n not in scale_kernel.constexpr_names]
        args = args + tuple(kw.pop(n) for n in runtime[len(args) :] if n in kw)
        self.calls.append((args, kw))
        if self.effect is not None:
            self.effect(args, kw)


@pytest.fixture
def tuned(monkeypatch):
    """A fresh Autotuner over scale_kernel with a recorder and a fake timer."""
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    monkeypatch.setattr(at, "_DeviceView", HostView)

    def make(times, effect=None, **options):
        rec = Recorder(effect)
        fn = tritium.jit(scale_kernel.fn)
        monkeypatch.setattr(fn, "run", rec)

        def bench(call):
            call()
            return times[rec.calls[-1][1]["BLOCK"]]

        tuner = tritium.autotune(CONFIGS, key=["n"], do_bench=bench, **options)(fn)
        return tuner, rec

    return make


def test_config():
    c = tritium.Config({"BLOCK_M": 128}, num_warps=8, num_stages=4)
    assert c.all_kwargs() == {"BLOCK_M": 128, "num_warps": 8, "num_stages": 4}
    assert str(c) == "BLOCK_M: 128, num_warps: 8, num_stages: 4"
    assert c == tritium.Config({"BLOCK_M": 128}, num_warps=8, num_stages=4)
    assert len({c, tritium.Config({"BLOCK_M": 128}, num_warps=8, num_stages=4)}) == 1
    assert tritium.Config({}, maxnreg=128).all_kwargs()["maxnreg"] == 128


def test_the_fastest_config_is_chosen_and_cached(tuned):
    tuner, rec = tuned({64: 3.0, 128: 1.0, 256: 2.0})
    x, out = np.ones(1000, np.float32), np.zeros(1000, np.float32)
    tuner[GRID](x, out, 1000, 2.0)
    assert len(rec.calls) == 4  # three timed, then the launch
    assert [kw["BLOCK"] for _, kw in rec.calls] == [64, 128, 256, 128]
    assert tuner.best_config == CONFIGS[1] and tuner.configs_timings[CONFIGS[0]] == 3.0
    timed_args, _ = rec.calls[0]
    assert isinstance(timed_args[0], HostView) and timed_args[0].freed  # staged numpy args
    final_args, final_kw = rec.calls[-1]
    assert final_args[0] is x and final_kw == {"BLOCK": 128, "num_warps": 4, "num_stages": 2}
    tuner[GRID](x, out, 1000, 3.0)  # same key (n): no timing
    assert len(rec.calls) == 5 and tuner.cache == {(1000, "float32", "float32", 0): CONFIGS[1]}
    tuner[GRID](x[:500], out[:500], 500, 2.0)  # a new n: timed again
    assert len(rec.calls) == 9 and len(tuner.cache) == 2


def test_reset_to_zero_and_restore_value(tuned):
    def effect(args, kw):  # the kernel accumulates into out
        out = args[1].data if isinstance(args[1], HostView) else args[1]
        seen.append(float(out[0]))
        out += 1

    seen: list[float] = []
    tuner, rec = tuned({64: 1.0, 128: 2.0, 256: 3.0}, effect, reset_to_zero=["out_ptr"])
    out = np.full(8, 5, np.float32)
    tuner[GRID](np.ones(8, np.float32), out, 8, 1.0)
    assert seen == [0.0, 0.0, 0.0, 0.0]  # zeroed before each timed run and before the launch
    assert out[0] == 1.0

    seen.clear()
    tuner, rec = tuned({64: 1.0, 128: 2.0, 256: 3.0}, effect, restore_value=["out_ptr"])
    out = np.full(8, 5, np.float32)
    tuner[GRID](np.ones(8, np.float32), out, 8, 1.0)
    assert seen == [5.0, 5.0, 5.0, 5.0]  # each timed run sees the original contents
    assert out[0] == 6.0


def test_failing_configs_are_skipped(tuned):
    def effect(args, kw):
        if kw["BLOCK"] == 128:
            raise CompilationError("out of shared memory")

    tuner, rec = tuned({64: 3.0, 128: 1.0, 256: 2.0}, effect)
    tuner[GRID](np.ones(8, np.float32), np.zeros(8, np.float32), 8, 1.0)
    assert tuner.best_config == CONFIGS[2] and tuner.configs_timings[CONFIGS[1]] == float("inf")

    def always(args, kw):
        raise CompilationError("nothing fits")

    tuner, _ = tuned({64: 1.0, 128: 1.0, 256: 1.0}, always)
    with pytest.raises(CompilationError, match="nothing fits"):
        tuner[GRID](np.ones(8, np.float32), np.zeros(8, np.float32), 8, 1.0)


def test_pruning(tuned):
    def keep_small(configs, named, **kw):
        return [c for c in configs if c.kwargs["BLOCK"] <= named["n"]]

    tuner, rec = tuned(
        {64: 2.0, 128: 1.0, 256: 0.5}, prune_configs_by={"early_config_prune": keep_small}
    )
    tuner[GRID](np.ones(100, np.float32), np.zeros(100, np.float32), 100, 1.0)
    assert len(rec.calls) == 1 and rec.calls[0][1]["BLOCK"] == 64  # one left: not timed

    model = lambda **kw: {64: 3, 128: 1, 256: 2}[kw["BLOCK"]]  # noqa: E731
    tuner, rec = tuned(
        {64: 0.1, 128: 5.0, 256: 1.0}, prune_configs_by={"perf_model": model, "top_k": 2}
    )
    tuner[GRID](np.ones(8, np.float32), np.zeros(8, np.float32), 8, 1.0)
    assert [kw["BLOCK"] for _, kw in rec.calls] == [128, 256, 256]


def test_argument_errors(tuned):
    tuner, _ = tuned({64: 1.0, 128: 1.0, 256: 1.0})
    with pytest.raises(ArgumentError, match="BLOCK"):
        tuner[GRID](np.ones(8, np.float32), np.zeros(8, np.float32), 8, 1.0, BLOCK=32)
    with pytest.raises(ArgumentError, match="no parameter named 'size'"):
        tritium.autotune(CONFIGS, key=["n"], reset_to_zero=["size"])(scale_kernel)
    # a key naming no parameter is left out with a warning, as upstream ignores it
    with pytest.warns(UserWarning, match="no parameter named 'size'; ignored"):
        assert tritium.autotune(CONFIGS, key=["n", "size"])(scale_kernel).keys == ["n"]
    with pytest.raises(ArgumentError, match="@tritium.jit"):
        tritium.autotune(CONFIGS, key=["n"])(lambda x: x)


def test_the_interpreter_takes_the_first_config(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    tuner = tritium.autotune(CONFIGS[::-1], key=["n"])(tritium.jit(scale_kernel.fn))
    x = np.arange(300, dtype=np.float32)
    out = np.zeros_like(x)
    tuner[GRID](x, out, 300, 2.0)
    np.testing.assert_array_equal(out, 2 * x)
    assert tuner.best_config == CONFIGS[2] and tuner.configs_timings is None


def test_the_interpreter_takes_the_first_config_pruning_keeps(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    seen = []

    def prune(configs, named_args, **kwargs):  # upstream's early_config_prune signature
        seen.append(named_args["n"])
        return [c for c in configs if c.kwargs["BLOCK"] <= named_args["n"]]

    tuner = tritium.autotune(
        CONFIGS[::-1], key=["n"], prune_configs_by={"early_config_prune": prune}
    )(tritium.jit(scale_kernel.fn))
    x = np.arange(100, dtype=np.float32)
    out = np.zeros_like(x)
    tuner[GRID](x, out, 100, 2.0)
    np.testing.assert_array_equal(out, 2 * x)
    assert seen == [100] and tuner.best_config == CONFIGS[0] and tuner.nargs is None


def test_a_do_bench_written_for_upstream_gets_quantiles():
    asked, ran = [], []

    def upstream_bench(kernel_call, quantiles):  # as upstream's Autotuner calls do_bench
        asked.append(quantiles)
        kernel_call()
        return [2.0, 1.0, 3.0]

    assert at._user_bench(upstream_bench, lambda: ran.append(1)) == 2.0
    assert asked == [(0.5, 0.2, 0.8)] and ran == [1]
    assert at._user_bench(lambda kernel_call: 1.5, lambda: None) == 1.5


# --------------------------------------------------------------------------- GPU


@tritium.autotune(
    configs=[
        tritium.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=3),
        tritium.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=8, num_stages=3),
        tritium.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=4, num_stages=4),
    ],
    key=["M", "N", "K"],
    reset_to_zero=["c_ptr"],
)
@tritium.jit
def tuned_matmul(a_ptr, b_ptr, c_ptr, M, N, K,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):  # fmt: skip
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)  # fmt: skip
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)  # fmt: skip
        acc = tl.dot(a, b, acc)
    c = c_ptr + rm[:, None] * N + rn[None, :]
    tl.store(c, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.gpu
def test_tuned_matmul_on_the_gpu(monkeypatch):
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    rng = np.random.default_rng(0)
    M, N, K = 256, 192, 320
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float16)
    grid = lambda meta: (tritium.cdiv(M, meta["BLOCK_M"]), tritium.cdiv(N, meta["BLOCK_N"]))  # noqa: E731
    tuned_matmul[grid](a, b, c, M, N, K)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.linalg.norm(c - ref) / np.linalg.norm(ref) < 1e-2
    timings = tuned_matmul.configs_timings
    assert len(timings) == 3 and all(0 < t < 100 for t in timings.values()), timings
    assert tuned_matmul.best_config == min(timings, key=timings.get)
    c2 = np.full((M, N), np.nan, np.float16)
    tuned_matmul[grid](a, b, c2, M, N, K)  # cached: no timing
    assert tuned_matmul.configs_timings is timings
    np.testing.assert_array_equal(c, c2)


def test_device_view_round_trips_a_numpy_argument_through_device_memory(monkeypatch):
    """The autotuner stages a numpy argument once in device memory (`_DeviceView`), zeroes
    it between configs and reads it back; here the driver's memory calls are host buffers,
    so the staging code runs on a machine without a GPU (it once called a renamed module
    attribute that only a GPU run reached)."""
    from tests.runtime.test_arrays import HostMemory
    from tritium.jit.autotune import _DeviceView

    mem = HostMemory(monkeypatch)
    host = np.arange(10, dtype=np.float32)[::2]  # strided: the view spans the whole range
    view = _DeviceView(host)
    assert view.__cuda_array_interface__["data"][0] == view.ptr
    assert np.frombuffer(view.download(), np.float32)[::2].tolist() == host.tolist()
    view.zero()
    assert not any(view.download())
    view.upload(np.arange(9, dtype=np.float32).tobytes())
    assert np.frombuffer(view.download(), np.float32).tolist() == list(range(9))
    view.free()
    assert mem.freed and view.alloc == 0
