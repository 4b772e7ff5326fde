"""Ahead-of-time artifacts in Python: `--meta` JSON, `tritium.load_ptx`, and that loading a
saved kernel imports no compiler. (The C wrapper is tested in test_aot_c.py.)"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tritium
from tritium.cli import main
from tritium.errors import ArgumentError
from tritium.runtime.metadata import check_metadata, kernel_metadata, ptx_reqntid, read_metadata

ROOT = pathlib.Path(__file__).resolve().parents[1]
ADD = f"{ROOT / 'examples' / 'vector_add.py'}:add_kernel"
SIG = "*fp32:16,*fp32:16,*fp32:16,i32"
COMPILER_MODULES = ("xdsl", "llvmlite", "tritium.frontend", "tritium.codegen", "tritium.ir")
COMPILER_MODULES += ("tritium.passes", "tritium.compiler", "tritium.jit.")  # the package is light


def compile_artifacts(tmp_path, *extra, block=1024, arch="sm_89", name="add"):
    ptx, meta = tmp_path / f"{name}.ptx", tmp_path / f"{name}.json"
    argv = ["compile", ADD, "-s", SIG, "-c", f"BLOCK_SIZE={block}", "--arch", arch]
    code = main([*argv, "-o", str(ptx), "--meta", str(meta), *extra])
    assert code == 0
    return ptx, meta


def test_meta_json_describes_the_ptx(tmp_path):
    ptx, meta_path = compile_artifacts(tmp_path, "--num-warps", "8")
    meta = json.loads(meta_path.read_text())
    text = ptx.read_text()
    assert meta["format"] == "tritium-kernel" and meta["format_version"] == 1
    assert meta["name"] == "add_kernel"
    assert meta["params"] == [  # with which pointers the kernel may write through
        {"name": "x_ptr", "type": "*fp32", "writes": False},
        {"name": "y_ptr", "type": "*fp32", "writes": False},
        {"name": "output_ptr", "type": "*fp32", "writes": True},
        {"name": "n_elements", "type": "i32"},
    ]
    assert meta["num_warps"] == 8 and meta["threads_per_warp"] == 32
    assert meta["reqntid"] == 256 and ".reqntid 256" in text
    assert meta["shared"] == 0 and meta["arch"] == "sm_89"
    assert meta["tritium_version"] == tritium.__version__
    assert meta["signature"] == SIG and meta["constexprs"] == {"BLOCK_SIZE": 1024}
    check_metadata(meta, ptx=text)  # the pair is consistent


def test_meta_with_an_earlier_stage_still_compiles_to_ptx(tmp_path):
    meta_path = tmp_path / "k.json"
    code = main(["compile", ADD, "-s", SIG, "-c", "BLOCK_SIZE=256", "--emit", "ttir"]
                + ["-o", str(tmp_path / "k.ttir"), "--meta", str(meta_path)])  # fmt: skip
    assert code == 0
    assert (tmp_path / "k.ttir").read_text().startswith("module")
    assert json.loads(meta_path.read_text())["reqntid"] == 128


def test_meta_from_a_ttir_file(tmp_path):
    ttir = ROOT / "tests" / "data" / "upstream" / "add_kernel.ttir"
    meta_path = tmp_path / "u.json"
    assert (
        main(["compile", str(ttir), "-o", str(tmp_path / "u.ptx"), "--meta", str(meta_path)]) == 0
    )
    meta = json.loads(meta_path.read_text())
    assert [p["type"] for p in meta["params"]] == ["*fp32", "*fp32", "*fp32", "i32"]
    assert "signature" not in meta and "constexprs" not in meta


def test_ptx_reqntid():
    assert ptx_reqntid(".entry k()\n.reqntid 128\n{") == 128
    assert ptx_reqntid(".entry k()\n.reqntid 32, 2, 1\n{") == 64
    assert ptx_reqntid(".entry k()\n{") is None


def test_kernel_metadata_refuses_a_mismatched_block():
    class Fake:
        asm = {"ptx": ".visible .entry k(\n)\n.reqntid 64\n{\n}\n"}
        metadata = {"name": "k", "params": [], "num_warps": 4, "threads_per_warp": 32}

    with pytest.raises(ArgumentError, match=r"\.reqntid 64.*= 128"):
        kernel_metadata(Fake())


def test_check_metadata_catches_mistakes(tmp_path):
    ptx, meta_path = compile_artifacts(tmp_path, block=256)
    text, meta = ptx.read_text(), json.loads(meta_path.read_text())
    with pytest.raises(ArgumentError, match="does not belong to this PTX"):
        check_metadata(meta, ptx=text.replace("add_kernel_param_3", "add_kernel_param_x"))
    with pytest.raises(ArgumentError, match="missing reqntid"):
        check_metadata({k: v for k, v in meta.items() if k != "reqntid"})
    with pytest.raises(ArgumentError, match="reqntid 64 != num_warps"):
        check_metadata({**meta, "reqntid": 64})
    with pytest.raises(ArgumentError, match="no kernel named 'other'"):
        check_metadata({**meta, "name": "other", "ptx_sha256": None}, ptx=text)
    with pytest.raises(ArgumentError, match="newer than this tritium"):
        check_metadata({**meta, "format_version": 99})
    with pytest.raises(ArgumentError, match="not 'tritium-kernel'"):
        check_metadata({**meta, "format": "something-else"})
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ArgumentError, match="not a tritium kernel metadata file"):
        read_metadata(bad)


def test_load_ptx_finds_and_checks_the_metadata(tmp_path):
    ptx, meta_path = compile_artifacts(tmp_path, block=256)
    k = tritium.load_ptx(ptx)  # add.json beside add.ptx; nothing touches a GPU yet
    assert k.name == "add_kernel"
    assert [p["type"] for p in k.params] == ["*fp32", "*fp32", "*fp32", "i32"]
    assert k.launcher.block == (128, 1, 1) and k.launcher.shared == 0
    assert "add_kernel(x_ptr: *fp32" in repr(k)
    k2 = tritium.load_ptx(str(ptx), meta=json.loads(meta_path.read_text()))
    assert k2.launcher.block == (128, 1, 1)
    # metadata of another compilation (BLOCK_SIZE=1024) does not fit this PTX
    other = tmp_path / "other"
    other.mkdir()
    _, other_meta = compile_artifacts(other, block=1024)
    with pytest.raises(ArgumentError, match="does not belong to this PTX"):
        tritium.load_ptx(ptx, meta=other_meta)
    os.remove(meta_path)
    with pytest.raises(ArgumentError, match="no metadata for .*add.json"):
        tritium.load_ptx(ptx)


def test_load_ptx_imports_no_compiler(tmp_path):
    """A program that only launches saved kernels never imports xDSL, llvmlite or the compiler."""
    ptx, _ = compile_artifacts(tmp_path, block=256)
    code = f"""
