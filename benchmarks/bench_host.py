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
    """Host cost per launch of the 4096-element vector add, launches back to back."""
    import launch_overhead as lo

    torch, n, grid = b.torch, 4096, (4,)
    count, repeat = (2000, 3) if b.quick else (20000, 5)
    x, y = b.randn(n), b.randn(n)
    out = torch.empty_like(x)
    sync = torch.cuda.synchronize

    def us(run):
        try:
            return lo.per_launch_us(run, count, repeat, sync)
        except Exception as e:
            return bu.error_cell(e)

    def jit_launches(impl):
        k = kernel(impl, "add_kernel")

        def run(m):
            for _ in range(m):
                k[grid](x, y, out, n, BLOCK_SIZE=1024, num_warps=4)

        return run

    def guarded(make):
        try:
            return make()
        except Exception as e:
            return bu.error_cell(e)

    def torch_adds(m):
        for _ in range(m):
            torch.add(x, y, out=out)

    row = bu.make_row(
        "launch overhead",
        f"vector add {n}",
        "us/launch",
        note="kernel[grid](...) with torch args; torch.add(x, y, out=z)",
    )
    row["tritium"] = guarded(lambda: us(jit_launches("tritium")))
    row["upstream"] = guarded(lambda: us(jit_launches("upstream")))
    row["torch"] = us(torch_adds)
    yield row

    # tritium's Launcher alone (no JIT dispatch), and the bare cuLaunchKernel under it
    lau_row = bu.make_row(
        "launch: tritium Launcher",
        f"vector add {n}",
        "us/launch",
        note="the compiled kernel's Launcher called directly",
    )
    bare_row = bu.make_row(
        "launch: bare cuLaunchKernel",
        f"vector add {n}",
        "us/launch",
        note="cuda-python, tritium's add_kernel: the floor from Python",
    )
    try:
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

        lau_row["tritium"] = us(launcher_calls)
        bare_row["tritium"] = us(lo.bare_launches(lau, grid))
    except Exception as e:
        lau_row["tritium"] = bare_row["tritium"] = bu.error_cell(e)
    yield lau_row
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
