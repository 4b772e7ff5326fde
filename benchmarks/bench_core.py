"""What bench.py's groups share: the kernels by name, the timer, correctness checks, and
`Bench.cell`, which turns one implementation of one benchmark into one guarded table cell.

    b = Bench(quick=False)
    row = bu.make_row("RMSNorm", "8192x1536", "GB/s")
    b.fill(row, "rms_norm_simple_kernel", lambda k, out: k[(rows,)](x, w, out, ...),
           lambda: F.rms_norm(x, ...), ref, b.allclose(ref, 1e-4, 1e-5), nbytes)

`fill` runs tritium's kernel (examples/), its upstream twin (upstream_kernels.py) and torch,
each checked against `ref` before it is timed; a failure fills that cell with
"error: ..." or "WRONG: ..." and the others still run.
"""

from __future__ import annotations

import functools
import importlib

import bench_utils as bu

DEVICE = "cuda"
TRITIUM_KERNELS = {  # kernel name -> module defining its tritium version
    "add_kernel": "examples.vector_add",
    "softmax_kernel": "examples.softmax",
    "softmax_causal_simple_kernel": "examples.causal_softmax",
    "rms_norm_simple_kernel": "examples.rms_norm",
    "layer_norm_kernel": "examples.layer_norm",
    "online_softmax_kernel": "examples.online_softmax",
    "matmul_tiled_kernel": "examples.matmul",
    "matmul_precision_kernel": "tritium_kernels",
    "matmul_fp16_grouped_kernel": "examples.matmul_fp16_grouped",
    "attn_fwd_kernel": "examples.flash_attention",
    "attn_bwd_preprocess_kernel": "examples.flash_attention",
    "attn_bwd_dkdv_kernel": "examples.flash_attention",
    "attn_bwd_dq_kernel": "examples.flash_attention",
    "matmul_lowp_kernel": "tritium_kernels",
}


def kernel(impl: str, name: str):
    """The tritium ("tritium") or upstream Triton ("upstream") kernel `name`, imported on
    first use (so a missing tritium or triton only fails its own cells)."""
    module = TRITIUM_KERNELS[name] if impl == "tritium" else "upstream_kernels"
    return getattr(importlib.import_module(module), name)


def guarded_rows(benchmark: str, unit: str, cases):
    """Rows from `cases` [(size label, zero-arg function returning a row)]; a case that
    fails outside its cells (e.g. out of memory for its inputs) becomes an error row."""
    for size, make in cases:
        try:
            yield make()
        except Exception as e:
            yield bu.error_row(benchmark, size, unit, e)


class Bench:
    """torch, the timer and --quick, shared by the groups."""

    def __init__(self, quick: bool):
        import torch

        self.torch, self.quick = torch, quick
        torch.manual_seed(0)
        warmup, rep = (10, 30) if quick else (25, 100)
        try:
            from triton.testing import do_bench

            self.timer = "triton.testing.do_bench (median)"
            self.time_ms = functools.partial(do_bench, warmup=warmup, rep=rep, return_mode="median")
        except Exception:
            self.timer = "CUDA events through torch (median, L2 flushed)"
            self.time_ms = functools.partial(self.events_ms, warmup=warmup, rep=rep)

    def events_ms(self, fn, warmup: float, rep: float) -> float:
        """Median milliseconds of `fn()` by CUDA events, each run after flushing L2 (as
        do_bench does), about `rep` ms of runs after about `warmup` ms of warm-up."""
        torch = self.torch
        flush = torch.empty(256 * 2**20, dtype=torch.int8, device=DEVICE)
        event = functools.partial(torch.cuda.Event, enable_timing=True)
        fn()
        t0, t1 = event(), event()
        t0.record()
        for _ in range(5):
            flush.zero_()
            fn()
        t1.record()
        torch.cuda.synchronize()
        estimate = max(t0.elapsed_time(t1) / 5, 1e-3)
        for _ in range(max(1, int(warmup / estimate))):
            fn()
        pairs = [(event(), event()) for _ in range(max(1, int(rep / estimate)))]
        for start, end in pairs:
            flush.zero_()
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        times = sorted(start.elapsed_time(end) for start, end in pairs)
        return times[len(times) // 2]

    # ----------------------------------------------------------------- inputs and checks
    def randn(self, *shape, scale=1.0, shift=0.0):
        return self.torch.randn(*shape, device=DEVICE) * scale + shift

    def allclose(self, ref, rtol: float, atol: float):
        """A check: `check(out)` is None when out matches `ref` elementwise, else what differs."""

        def check(out):
            torch = self.torch
            if out.shape != ref.shape:
                return f"shape {tuple(out.shape)}, expected {tuple(ref.shape)}"
            if torch.allclose(out.to(ref.dtype), ref, rtol=rtol, atol=atol):
                return None
            nans = int(torch.isnan(out).sum())
            err = float((out.to(ref.dtype) - ref).abs().nan_to_num(0.0).max())
            return f"max |diff| {err:.2e}" + (f", {nans} NaN" if nans else "")

        return check

    def relnorm(self, ref, tol: float):
        """A check on the relative Frobenius error (for matmul, whose tf32 inputs round)."""

        def check(out):
            err = float((out.to(ref.dtype) - ref).norm() / ref.norm())
            if err == err and err < tol:  # (a NaN fails)
                return None
            return f"relative error {err:.2e} (limit {tol:g})"

        return check

    # ----------------------------------------------------------------- cells and rows
    def cell(self, check, amount: float, unit: str, setup, *args):
        """One implementation's cell: `run = setup(*args)`; `run()` once, check its result,
        then time it. A number in `unit`, or a 'WRONG: ...' / 'error: ...' string."""
        try:
            run = setup(*args)
            out = run()
            self.torch.cuda.synchronize()
            problem = check(out)
            if problem:
                return bu.wrong_cell(problem)
            return bu.rate(amount, self.time_ms(run), unit)
        except Exception as e:
            return bu.error_cell(e)

    def kernel_run(self, impl: str, name: str, launch, like):
        """`run()`: `launch(kernel, out)` with a float32 `out` shaped like `like` and full
        of NaN (so elements the kernel never writes fail the check); returns out."""
        k = kernel(impl, name)
        out = self.torch.full(like.shape, float("nan"), device=like.device)

        def run():
            launch(k, out)
            return out

        return run

    def fill(self, row: dict, name: str, launch, torch_run, ref, check, amount: float) -> dict:
        """Fill `row`'s three cells: kernel `name` launched by `launch(kernel, out)` for
        tritium and upstream, and `torch_run()` (which returns its result) for torch."""
        unit = row["unit"]
        for impl in ("tritium", "upstream"):
            row[impl] = self.cell(check, amount, unit, self.kernel_run, impl, name, launch, ref)
        row["torch"] = self.cell(check, amount, unit, lambda: torch_run)
        return row
