"""The pure-Python half of bench.py: sizes, byte and flop counts, launch configs, result rows,
the text table and the output files. Nothing here needs a GPU, torch or triton.

A row is a plain dict (it goes to bench.json as is):

    {"benchmark": "vector add", "size": "2^20", "unit": "GB/s",
     "tritium": 3120.5, "upstream": 3301.2, "torch": 3290.0, "note": "", "n": 1048576}

Each of the three implementation cells holds a number in `unit`, None (not measured), or a
string: "error: <exception>" when that part failed, "WRONG: <how>" when its result differed
from the reference (it is then not timed).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

IMPLS = ("tritium", "upstream", "torch")
COLUMNS = ("benchmark", "size", *IMPLS, "unit", "tritium/upstream")
LOWER_IS_BETTER = {"us/launch", "s"}


# --------------------------------------------------------------------------- amounts of work
def vector_add_bytes(n: int) -> int:
    """x and y read, out written: 3 fp32 arrays of n."""
    return 3 * 4 * n


def softmax_bytes(rows: int, cols: int) -> int:
    """The input read once and the output written once (fp32); also causal softmax."""
    return 2 * rows * cols * 4


def rms_norm_bytes(rows: int, cols: int) -> int:
    """x read, y written, and the weight row read once."""
    return 2 * rows * cols * 4 + cols * 4


def layer_norm_bytes(rows: int, cols: int) -> int:
    """x read, y written, and the weight and bias rows read once."""
    return 2 * rows * cols * 4 + 2 * cols * 4


def matmul_flops(m: int, n: int, k: int) -> int:
    return 2 * m * n * k


def rate(amount: float, ms: float, unit: str) -> float:
    """`amount` (bytes for GB/s, flops for TFLOP/s) done in `ms` milliseconds, in `unit`."""
    scale = {"GB/s": 1e9, "TFLOP/s": 1e12, "TOPS": 1e12}[unit]
    if not ms > 0:
        raise ValueError(f"a timing of {ms!r} ms")
    return amount / (ms * 1e-3) / scale


# --------------------------------------------------------------------------- launch configs
def next_power_of_2(n: int) -> int:
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def num_warps_for(block: int) -> int:
    """Warps for a one-row-per-program kernel, as in upstream's compiled references
    (/work/shared/reference/*.ttgir: softmax BLOCK 1024 -> 4, RMSNorm and causal softmax
    BLOCK 2048 -> 8). examples/softmax.py picks 4 for 2048; the benchmarks follow upstream."""
    return 4 if block <= 1024 else 8


def layer_norm_config(n_cols: int, itemsize: int = 4) -> tuple[int, int]:
    """(BLOCK_SIZE, num_warps) as upstream's layer-norm tutorial picks them."""
    block = min(65536 // itemsize, next_power_of_2(n_cols))
    return block, min(max(block // 256, 1), 8)


# --------------------------------------------------------------------------- rows and cells
def make_row(benchmark: str, size: str, unit: str, note: str = "", **extra) -> dict:
    row = {"benchmark": benchmark, "size": size, "unit": unit, "note": note}
    row.update(dict.fromkeys(IMPLS))
    row.update(extra)
    return row


def error_cell(exc: BaseException) -> str:
    """'error: Type: first line of the message' (the whole message can be long IR)."""
    text = str(exc).strip().splitlines()
    return f"error: {type(exc).__name__}" + (f": {text[0].strip()}" if text else "")


def wrong_cell(detail: str) -> str:
    return f"WRONG: {detail}"


def error_row(benchmark: str, size: str, unit: str, exc: BaseException) -> dict:
    """A row whose setup failed: every cell carries the error."""
    row = make_row(benchmark, size, unit)
    for impl in IMPLS:
        row[impl] = error_cell(exc)
    return row


def is_number(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def ratio(row: dict) -> float | None:
    """tritium / upstream when both are numbers (> 1 is better for rates, < 1 for times)."""
    t, u = row.get("tritium"), row.get("upstream")
    if is_number(t) and is_number(u) and u != 0:
        return t / u
    return None


def best(values: list) -> float | str | None:
    """The best number among the cells of several configs (the largest rate); if none is a
    number, the first non-empty cell (an error or WRONG string)."""
    numbers = [v for v in values if is_number(v)]
    if numbers:
        return max(numbers)
    return next((v for v in values if v is not None), None)


# --------------------------------------------------------------------------- the text table
def fmt_value(v, width: int | None = None) -> str:
    """A cell as text: '4236', '84.3', '12.04', '1.19', '-', or the (shortened) string."""
    if v is None:
        return "-"
    if is_number(v):
        return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.4g}" if abs(v) >= 0.01 else f"{v:.2e}"
    s = str(v)
    if width is not None and len(s) > width:
        s = s[: width - 3] + "..."
    return s


def fmt_ratio(row: dict) -> str:
    r = ratio(row)
    return "-" if r is None else f"{r:.2f}x"


def table_cells(row: dict, width: int | None = None) -> list[str]:
    """The row's cells in COLUMNS order, as text."""
    return [
        row["benchmark"],
        row["size"],
        *(fmt_value(row.get(impl), width) for impl in IMPLS),
        row["unit"],
        fmt_ratio(row),
    ]


def format_table(rows: list[dict], cell_width: int = 40) -> str:
    """A fixed-width text table with a header line; long error cells are cut to cell_width."""
    lines = [list(COLUMNS)] + [table_cells(r, cell_width) for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(COLUMNS))]
    numeric = {2, 3, 4, 6}  # right-aligned columns
    out = []
    for k, line in enumerate(lines):
        cells = [
            c.rjust(w) if i in numeric and k else c.ljust(w)
            for i, (c, w) in enumerate(zip(line, widths))
        ]
        out.append("  ".join(cells).rstrip())
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def problems(rows: list[dict]) -> list[str]:
    """One line per failed or wrong cell, with its whole message."""
    return [
        f"{r['benchmark']} {r['size']} [{impl}]: {r[impl]}"
        for r in rows
        for impl in IMPLS
        if isinstance(r.get(impl), str)
    ]


# --------------------------------------------------------------------------- output files
def clean(v):
    """A JSON-safe cell: non-finite floats become strings."""
    if isinstance(v, float) and not math.isfinite(v):
        return f"error: timing was {v}"
    return v


def write_json(path: str | Path, env: dict, rows: list[dict]) -> None:
    data = {"env": env, "rows": [{k: clean(v) for k, v in r.items()} for r in rows]}
    Path(path).write_text(json.dumps(data, indent=1, allow_nan=False) + "\n")


def vector_add_series(rows: list[dict]) -> dict[str, list[tuple[int, float]]]:
    """{impl: [(n, GB/s), ...]} from the vector add rows, numbers only, sorted by n."""
    series: dict[str, list[tuple[int, float]]] = {impl: [] for impl in IMPLS}
    for r in rows:
        if r.get("benchmark") != "vector add" or "n" not in r:
            continue
        for impl in IMPLS:
            if is_number(r.get(impl)):
                series[impl].append((int(r["n"]), float(r[impl])))
    return {impl: sorted(pts) for impl, pts in series.items()}


def plot_vector_add(rows: list[dict], path: str | Path, title: str = "vector add, fp32") -> bool:
    """GB/s against n (log2 axis), a line per implementation; False when there is nothing
    to plot. Needs matplotlib (Agg backend)."""
    series = vector_add_series(rows)
    if not any(series.values()):
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for impl, pts in series.items():
        if pts:
            ax.plot([n for n, _ in pts], [v for _, v in pts], marker="o", label=impl)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("n (fp32 elements)")
    ax.set_ylabel("GB/s (3 * 4 * n bytes / time)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
