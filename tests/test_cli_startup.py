"""What `tritium compile` loads and how it ends (issue 21: the CLI's whole process is the
measure, docs/performance.md). The compile path imports what a compile to PTX needs and
nothing of the launch path, the interpreter, autotuning or the rarer lowerings; the
process ends without Python's finalization, its output flushed and its exit status kept."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
ARGS = ["compile", f"{ROOT / 'examples' / 'vector_add.py'}:add_kernel",
        "--signature", "*fp32:16,*fp32:16,*fp32:16,i32", "--constexpr", "BLOCK_SIZE=1024"]  # fmt: skip

# Modules the CLI's compile of vector add to PTX must not import (prefixes): the GPU and
# the launch path, the interpreter, autotuning, the AOT and testing helpers, the triton
# alias, libdevice's functions, and the lowerings (with their tables) of ops vector add
# does not have; and asyncio, which typing_extensions.deprecated would import for xDSL
# (tritium/ir/light_deprecated.py).
FORBIDDEN = (
    "cuda", "torch", "cupy", "asyncio",
    "tritium.runtime.launcher", "tritium.runtime.staging", "tritium.runtime.interpreter",
    "tritium.aot_runtime", "tritium.aot", "tritium.testing", "tritium.triton_alias",
    "tritium.jit.launch", "tritium.jit.autotune", "tritium.jit.compile_pool",
    "tritium.jit.heuristics",
    "tritium.codegen.lower.libm", "tritium.codegen.lower.libdevice",
    "tritium.codegen.lower.math_ops", "tritium.codegen.lower.atomic",
    "tritium.codegen.lower.dot", "tritium.codegen.lower.local_memory",
    "tritium.codegen.lower.ldmatrix", "tritium.codegen.lower.scan",
    "tritium.codegen.lower.print_op", "tritium.language.extra", "tritium.frontend.libdevice",
)  # fmt: skip

SCRIPT = """
import json, sys
from tritium.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _env(tmp_path) -> dict:
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "TRITIUM_CACHE_DIR": str(tmp_path / "cache"),
            "PYTHONPATH": str(ROOT) + (os.pathsep + path if path else "")}  # fmt: skip


def _forbidden(loaded: list) -> list:
    return [m for m in loaded if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]


def test_the_compile_path_imports_no_launch_path_and_no_rare_lowering(tmp_path):
    # in one process (TRITIUM_CLI_WORKER=0): the whole compiler's imports
    out = tmp_path / "add.ptx"
    proc = subprocess.run([sys.executable, "-c", SCRIPT, *ARGS, "-o", str(out)],
                          capture_output=True, text=True, timeout=300,
                          env={**_env(tmp_path), "TRITIUM_CLI_WORKER": "0"})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["code"] == 0 and ".entry add_kernel" in out.read_text()
    loaded = result["modules"]
    assert not _forbidden(loaded), f"tritium compile imported {_forbidden(loaded)}"
    # what it needs is there: the check above is not vacuous
    assert "tritium.codegen.lower.memory" in loaded and "llvmlite.binding" in loaded


def test_with_its_worker_the_command_loads_the_front_half_and_the_worker_the_back(tmp_path):
    # tritium/back_end_worker.py: the command's own process imports the kernel's file and
    # the frontend, the worker it forked the passes, the lowering and llvmlite
    out = tmp_path / "add.ptx"
    proc = subprocess.run([sys.executable, "-c", SCRIPT, *ARGS, "-o", str(out)],
                          capture_output=True, text=True, timeout=300, env=_env(tmp_path))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["code"] == 0 and ".entry add_kernel" in out.read_text()
    loaded = result["modules"]
    assert "tritium.frontend.codegen" in loaded and not _forbidden(loaded)
    back = [m for m in loaded if m.startswith(("llvmlite", "tritium.codegen.lower",
                                                "tritium.passes"))]  # fmt: skip
    assert not back, f"the command's process imported {back}"
    load = ("import json, sys; from tritium.back_end_worker import load; "
            "load(sys.argv[1], sys.argv[2]); print(json.dumps(sorted(sys.modules)))")  # fmt: skip
    for stop, lowers in (("ptx", True), ("ttgir", False)):
        worker = subprocess.run([sys.executable, "-c", load, "sm_89", stop], capture_output=True,
                                text=True, timeout=300, env=_env(tmp_path))  # fmt: skip
        assert worker.returncode == 0, worker.stderr
        loaded = json.loads(worker.stdout.splitlines()[-1])
        assert not _forbidden(loaded), f"the worker imported {_forbidden(loaded)}"
        assert "tritium.passes.remove_layout_conversions" in loaded
        assert ("tritium.codegen.lower.memory" in loaded) == lowers
        assert ("llvmlite.binding" in loaded) == lowers
        # nor the frontend's (the kernel's file, numpy, the builtins: the command's)
        assert "numpy" not in loaded and "tritium.frontend.builtins" not in loaded


