"""Differential fuzzing: random kernels through tritium and upstream Triton, compared.

    # the interpreters (CPU): upstream in its own virtualenv (triton 3.6, torch, numpy < 2.4)
    python3 scripts/differential.py --upstream-python /work/venv-upstream/bin/python \\
        -n 3000 --seed 1 --out /tmp/diff
    # on a 16-core GPU machine: 2000 of tritium's compiled kernels against upstream's,
    # 12 shards (each a tritium process and an upstream worker), at most 330 s each
    TRITIUM_LIBDEVICE=auto python3 scripts/differential.py --gpu --upstream-python python3 \\
        -n 2000 --jobs 12 --budget 330 --out $OUT/diff

The kernels are the fuzzer's (tritium/testing/fuzz.py): elementwise arithmetic, casts,
loops, branches and reductions, and (`--features`, all by default) dots (fp16 / bf16 /
int8 / tf32 / ieee), scans, shape operations and gathers, random numbers and atomics.
`tl.randn` is compared within a bound unless TRITIUM_LIBDEVICE is on (auto) on the GPU (both
compilers then call libdevice: bit for bit).

Prints a summary (kernels, agreements, mismatches by class) and each finding's shrunk
kernel; `--out` keeps report.json and one runnable script per finding
(`python FILE tritium` / `python FILE triton`). Exit status 1 when a mismatch is new
(not in tritium/testing/differential/known.py). `--jobs K` runs K shards (seeds SEED..,
N/K kernels each) in parallel processes and merges their reports; `--budget S` stops
each shard after S seconds (what ran is reported). See docs/robustness.md.
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
sys.path.insert(0, str(ROOT))


def _args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("-n", type=int, default=500, help="kernels to generate (all shards)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gpu", action="store_true", help="compiled kernels on the GPU")
    ap.add_argument("--upstream-python", default=sys.executable,
                    help="a Python with triton and torch (default: this one)")  # fmt: skip
    ap.add_argument("--out", help="directory for report.json and the scripts")
    ap.add_argument("--jobs", type=int, default=1, help="parallel shards")
    ap.add_argument("--budget", type=float, help="seconds per shard")
    ap.add_argument("--max-statements", type=int, default=12)
    ap.add_argument("--features", default="all",
                    help="newer operations to generate: 'all', 'none' or a comma-separated "
                         "subset of dot,scan,shape,random,atomic")  # fmt: skip
    ap.add_argument("--shrink-new", type=int, default=3,
                    help="shrink at most this many new mismatches per signature")  # fmt: skip
    ap.add_argument("--no-fix-float-args", action="store_true",
                    help="leave upstream's interpreter's float-argument bug in place")  # fmt: skip
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per upstream kernel")
    ap.add_argument("--recheck", metavar="REPORT",
                    help="run again only the kernels that mismatched in REPORT (a shard's "
                         "report.json, made with the same -n, --seed, --max-statements "
                         "and --features): after classifying a new mismatch in known.py")  # fmt: skip
    ap.add_argument("--shard", type=int, help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def run_shard(opts, shard: int, n: int) -> dict:
    from tritium.testing import differential
    from tritium.testing.differential.upstream import Upstream

    mode = "gpu" if opts.gpu else "interpret"
    deadline = time.monotonic() + opts.budget if opts.budget else None
    from tritium.testing.fuzz_ops import FEATURES

    features = {"all": FEATURES, "none": ()}.get(opts.features)
    if features is None:
        features = tuple(f.strip() for f in opts.features.split(",") if f.strip())
    programs = differential.generate(n, opts.seed + shard, gpu=opts.gpu,
                                     max_statements=opts.max_statements,
                                     features=features)  # fmt: skip
    if opts.recheck:
        again = json.loads(Path(opts.recheck).read_text())["mismatched"]
        programs = [programs[i] for i in again]
    out = Path(opts.out) / f"shard{shard}" if opts.out else None
    with Upstream(opts.upstream_python, mode, timeout=opts.timeout,
                  fix_float_args=not opts.no_fix_float_args) as up:  # fmt: skip
        report = differential.run(programs, up, mode, shrink_new=opts.shrink_new, out_dir=out,
                                  deadline=deadline, log=lambda s: print(s, flush=True))  # fmt: skip
    print(report.text(), flush=True)
    return report.to_json()


def merge(reports: list[dict]) -> dict:
    total = {"mode": reports[0]["mode"], "versions": reports[0]["versions"], "shards": len(reports)}
    for key in ("programs", "agree", "undefined", "mismatches", "seconds", "upstream_restarts"):
        total[key] = sum(r[key] for r in reports)
    total["elements"] = {k: sum(r["elements"][k] for r in reports) for k in reports[0]["elements"]}
    for key in ("kinds", "classes"):
        total[key] = {}
        for r in reports:
            for k, v in r[key].items():
                total[key][k] = total[key].get(k, 0) + v
    total["findings"] = [f for r in reports for f in r["findings"]]
    return total


def main(argv=None) -> int:
    opts = _args(argv)
    if opts.shard is not None or opts.jobs == 1:
        shard = opts.shard or 0
        report = run_shard(opts, shard, opts.n if opts.jobs == 1 else -(-opts.n // opts.jobs))
        if opts.out and opts.jobs == 1:
            Path(opts.out).mkdir(parents=True, exist_ok=True)
            (Path(opts.out) / "report.json").write_text(json.dumps(report, indent=1))
        return 1 if report["classes"].get("new") else 0
    if not opts.out:
        sys.exit("--jobs needs --out (each shard writes its report there)")
    base = [a for a in (argv if argv is not None else sys.argv[1:])]
    procs = []
    for shard in range(opts.jobs):
        log = open(Path(opts.out).mkdir(parents=True, exist_ok=True) or
                   Path(opts.out) / f"shard{shard}.log", "w")  # fmt: skip
        procs.append(subprocess.Popen([sys.executable, __file__, *base, "--shard", str(shard)],
                                      stdout=log, stderr=subprocess.STDOUT, env=os.environ))  # fmt: skip
    for p in procs:
        p.wait()
    reports = []
    for shard in range(opts.jobs):
        f = Path(opts.out) / f"shard{shard}" / "report.json"
        if f.exists():
            reports.append(json.loads(f.read_text()))
        else:
            print(f"shard {shard} wrote no report: see {opts.out}/shard{shard}.log")
    if not reports:
        return 2
    total = merge(reports)
    (Path(opts.out) / "report.json").write_text(json.dumps(total, indent=1))
    print(json.dumps({k: v for k, v in total.items() if k != "findings"}, indent=1))
    for f in total["findings"]:
        print(
            f"\n== {f['class']} {f['known'] or ''} {f['script']}\n{f['shrunk_verdict'] or f['verdict']}"
        )
    return 1 if total["classes"].get("new") else 0


if __name__ == "__main__":
    sys.exit(main())
