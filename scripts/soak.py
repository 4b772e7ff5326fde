"""Soak and concurrency: many launches, host and device memory sampled, and threads.

    python3 scripts/soak.py --out $OUT/soak                 # on a GPU: 8 threads, 100 000 launches
    python3 scripts/soak.py --interpret --launches 300 --threads 2 --out /tmp/soak   # anywhere

Two phases, each checked:
  1. threads: `--threads` threads (8), each with its own CUDA stream and its own kernel
     (the same source specialised on a different constexpr, so each thread compiles and
     loads a different kernel), each launching `--thread-launches` times and checking
     every result;
  2. soak: `--launches` launches (100 000) of one small kernel through `kernel[grid]`
     (the warm fast path), the host's resident set size (VmRSS) and the device's used
     memory (cuMemGetInfo) sampled every `--every` launches; the output is checked at
     every sample.
Writes soak.json (the samples and a verdict: RSS and device memory growth from the first
sample taken after warm-up to the last) and, when matplotlib is installed, soak.png. Exit
status 1 when a result is wrong or memory grows by more than `--max-growth-mib`.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tritium  # noqa: E402
import tritium.language as tl  # noqa: E402


@tritium.jit
def axpy(x_ptr, y_ptr, out_ptr, n, A: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(
        out_ptr + offs, A * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m
    )


def rss_mib() -> float:
    """This process's resident set size (VmRSS), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Backend:
    """Arrays and streams on the GPU, or numpy for the interpreter."""

    def __init__(self, interpret: bool):
        self.interpret = interpret
        if not interpret:
            from tritium.runtime import arrays, driver

            self.arrays, self.driver = arrays, driver
            driver.device()

    def array(self, host: np.ndarray):
        return host.copy() if self.interpret else self.arrays.to_device(host)

    def host(self, a) -> np.ndarray:
        return a if self.interpret else a.numpy()

    def stream(self):
        if self.interpret:
            return None
        self.driver.device()  # contexts are per thread: make the device's current in this one
        err, s = self.driver.cuda().cuStreamCreate(0)
        self.driver.check(err, "cuStreamCreate")
        return s

    def close_stream(self, s) -> None:
        if s is not None:
            self.driver.cuda().cuStreamDestroy(s)

    def sync(self, s=None) -> None:
        if not self.interpret:
            self.driver.synchronize(None if s is None else int(s))

    def device_used_mib(self) -> float | None:
        if self.interpret:
            return None
        err, free, total = self.driver.cuda().cuMemGetInfo()
        self.driver.check(err, "cuMemGetInfo")
        return (total - free) / 2**20


def launch(b: Backend, x, y, out, n: int, a: int, stream=None) -> None:
    kw = {} if stream is None else {"stream": int(stream)}
    axpy[(triton_cdiv(n, 256),)](x, y, out, n, A=a, BLOCK=256, **kw)


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


def threads_phase(b: Backend, threads: int, launches: int, n: int) -> dict:
    errors: list = []
    done = [0] * threads
    start = threading.Barrier(threads)

    def work(t: int) -> None:
        s = b.stream()
        try:
            xh = np.arange(n, dtype=np.float32) + t
            yh = np.full(n, float(t), np.float32)
            x, y, out = b.array(xh), b.array(yh), b.array(np.zeros(n, np.float32))
            want = (t + 2) * xh + yh
            start.wait()
            for i in range(launches):
                launch(b, x, y, out, n, t + 2, s)
                if i % 50 == 0 or i == launches - 1:
                    b.sync(s)
                    got = b.host(out)
                    if not np.array_equal(got, want):
                        errors.append(f"thread {t} launch {i}: wrong result")
                        return
                done[t] += 1
        except Exception as exc:  # reported below
            errors.append(f"thread {t}: {type(exc).__name__}: {exc}")
        finally:
            b.close_stream(s)

    t0 = time.perf_counter()
    ts = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return {"threads": threads, "launches_each": launches, "done": done, "errors": errors,
            "seconds": round(time.perf_counter() - t0, 2)}  # fmt: skip