def test_a_compile_that_stops_before_llvm_ir_loads_neither_llvmlite_nor_the_lowerings(tmp_path):
    for emit in ("ttir", "ttgir"):  # (in one process; the worker's: the test above)
        out = tmp_path / f"add.{emit}"
        proc = subprocess.run([sys.executable, "-c", SCRIPT, *ARGS, "-o", str(out)],
                              capture_output=True, text=True, timeout=300,
                              env={**_env(tmp_path), "TRITIUM_CLI_WORKER": "0"})  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        loaded = json.loads(proc.stdout.splitlines()[-1])["modules"]
        assert "tt.store" in out.read_text()
        bad = [m for m in loaded if m.startswith(("llvmlite", "tritium.codegen.lower"))]
        assert not bad, f"--emit {emit} imported {bad}"


def test_the_command_flushes_its_output_and_keeps_its_exit_status(tmp_path):
    env = _env(tmp_path)
    cmd = [sys.executable, "-m", "tritium", *ARGS]
    ok = subprocess.run(cmd + ["--emit", "ttir"], capture_output=True, text=True, timeout=300,
                        env=env)  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.rstrip().endswith("}") and "tt.store" in ok.stdout  # all of it, flushed
    usage = subprocess.run(cmd + ["--num-warps", "x"], capture_output=True, text=True,
                           timeout=300, env=env)  # fmt: skip
    assert usage.returncode == 2 and "invalid int value" in usage.stderr
    missing = subprocess.run([sys.executable, "-m", "tritium", "compile", str(ROOT / "nope.py")],
                             capture_output=True, text=True, timeout=300, env=env)  # fmt: skip
    assert missing.returncode == 2 and "no such file" in missing.stderr
    bad_kernel = tmp_path / "bad.py"
    bad_kernel.write_text(
        "import tritium\n\n@tritium.jit\ndef k(x):\n    y = undefined_name + 1\n"
    )
    failed = subprocess.run([sys.executable, "-m", "tritium", "compile", f"{bad_kernel}:k",
                             "--signature", "*fp32"], capture_output=True, text=True,
                            timeout=300, env=env)  # fmt: skip
    assert failed.returncode == 1 and "undefined_name" in failed.stderr, failed.stderr


def test_the_command_ends_without_python_finalization(tmp_path, monkeypatch):
    # an atexit handler registered by the kernel's file runs at a normal exit; after
    # `tritium compile` none runs (the process ends at once, docs/performance.md). The
    # file sees OPENBLAS_NUM_THREADS=1 (no BLAS thread per core for its numpy).
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    kernel = tmp_path / "k.py"
    kernel.write_text(
        "import atexit, os, tritium, tritium.language as tl\n"
        f"atexit.register(lambda: open({str(tmp_path / 'ran')!r}, 'w').close())\n"
        f"open({str(tmp_path / 'blas')!r}, 'w').write(os.environ['OPENBLAS_NUM_THREADS'])\n\n"
        "@tritium.jit\ndef k(x, B: tl.constexpr):\n    tl.store(x + tl.arange(0, B), 1.0)\n"
    )
    proc = subprocess.run([sys.executable, "-m", "tritium", "compile", f"{kernel}:k",
                           "--signature", "*fp32:16", "--constexpr", "B=128", "--emit", "ttir"],
                          capture_output=True, text=True, timeout=300, env=_env(tmp_path))  # fmt: skip
    assert proc.returncode == 0 and "tt.store" in proc.stdout, proc.stderr
    assert not (tmp_path / "ran").exists()
    assert (tmp_path / "blas").read_text() == "1"
