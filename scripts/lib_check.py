"""What scripts/run_liger.py and scripts/run_fla.py share: load a Triton library unchanged
through `tritium.install_as_triton()`, run each op forward and backward against a torch
reference, and print a table.

A case is `Case(name, make, op, ref)`: `make(torch, device, dtype)` returns the inputs (a
tuple of tensors; those with `requires_grad` are differentiated), `op(*inputs)` and
`ref(*inputs)` return a tensor or a tuple of tensors. Both run on fresh clones of the same
inputs; the outputs are compared, then each is multiplied by the same random tensor,
summed, and back-propagated, and the inputs' gradients compared. A case passes when every
compared tensor is within `rtol` / `atol` (torch.allclose's rule) of the reference.
"""

from __future__ import annotations

import argparse
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


TOLERANCES = {"float32": (1e-4, 1e-4), "bfloat16": (2e-2, 2e-2), "float16": (5e-3, 5e-3)}


def parser(description: str, lib_dir_help: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--path", default=None, help=lib_dir_help)
    p.add_argument("--only", default=None, help="comma-separated case names to run")
    p.add_argument("--dtype", default="float32", choices=sorted(TOLERANCES))
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

    if args.interpret:
        os.environ["TRITIUM_INTERPRET"] = "1"
    sys.path.insert(0, str(ROOT))
    if args.path:
        sys.path.insert(0, str(Path(args.path).resolve()))
    import tritium

    tritium.install_as_triton()
    import torch

    device = "cpu" if args.interpret or not torch.cuda.is_available() else "cuda"
    return torch, device


def _tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _max_err(torch, got, want) -> float:
    return (got.float() - want.float()).abs().max().item() if got.numel() else 0.0


def run_case(torch, case: Case, device: str, dtype_name: str) -> dict:
    rtol, atol = TOLERANCES[dtype_name]
    dtype = getattr(torch, dtype_name)
    torch.manual_seed(0)
    inputs = _tuple(case.make(torch, device, dtype))

    def fresh():
        return tuple(
            x.detach().clone().requires_grad_(x.requires_grad) if torch.is_tensor(x) else x
            for x in inputs
        )

    row = {"case": case.name, "fwd": "", "bwd": "", "status": "ok", "seconds": 0.0}
    start = time.perf_counter()
    try:
        a_in, b_in = fresh(), fresh()
        got = [o for o in _tuple(case.op(*a_in)) if torch.is_tensor(o)]
        want = [o for o in _tuple(case.ref(*b_in)) if torch.is_tensor(o)]
        fwd = [_max_err(torch, g, w) for g, w in zip(got, want, strict=True)]
        ok = all(
            torch.allclose(g.float(), w.float(), rtol=rtol, atol=atol)
            for g, w in zip(got, want, strict=True)
        )
        row["fwd"] = f"{max(fwd):.2e}"
        if case.backward and any(torch.is_tensor(x) and x.requires_grad for x in a_in):
            weights = [torch.randn_like(w) for w in want]
            for outs in (got, want):
                terms = [(o.float() * c.float()).sum() for o, c in zip(outs, weights)]
                sum(t for t, o in zip(terms, outs) if o.requires_grad).backward()
            pairs = [
                (x.grad, y.grad)
                for x, y in zip(a_in, b_in)
                if torch.is_tensor(x) and x.requires_grad
            ]
            if any(g is None or w is None for g, w in pairs):
                raise RuntimeError("an input got no gradient")
            row["bwd"] = f"{max(_max_err(torch, g, w) for g, w in pairs):.2e}"
            ok = ok and all(
                torch.allclose(g.float(), w.float(), rtol=rtol, atol=atol) for g, w in pairs
            )
        if device == "cuda":
            torch.cuda.synchronize()
        row["status"] = "ok" if ok else "MISMATCH"
    except Exception as e:  # noqa: BLE001 - reported in the table
        last = traceback.format_exception_only(type(e), e)[-1].strip()
        row["status"] = f"ERROR: {last[:160]}"
    row["seconds"] = time.perf_counter() - start
    return row


def main(cases: list[Case], args, torch, device: str) -> int:
    only = set(args.only.split(",")) if args.only else None
    unknown = (only or set()) - {c.name for c in cases}
    if unknown:
        print(f"unknown cases: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    rows = [run_case(torch, c, device, args.dtype) for c in cases if only is None or c.name in only]
    print(f"\n| case | fwd max err | bwd max err | seconds | status |  ({args.dtype}, {device})")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['fwd']} | {r['bwd']} | {r['seconds']:.1f} | {r['status']} |")
    failed = [r for r in rows if r["status"] != "ok"]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} passed")
    return 1 if failed else 0
