"""The CPU-side parts of benchmarks/: byte counts, launch configs, cells and their guards,
the text table, bench.json and the markdown writer, and that the upstream twins are the
same kernels as tritium's examples. (The GPU timings themselves run on the lead's machine.)"""

from __future__ import annotations

import ast
import json
import math
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks"
sys.path.insert(0, str(BENCH))

import bench  # noqa: E402
import bench_core  # noqa: E402
import bench_utils as bu  # noqa: E402
import results  # noqa: E402


# --------------------------------------------------------------------------- amounts of work
def test_byte_and_flop_counts():
    assert bu.vector_add_bytes(2**20) == 3 * 4 * 2**20
    assert bu.softmax_bytes(4096, 1024) == 2 * 4096 * 1024 * 4
    assert bu.rms_norm_bytes(8192, 1536) == 2 * 8192 * 1536 * 4 + 1536 * 4
    assert bu.layer_norm_bytes(8192, 4096) == 2 * 8192 * 4096 * 4 + 2 * 4096 * 4
    assert bu.matmul_flops(2048, 1024, 512) == 2 * 2048 * 1024 * 512


def test_rate_units():
    # upstream's vector add at 2^26 moved 805306368 bytes at 4236 GB/s: 0.1901 ms
    ms = bu.vector_add_bytes(2**26) / 4236e9 * 1e3
    assert bu.rate(bu.vector_add_bytes(2**26), ms, "GB/s") == pytest.approx(4236)
    assert bu.rate(bu.matmul_flops(4096, 4096, 4096), 1.0, "TFLOP/s") == pytest.approx(
        137.438953472
    )
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError):
            bu.rate(100, bad, "GB/s")
    with pytest.raises(KeyError):
        bu.rate(100, 1.0, "us/launch")


def _upstream_config(name):
    text = (REPO / "tests/data/upstream" / f"{name}.ttgir").read_text()
    warps = int(re.search(r'"ttg.num-warps" = (\d+)', text).group(1))
    block = int(re.search(r"tt.make_range \{end = (\d+)", text).group(1))
    return block, warps


@pytest.mark.parametrize(
    "name", ["softmax_kernel", "rms_norm_simple_kernel", "softmax_causal_simple_kernel"]
)
def test_num_warps_follow_upstreams_compiled_kernels(name):
    block, warps = _upstream_config(name)
    assert bu.num_warps_for(block) == warps


def test_launch_configs():
    assert [bu.next_power_of_2(n) for n in (1, 2, 3, 1000, 1024, 1025, 1536)] == [
        1, 2, 4, 1024, 1024, 2048, 2048,
    ]  # fmt: skip
    assert bu.num_warps_for(128) == 4 and bu.num_warps_for(4096) == 8
    assert bu.layer_norm_config(4096) == (4096, 8)
    assert bu.layer_norm_config(1000) == (1024, 4)
    assert bu.layer_norm_config(100_000) == (16384, 8)  # 64 KB of fp32 at most


# --------------------------------------------------------------------------- cells and rows
def test_error_cell_keeps_type_and_first_line():
    e = ValueError("tt.reduce is not supported yet\n  %0 = tt.reduce ...\nmore IR")
    assert bu.error_cell(e) == "error: ValueError: tt.reduce is not supported yet"
    assert bu.error_cell(KeyError()) == "error: KeyError"


def test_ratio_and_best():
    row = bu.make_row("vector add", "2^20", "GB/s", tritium=900.0, upstream=1000.0, torch=1.0)
    assert bu.ratio(row) == pytest.approx(0.9)
    for t, u in [("error: X", 1.0), (1.0, "WRONG: y"), (None, 1.0), (1.0, 0.0), (math.nan, 1.0)]:
        assert bu.ratio(dict(row, tritium=t, upstream=u)) is None
    assert bu.best(["error: a", 3.0, 5.0, None]) == 5.0
    assert bu.best([None, "error: first", "error: second"]) == "error: first"
    assert bu.best([None, None]) is None


def test_error_row_fills_every_cell():
    row = bu.error_row("RMSNorm", "8192x4096", "GB/s", MemoryError("out of memory"))
    assert [row[i] for i in bu.IMPLS] == ["error: MemoryError: out of memory"] * 3


