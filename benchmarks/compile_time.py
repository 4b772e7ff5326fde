"""Compile time: tritium beside upstream Triton, each cell in fresh processes with empty caches.

    python3 benchmarks/compile_time.py [--no-gpu] [--repeat N] [--only CELL,...] [--out FILE.json]
                                       [--baseline OTHER_CHECKOUT]

Cells (each the best of `--repeat` fresh processes, after one untimed run that writes the
.pyc files; every process gets an empty TRITIUM_CACHE_DIR / TRITON_CACHE_DIR):

* `first call: <kernel>` for vector add, softmax, layer norm, fp16 GEMM and, when
  examples/flash_attention.py is there, attention forward: the process imports torch and
  starts CUDA (not counted), then imports the compiler with the kernel's module (`import`),
  then launches once and synchronizes (`first call`: specialise, compile, load, launch;
  for tritium also `compile_s`, the part of it in compile_jit).
  Upstream runs the same source (benchmarks/upstream_kernels.py).
* `autotune: fp16 matmul, 8 configs`: examples/matmul_autotune.py's kernel under 8 configs;
  its first call is the whole sweep (compile 8, time 8 with the default do_bench, launch).
* `cli: tritium compile vector add`: the whole `python -m tritium compile ... -o add.ptx`
  (with the back-end worker it forks; in turn, one in a single process: TRITIUM_CLI_WORKER=0).
* `profile` (tritium only): seconds per import group (numpy, xDSL, llvmlite, tritium's own)
  and, per kernel, per stage of `tritium.compile` (frontend, each pass, verify, lowering,
  LLVM, ptxas) in one process.

`--no-gpu` (any machine): tritium only; a first call is `tritium.compile` to cubin (PTX
without ptxas) for sm_90a (`ARCH`: what the JIT targets on an H100 / H200) instead of a
launch, and the autotune cell compiles the 8 configs through
the sweep's pool (tritium/jit/compile_pool.py) and, for comparison, one after another.
There, cells also give CPU seconds (the process's and its children's, ptxas included),
steadier than wall time on a shared machine.

`--baseline DIR` times another tritium checkout's first calls too (say, main before a
change), each round running this one, the baseline and upstream in turn.

Prints a markdown table (ratio = tritium / upstream; the goal is <= 0.5) and writes the raw
numbers to `--out`. Results: benchmarks/RESULTS.md, docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
ATTENTION = (REPO / "examples" / "flash_attention.py").exists()

# kernel: (module, name, signature and constexprs for tritium.compile, launch options,
#          the GPU launch as code over `K` (the kernel) and `torch`)
KERNELS = {
    "vector add": (
        "examples.vector_add", "add_kernel",
        "*fp32:16,*fp32:16,*fp32:16,i32:16", {"BLOCK_SIZE": 1024}, {},
        "x = torch.rand(4096, device='cuda'); y = torch.rand_like(x); o = torch.empty_like(x)\n"
        "K[(4,)](x, y, o, 4096, BLOCK_SIZE=1024)",
    ),
    "softmax": (
        "examples.softmax", "softmax_kernel",
        "*fp32:16,*fp32:16,i32:16,i32:16,i32:16", {"BLOCK_SIZE": 1024}, {"num_warps": 4},
        "x = torch.rand(256, 1024, device='cuda'); o = torch.empty_like(x)\n"
        "K[(256,)](o, x, 1024, 1024, 1024, BLOCK_SIZE=1024, num_warps=4)",
    ),
    "layer norm": (
        "examples.layer_norm", "layer_norm_kernel",
        "*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32:16,i32:16,fp32", {"BLOCK_SIZE": 1024}, {},
        "x = torch.rand(64, 1024, device='cuda'); y = torch.empty_like(x)\n"
        "w = torch.rand(1024, device='cuda'); b = torch.rand(1024, device='cuda')\n"
        "K[(64,)](x, y, w, b, 1024, 1024, 1e-5, BLOCK_SIZE=1024)",
    ),
    "fp16 GEMM": (
        "examples.matmul_fp16_grouped", "matmul_fp16_grouped_kernel",
        "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
        {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8},
        {"num_warps": 4, "num_stages": 3},
        "a = torch.randn(512, 512, device='cuda', dtype=torch.float16); b = torch.randn_like(a)\n"
        "c = torch.empty_like(a)\n"
        "K[(16,)](a, b, c, 512, 512, 512, 512, 1, 512, 1, 512, 1, BLOCK_M=128, BLOCK_N=128,\n"
        "         BLOCK_K=32, GROUP_M=8, num_warps=4, num_stages=3)",
    ),
}
_ATTN_CONST = {"HEAD_DIM": 64, "BLOCK_M": 64, "BLOCK_N": 64, "CAUSAL": False, "BF16": False}
if ATTENTION:
    KERNELS["attention forward"] = (
        "examples.flash_attention", "attn_fwd_kernel",
        "*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,fp32,i32:16," + ",".join(["i32:16"] * 8),
        _ATTN_CONST, {"num_warps": 4, "num_stages": 3},
        "q = torch.randn(4, 256, 64, device='cuda', dtype=torch.float16)\n"
        "k = torch.randn_like(q); v = torch.randn_like(q); o = torch.empty_like(q)\n"
        "lse = torch.empty(4, 256, device='cuda')\n"
        "K[(4, 4)](q, k, v, o, lse, 0.125, 256, *[16384, 64] * 4, HEAD_DIM=64, BLOCK_M=64,\n"
        "          BLOCK_N=64, CAUSAL=False, BF16=False, num_warps=4, num_stages=3)",
    )
# the largest kernels we have, for the profile only (tritium.compile, no launch)
PROFILE_ONLY = {}
if ATTENTION:
    _bwd = "*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,*fp32:16,fp32,i32:16,i32:16,i32:16"
    PROFILE_ONLY["attention backward dk/dv"] = (
        "examples.flash_attention", "attn_bwd_dkdv_kernel", _bwd, _ATTN_CONST,
        {"num_warps": 4, "num_stages": 3},
    )

# what the JIT targets on the GPU the benchmark runs on (Hopper: the dots on wgmma;
# compiler.target_arch), for the compiles without a GPU (`--no-gpu`, `profile`)
ARCH = "sm_90a"

# 8 configs of examples/matmul_autotune.py's kernel: (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages)
AUTOTUNE_CONFIGS = [
    (64, 64, 32, 4, 3), (128, 128, 32, 4, 4), (128, 256, 32, 8, 3), (64, 128, 32, 4, 4),
    (128, 64, 32, 4, 4), (64, 64, 64, 4, 4), (128, 128, 64, 8, 3), (32, 64, 32, 4, 5),
]  # fmt: skip
AUTOTUNE_CELL = "autotune: fp16 matmul, 8 configs"
CLI_CELL = "cli: tritium compile vector add"
CLI_ARGS = ["examples/vector_add.py:add_kernel", "-s", "*fp32:16,*fp32:16,*fp32:16,i32",
            "-c", "BLOCK_SIZE=1024"]  # fmt: skip

_PRELUDE = f"""
import json, os, sys, time
sys.path[:0] = [{str(REPO)!r}, {str(HERE)!r}]
def cpu():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
def done(**kw):
    print("RESULT " + json.dumps(kw))
