"""bench.py's host-side groups: launch overhead (us per launch, launches back to back) and
cold compile (a fresh process with an empty kernel cache), for tritium and upstream Triton."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_utils as bu
from bench_core import Bench, kernel

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def bench_launch(b: Bench):
    """Host cost per launch of the 4096-element vector add, launches back to back.

    A shared machine drifts by a microsecond or more within seconds, so the five paths are
    timed in interleaved rounds and each cell is its best round: a drift then shows in
    every path alike instead of favouring whichever ran at a quiet moment."""
    import launch_overhead as lo

    torch, n, grid = b.torch, 4096, (4,)
    count, repeat, rounds = (2000, 3, 1) if b.quick else (20000, 3, 4)
    x, y = b.randn(n), b.randn(n)
    out = torch.empty_like(x)
    sync = torch.cuda.synchronize

    def jit_launches(impl):
        k = kernel(impl, "add_kernel")

        def run(m):
            for _ in range(m):
                k[grid](x, y, out, n, BLOCK_SIZE=1024, num_warps=4)

        return run

    def torch_adds(m):
        for _ in range(m):
            torch.add(x, y, out=out)

    def launcher_runs():
        """tritium's Launcher alone (no JIT dispatch), and the bare cuLaunchKernel under it."""
        import tritium
        from tritium.compiler import target_arch
        from tritium.runtime import driver
        from tritium.runtime.launcher import Launcher

        ck = tritium.compile(
            kernel("tritium", "add_kernel"),
            "*fp32:16,*fp32:16,*fp32:16,i32",
            {"BLOCK_SIZE": 1024},
            num_warps=4,
            arch=target_arch(driver.current_arch()),
            stop="cubin",
        )
        lau = Launcher(ck.asm, ck.metadata)
        args = [x, y, out, n]
        lau(grid, args)
        sync()
        if not torch.equal(out, x + y):
            raise AssertionError("the Launcher's vector add gave a wrong result")

        def launcher_calls(m):
            for _ in range(m):
                lau(grid, args)

        return launcher_calls, lo.bare_launches(lau, grid)

    runs: dict = {}
    for name, make in [
        ("tritium", lambda: jit_launches("tritium")),
        ("upstream", lambda: jit_launches("upstream")),
        ("torch", lambda: torch_adds),
    ]:
        try:
            runs[name] = make()
        except Exception as e:
            runs[name] = e
    try:
        runs["launcher"], runs["bare"] = launcher_runs()
    except Exception as e:
        runs["launcher"] = runs["bare"] = e
    best: dict = {}
    for _ in range(rounds):
        for name, run in runs.items():
            if isinstance(run, Exception) or isinstance(best.get(name), Exception):
                continue
            try:
                t = lo.per_launch_us(run, count, repeat, sync)
                best[name] = min(t, best.get(name, t))
            except Exception as e:
                best[name] = e

    def cell(name):
        v = best.get(name, runs.get(name))
        return bu.error_cell(v) if isinstance(v, Exception) else v

    row = bu.make_row(
        "launch overhead",
        f"vector add {n}",
        "us/launch",
        note="kernel[grid](...) with torch args; torch.add(x, y, out=z); best of interleaved rounds",
    )
    row["tritium"], row["upstream"], row["torch"] = cell("tritium"), cell("upstream"), cell("torch")
    yield row
    lau_row = bu.make_row(
        "launch: tritium Launcher",
        f"vector add {n}",
        "us/launch",
        note="the compiled kernel's Launcher called directly",
    )
    lau_row["tritium"] = cell("launcher")
    yield lau_row
    bare_row = bu.make_row(
        "launch: bare cuLaunchKernel",
        f"vector add {n}",
        "us/launch",
        note="cuda-python, tritium's add_kernel: the floor from Python",
    )
    bare_row["tritium"] = cell("bare")
    yield bare_row


COLD_SCRIPT = """\
import json, sys, time
sys.path[:0] = [{here!r}, {repo!r}]
import torch
x = torch.randn(4096, device="cuda"); y = torch.randn(4096, device="cuda")
out = torch.full_like(x, float("nan")); torch.cuda.synchronize()
t0 = time.perf_counter()
{imports}
t1 = time.perf_counter()
add_kernel[(4,)](x, y, out, 4096, BLOCK_SIZE=1024, num_warps=4); torch.cuda.synchronize()
t2 = time.perf_counter()
print(json.dumps({{"import_s": t1 - t0, "first_call_s": t2 - t1, "ok": bool(torch.equal(out, x + y))}}))
"""
COLD_IMPORTS = {
    "tritium": "import tritium\nfrom examples.vector_add import add_kernel",
    "upstream": "import triton\nfrom upstream_kernels import add_kernel",
}


def cold_run(impl: str, tmp: Path, timeout: float = 300) -> dict:
    """Run the cold-start script for `impl` in a fresh process with an empty kernel cache;
    its JSON plus the process's wall time."""
    script = tmp / f"cold_{impl}.py"
    script.write_text(
        COLD_SCRIPT.format(here=str(HERE), repo=str(REPO), imports=COLD_IMPORTS[impl])
    )
    cache = Path(tempfile.mkdtemp(prefix=f"cache-{impl}-", dir=tmp))
    env = dict(os.environ, TRITIUM_CACHE_DIR=str(cache), TRITON_CACHE_DIR=str(cache))
    env.pop("TRITIUM_INTERPRET", None)
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tmp,
    )
    wall = time.perf_counter() - t0
    lines = p.stdout.strip().splitlines()
    if p.returncode != 0 or not lines:
        tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"cold-start script exited {p.returncode}: {tail}")
    return dict(json.loads(lines[-1]), wall_s=wall)


def bench_compile(b: Bench):
    """Cold compile of vector add in a fresh process with an empty kernel cache. Each script
    runs twice (the first run also writes .pyc files and warms the OS file cache); the
    second is reported, as three rows: the first call alone, import + first call, and the
    whole process (python, torch and CUDA start-up included)."""
    note = "fresh process, empty TRITIUM_CACHE_DIR / TRITON_CACHE_DIR"
    rows = [
        bu.make_row("cold compile: first call", "vector add", "s", note),
        bu.make_row("cold compile: import + first call", "vector add", "s", note),
        bu.make_row("cold compile: whole process", "vector add", "s", note),
    ]
    with tempfile.TemporaryDirectory(prefix="tritium-cold-") as tmp:
        for impl in ("tritium", "upstream"):
            try:
                cold_run(impl, Path(tmp))
                r = cold_run(impl, Path(tmp))
                if r["ok"]:
                    values = [r["first_call_s"], r["import_s"] + r["first_call_s"], r["wall_s"]]
                else:
                    values = [bu.wrong_cell("the vector add result differs from x + y")] * 3
            except Exception as e:
                values = [bu.error_cell(e)] * 3
            for row, v in zip(rows, values):
                row[impl] = v
    yield from rows
