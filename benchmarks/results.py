"""bench.json -> markdown: bench.py's `bench.md`, and `benchmarks/RESULTS.md`.

    python3 benchmarks/results.py OUT/bench.json [benchmarks/RESULTS.md]

writes the markdown (to stdout when no output path is given).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import bench_utils as bu

ENV_FIELDS = (
    ("gpu", "GPU"),
    ("driver", "driver"),
    ("cuda", "CUDA (torch)"),
    ("date", "date"),
    ("torch", "torch"),
    ("triton", "triton"),
    ("tritium", "tritium"),
    ("python", "python"),
    ("timer", "timer"),
)


def md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def header(env: dict) -> str:
    """One line per known environment fact: '- GPU: NVIDIA H200 (driver 570.1)'."""
    lines = [f"- {label}: {md_escape(str(env[key]))}" for key, label in ENV_FIELDS if key in env]
    if env.get("quick"):
        lines.append("- mode: --quick (fewer sizes, shorter timing runs)")
    return "\n".join(lines)


def markdown_table(rows: list[dict], cell_width: int = 60) -> str:
    cols = list(bu.COLUMNS) + ["note"]
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        cells = bu.table_cells(r, cell_width) + [r.get("note", "")]
        out.append("| " + " | ".join(md_escape(c) for c in cells) + " |")
    return "\n".join(out)


def results_markdown(data: dict, title: str = "tritium benchmarks") -> str:
    """The whole document for bench.json's contents: title, environment, table, problems."""
    env, rows = data.get("env", {}), data.get("rows", [])
    parts = [
        f"# {title}",
        header(env),
        markdown_table(rows),
        "Rates (GB/s, TFLOP/s): higher is better, so a tritium/upstream ratio above 1 means "
        "tritium is faster. Times (us/launch, s): lower is better, a ratio below 1 means "
        "tritium is faster. GB/s counts the bytes a kernel must move (bench_utils.py); "
        "times are medians of CUDA-event timings with L2 flushed before each run (the timer "
        "line above). Each kernel's result was checked against a float64 torch reference "
        "before it was timed: WRONG marks one that differed.",
    ]
    issues = bu.problems(rows)
    if issues:
        parts.append(
            "## Errors and wrong results\n\n" + "\n".join(f"- {md_escape(p)}" for p in issues)
        )
    return "\n\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    data = json.loads(Path(argv[0]).read_text())
    text = results_markdown(data, "tritium vs upstream Triton vs torch")
    if len(argv) > 1:
        Path(argv[1]).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
