"""Concurrency and soak (scripts/soak.py): threads launching different kernels on their
own streams, and many launches with the host's and the device's memory sampled.

Here: the script end to end in the interpreter (small counts). On a GPU (`-m gpu`): 8
threads x 300 launches on 8 streams, and 20 000 launches with RSS and device memory flat
(the 100 000-launch run with a plot is `python3 scripts/soak.py --out DIR`)."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "soak.py"


def _soak():
    spec = importlib.util.spec_from_file_location("soak_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_soak_script_in_the_interpreter(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--interpret", "--launches", "200", "--every", "50",
         "--warmup", "50", "--threads", "3", "--thread-launches", "12", "--n", "300",
         "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "soak.json").read_text())
    assert report["failures"] == [] and report["mode"] == "interpreter"
    assert report["threads"]["done"] == [12, 12, 12] and not report["threads"]["errors"]
    samples = report["soak"]["samples"]
    assert [s["launch"] for s in samples] == [0, 50, 100, 150, 200]
    assert all(s["rss_mib"] > 0 and s["device_used_mib"] is None for s in samples)


def test_the_soak_script_reports_a_wrong_result(tmp_path, monkeypatch):
    """The checks can fail: a kernel made wrong is caught in both phases."""
    soak = _soak()
    b = soak.Backend(interpret=True)
    soak.axpy.interpret = True
    real = soak.launch

    def wrong(b, x, y, out, n, a, stream=None):
        real(b, x, y, out, n, a + 1, stream)

    monkeypatch.setattr(soak, "launch", wrong)
    threads = soak.threads_phase(b, 2, 3, 64)
    assert len(threads["errors"]) == 2 and "wrong result" in threads["errors"][0]
    assert soak.soak_phase(b, 4, 2, 64, 2)["errors"]


@pytest.mark.gpu
def test_gpu_eight_threads_launch_different_kernels_on_their_own_streams():
    soak = _soak()
    b = soak.Backend(interpret=False)
    soak.axpy.interpret = None
    report = soak.threads_phase(b, threads=8, launches=300, n=4096)
    assert report["errors"] == [] and report["done"] == [300] * 8


@pytest.mark.gpu
def test_gpu_twenty_thousand_launches_keep_host_and_device_memory_flat():
    soak = _soak()
    b = soak.Backend(interpret=False)
    soak.axpy.interpret = None
    report = soak.soak_phase(b, launches=20_000, every=1000, n=4096, warmup=2000)
    assert report["errors"] == []
    growth = report["growth_after_warmup"]
    assert growth["rss_mib"] < 8, report["samples"]
    assert growth["device_used_mib"] < 2, report["samples"]  # device-wide: see soak_phase
