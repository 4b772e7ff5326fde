"""Liger-Kernel and flash-linear-attention, unchanged, on tritium and on upstream Triton in
one run on one GPU: correctness (relative error against the drivers' references, forward
and backward), time (forward, forward+backward) and first-call time (compile included).

    python3 benchmarks/libs.py --libs DIR --out DIR [--only liger,fla] [--dtypes float32,bfloat16]
        [--backends tritium,triton] [--timeout 300] [--cases liger:rms_norm,...]
    python3 benchmarks/libs.py --table DIR      # the merged table of an earlier run

DIR for --libs holds the libraries (`pip install --no-deps --target DIR liger-kernel
fla-core einops`). Each (library, backend, dtype) runs as its own process of
scripts/run_liger.py / scripts/run_fla.py (`--llm --bench`), all at once, compiling in
parallel; timing starts once every process has checked its cases (or after --barrier-by
seconds), and a file lock lets one process time at a time, so a timing shares the GPU with
no other process's kernels (except a straggler still checking past --barrier-by). Each
process (or each of `--shards N`, every Nth case) writes its rows to
OUT/<lib>-<backend>-<dtype>.<shard>.json as it goes; the merged
markdown table goes to OUT/libs.md and stdout. Needs torch, a GPU, and upstream triton for
the comparison column.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRIVERS = {"liger": "scripts/run_liger.py", "fla": "scripts/run_fla.py"}


def _launch(lib, backend, dtype, shard, args, out: Path) -> subprocess.Popen:
    name = f"{lib}-{backend}-{dtype}.{shard}"
    cmd = [
        sys.executable, "-u", str(ROOT / DRIVERS[lib]), "--path", args.libs, "--llm", "--bench",
        "--backend", backend, "--dtype", dtype, "--gpu-lock", str(out / "gpu.lock"),
        "--json", str(out / f"{name}.json"), "--shard", f"{shard}/{args.shards}",
        "--barrier", f"{out / 'checked'}:{args.nprocs}", "--barrier-by", str(args.barrier_by),
    ]  # fmt: skip
    only = [c.split(":", 1)[1] for c in args.cases.split(",") if c.startswith(lib + ":")]
    if only:
        cmd += ["--only", ",".join(only)]
    env = dict(os.environ)
    env.setdefault("TRITIUM_CACHE_DIR", str(Path("/tmp") / "tritium-cache-libs"))
    log = open(out / f"{name}.log", "w")  # noqa: SIM115 - the child's
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)


def _fmt(v, spec=".1e") -> str:
    return "-" if v is None else format(v, spec)


def table(out: Path, unratioed: tuple[str, ...] = ()) -> str:
    """The merged markdown table of OUT/*.json (no time ratio for the libraries in
    `unratioed`: timings taken while other processes shared the GPU)."""
    rows: dict[tuple, dict] = {}
    for f in sorted(out.glob("*-*-*.json"), key=lambda f: (f.stem.split(".")[0], f.stem)):
        lib, backend, dtype = f.stem.split(".")[0].split("-")
        for r in json.loads(f.read_text()):
            rows.setdefault((lib, r["case"], dtype), {})[backend] = r
    lines = [
        "| library | op | dtype | fwd err tritium / upstream | bwd err tritium / upstream "
        "| tritium | upstream | fwd ms tritium / upstream | fwd+bwd ms tritium / upstream "
        "| fwd+bwd time ratio | first call s tritium / upstream |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (lib, case, dtype), by in rows.items():
        t, u = by.get("tritium", {}), by.get("triton", {})

        def pair(key, spec=".1e", t=t, u=u):
            return f"{_fmt(t.get(key), spec)} / {_fmt(u.get(key), spec)}"

        ratio = "-"
        if lib in unratioed:
            pass
        elif t.get("fwd_bwd_ms") and u.get("fwd_bwd_ms"):
            ratio = f"{t['fwd_bwd_ms'] / u['fwd_bwd_ms']:.2f}x"
        elif t.get("fwd_ms") and u.get("fwd_ms"):
            ratio = f"{t['fwd_ms'] / u['fwd_ms']:.2f}x (fwd)"
        lines.append(
            f"| {lib} | {case} | {dtype} | {pair('fwd')} | {pair('bwd')} "
            f"| {_status(t)} | {_status(u)} | {pair('fwd_ms', '.3f')} "
            f"| {pair('fwd_bwd_ms', '.3f')} | {ratio} | {pair('first_call_s', '.1f')} |"
        )
    return "\n".join(lines) + "\n"


def _status(r: dict) -> str:
    s = r.get("status", "not reached")
    return s if len(s) < 90 else s[:87] + "..."


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--libs", help="the folder the libraries are installed in")
    p.add_argument("--out", default="libs-out")
    p.add_argument("--only", default="liger,fla")
    p.add_argument("--dtypes", default="float32,bfloat16")
    p.add_argument("--backends", default="tritium,triton")
    p.add_argument("--cases", default="", help="lib:case,... (default: every case)")
    p.add_argument("--shards", type=int, default=1, help="processes per library/backend/dtype")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds for every process")
    p.add_argument(
        "--barrier-by", type=float, default=200.0,
        help="timing starts when every process has checked its cases, or after this many s",
    )  # fmt: skip
    p.add_argument("--table", default=None, help="print the table of an earlier --out DIR")
    p.add_argument("--unratioed", default="", help="libraries whose time ratio is left out")
    args = p.parse_args()
    if args.table:
        print(table(Path(args.table), tuple(args.unratioed.split(","))))
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = [
        (lib, backend, dtype, shard)
        for lib in args.only.split(",")
        for backend in args.backends.split(",")
        for dtype in args.dtypes.split(",")
        for shard in range(args.shards)
    ]
    args.nprocs = len(runs)
    procs = [_launch(*run, args, out) for run in runs]
    deadline = time.monotonic() + args.timeout
    for proc in procs:
        try:
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    md = table(out)
    (out / "libs.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