def _fake_bench(time_ms=lambda run: 2.0):
    """A Bench without torch: cuda.synchronize does nothing, every run takes time_ms."""
    b = bench_core.Bench.__new__(bench_core.Bench)
    b.torch = SimpleNamespace(cuda=SimpleNamespace(synchronize=lambda: None))
    b.quick, b.timer, b.time_ms = True, "fake", time_ms
    return b


def test_cell_times_only_checked_results():
    b = _fake_bench()
    timed = []
    b.time_ms = lambda run: timed.append(run) or 2.0
    ok = b.cell(lambda out: None, 4e9, "GB/s", lambda: lambda: "out")
    assert ok == pytest.approx(2000.0) and len(timed) == 1  # 4 GB in 2 ms
    wrong = b.cell(lambda out: f"max |diff| 1.00e+00 for {out}", 4e9, "GB/s", lambda: lambda: "o")
    assert wrong == "WRONG: max |diff| 1.00e+00 for o" and len(timed) == 1


def test_cell_guards_every_step():
    def broken_setup():
        raise ImportError("No module named 'triton'")

    def broken_run():
        raise RuntimeError("CUDA_ERROR_ILLEGAL_ADDRESS\ndetails")

    def broken_timer(run):
        raise ZeroDivisionError("float division by zero")

    b = _fake_bench()
    check = lambda out: None  # noqa: E731
    assert b.cell(check, 1, "GB/s", broken_setup) == "error: ImportError: No module named 'triton'"
    assert b.cell(check, 1, "GB/s", lambda: broken_run) == (
        "error: RuntimeError: CUDA_ERROR_ILLEGAL_ADDRESS"
    )
    assert b.cell(lambda out: 1 / 0, 1, "GB/s", lambda: lambda: 0).startswith("error: ZeroDiv")
    b.time_ms = broken_timer
    assert b.cell(check, 1, "GB/s", lambda: lambda: 0).startswith("error: ZeroDivisionError")


def test_guarded_rows_turn_a_failed_case_into_an_error_row():
    def fails():
        raise MemoryError("CUDA out of memory")

    rows = list(
        bench_core.guarded_rows(
            "vector add", "GB/s", [("2^12", lambda: {"ok": 1}), ("2^28", fails)]
        )
    )
    assert rows[0] == {"ok": 1}
    assert rows[1]["size"] == "2^28" and rows[1]["tritium"].startswith("error: MemoryError")


def test_select_groups():
    default = bench.select_groups(None)
    assert "matmul" not in default and "online_softmax" not in default
    assert default[0] == "vector_add" and "compile" in default and "launch" in default
    assert bench.select_groups("matmul") == ["matmul"]
    assert bench.select_groups(" compile,vector_add ") == ["vector_add", "compile"]
    with pytest.raises(SystemExit, match="unknown group"):
        bench.select_groups("softmax,nope")


# --------------------------------------------------------------------------- table and files
ROWS = [
    bu.make_row("vector add", "2^12", "GB/s", tritium=61.25, upstream=70.0, torch=65.5, n=4096),
    bu.make_row(
        "vector add", "2^26", "GB/s", tritium=4102.7, upstream=4236.1, torch=4225.0, n=2**26
    ),
    bu.make_row(
        "fused softmax",
        "4096x1024",
        "GB/s",
        "BLOCK 1024, 4 warps",
        tritium="error: CompilationError: tt.reduce has no lowering to LLVM yet | see reductions",
        upstream=2491.0,
        torch=2275.0,
    ),  # fmt: skip
    bu.make_row(
        "RMSNorm", "8192x1536", "GB/s", tritium="WRONG: max |diff| 3.10e-02", upstream=3386.0
    ),
    bu.make_row(
        "launch overhead", "vector add 4096", "us/launch", tritium=9.8, upstream=12.0, torch=5.9
    ),
]


