"""Run the GPU tests (`-m gpu`) sharded over several pytest processes, on the device machine.

    python3 scripts/gpu_tests.py [--jobs 6] [--out DIR] [--timeout 540] [pytest args / paths...]

Compiling is pure Python and bound by one CPU core per process, while the GPU sits mostly
idle: sharding the test files over processes cuts a ~15-minute serial run to a few minutes.
Tests are spread one by one (heaviest first, to the least-loaded shard), weighed by their
time in an earlier run's junit XML (`--weights shard-*.xml`) or else counted alike.
Each shard writes `shard-N.log` (and a junit XML) under --out; the summary lists every
failure and error with its shard log, and the exit status is non-zero if any shard failed.
Extra arguments go to every pytest process (e.g. `-k dot`, or test paths to restrict).
With `--snapshot`, each shard runs under scripts/ptx_snapshot.py and the shards' records are
merged into `snapshot.json` + `snapshot.ptx/` under --out (diff two with ptx_snapshot.py).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import time


def collect(extra: list[str]) -> list[str]:
    """The node ids of the selected GPU tests."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "gpu", "--collect-only", "-q", "-p",
         "no:cacheprovider", *extra],
        capture_output=True, text=True,
    ).stdout
    return [line.strip() for line in out.splitlines() if "::" in line]


def weights(xml_files: list[str]) -> dict[str, float]:
    """{node id: seconds} from junit XML files of an earlier run."""
    import xml.etree.ElementTree as ET

    out: dict[str, float] = {}
    for f in xml_files:
        for case in ET.parse(f).iter("testcase"):
            path = case.get("classname", "").replace(".", "/")
            mod, _, cls = path.rpartition("/")
            nodeid = f"{path}.py::{case.get('name')}"
            if cls and cls[:1].isupper():  # a test class
                nodeid = f"{mod}.py::{cls}::{case.get('name')}"
            out[nodeid] = float(case.get("time", 1.0))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=min(6, os.cpu_count() or 1))
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/gpu-tests"))
    ap.add_argument("--timeout", type=int, default=540, help="seconds per shard")
    ap.add_argument("--weights", nargs="*", default=[], help="junit XML of an earlier run")
    ap.add_argument("--snapshot", action="store_true", help="record every PTX emitted")
    args, extra = ap.parse_known_args()
    paths = [a for a in extra if not a.startswith("-") and pathlib.Path(a.split("::")[0]).exists()]
    flags = [a for a in extra if a not in paths]
    tests = collect(flags + paths)
    if not tests:
        print("no GPU tests selected")
        return 1
    w = weights(args.weights)
    shards: list[list[str]] = [[] for _ in range(min(args.jobs, len(tests)))]
    load = [0.0] * len(shards)
    for t in sorted(tests, key=lambda t: -w.get(t, 1.0)):
        i = load.index(min(load))
        shards[i].append(t)
        load[i] += w.get(t, 1.0)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    procs = []
    t0 = time.time()
    for i, shard in enumerate(shards):
        env = {**os.environ, "TRITIUM_CACHE_DIR": f"/tmp/tritium-cache-shard{i}",
               "PYTHONUNBUFFERED": "1"}
        log = open(out / f"shard-{i}.log", "w")
        runner = (["scripts/ptx_snapshot.py", "record", f"{out}/snap-{i}.json"] if args.snapshot
                  else ["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        cmd = ["timeout", str(args.timeout), sys.executable, *runner, "-m", "gpu", "-rfE",
               "--durations=5",
               f"--junitxml={out}/shard-{i}.xml", *flags, *shard]
        procs.append((i, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env), log))
    bad = 0
    totals: dict[str, int] = {}
    for i, p, log in procs:
        rc = p.wait()
        log.close()
        text = (out / f"shard-{i}.log").read_text()
        summary = [ln for ln in text.splitlines() if re.search(r"\d+ (passed|failed|errors?|skipped)", ln)]
        fails = [ln for ln in text.splitlines() if ln.startswith(("FAILED", "ERROR"))]
        print(f"shard {i} ({len(shards[i])} tests, weight {load[i]:.0f}) rc={rc}: "
              f"{summary[-1] if summary else 'no summary (timed out?)'}")
        for ln in fails:
            print("   ", ln)
        for n, what in re.findall(r"(\d+) (passed|failed|errors?|skipped)", summary[-1] if summary else ""):
            totals[what] = totals.get(what, 0) + int(n)
        bad |= rc not in (0, 5)
    print(f"wall {time.time() - t0:.0f} s over {len(shards)} shards; in all: "
          + (", ".join(f"{n} {what}" for what, n in totals.items()) or "no summary"))
    if args.snapshot:
        merged: dict = {}
        (out / "snapshot.ptx").mkdir(exist_ok=True)
        for i in range(len(shards)):
            f = out / f"snap-{i}.json"
            if f.exists():
                merged.update(json.loads(f.read_text()))
                for ptx in (out / f"snap-{i}.ptx").glob("*.ptx"):
                    ptx.replace(out / "snapshot.ptx" / ptx.name)
        (out / "snapshot.json").write_text(json.dumps(merged, indent=1, sort_keys=True))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
