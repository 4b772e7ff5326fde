"""What scripts/run_liger.py and scripts/run_fla.py share: load a Triton library unchanged
through `tritium.install_as_triton()`, run each op forward and backward against a torch
reference, and print a table.

A case is `Case(name, make, op, ref)`: `make(torch, device, dtype)` returns the inputs (a
tuple of tensors; those with `requires_grad` are differentiated), `op(*inputs)` and
`ref(*inputs)` return a tensor or a tuple of tensors. Both run on fresh clones of the same
inputs; the outputs are compared, then each is multiplied by the same random tensor,
summed, and back-propagated, and the inputs' gradients compared. The error of a tensor is
its relative error ||got - want|| / ||want|| (the reference runs in float32 on upcast
inputs where the case says so); a case passes when every forward and backward error is
under the dtype's bound.

`--backend triton` runs the same script on an installed upstream triton instead (the
comparison column); `--bench` times forward and forward+backward (median of CUDA-event
timings) after every case was checked; with `--gpu-lock FILE` only one process times at a
time and with `--barrier DIR:N` none starts before N processes finished checking, so
several drivers can share a GPU, compiling in parallel, and still time alone;
`--json FILE` writes the rows; `--llm` uses LLM shapes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Case:
    name: str
    make: Callable
    op: Callable
    ref: Callable
    backward: bool = True


# relative-error bounds (see the module doc): float32 dots are tf32 by default (near 3e-4,
# more through chunked recurrences); bf16 operands land between 1e-3 and 1e-2
TOLERANCES = {"float32": 2e-3, "bfloat16": 2e-2, "float16": 5e-3}
LLM = False  # --llm: the cases' make() builds LLM-sized inputs


def parser(description: str, lib_dir_help: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--path", default=None, help=lib_dir_help)
    p.add_argument("--only", default=None, help="comma-separated case names to run")
    p.add_argument("--dtype", default="float32", choices=sorted(TOLERANCES))
    p.add_argument("--backend", default="tritium", choices=["tritium", "triton"])
    p.add_argument("--llm", action="store_true", help="LLM shapes (rows 4096, hidden 4096, ...)")
    p.add_argument("--bench", action="store_true", help="time fwd and fwd+bwd (GPU)")
    p.add_argument("--gpu-lock", default=None, help="a file to lock while timing")
    p.add_argument("--barrier", default=None, help="DIR:N: time after N processes checked")
    p.add_argument("--barrier-by", type=float, default=240.0, help="...or after this many s")
    p.add_argument("--json", default=None, help="write the rows to this file")
    p.add_argument("--shard", default=None, help="K/N: run every Nth case from the Kth (0-based)")
    p.add_argument(
        "--interpret",
        action="store_true",
        help="run the kernels in tritium's interpreter, on CPU tensors (slow)",
    )
    return p


def setup(args) -> tuple:
    """Put the library's folder on sys.path and serve `import triton` with tritium (before
    the library is imported). Returns (torch, device)."""
    import os

    global LLM
    LLM = args.llm
    if args.interpret:
        os.environ["TRITIUM_INTERPRET"] = "1"
    sys.path.insert(0, str(ROOT))
    if args.path:
        sys.path.insert(0, str(Path(args.path).resolve()))
    if args.backend == "tritium":
        import tritium

        tritium.install_as_triton()
    import torch

    device = "cpu" if args.interpret or not torch.cuda.is_available() else "cuda"
    return torch, device


def _tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _rel_err(got, want) -> float:
    got, want = got.detach().double(), want.detach().double()
    if not got.numel():
        return 0.0
    den = want.norm().item()
    num = (got - want).norm().item()
    return num / den if den > 0 else num


def _median_ms(torch, fn, reps: int = 20) -> float:
    fn()  # warm
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


class _Lock:
    """An exclusive lock on a file (or nothing without one), held while timing."""

    def __init__(self, path):
        self.path, self.f = path, None

    def __enter__(self):
        if self.path:
            import fcntl

            self.f = open(self.path, "a")  # noqa: SIM115
            fcntl.flock(self.f, fcntl.LOCK_EX)

    def __exit__(self, *exc):
        if self.f is not None:
            self.f.close()


def run_case(torch, case: Case, device: str, dtype_name: str, args=None) -> dict:
    bound = TOLERANCES[dtype_name]
    dtype = getattr(torch, dtype_name)
    torch.manual_seed(0)
    inputs = _tuple(case.make(torch, device, dtype))

    def fresh():
        return tuple(
            x.detach().clone().requires_grad_(x.requires_grad) if torch.is_tensor(x) else x
            for x in inputs
        )

    row = {"case": case.name, "dtype": dtype_name, "fwd": None, "bwd": None, "status": "ok"}
    row["first_call_s"] = 0.0
    start = time.perf_counter()
    try:
        a_in, b_in = fresh(), fresh()
        got = [o for o in _tuple(case.op(*a_in)) if torch.is_tensor(o)]
        if device == "cuda":
            torch.cuda.synchronize()
        row["first_call_s"] = time.perf_counter() - start
        want = [o for o in _tuple(case.ref(*b_in)) if torch.is_tensor(o)]
        if len(got) != len(want):
            raise RuntimeError(f"{len(got)} outputs, the reference has {len(want)}")
        row["fwd"] = max(_rel_err(g, w) for g, w in zip(got, want, strict=True))
        ok = row["fwd"] <= bound
        grads = case.backward and any(torch.is_tensor(x) and x.requires_grad for x in a_in)
        if grads:
            weights = [torch.randn_like(w, dtype=torch.float32) for w in want]
            for outs in (got, want):
                terms = [(o.float() * c).sum() for o, c in zip(outs, weights)]
                sum(t for t, o in zip(terms, outs) if o.requires_grad).backward()
            pairs = [
                (x.grad, y.grad)
                for x, y in zip(a_in, b_in)
                if torch.is_tensor(x) and x.requires_grad
            ]
            if any(g is None or w is None for g, w in pairs):
                raise RuntimeError("an input got no gradient")
            row["bwd"] = max(_rel_err(g, w) for g, w in pairs)
            ok = ok and row["bwd"] <= bound
        if device == "cuda":
            torch.cuda.synchronize()
        row["status"] = "ok" if ok else "MISMATCH"
        del got, want, a_in, b_in
    except Exception as e:  # noqa: BLE001 - reported in the table
        last = traceback.format_exception_only(type(e), e)[-1].strip()
        row["status"] = f"ERROR: {last[:300]}"
        if os.environ.get("LIB_CHECK_TRACEBACK"):
            traceback.print_exc()
    row["seconds"] = time.perf_counter() - start
    return row


def bench_case(torch, case: Case, device: str, dtype_name: str, row: dict, args) -> None:
    """Time `case` (its inputs made afresh): row["fwd_ms"], row["fwd_bwd_ms"]."""
    torch.manual_seed(0)
    inputs = _tuple(case.make(torch, device, getattr(torch, dtype_name)))
    grads = case.backward and any(torch.is_tensor(x) and x.requires_grad for x in inputs)

    def fresh():
        return tuple(
            x.detach().clone().requires_grad_(x.requires_grad) if torch.is_tensor(x) else x
            for x in inputs
        )

    x = fresh()

    def fwd():
        with torch.no_grad():
            case.op(*x)

    def fwd_bwd():
        y = fresh()
        outs = [o for o in _tuple(case.op(*y)) if torch.is_tensor(o) and o.requires_grad]
        sum(o.float().sum() for o in outs).backward()

    try:
        with _Lock(args.gpu_lock):
            row["fwd_ms"] = _median_ms(torch, fwd)
            row["fwd_bwd_ms"] = _median_ms(torch, fwd_bwd) if grads else None
    except Exception as e:  # noqa: BLE001 - reported in the table
        row["bench_error"] = traceback.format_exception_only(type(e), e)[-1].strip()[:300]


def _barrier(spec: str, by: float) -> None:
    """`DIR:N`: say this process is done with its correctness runs, then wait until N have
    said so (or until `by` seconds after the start), so the timings that follow share the
    GPU with no other process's compiles and checks."""
    folder, n = spec.rsplit(":", 1)
    Path(folder).mkdir(parents=True, exist_ok=True)
    (Path(folder) / str(os.getpid())).touch()
    while len(list(Path(folder).iterdir())) < int(n) and time.perf_counter() - _START < by:
        time.sleep(0.5)


