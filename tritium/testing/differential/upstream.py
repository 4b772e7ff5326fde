"""Upstream Triton as a subprocess: `Upstream(python, mode)` runs kernels in `worker.py`.

    with Upstream("/work/venv-upstream/bin/python", mode="interpret") as up:
        print(up.versions)                           # {"triton": "3.6.0", "torch": ..., ...}
        ticket = up.submit(source, "fuzz_kernel", (2,), args, {"R": 4, "C": 8}, outputs=[2])
        ...                                          # run tritium meanwhile: both cores work
        result = up.result(ticket)                   # Ran([arrays]) or Failed("error text")

`args` are numpy arrays and Python numbers, in the kernel's order; `outputs` the indices
of the arrays to bring back. Arrays cross as .npy files in a private temporary directory.
`fix_float_args` (the default) makes upstream's interpreter pass a float argument as an
fp32 scalar, as its compiler does (worker.py's `_fix_float_args`: an upstream bug).
Requests are written by a thread and answers read by another, so any number may be in
flight while this process works. A request that takes longer than `timeout` seconds
kills the worker: it answers Failed("timeout ...") and a fresh worker takes the requests
still waiting; so does a worker that dies.
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tritium import config

WORKER = Path(__file__).with_name("worker.py")


@dataclass
class Ran:
    outputs: list  # numpy arrays, one per requested output
    seconds: float = 0.0


@dataclass
class Failed:
    error: str
    seconds: float = 0.0


class UpstreamUnavailable(RuntimeError):
    """The upstream Python cannot start the worker (no triton / torch there)."""


class Upstream:
    def __init__(
        self,
        python: str,
        mode: str = "interpret",
        timeout: float = 120.0,
        fix_float_args: bool = True,
    ):
        if mode not in ("interpret", "gpu"):
            raise ValueError(f"mode must be 'interpret' or 'gpu', not {mode!r}")
        self.python, self.mode, self.timeout = python, mode, timeout
        self.fix_float_args = fix_float_args
        self.dir = Path(tempfile.mkdtemp(prefix="tritium-differential-"))
        self._ids = iter(range(1, 1 << 62))
        self._pending: dict[int, dict] = {}  # id -> request, until answered
        self._files: dict[int, tuple] = {}  # id -> (input .npy paths, output .npy paths)
        self._answers: dict[int, dict] = {}
        self.restarts = 0
        self._start()
        reply = self._call({"id": 0, "ping": True}, startup=True)
        if not reply.get("ok"):
            self.close()
            raise UpstreamUnavailable(f"{python}: {reply.get('error')}")
        self.versions = reply["versions"]

    # ------------------------------------------------------------------ the process
    def _start(self) -> None:
        interpret = self.mode == "interpret"  # the worker must not see this tritium checkout
        env = config.child_environment(
            {"TRITON_INTERPRET": "1"} if interpret else {},
            drop=("PYTHONPATH",) if interpret else ("PYTHONPATH", "TRITON_INTERPRET"),
        )
        cmd = [self.python, str(WORKER), "--mode", self.mode]
        if self.fix_float_args:
            cmd.append("--fix-float-args")
        with open(self.dir / "worker.log", "ab") as log:
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                env=env,
                cwd=self.dir,
            )
        self._out: queue.Queue = queue.Queue()
        self._in: queue.Queue = queue.Queue()
        proc, out, inq = self.proc, self._out, self._in

        def read():
            for line in proc.stdout:
                out.put(json.loads(line))
            out.put(None)  # the worker exited

        def write():
            while True:
                line = inq.get()
                if line is None:
                    return
                try:
                    proc.stdin.write(line)
                    proc.stdin.flush()
                except (BrokenPipeError, OSError, ValueError):
                    return

        threading.Thread(target=read, daemon=True).start()
        threading.Thread(target=write, daemon=True).start()

    def _kill(self) -> None:
        self._in.put(None)
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def _restart(self) -> None:
        self._kill()
        self.restarts += 1
        self._start()
        for rid in sorted(self._pending):  # the requests the old worker never answered
            self._in.put(json.dumps(self._pending[rid]) + "\n")

    def _call(self, req: dict, startup: bool = False) -> dict:
        self._in.put(json.dumps(req) + "\n")
        try:
            reply = self._out.get(timeout=600 if startup else self.timeout)
        except queue.Empty:
            reply = None
        if reply is None:
            log = (self.dir / "worker.log").read_text(errors="replace")[-2000:]
            return {"ok": False, "error": f"the worker did not start:\n{log}"}
        return reply

    # ------------------------------------------------------------------ requests
    def submit(self, source: str, name: str, grid, args, kwargs=None, outputs=(),
               views=None) -> int:  # fmt: skip
        """`views`: argument index -> a torch dtype the array's bits are read as
        ("bfloat16" for an int16 array holding bf16 bits: numpy has no bf16)."""
        rid = next(self._ids)
        spec, outs = [], {}
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                path = self.dir / f"r{rid}_a{i}.npy"
                np.save(path, a)
                spec.append({"npy": str(path)})
                if views and i in views:
                    spec[-1]["view"] = views[i]
            else:
                spec.append({"value": a.item() if isinstance(a, np.generic) else a})
        for i in outputs:
            outs[str(i)] = str(self.dir / f"r{rid}_o{i}.npy")
        req = {"id": rid, "source": source, "name": name, "grid": list(grid), "args": spec,
               "kwargs": dict(kwargs or {}), "outputs": outs}  # fmt: skip
        self._files[rid] = [Path(a["npy"]) for a in spec if "npy" in a], list(outs.values())
        self._pending[rid] = req
        self._in.put(json.dumps(req) + "\n")
        return rid

    def result(self, rid: int) -> Ran | Failed:
        deadline = time.monotonic() + self.timeout
        while rid not in self._answers:
            try:
                reply = self._out.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                reply = "timeout"
            if reply is None or reply == "timeout":
                oldest = min(self._pending)  # the worker answers in order: it hung on this one
                why = "timeout" if reply == "timeout" else "the worker died"
                del self._pending[oldest]
                self._answers[oldest] = {"ok": False, "error": f"{why} (upstream {self.mode})"}
                self._restart()
                deadline = time.monotonic() + self.timeout
                continue
            self._pending.pop(reply["id"], None)
            self._answers[reply["id"]] = reply
        reply = self._answers.pop(rid)
        inputs, outputs = self._files.pop(rid)
        try:
            if not reply.get("ok"):
                return Failed(reply.get("error", "?"), reply.get("seconds", 0.0))
            try:
                outs = [np.load(path) for path in outputs]  # in the order asked for
            except OSError as exc:
                return Failed(f"the worker wrote no output: {exc}", reply.get("seconds", 0.0))
            return Ran(outs, reply.get("seconds", 0.0))
        finally:
            for path in inputs + [Path(o) for o in outputs]:
                path.unlink(missing_ok=True)

    def run(self, source: str, name: str, grid, args, kwargs=None, outputs=(),
            views=None) -> Ran | Failed:  # fmt: skip
        return self.result(self.submit(source, name, grid, args, kwargs, outputs, views))

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        if getattr(self, "proc", None) is not None:
            self._in.put(None)
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> Upstream:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def default_python() -> str:
    """This interpreter (a caller with a separate upstream virtualenv names its python)."""
    return sys.executable