def test_format_table():
    text = bu.format_table(ROWS, cell_width=30)
    lines = text.splitlines()
    assert lines[0].split() == [
        "benchmark", "size", "tritium", "upstream", "torch", "unit", "tritium/upstream",
    ]  # fmt: skip
    assert set(lines[1]) <= {"-", " "}
    assert len(lines) == 2 + len(ROWS)
    add = lines[3]
    assert "4103" in add and "4236" in add and "4225" in add and "0.97x" in add
    assert "61.25" in lines[2] and "0.88x" in lines[2]
    softmax = lines[4]
    assert "error: CompilationError: tt..." in softmax and "2491" in softmax
    assert softmax.rstrip().endswith("-")  # no ratio against an error
    assert "WRONG: max |diff| 3.10e-02" in lines[5] and lines[5].split()[-3] == "-"  # torch
    assert "0.82x" in lines[6]  # 9.8 / 12.0 us per launch
    # the numeric columns line up: every line has its unit at the same offset
    col = lines[0].index("unit")
    assert all(line[col:].split()[0] in ("unit", "GB/s", "us/launch") for line in lines[2:])


def test_fmt_value():
    assert [bu.fmt_value(v) for v in (4236.4, 84.31, 12.04, 1.19, 0.0042, None)] == [
        "4236", "84.31", "12.04", "1.19", "4.20e-03", "-",
    ]  # fmt: skip
    assert bu.fmt_value("error: " + "x" * 100, 20) == "error: xxxxxxxxxx..."


def test_problems_keep_whole_messages():
    lines = bu.problems(ROWS)
    assert len(lines) == 2
    assert lines[0].startswith("fused softmax 4096x1024 [tritium]: error: CompilationError")
    assert lines[0].endswith("| see reductions")
    assert lines[1] == "RMSNorm 8192x1536 [tritium]: WRONG: max |diff| 3.10e-02"


def test_write_json_round_trip(tmp_path):
    rows = ROWS + [bu.make_row("x", "y", "GB/s", tritium=math.inf)]
    bu.write_json(tmp_path / "bench.json", {"gpu": "NVIDIA H200"}, rows)
    data = json.loads((tmp_path / "bench.json").read_text())
    assert data["env"] == {"gpu": "NVIDIA H200"}
    assert data["rows"][:-1] == ROWS
    assert data["rows"][-1]["tritium"] == "error: timing was inf"


def test_vector_add_series():
    rows = ROWS + [
        bu.make_row("vector add", "2^14", "GB/s", tritium="error: boom", upstream=99.0, n=2**14)
    ]
    s = bu.vector_add_series(rows)
    assert s["tritium"] == [(4096, 61.25), (2**26, 4102.7)]
    assert s["upstream"] == [(4096, 70.0), (2**14, 99.0), (2**26, 4236.1)]
    assert bu.vector_add_series(ROWS[2:]) == {"tritium": [], "upstream": [], "torch": []}


ENV = {
    "gpu": "NVIDIA H200",
    "driver": "580.95.05",
    "date": "2026-11-21T10:00:00+00:00",
    "torch": "2.11.0",
    "triton": "3.6.0",
    "tritium": "0.1.0",
    "timer": "triton.testing.do_bench (median)",
}


def test_results_markdown():
    md = results.results_markdown({"env": ENV, "rows": ROWS}, title="tritium vs upstream")
    assert md.startswith("# tritium vs upstream\n")
    for fact in ("GPU: NVIDIA H200", "driver: 580.95.05", "date: 2026-11-21", "torch: 2.11.0",
                 "triton: 3.6.0"):  # fmt: skip
        assert fact in md
    table = [line for line in md.splitlines() if line.startswith("|")]
    assert table[0] == (
        "| benchmark | size | tritium | upstream | torch | unit | tritium/upstream | note |"
    )
    assert len(table) == 2 + len(ROWS)
    for line in table:  # 9 unescaped pipes: the '|' inside the error message is escaped
        assert len(re.findall(r"(?<!\\)\|", line)) == 9
    assert "| vector add | 2^26 | 4103 | 4236 | 4225 | GB/s | 0.97x |" in md
    assert "## Errors and wrong results" in md
    assert "tt.reduce has no lowering to LLVM yet \\| see reductions" in md
    clean = results.results_markdown({"env": ENV, "rows": ROWS[:2]})
    assert "## Errors" not in clean