_START = time.perf_counter()


def _fmt(v) -> str:
    return "" if v is None else f"{v:.2e}"


def main(cases: list[Case], args, torch, device: str) -> int:
    only = set(args.only.split(",")) if args.only else None
    unknown = (only or set()) - {c.name for c in cases}
    if unknown:
        print(f"unknown cases: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if args.shard:
        k, n = (int(x) for x in args.shard.split("/"))
        cases = [c for i, c in enumerate(cases) if i % n == k]
    cases = [c for c in cases if only is None or c.name in only]
    rows = []

    def save(row):
        print(json.dumps(row), flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))

    for c in cases:
        rows.append(run_case(torch, c, device, args.dtype, args))
        if device == "cuda":
            torch.cuda.empty_cache()
        save(rows[-1])
    if args.bench and device == "cuda":
        if args.barrier:
            _barrier(args.barrier, args.barrier_by)
        for c, row in zip(cases, rows):
            if not row["status"].startswith("ERROR"):
                bench_case(torch, c, device, args.dtype, row, args)
                torch.cuda.empty_cache()
                save(row)
    print(
        f"\n| case | fwd rel err | bwd rel err | first call s | fwd ms | fwd+bwd ms | status |"
        f"  ({args.backend}, {args.dtype}, {device})"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['case']} | {_fmt(r['fwd'])} | {_fmt(r['bwd'])} | {r['first_call_s']:.1f} | "
            f"{r.get('fwd_ms') or 0:.3f} | {r.get('fwd_bwd_ms') or 0:.3f} | {r['status']} |"
        )
    failed = [r for r in rows if r["status"] != "ok"]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} passed")
    return 1 if failed else 0
