"""bench.json -> markdown: bench.py's `bench.md`, and `benchmarks/RESULTS.md`.

    python3 benchmarks/results.py OUT/bench.json [LATER.json ...] [benchmarks/RESULTS.md]

writes the markdown (to stdout when no .md path is given). Rows of a later JSON (a rerun of
some groups, `bench.py --only launch`) replace the rows with the same benchmark and size,
and the header says which rows come from which run.
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
    lines += [f"- rows updated: {md_escape(u)}" for u in env.get("updates", [])]
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


def merge(base: dict, later: dict) -> dict:
    """`base` with `later`'s rows in place of those with the same benchmark and size
    (new ones appended); the environment records the later run's date and command."""
    rows = list(base.get("rows", []))
    index = {(r["benchmark"], r["size"]): i for i, r in enumerate(rows)}
    replaced = []
    for r in later.get("rows", []):
        i = index.get((r["benchmark"], r["size"]))
        if i is None:
            index[(r["benchmark"], r["size"])] = len(rows)
            rows.append(r)
        else:
            rows[i] = r
        if r["benchmark"] not in replaced:
            replaced.append(r["benchmark"])
    env = dict(base.get("env", {}))
    lenv = later.get("env", {})
    env["updates"] = env.get("updates", []) + [
        f"{', '.join(replaced)}: rerun {lenv.get('date', '?')} ({lenv.get('command', '?')})"
    ]
    return {"env": env, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    inputs = [a for a in argv if not a.endswith(".md")]
    outputs = [a for a in argv if a.endswith(".md")]
    data = json.loads(Path(inputs[0]).read_text())
    for later in inputs[1:]:
        data = merge(data, json.loads(Path(later).read_text()))
    text = results_markdown(data, "tritium vs upstream Triton vs torch")
    if outputs:
        Path(outputs[0]).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