def test_results_main_writes_the_file(tmp_path):
    (tmp_path / "bench.json").write_text(json.dumps({"env": ENV, "rows": ROWS}))
    assert results.main([str(tmp_path / "bench.json"), str(tmp_path / "RESULTS.md")]) == 0
    text = (tmp_path / "RESULTS.md").read_text()
    assert text.startswith("# tritium vs upstream Triton vs torch") and "2^26" in text


def test_results_merges_a_rerun_of_some_rows(tmp_path):
    base = {"env": ENV, "rows": ROWS[:2]}
    rerun_row = dict(ROWS[0], tritium=4300.0)
    new_row = dict(ROWS[0], size="2^30")
    later = {"env": {"date": "2026-11-22T01:43", "command": "bench.py --only vector_add"},
             "rows": [rerun_row, new_row]}  # fmt: skip
    (tmp_path / "a.json").write_text(json.dumps(base))
    (tmp_path / "b.json").write_text(json.dumps(later))
    assert (
        results.main([str(tmp_path / "a.json"), str(tmp_path / "b.json"), str(tmp_path / "R.md")])
        == 0
    )
    text = (tmp_path / "R.md").read_text()
    table = [line for line in text.splitlines() if line.startswith("| vector add")]
    assert len(table) == 3 and "| 4300 |" in table[0] and "2^30" in table[2]  # in place, appended
    assert "rows updated: vector add: rerun 2026-11-22T01:43 (bench.py --only vector_add)" in text
    assert "date: 2026-11-21" in text  # the base run's environment stays


# --------------------------------------------------------------------------- kernels
def _functions(path: Path) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef)}


def _without_decorators(fn: ast.FunctionDef) -> str:
    fn = ast.parse(ast.unparse(fn)).body[0]
    fn.decorator_list = []
    return ast.dump(fn)


def test_upstream_twins_are_made_from_the_tritium_source(monkeypatch):
    """One source per kernel: the twin is the tritium kernel's text under @triton.jit."""
    import importlib.util
    import sys
    import types

    fake = types.ModuleType("triton")  # twin_source needs no real triton; keep it local
    fake.jit = lambda f: f
    fake.language = types.ModuleType("triton.language")
    fake.language.constexpr = object
    monkeypatch.setitem(sys.modules, "triton", fake)
    monkeypatch.setitem(sys.modules, "triton.language", fake.language)
    spec = importlib.util.spec_from_file_location(
        "_upstream_kernels_test", BENCH / "upstream_kernels.py"
    )
    upstream_kernels = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(upstream_kernels)

    assert set(upstream_kernels.SOURCES) == set(bench_core.TRITIUM_KERNELS)
    for name, module in bench_core.TRITIUM_KERNELS.items():
        path = REPO / (module.replace(".", "/") + ".py")
        ours = _functions(path if path.exists() else BENCH / f"{module}.py")[name]
        *helpers, twin = ast.parse(upstream_kernels.twin_source(name)).body
        assert [ast.unparse(d) for d in twin.decorator_list] == ["triton.jit"]
        assert _without_decorators(twin) == _without_decorators(ours), name
        for helper in helpers:  # the @jit functions it may call, from the same file
            assert [ast.unparse(d) for d in helper.decorator_list] == ["triton.jit"]
            same = _functions(path if path.exists() else BENCH / f"{module}.py")[helper.name]
            assert _without_decorators(helper) == _without_decorators(same), helper.name


def test_upstream_kernels_are_module_level():
    """Triton resolves a kernel's globals (tl) in its module: no @triton.jit inside a function
    (launch_overhead.py's empty kernel used to be one and failed with NameError)."""
    for path in (BENCH / "launch_overhead.py", BENCH / "upstream_kernels.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                for inner in ast.walk(node):
                    if inner is not node and isinstance(inner, ast.FunctionDef):
                        assert "triton.jit" not in map(ast.unparse, inner.decorator_list)
    tree = ast.parse((BENCH / "upstream_kernels.py").read_text())
    imports = [ast.unparse(n) for n in tree.body if isinstance(n, ast.Import)]
    assert "import triton.language as tl" in imports
    assert "empty_kernel" in _functions(BENCH / "upstream_kernels.py")