import sys
import tritium
k = tritium.load_ptx({str(ptx)!r})
assert k.name == "add_kernel"
loaded = sorted(m for m in sys.modules if m.startswith({COMPILER_MODULES!r}))
print("LOADED", loaded)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "LOADED []" in out.stdout, out.stdout


def test_import_tritium_is_light():
    code = f"""
import sys
import tritium
assert callable(tritium.cdiv)
print("LOADED", sorted(m for m in sys.modules if m.startswith({COMPILER_MODULES!r})))
tritium.jit  # first use imports the frontend
print("JIT", "tritium.jit.jit" in sys.modules)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "LOADED []" in out.stdout and "JIT True" in out.stdout, out.stdout


# ----------------------------------------------------------------------------- on the GPU


@pytest.mark.gpu
def test_load_ptx_launches_a_saved_kernel(tmp_path):
    """Compile for this GPU, then in a fresh process load the .ptx/.json pair and run it on
    numpy arrays (and check, after the launch, that no compiler module was imported)."""
    from tritium.compiler import target_arch
    from tritium.runtime.driver import current_arch

    ptx, _ = compile_artifacts(tmp_path, block=1024, arch=target_arch(current_arch()))
    code = f"""
import sys
import numpy as np
import tritium
add = tritium.load_ptx({str(ptx)!r})
rng = np.random.default_rng(0)
n = 100_003
x = rng.standard_normal(n, dtype=np.float32)
y = rng.standard_normal(n, dtype=np.float32)
out = np.full(n, np.nan, dtype=np.float32)
add[(tritium.cdiv(n, 1024),)](x, y, out, n)
np.testing.assert_allclose(out, x.astype(np.float64) + y, rtol=2**-24, atol=0)
d = tritium.to_device(x)
e = tritium.zeros(n, np.float32)
add.run((tritium.cdiv(n, 1024), 1, 1), [d, d, e, n])
np.testing.assert_allclose(e.numpy(), 2 * x.astype(np.float64), rtol=0, atol=0)
print("LOADED", sorted(m for m in sys.modules if m.startswith({COMPILER_MODULES!r})))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "LOADED []" in out.stdout, out.stdout


@pytest.mark.gpu
def test_load_ptx_launch_errors_name_the_argument(tmp_path):
    from tritium.compiler import target_arch
    from tritium.runtime.driver import current_arch

    ptx, _ = compile_artifacts(tmp_path, block=256, arch=target_arch(current_arch()))
    add = tritium.load_ptx(ptx)
    x = np.zeros(10, np.float64)
    with pytest.raises(ArgumentError, match="'x_ptr'.*float64"):
        add[(1,)](x, x, x, 10)
