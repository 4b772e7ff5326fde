"""tritium vs upstream Triton vs torch, side by side in one process, on the same kernels.

    python3 benchmarks/bench.py [--out DIR] [--only NAME,...] [--quick]

Groups (default: all but the optional ones): vector_add, softmax, causal_softmax, rms_norm,
layer_norm, launch, compile; optional: online_softmax, matmul, lowp_matmul (fp8_matmul: its
fp8 rows), attention (bench_attention.py; attention_fwd: its forward rows). tritium runs the kernels of
examples/ (and tritium_kernels.py), upstream Triton runs twins made from the same source (upstream_kernels.py),
with the same BLOCK sizes and num_warps. All inputs are torch CUDA tensors (tritium takes them
without a copy). Each result is checked against a float64 torch reference before it is
timed, with `triton.testing.do_bench` (median; CUDA events; L2 flushed before each run),
or CUDA events through torch when triton is missing.

Every cell is guarded: a part that fails reads "error: ..." and the rest goes on. A kernel
fault that kills the CUDA context (sticky errors) makes the remaining groups run in a fresh
child process. Results are written after each group, so a timeout keeps what was done:
DIR/bench.json, DIR/bench.md and DIR/vector_add.png.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(HERE), str(REPO)]

import bench_utils as bu  # noqa: E402
import results  # noqa: E402
from bench_attention import bench_attention, bench_attention_fwd  # noqa: E402
from bench_core import DEVICE, Bench  # noqa: E402
from bench_host import bench_compile, bench_launch  # noqa: E402
from bench_kernels import (  # noqa: E402
    bench_causal_softmax,
    bench_layer_norm,
    bench_matmul,
    bench_online_softmax,
    bench_rms_norm,
    bench_softmax,
    bench_vector_add,
)
from bench_lowp import bench_fp8_matmul, bench_lowp_matmul  # noqa: E402

BENCHES = {  # group name -> generator of rows; run in this order
    "vector_add": bench_vector_add,
    "softmax": bench_softmax,
    "causal_softmax": bench_causal_softmax,
    "rms_norm": bench_rms_norm,
    "layer_norm": bench_layer_norm,
    "launch": bench_launch,
    "compile": bench_compile,
    "online_softmax": bench_online_softmax,
    "matmul": bench_matmul,
    "lowp_matmul": bench_lowp_matmul,
    "fp8_matmul": bench_fp8_matmul,
    "attention": bench_attention,
    "attention_fwd": bench_attention_fwd,
}
GROUPS = tuple(BENCHES)
OPTIONAL = ("online_softmax", "matmul", "lowp_matmul", "fp8_matmul", "attention", "attention_fwd")  # run only when named in --only


def select_groups(only: str | None) -> list[str]:
    """The groups to run, in GROUPS order: --only's names, or all but the optional ones."""
    if not only:
        return [g for g in GROUPS if g not in OPTIONAL]
    names = [s.strip() for s in only.split(",") if s.strip()]
    unknown = [n for n in names if n not in GROUPS]
    if unknown:
        raise SystemExit(f"unknown group(s) {', '.join(unknown)}; choose from {', '.join(GROUPS)}")
    return [g for g in GROUPS if g in names]


# --------------------------------------------------------------------------- environment and output
def environment(b: Bench | None, quick: bool) -> dict:
    env = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "quick": quick,
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
    }
    try:
        out = (
            subprocess.run(
                ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            .stdout.strip()
            .splitlines()[0]
        )
        env["gpu"], env["driver"] = (s.strip() for s in out.split(",", 1))
    except Exception:
        pass
    if b is not None:
        torch = b.torch
        env["torch"], env["cuda"], env["timer"] = torch.__version__, torch.version.cuda, b.timer
        try:
            env.setdefault("gpu", torch.cuda.get_device_name(0))
        except Exception as e:
            env["gpu"] = bu.error_cell(e)
    for name in ("triton", "tritium"):
        try:
            env[name] = importlib.import_module(name).__version__
        except Exception as e:
            env[name] = f"not importable ({bu.error_cell(e)})"
    return env


def write_outputs(out: Path, env: dict, rows: list[dict]) -> list[str]:
    """Write bench.json, bench.md and (with vector add rows) vector_add.png; the names written."""
    written = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        bu.write_json(out / "bench.json", env, rows)
        data = json.loads((out / "bench.json").read_text())
        (out / "bench.md").write_text(results.results_markdown(data))
        written += ["bench.json", "bench.md"]
    except Exception as e:
        print(f"writing bench.json / bench.md failed: {bu.error_cell(e)}")
    try:
        if bu.plot_vector_add(rows, out / "vector_add.png", f"vector add, fp32, {env.get('gpu')}"):
            written.append("vector_add.png")
    except Exception as e:
        print(f"vector_add.png not written: {bu.error_cell(e)}")
    return written


def cuda_alive(torch) -> bool:
    try:
        torch.cuda.synchronize()
        return torch.ones(1, device=DEVICE).add_(1).item() == 2.0
    except Exception:
        return False


def run_in_child(groups: list[str], quick: bool) -> list[dict]:
    """The groups run by a fresh `bench.py` process (after the CUDA context died here)."""
    with tempfile.TemporaryDirectory(prefix="tritium-bench-") as tmp:
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--out",
            tmp,
            "--only",
            ",".join(groups),
        ]
        subprocess.run(cmd + (["--quick"] if quick else []), timeout=3000)
        return json.loads((Path(tmp) / "bench.json").read_text())["rows"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--out",
        default=os.environ.get("OUT", "bench-out"),
        help="directory for bench.json, bench.md, vector_add.png (default: $OUT, else bench-out)",
    )
    ap.add_argument("--only", help=f"comma-separated groups: {', '.join(GROUPS)}")
    ap.add_argument("--quick", action="store_true", help="fewer sizes, shorter timing runs")
    opts = ap.parse_args(argv)
    groups, out = select_groups(opts.only), Path(opts.out)
    try:
        b = Bench(opts.quick)
        if not b.torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device")
    except Exception as e:
        print(f"cannot benchmark: {bu.error_cell(e)}")
        write_outputs(
            out, environment(None, opts.quick), [bu.error_row(g, "-", "-", e) for g in groups]
        )
        return 1
    env = environment(b, opts.quick)
    print(
        f"{env.get('gpu')} | driver {env.get('driver')} | torch {env['torch']} | "
        f"triton {env['triton']} | tritium {env['tritium']} | {b.timer}"
    )
    rows: list[dict] = []
    for i, group in enumerate(groups):
        if not cuda_alive(b.torch):
            print(f"the CUDA context is lost: running {', '.join(groups[i:])} in a fresh process")
            try:
                rows += run_in_child(groups[i:], opts.quick)
            except Exception as e:
                rows.append(bu.error_row(group, "remaining groups", "-", e))
            break
        try:
            for row in BENCHES[group](b):
                rows.append(row)
                print(bu.format_table([row]).splitlines()[-1], flush=True)
        except Exception as e:  # a group's own code failed between rows
            rows.append(bu.error_row(group, "-", "-", e))
        if cuda_alive(b.torch):
            b.torch.cuda.empty_cache()
        write_outputs(out, env, rows)
    print()
    print(bu.format_table(rows))
    issues = bu.problems(rows)
    if issues:
        print("\nerrors and wrong results:\n" + "\n".join(f"  {p}" for p in issues))
    written = write_outputs(out, env, rows)
    print(f"\nwrote {', '.join(written) or 'nothing'} in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