def soak_phase(b: Backend, launches: int, every: int, n: int, warmup: int) -> dict:
    xh = np.arange(n, dtype=np.float32)
    yh = np.ones(n, np.float32)
    x, y, out = b.array(xh), b.array(yh), b.array(np.zeros(n, np.float32))
    want = 3 * xh + yh
    samples, errors = [], []
    t0 = time.perf_counter()
    for i in range(launches + 1):
        if i % every == 0 or i == launches:
            b.sync()
            if not np.array_equal(b.host(out), want) and i > 0:
                errors.append(f"launch {i}: wrong result")
            samples.append({"launch": i, "seconds": round(time.perf_counter() - t0, 3),
                            "rss_mib": round(rss_mib(), 2),
                            "device_used_mib": b.device_used_mib()})  # fmt: skip
        if i < launches:
            launch(b, x, y, out, n, 3)
    base = next((s for s in samples if s["launch"] >= warmup), samples[0])
    last = samples[-1]
    growth = {"rss_mib": round(last["rss_mib"] - base["rss_mib"], 2)}
    if last["device_used_mib"] is not None:
        # device-wide (cuMemGetInfo): other processes' allocations come and go, a leak stays,
        # so the growth is the least of the last three samples over the baseline
        tail = [s["device_used_mib"] for s in samples[-3:]]
        growth["device_used_mib"] = round(min(tail) - base["device_used_mib"], 2)
    return {"launches": launches, "every": every, "warmup": warmup, "samples": samples,
            "growth_after_warmup": growth, "errors": errors,
            "launches_per_second": round(launches / max(last["seconds"], 1e-9), 1)}  # fmt: skip


def plot(report: dict, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    samples = report["soak"]["samples"]
    xs = [s["launch"] for s in samples]
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot(xs, [s["rss_mib"] for s in samples], label="host RSS (MiB)")
    if samples[0]["device_used_mib"] is not None:
        ax2 = ax.twinx()
        ax2.plot(xs, [s["device_used_mib"] for s in samples], color="C1",
                 label="device used (MiB)")  # fmt: skip
        ax2.set_ylabel("device memory used (MiB)")
        ax2.legend(loc="lower right")
    ax.set_xlabel("launches")
    ax.set_ylabel("host RSS (MiB)")
    ax.set_title(f"tritium soak: {report['soak']['launches']} launches ({report['mode']})")
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--interpret", action="store_true", help="numpy interpreter, no GPU")
    ap.add_argument("--launches", type=int, default=100_000)
    ap.add_argument("--every", type=int, default=1000, help="launches between samples")
    ap.add_argument("--warmup", type=int, default=1000, help="launches before the baseline")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--thread-launches", type=int, default=500)
    ap.add_argument("--n", type=int, default=4096, help="elements per array")
    ap.add_argument("--max-growth-mib", type=float, default=16.0)
    ap.add_argument("--out", required=True)
    opts = ap.parse_args(argv)
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    b = Backend(opts.interpret)
    axpy.interpret = True if opts.interpret else None
    report = {"mode": "interpreter" if opts.interpret else "gpu",
              "threads": threads_phase(b, opts.threads, opts.thread_launches, opts.n),
              "soak": soak_phase(b, opts.launches, opts.every, opts.n, opts.warmup)}  # fmt: skip
    growth = report["soak"]["growth_after_warmup"]
    failures = report["threads"]["errors"] + report["soak"]["errors"]
    failures += [f"{k} grew {v} MiB" for k, v in growth.items() if v > opts.max_growth_mib]
    report["failures"] = failures
    (out / "soak.json").write_text(json.dumps(report, indent=1))
    report["plot"] = str(out / "soak.png") if plot(report, out / "soak.png") else None
    print(json.dumps({"mode": report["mode"], "threads": {k: v for k, v in report["threads"].items()},
                      "soak": {k: v for k, v in report["soak"].items() if k != "samples"},
                      "plot": report["plot"], "failures": failures}, indent=1))  # fmt: skip
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
