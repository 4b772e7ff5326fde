"""`tritium.compile`, `kernel[grid]` options and dumps, without a GPU."""

from __future__ import annotations

import pathlib
import subprocess

import numpy as np
import pytest

import tritium
from examples.vector_add import add_kernel
from tritium.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
SIG = {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "output_ptr": "*fp32:16", "n_elements": "i32"}


def test_compile_returns_every_stage():
    k = tritium.compile(
        add_kernel,
        signature={**SIG, "n_elements": "i32:16"},
        constexprs={"BLOCK_SIZE": 1024},
        num_warps=4,
        arch="sm_89",
    )
    for stage in ("ttir", "ttgir", "llir", "ptx"):
        assert stage in k.asm
    assert ".target sm_89" in k.asm["ptx"]
    assert ".reqntid 128" in k.asm["ptx"]
    assert "ld.global.v4.b32" in k.asm["ptx"]
    assert k.metadata.name == "add_kernel"
    assert [p["name"] for p in k.metadata.params] == [
        "x_ptr",
        "y_ptr",
        "output_ptr",
        "n_elements",
    ]
    assert [p["type"] for p in k.metadata.params] == ["*fp32", "*fp32", "*fp32", "i32"]
    assert k.metadata.num_warps == 4


def test_mask_alignment_limits_vector_width():
    """As upstream: with n not known to be a multiple of 16 the mask may change inside a
    4-element group, so accesses stay scalar."""
    k = tritium.compile(add_kernel, signature=SIG, constexprs={"BLOCK_SIZE": 1024})
    assert "ld.global.v4.b32" not in k.asm["ptx"] and "ld.global.b32" in k.asm["ptx"]


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90"])
def test_archs_assemble(arch, ptxas):
    k = tritium.compile(add_kernel, signature=SIG, constexprs={"BLOCK_SIZE": 256}, arch=arch)
    assert f".target {arch}" in k.asm["ptx"]
    assert isinstance(k.asm.get("cubin"), bytes) and len(k.asm["cubin"]) > 0


def test_stop_at_ttir_needs_no_backend():
    k = tritium.compile(add_kernel, signature=SIG, constexprs={"BLOCK_SIZE": 64}, stop="ttir")
    assert set(k.asm) == {"ttir"}


def test_readme_compile_command_produces_valid_ptx(tmp_path, ptxas, capsys):
    out = tmp_path / "add.ptx"
    code = main(
        [
            "compile",
            f"{ROOT}/examples/vector_add.py:add_kernel",
            "--signature",
            "*fp32:16,*fp32:16,*fp32:16,i32",
            "--constexpr",
            "BLOCK_SIZE=1024",
            "-o",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    proc = subprocess.run(
        [ptxas, "-arch=sm_89", str(out), "-o", str(tmp_path / "add.cubin")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_upstream_ttir_compiles_to_ptx(ptxas):
    k = tritium.compile(str(ROOT / "tests" / "data" / "upstream" / "add_kernel.ttir"))
    assert ".entry add_kernel" in k.asm["ptx"]
    assert "cubin" in k.asm


def test_jit_dump_dir_in_interpreter(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    monkeypatch.setenv("TRITIUM_DUMP_DIR", str(tmp_path))
    x = np.arange(100, dtype=np.float32)
    out = np.empty_like(x)
    add_kernel[(1,)](x, x, out, 100, BLOCK_SIZE=128)
    np.testing.assert_array_equal(out, 2 * x)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names[0] == "00-source.py" and any("ttir-frontend" in n for n in names)


def test_launch_options_and_grid_lambda(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    n = 1000
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    out = np.full_like(x, np.nan)
    add_kernel[lambda meta: (tritium.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)](
        x, x, out, n, BLOCK_SIZE=256, num_warps=2
    )
    np.testing.assert_allclose(out, 2 * x)
    assert add_kernel.arg_names == ["x_ptr", "y_ptr", "output_ptr", "n_elements", "BLOCK_SIZE"]
    assert add_kernel.fn.__name__ == "add_kernel"


def test_jit_interpret_flag():
    @tritium.jit(interpret=True)
    def twice(x_ptr, n, BLOCK: tritium.language.constexpr):
        import tritium.language as tl  # noqa: F401  (not allowed: see below)

    x = np.zeros(4, np.float32)
    with pytest.raises(tritium.CompilationError, match="import statements"):
        twice[(1,)](x, 4, BLOCK=4)


def test_bad_launch_arguments():
    x = np.zeros(4, np.float32)
    with pytest.raises(tritium.ArgumentError, match="missing argument"):
        add_kernel[(1,)](x, x, x, BLOCK_SIZE=4)
    with pytest.raises(tritium.ArgumentError, match="unexpected keyword argument 'BLOCKSIZE'"):
        add_kernel[(1,)](x, x, x, 4, BLOCKSIZE=4)


@pytest.mark.parametrize("t", ["fp32", "fp16", "fp64"])
def test_float_mod_lowers_and_assembles(t, ptxas):
    from tests.test_gpu_kernels import float_mod_kernel

    k = tritium.compile(
        float_mod_kernel, signature=f"*{t},*{t},*{t},i32", constexprs={"BLOCK": 128}
    )
    assert "cvt.rzi" in k.asm["ptx"] and "cubin" in k.asm
