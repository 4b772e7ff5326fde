"""The `tritium` command line: compile to each stage, dumps, exit codes."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from tritium.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
ADD = str(ROOT / "examples" / "vector_add.py")
SIG = "*fp32:16,*fp32:16,*fp32:16,i32"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_emit_ttir_has_upstreams_ops(capsys):
    code, out, err = run(
        capsys,
        "compile",
        f"{ADD}:add_kernel",
        "--signature",
        SIG,
        "--constexpr",
        "BLOCK_SIZE=1024",
        "--emit",
        "ttir",
    )
    assert code == 0, err
    for op in (
        "tt.get_program_id x",
        "tt.make_range {end = 1024 : i32, start = 0 : i32}",
        "tt.splat",
        "tt.addptr",
        "tt.load",
        "arith.addf",
        "tt.store",
        "arith.cmpi slt",
    ):
        assert op in out


def test_dump_dir_numbers_every_pass(capsys, tmp_path):
    code, _, err = run(
        capsys,
        "compile",
        ADD,
        "-s",
        SIG,
        "-c",
        "BLOCK_SIZE=1024",
        "--emit",
        "ttir",
        "--dump-dir",
        str(tmp_path),
    )
    assert code == 0, err
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files[0] == "00-source.py"
    assert files[1].startswith("01-ttir-frontend")
    assert len(files) >= 4
    assert [int(f.split("-")[0]) for f in files] == list(range(len(files)))


def test_time_passes(capsys):
    code, _, err = run(
        capsys,
        "compile",
        ADD,
        "-s",
        SIG,
        "-c",
        "BLOCK_SIZE=1024",
        "--emit",
        "ttir",
        "--time-passes",
    )
    assert code == 0
    assert "frontend" in err and "total" in err


def test_output_file_from_extension(capsys, tmp_path):
    out = tmp_path / "add.ttir"
    code, stdout, err = run(
        capsys, "compile", ADD, "-s", SIG, "-c", "BLOCK_SIZE=1024", "-o", str(out)
    )
    assert code == 0, err
    assert "tt.func public @add_kernel" in out.read_text()
    assert stdout == ""


def test_ttir_input(capsys):
    ttir = str(ROOT / "tests" / "data" / "upstream" / "add_kernel.ttir")
    code, out, err = run(capsys, "compile", ttir, "--emit", "ttir")
    assert code == 0, err
    assert "tt.func public @add_kernel" in out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["compile", "nope.py", "-s", SIG], "no such file"),
        (["compile", f"{ADD}:nope", "-s", SIG], "no @tritium.jit function named 'nope'"),
        (["compile", ADD, "-s", "*fp32,*fp32,*fp32"], "lists 3 types"),
        (
            ["compile", ADD, "-s", "*fp32,*fp32,*fp32,q32", "-c", "BLOCK_SIZE=64"],
            "unknown type 'q32'",
        ),
        (["compile", ADD, "-s", SIG], "missing value for constexpr parameter `BLOCK_SIZE`"),
        (["compile", ADD, "-s", SIG, "-c", "BLOCK_SIZE"], "expects NAME=VALUE"),
        (
            ["compile", ADD, "-s", SIG, "-c", "BLOCK_SIZE=1024", "--arch", "sm_75"],
            "unknown arch 'sm_75'",
        ),
        (["compile", ADD, "-s", SIG, "-c", "BLOCK_SIZE=1024", "--num-warps", "3"], "num_warps"),
    ],
)
def test_usage_errors_exit_2(capsys, argv, needle):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert needle in err
    assert "Traceback" not in err


def test_compile_error_exits_1_with_location(capsys):
    code, _, err = run(capsys, "compile", ADD, "-s", SIG, "-c", "BLOCK_SIZE=1000", "--emit", "ttir")
    assert code == 1
    line = next(i for i, t in enumerate(open(ADD), 1) if "tl.arange(0, BLOCK_SIZE)" in t)
    assert f"{ADD}:{line}:" in err and "error: tl.arange's range must be a power of two" in err
    assert err.rstrip().endswith("^")
    assert "Traceback" not in err


def test_argparse_usage_exits_2():
    proc = subprocess.run(
        [sys.executable, "-m", "tritium", "compile"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "usage:" in proc.stderr


def test_python_m_tritium_runs(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tritium",
            "compile",
            ADD,
            "-s",
            SIG,
            "-c",
            "BLOCK_SIZE=256",
            "--emit",
            "ttir",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "tensor<256xi32>" in proc.stdout
