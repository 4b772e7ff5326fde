"""`tritium compile`'s back-end worker (tritium/back_end_worker.py) and the IR hand-over it
rests on (tritium/ir/portable.py): a frontend TTIR handed over compiles to exactly what it
compiles to in its own process, at every stage, for every example's kernel and for random
kernels of every feature; a worker that fails or dies leaves the compile to the caller;
the CLI's output is the same with and without the worker."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import pickle
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings

import tritium.compiler as C
from tests.test_robustness_determinism import example_specs
from tritium.back_end_worker import BackEnd
from tritium.ir.portable import from_portable, to_portable
from tritium.testing import fuzz
from tritium.testing.fuzz_ops import FEATURES

ROOT = pathlib.Path(__file__).resolve().parents[1]
STAGES = ("ttir", "ttgir", "llir", "ptx")


def _in_process(fn, spec, options) -> C.CompiledKernel:
    return C.compile_kernel(fn, spec, options, stop="ptx")


def _handed_over(fn, spec, options) -> C.CompiledKernel:
    """The frontend's TTIR through to_portable, pickle and from_portable (as the worker
    gets it), then compiled on from there."""
    dumper = C.Dumper(None)
    module, _ = C.frontend_ttir(fn, spec, options, dumper, None)
    data = pickle.dumps(to_portable(module), protocol=pickle.HIGHEST_PROTOCOL)
    copy = from_portable(pickle.loads(data))
    assert C.print_ir(copy, locations=True) == C.print_ir(module, locations=True)
    return C.compile_ttir(copy, fn.__name__, list(spec.types), spec, options, dumper, None,
                          "ptx", None)  # fmt: skip


def _same(a: C.CompiledKernel, b: C.CompiledKernel) -> None:
    for stage in STAGES:
        assert a.asm[stage] == b.asm[stage], stage
    assert a.metadata == b.metadata


@pytest.fixture(scope="module")
def specs():
    return example_specs()


@pytest.mark.parametrize("arch", ["sm_89", "sm_90a"])
def test_every_example_kernel_compiles_the_same_handed_over(specs, arch):
    assert len(specs) >= 14
    for fn, spec, opts in specs:
        options = dataclasses.replace(opts, arch=arch)
        _same(_in_process(fn, spec, options), _handed_over(fn, spec, options))


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(fuzz.programs(profile="gpu", reductions=True, features=FEATURES))
def test_random_kernels_compile_the_same_handed_over(program):
    from tritium.jit.specialize import build_spec
    from tritium.options import Options

    kernel = fuzz.build_kernel(program, interpret=False)
    args, _ = fuzz._arguments(program, fuzz.make_data(program))
    spec = build_spec(kernel, args + [program.R, program.C])
    options = Options(arch="sm_89")
    _same(_in_process(kernel, spec, options), _handed_over(kernel, spec, options))


def test_a_use_before_its_definition_in_block_order_is_kept():
    # from_portable sets operands once every value exists: here ^bb1 uses %x, which ^bb2
    # defines (^bb2 is ^bb1's only predecessor, so it dominates it; block order is not
    # dominance order)
    from xdsl.dialects import cf, func
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Block, Region

    from tritium.ir import arith

    entry, b1, b2 = Block(), Block(), Block()
    x = arith.ConstantOp.from_int_and_width(7, 32)
    x.result.name_hint = "x"
    b2.add_ops([x, cf.BranchOp(b1)])
    b1.add_ops([arith.AddiOp(x.result, x.result), func.ReturnOp()])
    entry.add_op(cf.BranchOp(b2))
    f = func.FuncOp("f", ((), ()), Region([entry, b1, b2]))
    module = ModuleOp([f])
    module.verify()
    copy = from_portable(pickle.loads(pickle.dumps(to_portable(module))))
    copy.verify()
    assert C.print_ir(copy) == C.print_ir(module)
    assert "arith.addi %x, %x" in C.print_ir(copy)


def _examples_kernel():
    from examples.vector_add import add_kernel
    from tritium.frontend.signature import parse_signature

    spec = parse_signature(add_kernel, "*fp32:16,*fp32:16,*fp32:16,i32", {"BLOCK_SIZE": 1024})
    return add_kernel, spec


def _worker_that_died() -> BackEnd:
    """A BackEnd whose worker exited before reading anything."""
    requests_r, requests_w = os.pipe()
    replies_r, replies_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.close(requests_r)
    os.close(replies_w)
    return BackEnd(pid, os.fdopen(requests_w, "wb"), os.fdopen(replies_r, "rb"))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the worker needs fork")
def test_a_worker_that_died_leaves_the_compile_to_the_caller(tmp_path):
    fn, spec = _examples_kernel()
    options = C.Options()
    back_end = _worker_that_died()
    module, _ = C.frontend_ttir(fn, spec, options, C.Dumper(None), None)
    assert back_end.compile(module, fn.__name__, list(spec.types), spec, options,
                            C.Dumper(None), None, "ptx") is None  # fmt: skip
    back_end.close()
    back_end.close()  # (idempotent)
    # through compile_kernel: the caller compiles on itself, to the same kernel
    kernel = C.compile_kernel(fn, spec, options, stop="ptx", back_end=_worker_that_died())
    _same(kernel, _in_process(fn, spec, options))


def test_a_process_with_the_back_half_loaded_forks_no_worker():
    import tritium.passes.pipeline  # noqa: F401  (loaded: a worker would save nothing)

    assert BackEnd.start("sm_89") is None


def _cli(args: list, tmp_path, **env) -> subprocess.CompletedProcess:
    path = os.environ.get("PYTHONPATH")
    return subprocess.run(
        [sys.executable, "-m", "tritium", "compile", *args], capture_output=True, text=True,
        timeout=300, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT) + (os.pathsep + path if path else ""),
             **env},
    )  # fmt: skip


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker forks on Linux")
def test_the_command_gives_the_same_output_with_and_without_its_worker(tmp_path):
    add = [f"{ROOT / 'examples' / 'vector_add.py'}:add_kernel", "-s",
           "*fp32:16,*fp32:16,*fp32:16,i32", "-c", "BLOCK_SIZE=1024"]  # fmt: skip
    gemm = [f"{ROOT / 'examples' / 'matmul_fp16_grouped.py'}:matmul_fp16_grouped_kernel", "-s",
            "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
            "-c", "BLOCK_M=128", "-c", "BLOCK_N=128", "-c", "BLOCK_K=32", "-c", "GROUP_M=8",
            "--arch", "sm_90a", "--num-warps", "4"]  # fmt: skip
    for name, args in (("add", add), ("gemm", gemm)):
        for emit in ("ttir", "ttgir", "llir", "ptx"):
            outs = {}
            for worker in ("1", "0"):
                d = tmp_path / f"{name}-{emit}-{worker}"
                proc = _cli([*args, "--emit", emit, "-o", str(d / "out"), "--dump-dir",
                             str(d / "dump"), "--meta", str(d / "k.json"), "--time-passes"],
                            tmp_path, TRITIUM_CLI_WORKER=worker)  # fmt: skip
                assert proc.returncode == 0, proc.stderr
                # the worker's stages are in the report, with the hand-over's
                assert ("ttir-to-worker" in proc.stderr) == (worker == "1"), proc.stderr
                assert "remove-layout-conversions" in proc.stderr
                dumps = sorted(p.name for p in (d / "dump").iterdir())
                outs[worker] = ((d / "out").read_text(), (d / "k.json").read_text(), dumps,
                                [(d / "dump" / p).read_text() for p in dumps])  # fmt: skip
            assert outs["1"] == outs["0"], (name, emit)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker forks on Linux")
def test_a_failing_command_reports_as_without_its_worker(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import tritium\nimport tritium.language as tl\n\n@tritium.jit\n"
        "def k(x, B: tl.constexpr):\n    tl.store(x + tl.arange(0, B), 1.0)\n"
    )  # B=3: not a power of two, refused by the frontend
    for worker in ("1", "0"):
        proc = _cli([f"{bad}:k", "-s", "*fp32", "-c", "B=3"], tmp_path, TRITIUM_CLI_WORKER=worker)
        assert proc.returncode == 1 and "bad.py:6" in proc.stderr, proc.stderr


# the command, with the worker's compile made to fail (an exception, or the worker's
# process ending) in the worker the command forks
_FAILING = """
import os, sys
import tritium.back_end_worker as w
HOW = sys.argv.pop()
def failing(*args):
    if HOW == "exit":
        os._exit(3)
    raise RuntimeError("a bug in the worker")
w._compile = failing
from tritium.cli import entry
entry()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker forks on Linux")
@pytest.mark.parametrize("how", ["raise", "exit"])
def test_a_worker_that_fails_leaves_the_compile_to_the_command(tmp_path, how):
    add = [f"{ROOT / 'examples' / 'vector_add.py'}:add_kernel", "-s",
           "*fp32:16,*fp32:16,*fp32:16,i32", "-c", "BLOCK_SIZE=1024", "--time-passes"]  # fmt: skip
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + (os.pathsep + path if path else "")}
    failed = subprocess.run([sys.executable, "-c", _FAILING, "compile", *add, how],
                            capture_output=True, text=True, timeout=300, env=env)  # fmt: skip
    assert failed.returncode == 0, failed.stderr
    # handed over, compiled here: none of the worker's stage times came back
    assert "ttir-to-worker" in failed.stderr and "ttir-from-parent" not in failed.stderr
    alone = _cli(add, tmp_path, TRITIUM_CLI_WORKER="0")
    assert alone.returncode == 0 and failed.stdout == alone.stdout
