"""Run upstream Triton's tutorials on tritium, changing nothing but their import lines.

    python3 scripts/run_upstream_tutorials.py /path/to/tutorials [--interpret] [--jobs 4]
        [--timeout 600] [--only 01,03] [--logs DIR] [--bench-points N]

Each `NN-*.py` file of the folder is copied into a fresh working directory with its import
lines rewritten (`import triton` -> `import tritium as triton`, `import triton.language as
tl` -> `import tritium.language as tl`, `from triton.x import y` -> `from tritium.x import y`;
no other line is touched), then run in its own Python process with a timeout. A tutorial
passes when it exits with status 0: its own reference checks are asserts or raise, and it
prints what it compares. The table at the end gives, per tutorial: pass/FAIL, seconds, and
for a failure the last line of its error. `--interpret` sets TRITIUM_INTERPRET=1;
`--bench-points N` sets TRITIUM_BENCH_POINTS=N (perf_report measures N of each benchmark's
x values: the benchmarks, as written, take longer than a short GPU lease). `--logs DIR`
keeps each tutorial's output there. Upstream's files are never part of this repository:
fetch them yourself (python/tutorials/ of triton-lang/triton at the release you compare).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_IMPORT = re.compile(r"^(\s*)import triton(\.[\w.]+)?(\s+as\s+\w+)?\s*(#.*)?$")
_FROM = re.compile(r"^(\s*)from triton(\.[\w.]+)?\s+import\s+(.*)$")


def rewrite(source: str) -> tuple[str, int]:
    """The source with its triton import lines pointing at tritium, and how many changed."""
    out, changed = [], 0
    for line in source.splitlines(keepends=True):
        body = line.rstrip("\n")
        m = _IMPORT.match(body)
        if m:
            indent, sub, alias, _ = m.groups()
            if sub is None:
                new = f"{indent}import tritium{alias or ' as triton'}"
            else:
                new = f"{indent}import tritium{sub}{alias or ''}"
                if not alias:  # `import triton.language` binds `triton`: keep that name
                    new = f"{indent}import tritium{sub}; import tritium as triton"
            out.append(new + line[len(body) :])
            changed += 1
            continue
        m = _FROM.match(body)
        if m:
            indent, sub, names = m.groups()
            out.append(f"{indent}from tritium{sub or ''} import {names}" + line[len(body) :])
            changed += 1
            continue
        out.append(line)
    return "".join(out), changed


def run_one(path: Path, args) -> tuple[str, bool, float, str]:
    text, _ = rewrite(path.read_text())
    work = Path(tempfile.mkdtemp(prefix=f"tut-{path.stem[:12]}-"))
    script = work / path.name
    script.write_text(text)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["MPLBACKEND"] = "Agg"  # show_plots=True must not wait for a window
    env["PYTHONUNBUFFERED"] = "1"
    if args.interpret:
        env["TRITIUM_INTERPRET"] = "1"
    if args.bench_points:
        env["TRITIUM_BENCH_POINTS"] = str(args.bench_points)
    t0 = time.time()
    try:
        proc = subprocess.run(
            [sys.executable, script.name],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=args.timeout,
        )
        ok, out = proc.returncode == 0, proc.stdout + proc.stderr
        reason = "" if ok else _last_error(out) or f"exit status {proc.returncode}"
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        ok, reason = False, f"timed out after {args.timeout} s"
    seconds = time.time() - t0
    if args.logs:
        mode = "interp" if args.interpret else "gpu"
        Path(args.logs).mkdir(parents=True, exist_ok=True)
        (Path(args.logs) / f"{path.stem}.{mode}.log").write_text(out)
    shutil.rmtree(work, ignore_errors=True)
    return path.name, ok, seconds, reason


def _last_error(out: str) -> str:
    lines = [ln for ln in out.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.match(r"^[\w.]*(Error|Exception)\b", ln) or ": error:" in ln:
            return ln.strip()[:200]
    return lines[-1].strip()[:200] if lines else ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--interpret", action="store_true", help="TRITIUM_INTERPRET=1")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--only", default="", help="comma-separated file name prefixes (01,03)")
    ap.add_argument("--logs", default="", help="keep each tutorial's output in this folder")
    ap.add_argument("--bench-points", type=int, default=0, help="TRITIUM_BENCH_POINTS")
    args = ap.parse_args(argv)
    files = sorted(p for p in args.folder.glob("[0-9][0-9]*.py"))
    if args.only:
        prefixes = tuple(args.only.split(","))
        files = [p for p in files if p.name.startswith(prefixes)]
    if not files:
        print(f"no tutorials (NN-*.py) in {args.folder}", file=sys.stderr)
        return 2
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(lambda p: run_one(p, args), files))
    mode = "interpreter" if args.interpret else "GPU"
    print(f"\nupstream tutorials on tritium ({mode}):")
    for name, ok, seconds, reason in results:
        print(f"  {'pass' if ok else 'FAIL':4}  {seconds:7.1f} s  {name}  {reason}")
    return 0 if all(r[1] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
