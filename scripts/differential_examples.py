"""Every example and GPU test kernel through tritium and upstream Triton, compared.

    # the interpreters (CPU): tritium's against upstream's (TRITON_INTERPRET=1)
    python3 scripts/differential_examples.py --upstream-python /work/venv-upstream/bin/python
    # on a GPU machine: the examples, then every kernel the GPU tests launch
    python3 scripts/differential_examples.py --gpu --upstream-python python3 \\
        --tests "-m gpu tests" --out $OUT/examples.md

Each example's `check(rng)` (examples/*.py) runs with tritium while every kernel launch
is recorded (the first `--per-kernel` launches of each kernel: arguments before, arrays
after); with `--tests`, so does a pytest session (its arguments in one string). Each
recorded launch is then replayed on upstream Triton in a worker process of
`--upstream-python` (its interpreter, or compiled on the GPU with `--gpu`) on the same
inputs, and every array argument is compared: the same bits ("agree"), within the
dtype's tolerance ("agree (close)"), or not ("differ (values)"; "differ (known: NAME)"
for an upstream bug of tritium/testing/differential/known.py); a kernel upstream cannot
run, or whose arguments cannot be handed over, is "upstream-refuses" with why; an
example whose own check fails in tritium is "tritium-fails". Prints a markdown table
(kernel, where, result, detail); `--out` writes it too, and `--json` the rows. Exit
status 1 when a kernel differs unexplained or an example fails. See docs/robustness.md and
tritium/testing/differential/replay.py.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shlex
import sys
import time
import traceback
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SKIP_EXAMPLES = {"__init__", "_common"}


def _args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--gpu", action="store_true", help="compiled kernels on the GPU")
    ap.add_argument("--upstream-python", default=sys.executable,
                    help="a Python with triton and torch (default: this one)")  # fmt: skip
    ap.add_argument("--examples", default="all",
                    help="comma-separated example names, 'all' or 'none'")  # fmt: skip
    ap.add_argument("--tests", default="",
                    help="pytest arguments whose kernel launches are replayed too")  # fmt: skip
    ap.add_argument("--per-kernel", type=int, default=2, help="launches recorded per kernel")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per upstream kernel")
    ap.add_argument("--out", help="write the markdown table here")
    ap.add_argument("--json", help="write the rows here")
    return ap.parse_args(argv)


def _examples(which: str) -> list[str]:
    if which == "none":
        return []
    names = sorted(p.stem for p in (ROOT / "examples").glob("*.py") if p.stem not in SKIP_EXAMPLES)
    return names if which == "all" else [n.strip() for n in which.split(",") if n.strip()]


def record(opts, rec) -> list:
    """Run the examples and tests with `rec` active; rows for those that failed in tritium."""
    import numpy as np

    from tritium.testing.differential.replay import Row

    rows = []
    for name in _examples(opts.examples):
        rec.where = f"examples/{name}.py"
        try:
            module = importlib.import_module(f"examples.{name}")
            module.check(np.random.default_rng(0))
        except Exception as exc:  # tritium's own check failed or the example needs more
            first = (traceback.format_exception_only(exc)[-1]).strip()[:200]
            rows.append(Row("(example)", rec.where, "tritium-fails", first))
    if opts.tests:
        import pytest

        class Where:
            @pytest.hookimpl(hookwrapper=True)
            def pytest_runtest_call(self, item):
                rec.where = item.nodeid
                yield

        pytest.main([*shlex.split(opts.tests), "-q", "-p", "no:cacheprovider"], plugins=[Where()])
    return rows


def main(argv=None) -> int:
    opts = _args(argv)
    if not opts.gpu:
        os.environ["TRITIUM_INTERPRET"] = "1"
    from tritium.testing.differential.replay import Recorder, replay, table
    from tritium.testing.differential.upstream import Upstream

    t0 = time.monotonic()
    with Recorder(per_kernel=opts.per_kernel) as rec:
        rows = record(opts, rec)
    print(f"recorded {len(rec.launches)} launches in {time.monotonic() - t0:.0f} s", flush=True)
    mode = "gpu" if opts.gpu else "interpret"
    with Upstream(opts.upstream_python, mode, timeout=opts.timeout) as up:
        for launch in rec.launches:
            row = replay(launch, up)
            print(f"{row.kernel} ({row.where}): {row.result} {row.detail}", flush=True)
            rows.append(row)
        versions = up.versions
    text = (f"tritium against upstream Triton {versions.get('triton')} ({mode}; torch "
            f"{versions.get('torch')}), {time.monotonic() - t0:.0f} s\n\n" + table(rows))  # fmt: skip
    print("\n" + text)
    if opts.out:
        Path(opts.out).parent.mkdir(parents=True, exist_ok=True)
        Path(opts.out).write_text(text + "\n")
    if opts.json:
        Path(opts.json).write_text(json.dumps([asdict(r) for r in rows], indent=1))
    unexplained = ("differ (values)", "differ (shape or dtype)", "tritium-fails")
    return 1 if any(r.result in unexplained for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