"""


def _imports(impl: str, module: str, name: str) -> str:
    if impl == "tritium":
        return f"import tritium as T\nfrom {module} import {name} as K"
    return (
        "import triton as T\nimport upstream_kernels\n"
        f"upstream_kernels.SOURCES.setdefault({name!r}, {module.replace('.', '/') + '.py'!r})\n"
        f"K = upstream_kernels.{name}"
    )


def _configs(impl: str) -> str:
    return "[" + ", ".join(
        f"T.Config({{'BLOCK_M': {m}, 'BLOCK_N': {n}, 'BLOCK_K': {k}}}, num_warps={w}, num_stages={s})"
        for m, n, k, w, s in AUTOTUNE_CONFIGS
    ) + "]"


def gpu_script(impl: str, cell: str) -> str:
    if cell == AUTOTUNE_CELL:
        imports = _imports(impl, "examples.matmul_autotune", "matmul_kernel")
        imports += f"\nK = T.autotune({_configs(impl)}, key=['M', 'N', 'K'])(K)"
        call = (
            "a = torch.randn(1024, 1024, device='cuda', dtype=torch.float16)\n"
            "b = torch.randn_like(a); c = torch.empty_like(a)\n"
            "K[lambda m: (T.cdiv(1024, m['BLOCK_M']), T.cdiv(1024, m['BLOCK_N']))]"
            "(a, b, c, 1024, 1024, 1024)"
        )
    else:
        module, name, _, _, _, call = KERNELS[cell.removeprefix("first call: ")]
        imports = _imports(impl, module, name)
    timed, result = "", ""
    if impl == "tritium" and cell != AUTOTUNE_CELL:  # (the sweep compiles in worker processes)
        timed, result = _TIMED_COMPILE, ", compile_s=compile_s[0]"
    return _PRELUDE + f"""
