"""Benchmarking under upstream's names: `do_bench`, `Benchmark`, `perf_report`.

    ms = tritium.testing.do_bench(lambda: add(x, y))                       # the mean, in ms
    med, lo, hi = tritium.testing.do_bench(fn, quantiles=[0.5, 0.2, 0.8])

    @tritium.testing.perf_report(tritium.testing.Benchmark(
        x_names=["size"], x_vals=[2**i for i in range(12, 20)], line_arg="provider",
        line_vals=["tritium", "numpy"], line_names=["tritium", "numpy"],
        plot_name="vector-add", args={}, ylabel="GB/s"))
    def bench(size, provider): ...
    bench.run(print_data=True, show_plots=False, save_path="out/")

`do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean")`
times `fn` as upstream's does: one call, then five timed calls to estimate its cost, then
as many untimed calls as fill `warmup` ms and as many timed ones as fill `rep` ms (at
least one each), the L2 cache flushed before each timed call, each call between two
events. It returns the `quantiles` of the times (a list; one value for one quantile,
interpolated linearly as numpy and torch do), else by `return_mode`: "min", "max",
"mean", "median", or "all" (the list). Events and flushing come from
`tritium.runtime.timing` (torch's CUDA events when the program uses torch, else
tritium's driver; the host clock in the interpreter without a GPU).

`perf_report(benchmarks)` makes a function a `Mark`; `Mark.run(show_plots=False,
print_data=False, save_path="", return_df=False, **kwargs)` calls it for every x value
and line (`fn(**x_args, line_arg=line, **bench.args, **kwargs)`); a returned triple is
(value, min, max). It prints each table under its plot name as upstream does (the x
columns, then one column per line), writes `<plot_name>.csv` (and `.png`, plus
`results.html` listing them) into `save_path`, plots through matplotlib when it is
installed (`show_plots` shows the figure), and with `return_df` returns the tables (pandas
DataFrames where pandas is installed, else lists of row dicts). TRITIUM_BENCH_POINTS=n
measures only n of each benchmark's x values, spread evenly (long benchmarks, shortened).
"""

from __future__ import annotations

import csv
import math
import os
import statistics
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tritium import config
from tritium.runtime import timing

__all__ = ["Benchmark", "Mark", "do_bench", "perf_report"]

RETURN_MODES = ("min", "max", "mean", "median", "all")


def do_bench(
    fn: Callable[[], Any],
    warmup: float = 25,
    rep: float = 100,
    grad_to_none: Sequence[Any] | None = None,
    quantiles: Sequence[float] | None = None,
    return_mode: str = "mean",
):
    """Milliseconds per call of `fn` (see the module docstring)."""
    if return_mode not in RETURN_MODES:
        raise ValueError(f"return_mode must be one of {RETURN_MODES}, got {return_mode!r}")
    clock = timing.clock()
    fn()
    clock.synchronize()
    flush = clock.flush_buffer()
    start, end = clock.event(), clock.event()
    start.record()
    for _ in range(5):
        clock.flush(flush)
        fn()
    end.record()
    clock.synchronize()
    estimate = max(start.elapsed_time(end) / 5, 1e-6)
    n_warmup = max(1, int(warmup / estimate))
    n_repeat = max(1, int(rep / estimate))
    starts = [clock.event() for _ in range(n_repeat)]
    ends = [clock.event() for _ in range(n_repeat)]
    for _ in range(n_warmup):
        fn()
    for s, e in zip(starts, ends):
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        clock.flush(flush)
        s.record()
        fn()
        e.record()
    clock.synchronize()
    times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    return summarize(times, quantiles, return_mode)


def summarize(times: list[float], quantiles: Sequence[float] | None, return_mode: str):
    """`do_bench`'s result from the measured times."""
    if quantiles is not None:
        q = [float(v) for v in np.quantile(np.asarray(times, np.float64), list(quantiles))]
        return q[0] if len(q) == 1 else q
    if return_mode == "all":
        return times
    if return_mode == "min":
        return min(times)
    if return_mode == "max":
        return max(times)
    if return_mode == "median":
        return statistics.median(times)
    return statistics.mean(times)


class Benchmark:
    """One table (and plot) of `perf_report`: `x_names` take each of `x_vals` (a value for
    all of them, or a tuple with one per name), one line per `line_vals` entry passed as
    `line_arg`, the fixed `args` besides."""

    def __init__(
        self,
        x_names: list[str],
        x_vals: list[Any],
        line_arg: str,
        line_vals: list[Any],
        line_names: list[str],
        plot_name: str,
        args: dict[str, Any],
        xlabel: str = "",
        ylabel: str = "",
        x_log: bool = False,
        y_log: bool = False,
        styles: list[tuple[str, str]] | None = None,
    ):
        if len(line_names) != len(line_vals):
            raise ValueError("Benchmark: line_names and line_vals must have the same length")
        self.x_names = list(x_names)
        self.x_vals = list(x_vals)
        self.x_log = x_log
        self.line_arg = line_arg
        self.line_vals = list(line_vals)
        self.line_names = list(line_names)
        self.y_log = y_log
        self.styles = styles
        self.xlabel = xlabel
        self.ylabel = ylabel
        self.plot_name = plot_name
        self.args = dict(args)


