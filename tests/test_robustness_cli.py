"""Command-line mistakes (the catalogue in docs/robustness.md; tests/test_cli.py has the
first ones): exit status 1 for a kernel or file that does not compile or import, 2 for
usage mistakes, a message naming FILE:LINE where there is one, and no Python traceback."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import textwrap

import pytest

import tritium
import tritium.compiler
from tritium.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
ADD = str(ROOT / "examples" / "vector_add.py")
SIG = "*fp32:16,*fp32:16,*fp32:16,i32"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


TWO_KERNELS = """
    import tritium
    import tritium.language as tl


    @tritium.jit
    def first(x_ptr):
        tl.store(x_ptr, 1.0)


    @tritium.jit
    def second(x_ptr):
        tl.store(x_ptr, 2.0)
"""


# ------------------------------------------------------------------ files that do not import


@pytest.mark.parametrize(
    "text, line, message",
    [
        (
            "import tritium\nimport no_such_module_xyz\n",
            2,
            "failed: ModuleNotFoundError: No module named 'no_such_module_xyz'",
        ),
        ("import tritium\n\ndef f(:\n    pass\n", 3, "invalid syntax"),
        (
            "import tritium\n\n\ndef helper():\n    raise ValueError('boom')\n\n\nhelper()\n",
            5,
            "failed: ValueError: boom",
        ),
        ("import sys\nsys.exit(3)\n", 2, "failed: SystemExit: 3"),
    ],
    ids=["missing-module", "syntax-error", "raises", "exits"],
)
def test_a_kernel_file_that_does_not_import_exits_1_naming_the_line(
    capsys, tmp_path, text, line, message
):
    path = write(tmp_path, "user_kernels.py", text)
    code, _, err = run(capsys, "compile", path, "-s", "*fp32")
    assert code == 1
    assert err.startswith(f"{path}:{line}:"), err
    assert "error:" in err and message in err


def test_a_malformed_ttir_file_exits_1_naming_the_line(capsys, tmp_path):
    path = write(
        tmp_path,
        "bad.ttir",
        """
        module {
          tt.func public @k(%x: !tt.ptr<f32>) {
            %0 = arith.constant 1.0 : f32
            tt.store %x, %0 : !tt.ptr<f32
            tt.return
          }
        }
        """,
    )
    code, _, err = run(capsys, "compile", path, "--emit", "ttir")
    assert code == 1
    assert err.startswith(f"{path}:5:5: error: '>' expected"), err
    assert err.rstrip().endswith("^")


def test_internal_errors_exit_1_without_a_traceback(capsys, monkeypatch):
    def broken(*a, **k):
        raise RuntimeError("an invariant broke")

    monkeypatch.setattr(tritium.compiler, "compile_kernel", broken)
    code, _, err = run(capsys, "compile", ADD, "-s", SIG, "-c", "BLOCK_SIZE=64")
    assert code == 1
    assert "tritium: internal error: RuntimeError: an invariant broke" in err
    assert "rerun with --traceback" in err
    with pytest.raises(RuntimeError):  # --traceback shows it, for tritium's developers
        main(["compile", ADD, "-s", SIG, "-c", "BLOCK_SIZE=64", "--traceback"])


def test_unsupported_features_exit_1(capsys, monkeypatch, tmp_path):
    # a real one: an atomic bf16 add needs sm_90; reported like a compile error
    from tests.codegen.test_atomics_codegen import kernel_text

    path = tmp_path / "bf16_atomic.ttir"
    path.write_text(kernel_text("fadd", "bf16", 128, mask=False, use=False))
    code, _, err = run(
        capsys, "compile", str(path), "--arch", "sm_89", "-o", str(tmp_path / "k.ptx")
    )
    assert code == 1 and "error: tt.atomic_rmw: atomic add of bf16 needs sm_90" in err
    assert "Traceback" not in err

    def unsupported(*a, **k):  # a bare NotImplementedError from deeper down
        raise NotImplementedError("tt.foo: no GPU lowering for this op yet")

    monkeypatch.setattr(tritium.compiler, "compile_kernel", unsupported)
    code, _, err = run(capsys, "compile", ADD, "-s", SIG, "-c", "BLOCK_SIZE=64")
    assert code == 1 and "tritium: error: not supported yet: tt.foo" in err


# ------------------------------------------------------------------ usage mistakes


def test_usage_mistakes_exit_2(capsys, tmp_path):
    ttir = ROOT / "tests" / "data" / "upstream" / "add_kernel.ttir"
    two = write(tmp_path, "two.py", TWO_KERNELS)
    none = write(tmp_path, "none.py", "import tritium\n")
    txt = write(tmp_path, "kernel.txt", "not python")
    cases = [
        ([txt, "-s", "*fp32"], "expected a .py file with @tritium.jit kernels or a .ttir file"),
        ([two, "-s", "*fp32"], "defines 2 @tritium.jit functions (first, second); name one with"),
        ([none, "-s", "*fp32"], "defines no @tritium.jit function"),
        ([ADD, "-s", SIG, "-c", "BLOCK_SIZE=big"], "--constexpr BLOCK_SIZE: 'big' is not a number"),
        (
            [ADD, "-s", "*fp32:16,*fp32:16,*fp32:8,i32", "-c", "BLOCK_SIZE=64"],
            "unknown specialisation ':8'",
        ),
        (
            [ADD, "-s", "*fp32:1,*fp32,*fp32,i32", "-c", "BLOCK_SIZE=64"],
            "a pointer cannot be specialised as equal to 1",
        ),
        ([ADD, "-s", SIG, "-c", "BLOCK_SIZE=64", "-c", "NOPE=1"], "has no parameter(s) named NOPE"),
        ([f"{ttir}:add_kernel", "--emit", "ttir"], "drop the :KERNEL suffix"),
        (
            [ttir, "-s", SIG, "--emit", "ttir"],
            "--signature and --constexpr apply to Python kernels",
        ),
        (
            [f"{two}:third", "-s", "*fp32"],
            "has no @tritium.jit function named 'third'; it has: first, second",
        ),
    ]
    for argv, needle in cases:
        code, _, err = run(capsys, "compile", *argv)
        assert code == 2, (argv, err)
        assert err.startswith("tritium: error: ") and needle in err, (argv, err)


def test_binary_output_to_a_terminal_is_refused(capsys, ptxas):
    code, _, err = run(capsys, "compile", ADD, "-s", SIG, "-c", "BLOCK_SIZE=64", "--emit", "cubin")
    assert code == 2 and "cubin is binary; write it to a file with -o" in err


def test_sass_without_the_tools_says_what_is_missing(capsys, monkeypatch):
    # hide the SASS tools wherever they are installed (a skipif on shutil.which's path
    # string skipped this test there, and pytest evaluated the string as an expression)
    from tritium.codegen import tools

    real = tools.find_tool
    monkeypatch.setattr(
        tools, "find_tool", lambda name: None if name in ("nvdisasm", "cuobjdump") else real(name)
    )
    code, _, err = run(capsys, "compile", ADD, "-s", SIG, "-c", "BLOCK_SIZE=64", "--emit", "sass")
    assert code == 1 and "cannot produce sass: nvdisasm or cuobjdump is not installed" in err


def test_python_m_tritium_import_failure_has_no_traceback(tmp_path):
    path = write(tmp_path, "broken.py", "import tritium\nraise KeyError('nope')\n")
    proc = subprocess.run(
        [sys.executable, "-m", "tritium", "compile", str(path), "-s", "i32"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"{path}:2: error: importing {path} failed: KeyError: 'nope'")
    assert "Traceback" not in proc.stderr
