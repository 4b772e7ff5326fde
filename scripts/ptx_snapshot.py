"""Snapshot every PTX the test suite emits, to prove a refactor leaves code generation alone.

    python3 scripts/ptx_snapshot.py record before.json [pytest args...]   # on the old commit
    python3 scripts/ptx_snapshot.py record after.json  [pytest args...]   # on the new one
    python3 scripts/ptx_snapshot.py diff before.json after.json           # exit 1 on a difference

`record` runs pytest in this process with a plugin that wraps llvmlite's
`TargetMachine.emit_assembly` (below every tritium layer, so it survives any reshuffle of
tritium's own modules) and files each PTX under the id of the test that emitted it and its
index within that test. The disk cache is pointed at an empty directory and hypothesis is
derandomized with no example database, so two runs of the same code emit the same list.
The PTX texts go beside the JSON (`<name>.ptx/<sha256>.ptx`), so `diff` shows the first
lines that differ. Tests that compile in a subprocess, and GPU tests on a machine without a
GPU, emit nothing here: run `record` on the device for those.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import pathlib
import sys
import tempfile


class _Recorder:
    def __init__(self, out: pathlib.Path):
        self.out = out
        self.texts = out.with_suffix(".ptx")
        self.texts.mkdir(parents=True, exist_ok=True)
        self.by_test: dict[str, list[str]] = {}
        self.current = "<collection>"

    def record(self, ptx: str) -> None:
        h = hashlib.sha256(ptx.encode()).hexdigest()
        f = self.texts / f"{h}.ptx"
        if not f.exists():
            f.write_text(ptx)
        self.by_test.setdefault(self.current, []).append(h)

    # pytest hooks
    def pytest_configure(self, config):
        from hypothesis import settings

        settings.register_profile("ptx-snapshot", derandomize=True, database=None)
        settings.load_profile("ptx-snapshot")

    def pytest_runtest_setup(self, item):
        self.current = item.nodeid

    def pytest_sessionfinish(self, session, exitstatus):
        self.out.write_text(json.dumps(self.by_test, indent=1, sort_keys=True))


def record(out: str, pytest_args: list[str]) -> int:
    import llvmlite.binding as llvm
    import pytest

    rec = _Recorder(pathlib.Path(out).resolve())
    emit = llvm.TargetMachine.emit_assembly

    def emit_and_record(self, module):
        ptx = emit(self, module)
        rec.record(ptx)
        return ptx

    llvm.TargetMachine.emit_assembly = emit_and_record
    sys.path.insert(0, os.getcwd())  # as `python3 -m pytest` does: tests import `tests.*`
    os.environ["TRITIUM_CACHE_DIR"] = tempfile.mkdtemp(prefix="ptx-snapshot-cache-")
    return pytest.main(["-q", "-p", "no:cacheprovider", *pytest_args], plugins=[rec])


def diff(a: str, b: str) -> int:
    pa, pb = pathlib.Path(a), pathlib.Path(b)
    ja, jb = json.loads(pa.read_text()), json.loads(pb.read_text())
    changed = 0
    for test in sorted(set(ja) | set(jb)):
        la, lb = ja.get(test, []), jb.get(test, [])
        if la == lb:
            continue
        changed += 1
        print(f"{test}: {len(la)} PTX before, {len(lb)} after")
        for i, (ha, hb) in enumerate(zip(la, lb)):
            if ha != hb:
                ta = (pa.with_suffix(".ptx") / f"{ha}.ptx").read_text().splitlines()
                tb = (pb.with_suffix(".ptx") / f"{hb}.ptx").read_text().splitlines()
                lines = list(difflib.unified_diff(ta, tb, f"before #{i}", f"after #{i}", n=1))
                print("\n".join("    " + ln for ln in lines[:40]))
                break
    total = sum(len(v) for v in ja.values())
    print(f"{changed} tests differ; {total} PTX before, {sum(len(v) for v in jb.values())} after")
    return 1 if changed else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "record":
        sys.exit(record(sys.argv[2], sys.argv[3:]))
    if len(sys.argv) == 4 and sys.argv[1] == "diff":
        sys.exit(diff(sys.argv[2], sys.argv[3]))
    print(__doc__)
    sys.exit(2)