import torch
torch.zeros(1, device="cuda"); torch.cuda.synchronize()
t0 = time.perf_counter()
{imports}
t1 = time.perf_counter()
{timed}
{call}
torch.cuda.synchronize()
t2 = time.perf_counter()
done(import_s=t1 - t0, first_call_s=t2 - t1{result})
"""


# tritium's first call: the seconds in compile_jit (specialisation to cubin, through the
# cache), to tell the compile from the rest of the call (loading, launching, torch)
_TIMED_COMPILE = """
import tritium.compiler
compile_s, _compile_jit = [0.0], tritium.compiler.compile_jit
def _timed_compile_jit(*a, **k):
    t = time.perf_counter()
    try:
        return _compile_jit(*a, **k)
    finally:
        compile_s[0] += time.perf_counter() - t
tritium.compiler.compile_jit = _timed_compile_jit
"""


def cpu_script(cell: str, workers: int | None = None) -> str:
    """--no-gpu: tritium.compile instead of a launch (to cubin, or PTX without ptxas)."""
    stop = "'cubin' if shutil.which('ptxas') or os.environ.get('TRITIUM_PTXAS') else 'ptx'"
    if cell == AUTOTUNE_CELL:
        body = f"""
import numpy as np
from tritium.jit.specialize import build_spec
from tritium.options import Options
a = np.zeros((1024, 1024), np.float16)
requests = []
for m, n, k, w, s in {AUTOTUNE_CONFIGS!r}:
    opts = dict(BLOCK_M=m, BLOCK_N=n, BLOCK_K=k, num_warps=w, num_stages=s)
    vals, launch = K.bind((a, a, a, 1024, 1024, 1024), opts)
    requests.append((build_spec(K, vals), Options.from_launch(launch, arch={ARCH!r}, debug=False)))
try:
    from tritium.jit import compile_pool
except ImportError:  # a tritium from before the pool: one after another
    kernels = [T.compiler.compile_jit(K, spec, options) for spec, options in requests]
else:
    kernels = compile_pool.compile_all(K, requests, workers={workers!r})
assert all(x is not None for x in kernels)
"""
        imports = _imports("tritium", "examples.matmul_autotune", "matmul_kernel")
    else:
        module, name, sig, const, opts, _ = KERNELS[cell.removeprefix("first call: ")]
        imports = _imports("tritium", module, name)
        body = f"T.compile(K, {sig!r}, {const!r}, arch={ARCH!r}, stop={stop}, **{opts!r})"
    return _PRELUDE + f"""
import shutil
c0, t0 = cpu(), time.perf_counter()
{imports}
c1, t1 = cpu(), time.perf_counter()
{body}
c2, t2 = cpu(), time.perf_counter()
done(import_s=t1 - t0, first_call_s=t2 - t1, import_cpu_s=c1 - c0, first_call_cpu_s=c2 - c1)
"""


def profile_script() -> str:
    kernels = {k: v[:5] for k, v in KERNELS.items()} | PROFILE_ONLY
    return _PRELUDE + f"""
import shutil
stop = "cubin" if shutil.which("ptxas") or os.environ.get("TRITIUM_PTXAS") else "ptx"
marks = [("start", time.perf_counter())]
import numpy
marks.append(("numpy", time.perf_counter()))
import xdsl.dialects.builtin, xdsl.dialects.arith, xdsl.dialects.math, xdsl.dialects.scf
import xdsl.dialects.cf, xdsl.pattern_rewriter, xdsl.transforms.common_subexpression_elimination
marks.append(("xdsl", time.perf_counter()))
import llvmlite.binding, llvmlite.ir
marks.append(("llvmlite", time.perf_counter()))
import tritium, tritium.compiler
getattr(tritium.compiler, "load_stages", lambda: None)()  # (a tritium from before it: lazily)
marks.append(("tritium", time.perf_counter()))
imports = {{b[0]: b[1] - a[1] for a, b in zip(marks, marks[1:])}}
import importlib
stages = {{}}
for label, (module, name, sig, const, opts) in {kernels!r}.items():
    K = getattr(importlib.import_module(module), name)
    timings = {{}}
    t = time.perf_counter()
    tritium.compile(K, sig, const, arch={ARCH!r}, stop=stop, timings=timings, **opts)
    timings["total"] = time.perf_counter() - t
    stages[label] = timings
