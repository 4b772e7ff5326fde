"""The host API upstream's tutorials call, under upstream's names (issue 19, rule 11):
`tritium.runtime.driver.active`, `JITFunction.warmup`, `tritium.testing.do_bench`,
`perf_report` / `Benchmark`, `assert_close`."""

from __future__ import annotations

import csv
import shutil

import numpy as np
import pytest

import tritium
import tritium as triton  # the name upstream's code uses
import tritium.language as tl
from tritium.errors import ArgumentError, NoGPUError
from tritium.runtime import driver
from tritium.testing.bench import format_table, summarize


@tritium.jit
def axpy(x, y, out, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, a * tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


def _axpy_args(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    return x, y, np.zeros(n, np.float32)


# --------------------------------------------------------------------------- do_bench


def test_summarize_by_quantiles_and_modes():
    times = [4.0, 1.0, 3.0, 2.0, 10.0]
    assert summarize(times, [0.5], "mean") == 3.0
    assert summarize(times, [0.5, 0.25, 0.75], "mean") == [3.0, 2.0, 4.0]
    assert summarize(times, [0.1], "mean") == pytest.approx(1.4)  # interpolated
    assert summarize(times, None, "mean") == 4.0
    assert summarize(times, None, "median") == 3.0
    assert summarize(times, None, "min") == 1.0 and summarize(times, None, "max") == 10.0
    assert summarize(times, None, "all") == times


@pytest.mark.skipif(driver.gpu_available(), reason="times the host clock (no GPU)")
def test_do_bench_without_gpu_times_on_the_host():
    calls = []
    ms = triton.testing.do_bench(lambda: calls.append(1), warmup=1, rep=2)
    assert isinstance(ms, float) and ms >= 0 and len(calls) >= 8
    med, lo, hi = triton.testing.do_bench(lambda: sum(range(200)), quantiles=[0.5, 0.2, 0.8])
    assert lo <= med <= hi
    with pytest.raises(ValueError, match="return_mode"):
        triton.testing.do_bench(lambda: None, return_mode="average")


# --------------------------------------------------------------------------- perf_report


def _report(calls):
    @triton.testing.perf_report(
        [
            triton.testing.Benchmark(
                x_names=["M", "N"],
                x_vals=[8, (16, 32), 64],
                line_arg="provider",
                line_vals=["a", "b"],
                line_names=["A", "B"],
                plot_name="mn",
                args={"scale": 2},
                ylabel="units",
            ),
            triton.testing.Benchmark(
                x_names=["size"],
                x_vals=[1, 2, 3, 4, 5, 6, 7],
                line_arg="provider",
                line_vals=["a"],
                line_names=["A"],
                plot_name="sizes",
                args={},
            ),
        ]
    )
    def bench(provider, scale=1, M=None, N=None, size=None):
        calls.append((provider, M, N, size))
        if size is not None:
            return float(size)
        value = float(M * N * scale + (provider == "b"))
        return value, value - 1, value + 1

    return bench


def test_perf_report_prints_saves_and_returns(tmp_path, capsys):
    calls = []
    frames = _report(calls).run(print_data=True, save_path=str(tmp_path), return_df=True)
    out = capsys.readouterr().out
    assert "mn:" in out and "sizes:" in out
    assert out.splitlines()[1].split() == ["M", "N", "A", "B"]
    assert ("a", 16, 32, None) in calls and ("b", 8, 8, None) in calls
    rows = list(csv.reader((tmp_path / "mn.csv").open()))
    assert rows[0] == ["M", "N", "A", "B"]
    assert [float(v) for v in rows[2]] == [16, 32, 1024, 1025]
    assert (tmp_path / "results.html").read_text().count("<image") == 2
    assert len(frames) == 2
    if shutil.which("python3") and _has("matplotlib"):
        assert (tmp_path / "mn.png").stat().st_size > 0


def test_bench_points_spreads_the_x_values(monkeypatch):
    monkeypatch.setenv("TRITIUM_BENCH_POINTS", "3")
    calls = []
    _report(calls).run()
    assert [c[3] for c in calls if c[3] is not None] == [1, 4, 7]


def test_format_table_aligns_like_pandas():
    text = format_table(["N", "Triton"], [[128, 1.5], [4096, 20.25]])
    assert text.splitlines() == [
        "      N     Triton",
        "0   128   1.500000",
        "1  4096  20.250000",
    ]


def _has(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


# --------------------------------------------------------------------------- assert_close


def test_assert_close():
    triton.testing.assert_close(np.ones(4), np.ones(4) + 5e-3)
    triton.testing.assert_close(1.0, 1.0 + 1e-3)
    triton.testing.assert_close(np.ones(2), np.ones(2) * 1.1, atol=0, rtol=lambda dt: 0.2)
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 4"):
        triton.testing.assert_close(np.array([1.0, 2, 3, 4]), np.array([1.0, 2, 3, 5]))
    with pytest.raises(AssertionError, match="1.0 is not close to 2.0"):
        triton.testing.assert_close(1.0, 2.0)


# --------------------------------------------------------------------------- warmup


def test_warmup_compiles_without_launching(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    x, y, out = _axpy_args()
    k = axpy.warmup(x, y, out, 2.0, x.size, BLOCK=256, num_warps=2, grid=(1,))
    assert not out.any()  # nothing ran
    assert k.metadata.num_warps == 2 and k.runtime_params == ["x", "y", "out", "a", "n"]
    if shutil.which("ptxas"):  # interpreted, it reports what the GPU build needs
        assert k.n_regs == k.metadata.registers > 0
    assert axpy.warmup(x, y, out, 2.0, x.size, BLOCK=256, num_warps=2, grid=(1,)) is k
    k[(4,)](x, y, out, 2.0, x.size, 256)  # every parameter, as upstream's kernels take them
    np.testing.assert_allclose(out, 2 * x + y, rtol=1e-6)
    out[:] = 0
    k[(4,)](x, y, out, 3.0, x.size)  # or only the runtime ones
    np.testing.assert_allclose(out, 3 * x + y, rtol=1e-6)
    with pytest.raises(ArgumentError, match="takes 5 arguments"):
        k[(4,)](x, y, out)


def test_warmup_reports_ptxas_registers(ptxas, monkeypatch):
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    x, y, out = _axpy_args()
    k = axpy.warmup(x, y, out, 2.0, x.size, BLOCK=512, grid=(1,), arch="sm_90")
    assert k.metadata.registers > 0  # ptxas's report
    if not driver.gpu_available():  # (on a GPU: the loaded function's count)
        assert k.n_regs == k.metadata.registers
    assert k.n_regs > 0 and k.n_spills == 0 and k.metadata.shared == 0


# --------------------------------------------------------------------------- driver.active


def test_active_driver_names():
    active = triton.runtime.driver.active
    assert active is driver.active
    assert active.is_active() == driver.gpu_available()
    from tritium.runtime import driver as imported  # `from triton.runtime import driver`

    assert imported.active is active


@pytest.mark.skipif(driver.gpu_available(), reason="this machine has a GPU")
def test_active_driver_without_gpu():
    with pytest.raises(NoGPUError):
        driver.active.get_current_target()
    with pytest.raises(NoGPUError):
        driver.active.utils.get_device_properties(0)


@pytest.mark.gpu
def test_gpu_device_properties_under_upstreams_keys():
    props = driver.active.utils.get_device_properties(0)
    dev = driver.device(0)
    assert props["multiprocessor_count"] == dev.sm_count > 0
    assert props["max_shared_mem"] == dev.max_shared_per_block_optin >= 48 * 1024
    assert props["warpSize"] == 32 and props["max_num_regs"] >= 32 * 1024
    assert props["sm_clock_rate"] > 0 and props["mem_bus_width"] > 0
    target = driver.active.get_current_target()
    assert target.backend == "cuda" and target.warp_size == 32
    assert target.arch == dev.capability[0] * 10 + dev.capability[1]
    print(f"\n[host api] {props} {target}")


@pytest.mark.gpu
def test_gpu_torch_device_and_warmup_and_do_bench():
    torch = pytest.importorskip("torch")
    dev = driver.active.get_active_torch_device()
    assert dev == torch.device("cuda", 0)
    x = torch.randn(4096, device=dev)
    y = torch.randn(4096, device=dev)
    out = torch.empty_like(x)
    k = axpy.warmup(x, y, out, 2.0, x.numel(), BLOCK=1024, num_warps=4, grid=(1,))
    k._init_handles()
    assert 0 < k.n_regs <= 255 and k.n_spills == 0 and k.metadata.num_warps == 4
    k[(4, 1, 1)](x, y, out, 2.0, x.numel(), 1024)
    torch.testing.assert_close(out, 2 * x + y)
    med, lo, hi = triton.testing.do_bench(
        lambda: axpy[(4,)](x, y, out, 2.0, x.numel(), BLOCK=1024), quantiles=[0.5, 0.2, 0.8]
    )
    assert 0 < lo <= med <= hi < 1.0, (med, lo, hi)  # a 16 KB axpy: microseconds


@pytest.mark.gpu
def test_gpu_do_bench_with_device_arrays_uses_driver_events():
    from tritium.runtime import timing
    from tritium.runtime.arrays import to_device

    x, y, out = (to_device(a) for a in _axpy_args(1 << 20))
    call = lambda: axpy[(1024,)](x, y, out, 2.0, 1 << 20, BLOCK=1024)  # noqa: E731
    ms = triton.testing.do_bench(call, return_mode="median")
    times = triton.testing.do_bench(call, rep=20, return_mode="all")
    assert 0 < ms < 1.0 and len(times) >= 1 and all(t > 0 for t in times)
    assert timing.clock(prefer_torch=False).name == "cuda"


@pytest.mark.gpu
def test_gpu_launches_follow_torchs_current_stream():
    """On a torch stream of its own (non-blocking, as tutorial 02's benchmark makes), a
    kernel launched after torch's work sees it: both run on that stream, in order."""
    torch = pytest.importorskip("torch")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.zeros(1024, device="cuda")
        out = torch.empty_like(x)
        for value in (3.0, 5.0, 7.0):  # the general path first, then the fast path
            torch.cuda._sleep(20_000_000)  # keep the stream busy ~10 ms
            x.fill_(value)
            axpy[(1,)](x, x, out, 1.0, 1024, BLOCK=1024)
            s.synchronize()
            assert (out == 2 * value).all(), (value, out[:4])
        k = axpy.warmup(x, x, out, 1.0, 1024, BLOCK=1024, grid=(1,))
        torch.cuda._sleep(20_000_000)
        x.fill_(9.0)
        k[(1, 1, 1)](x, x, out, 1.0, 1024, 1024)  # a warmed-up kernel, as tutorial 02's
        s.synchronize()
        assert (out == 18.0).all()