class Mark:
    """A function under `perf_report`: `.run(...)` measures and reports its benchmarks."""

    def __init__(self, fn: Callable[..., Any], benchmarks: Benchmark | list[Benchmark]):
        self.fn = fn
        self.benchmarks = benchmarks

    def run(self, show_plots=False, print_data=False, save_path="", return_df=False, **kwargs):
        benches = [self.benchmarks] if isinstance(self.benchmarks, Benchmark) else self.benchmarks
        if save_path:
            os.makedirs(save_path, exist_ok=True)
        tables = []
        for bench in benches:
            tables.append(self._run(bench, save_path, show_plots, print_data, **kwargs))
        if save_path:
            with open(os.path.join(save_path, "results.html"), "w") as f:
                f.write("<html><body>\n")
                for bench in benches:
                    f.write(f'<image src="{bench.plot_name}.png"/>\n')
                f.write("</body></html>\n")
        if return_df:
            return tables[0] if isinstance(self.benchmarks, Benchmark) else tables
        return None

    def _run(self, bench: Benchmark, save_path, show_plots, print_data, **kwargs):
        rows = []  # (x values, {line name: (value, min, max)})
        for x in _spread(bench.x_vals, config.bench_points()):
            xs = list(x) if isinstance(x, list | tuple) else [x] * len(bench.x_names)
            if len(xs) != len(bench.x_names):
                raise ValueError(f"x value {x!r} does not give one value per x name {bench.x_names}")
            x_args = dict(zip(bench.x_names, xs))
            cells = {}
            for name, y in zip(bench.line_names, bench.line_vals):
                ret = self.fn(**x_args, **{bench.line_arg: y}, **bench.args, **kwargs)
                try:
                    value, lo, hi = ret
                except TypeError:
                    value, lo, hi = ret, None, None
                cells[name] = (value, lo, hi)
            rows.append((xs, cells))
        header = bench.x_names + bench.line_names
        table = [xs + [cells[n][0] for n in bench.line_names] for xs, cells in rows]
        if bench.plot_name:
            _plot(bench, rows, save_path, show_plots)
        if print_data:
            print(bench.plot_name + ":")
            print(format_table(header, table))
        if save_path:
            with open(os.path.join(save_path, f"{bench.plot_name}.csv"), "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(header)
                w.writerows(table)
        return _frame(header, table)


def _spread(values: list, n: int | None) -> list:
    """`n` of `values`, evenly spread, first and last included (all of them for None)."""
    if n is None or n >= len(values):
        return values
    if n <= 1:
        return values[:1]
    return [values[round(i * (len(values) - 1) / (n - 1))] for i in range(n)]


def perf_report(benchmarks: Benchmark | list[Benchmark]):
    """Decorator: the function becomes a `Mark` whose `.run()` measures `benchmarks`."""
    return lambda fn: Mark(fn, benchmarks)


def format_table(header: list[str], table: list[list[Any]]) -> str:
    """The table as text: an index column, then right-aligned columns (as pandas prints)."""

    def cell(v):
        if isinstance(v, float):
            return "NaN" if math.isnan(v) else f"{v:.6f}"
        return str(v)

    cols = [[""] + [str(i) for i in range(len(table))]]
    for j, h in enumerate(header):
        cols.append([str(h)] + [cell(row[j]) for row in table])
    widths = [max(len(c) for c in col) for col in cols]
    lines = []
    for i in range(len(table) + 1):
        parts = [col[i].rjust(w) for col, w in zip(cols, widths)]
        lines.append("  ".join(parts).rstrip() if i == 0 else "  ".join(parts))
    return "\n".join(lines)


def _frame(header, table):
    try:
        import pandas as pd
    except ImportError:
        return [dict(zip(header, row)) for row in table]
    return pd.DataFrame(table, columns=header)


def _plot(bench: Benchmark, rows, save_path, show_plots) -> None:
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig = plt.figure()
    ax = plt.subplot()
    xs = [r[0][0] for r in rows]
    for i, name in enumerate(bench.line_names):
        color, style = bench.styles[i] if bench.styles and i < len(bench.styles) else (None, None)
        ys = [r[1][name][0] for r in rows]
        ax.plot(xs, ys, label=name, color=color, ls=style)
        lo = [r[1][name][1] for r in rows]
        hi = [r[1][name][2] for r in rows]
        if all(v is not None for v in lo + hi):
            ax.fill_between(xs, lo, hi, alpha=0.15, color=color)
    ax.legend()
    ax.set_xlabel(bench.xlabel or " = ".join(bench.x_names))
    ax.set_ylabel(bench.ylabel)
    ax.set_xscale("log" if bench.x_log else "linear")
    ax.set_yscale("log" if bench.y_log else "linear")
    if show_plots:
        plt.show()
    if save_path:
        fig.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))
    plt.close(fig)