done(imports=imports, stages=stages)
"""


def run_child(script: str, tmp: Path, timeout: float = 600) -> dict:
    """Run `script` in a fresh Python with empty kernel caches; its RESULT JSON + wall time."""
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=tmp))
    env = dict(os.environ, TRITIUM_CACHE_DIR=str(cache), TRITON_CACHE_DIR=str(cache))
    env.pop("TRITIUM_INTERPRET", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed package: .pyc files are kept
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                       timeout=timeout, cwd=tmp)  # fmt: skip
    wall = time.perf_counter() - t0
    shutil.rmtree(cache, ignore_errors=True)
    results = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    if p.returncode != 0 or not results:
        tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"exit {p.returncode}: {tail}")
    return dict(json.loads(results[-1][len("RESULT "):]), process_s=wall)


def best_of(script: str, repeat: int, tmp: Path) -> dict:
    run_child(script, tmp)  # writes the .pyc files (and warms the OS file cache)
    runs = [run_child(script, tmp) for _ in range(repeat)]
    return {k: min(r[k] for r in runs) for k in runs[0]}


def best_interleaved(scripts: dict[str, str], repeat: int, tmp: Path) -> dict:
    """best_of for several scripts taking turns (one process each per round), so that
    what the machine does meanwhile weighs on them alike: {name: best of its runs}."""
    for script in scripts.values():
        run_child(script, tmp)  # (the .pyc files)
    runs: dict[str, list] = {name: [] for name in scripts}
    for _ in range(repeat):
        for name, script in scripts.items():
            runs[name].append(run_child(script, tmp))
    return {n: {k: min(r[k] for r in rs) for k in rs[0]} for n, rs in runs.items()}


def baseline_script(script: str, baseline: str) -> str:
    """A tritium cell's script importing tritium (and the examples) from the checkout
    `baseline` instead of this one."""
    return script.replace(repr(str(REPO)), repr(str(Path(baseline).resolve())), 1)


def cli_cell(repeat: int, tmp: Path) -> dict:
    """`python -m tritium compile` of vector add to PTX: wall seconds of the whole process
    (the back-end worker it forks, tritium/back_end_worker.py, working beside it) and CPU
    seconds of the command's own process (not its worker's: the command kills it, once it
    answered, without waiting to reap it, so its CPU time reaches no rusage), best of
    `repeat`, after a run that writes the .pyc files: that one's seconds are
    `cold_process_s` / `cold_cpu_s`, the compile of tritium's, xDSL's and llvmlite's
    sources to bytecode included. In turn with each timed run, one in a single process
    (TRITIUM_CLI_WORKER=0): `alone_process_s` / `alone_cpu_s`. Medians too
    (`median_process_s`, `median_alone_process_s`). The CLI has no kernel cache: every
    run compiles."""
    import resource
    import statistics

    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(tmp / "pycache-cli"))  # (its own: cold)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("TRITIUM_CLI_WORKER", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    cmd = [sys.executable, "-m", "tritium", "compile", *CLI_ARGS, "-o", str(tmp / "add.ptx")]

    def timed(environ: dict) -> dict:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run(cmd, env=environ, cwd=REPO, capture_output=True, text=True,
                           timeout=300)  # fmt: skip
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            raise RuntimeError(f"exit {p.returncode}: {p.stderr.strip()[-300:]}")
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        return {"process_s": wall, "cpu_s": cpu}

    cold = timed(env)
    runs, alone = [], []
    for _ in range(repeat):
        runs.append(timed(env))
        alone.append(timed({**env, "TRITIUM_CLI_WORKER": "0"}))
    out = {k: min(r[k] for r in runs) for k in runs[0]}
    out |= {f"alone_{k}": min(r[k] for r in alone) for k in alone[0]}
    out["median_process_s"] = statistics.median(r["process_s"] for r in runs)
    out["median_alone_process_s"] = statistics.median(r["process_s"] for r in alone)
    return out | {"cold_process_s": cold["process_s"], "cold_cpu_s": cold["cpu_s"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-gpu", action="store_true", help="tritium only, compile without launching")
    ap.add_argument("--repeat", type=int, default=3, help="timed processes per cell (best of)")
    ap.add_argument("--only", help="comma-separated cell name prefixes")
    ap.add_argument("--out", help="write the raw numbers here (JSON)")
    ap.add_argument("--baseline", metavar="DIR",
                    help="another tritium checkout, timed in turn with this one on the first "
                    "calls (column 'baseline'), e.g. the main branch before a change")  # fmt: skip
    args = ap.parse_args(argv)
    cells = [f"first call: {k}" for k in KERNELS] + [AUTOTUNE_CELL, CLI_CELL, "profile"]
    if args.only:
        cells = [c for c in cells if any(c.startswith(p.strip()) for p in args.only.split(","))]
    impls = ["tritium"] if args.no_gpu else ["tritium", "upstream"]
    results: dict = {"gpu": not args.no_gpu, "date": time.strftime("%Y-%m-%d %H:%M"),
                     "cpus": os.cpu_count(), "cells": {}}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="tritium-compile-time-") as d:
        tmp = Path(d)
        for cell in cells:
            row: dict = {}
            try:
                if cell == CLI_CELL:
                    row["tritium"] = cli_cell(args.repeat, tmp)
                elif cell == "profile":
                    row["tritium"] = run_child(profile_script(), tmp)
                elif args.baseline and cell.startswith("first call: "):
                    scripts = (
                        {"tritium": cpu_script(cell)} if args.no_gpu
                        else {impl: gpu_script(impl, cell) for impl in impls}
                    )  # fmt: skip
                    scripts["baseline"] = baseline_script(scripts["tritium"], args.baseline)
                    row.update(best_interleaved(scripts, args.repeat, tmp))
                elif args.no_gpu:
                    row["tritium"] = best_of(cpu_script(cell), args.repeat, tmp)
                    if cell == AUTOTUNE_CELL:
                        row["tritium, serial"] = best_of(
                            cpu_script(cell, workers=1), args.repeat, tmp
                        )
                else:
                    for impl in impls:
                        row[impl] = best_of(gpu_script(impl, cell), args.repeat, tmp)
            except Exception as e:  # noqa: BLE001 - one failing cell must not stop the rest
                row["error"] = f"{type(e).__name__}: {e}"
            results["cells"][cell] = row
            print(f"{cell}: {json.dumps(row)}", file=sys.stderr, flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))
    print(markdown(results))
    return 0


def markdown(results: dict) -> str:
    """The summary table (and the tritium profile) of a run's results."""
    cells = results["cells"]
    lines = ["| cell | tritium (s) | upstream (s) | tritium / upstream |", "|---|---|---|---|"]
    for cell, row in cells.items():
        if cell == "profile":
            continue
        if "error" in row:
            lines.append(f"| {cell} | {row['error']} | | |")
            continue
        key = "process_s" if cell == CLI_CELL else "first_call_s"
        t = row.get("tritium", {}).get(key)
        u = row.get("upstream", {}).get(key)
        extra = ""
        if "tritium, serial" in row:
            extra = f" (serially {row['tritium, serial'][key]:.3f})"
        cpu = row.get("tritium", {}).get("cpu_s" if cell == CLI_CELL else "first_call_cpu_s")
        if cpu is not None:
            mine = ", its worker's not counted" if "alone_process_s" in row.get("tritium", {}) else ""
            extra += f" [cpu {cpu:.3f}{mine}]"
        compile_s = row.get("tritium", {}).get("compile_s")
        if compile_s is not None:
            extra += f" (compile {compile_s:.3f})"
        base = row.get("baseline")
        if base is not None:
            extra += f" (baseline {_fmt(base.get(key))}"
            if base.get("first_call_cpu_s") is not None:
                extra += f" [cpu {base['first_call_cpu_s']:.3f}]"
            if base.get("compile_s") is not None:
                extra += f" (compile {base['compile_s']:.3f})"
            extra += ")"
        alone = row.get("tritium", {}).get("alone_process_s")
        if alone is not None:
            extra += (f" (median {row['tritium']['median_process_s']:.3f}; in one process,"
                      f" without its worker: {alone:.3f} [cpu {row['tritium']['alone_cpu_s']:.3f}],"
                      f" median {row['tritium']['median_alone_process_s']:.3f})")  # fmt: skip
        cold = row.get("tritium", {}).get("cold_process_s")
        if cold is not None:
            extra += f" (without .pyc files: {cold:.3f} [cpu {row['tritium']['cold_cpu_s']:.3f}])"
        ratio = f"{t / u:.2f}" if t and u else ""
        lines.append(f"| {cell} | {_fmt(t)}{extra} | {_fmt(u)} | {ratio} |")
    prof = cells.get("profile", {}).get("tritium")
    if prof:
        lines += ["", "tritium profile (ms): imports " + ", ".join(
            f"{k} {v * 1000:.0f}" for k, v in prof["imports"].items())]  # fmt: skip
        names = list(prof["stages"])
        stages = list(dict.fromkeys(s for t in prof["stages"].values() for s in t))
        lines += ["", "| stage | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
        for s in stages:
            vals = [prof["stages"][n].get(s) for n in names]
            lines.append(f"| {s} | " + " | ".join(_fmt(v, 1000, 1) for v in vals) + " |")
    return "\n".join(lines)


def _fmt(v, scale: float = 1, digits: int = 3) -> str:
    return "" if v is None else f"{v * scale:.{digits}f}"


if __name__ == "__main__":
    sys.exit(main())
