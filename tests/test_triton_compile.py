"""Upstream's `triton.compile(ASTSource, target, options)`, its CompiledKernel launch
protocol and backend registry (tritium/triton_compile.py, tritium/triton_backends.py), as
torch's inductor drives them: a "cpu" target runs in the interpreter, a "cuda" one compiles
to PTX for that arch; pickled as inductor pickles it, the kernel is rebuilt."""

from __future__ import annotations

import importlib
import os
import pickle
import sys

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import triton_alias
from tritium.errors import ArgumentError, NotSupportedError
from tritium.runtime.driver import GPUTarget
from tritium.triton_backends import CPUDriver, DefaultDriver, backends, make_backend
from tritium.triton_compile import ASTSource, CompiledKernel, KernelMetadata, compile

CPU = GPUTarget("cpu", 0, 1)


@tritium.jit
def scaled_add(in_ptr0, in_ptr1, out_ptr0, xnumel, scale, XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    a = tl.load(in_ptr0 + xindex, xmask)
    b = tl.load(in_ptr1 + xindex, xmask)
    tl.store(out_ptr0 + xindex, a * scale + b, xmask)


SIGNATURE = {
    "in_ptr0": "*fp32",
    "in_ptr1": "*fp32",
    "out_ptr0": "*fp32",
    "xnumel": "i32",
    "scale": "fp32",
    "XBLOCK": "constexpr",
}
ALIGNED = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}


def _arrays(n=100):
    rng = np.random.default_rng(0)
    return rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)


def _launch(binary, grid, *args, enter=None, exit=None, stream=0):
    """As inductor's generated launcher calls it (triton_heuristics.py, make_launcher)."""
    binary._init_handles()
    meta = binary.launch_metadata(grid, stream, *args) if enter is not None else None
    binary.run(*grid, stream, binary.function, binary.packed_metadata, meta, enter, exit, *args)


def test_a_cpu_target_runs_in_the_interpreter_with_upstreams_launch_arguments():
    src = ASTSource(scaled_add, SIGNATURE, {"XBLOCK": 64}, ALIGNED)
    binary = compile(src, target=CPU, options={"num_warps": 2, "num_stages": 1, "debug": False})
    assert isinstance(binary, CompiledKernel) and binary.src is src and binary.name == "scaled_add"
    assert binary.metadata.backend_name == "cpu" and binary.metadata.num_warps == 2
    assert isinstance(binary.metadata, KernelMetadata) and binary.metadata.shared == 0
    assert "ttir" in binary.asm and "ptx" not in binary.asm
    assert len(binary.hash) == 64 and int(binary.hash, 16) >= 0  # hex: inductor's path key
    a, b = _arrays()
    out = np.zeros_like(a)
    seen = []
    _launch(binary, (2, 1, 1), a, b, out, 100, 0.5, 64, enter=seen.append, exit=seen.append)
    np.testing.assert_allclose(out, a * 0.5 + b, rtol=1e-6)
    assert [m["name"] for m in seen] == ["scaled_add", "scaled_add"]  # enter, then exit
    assert seen[0]["grid"] == (2, 1, 1)
    assert (binary.n_regs, binary.n_spills) == (0, 0)  # interpreted: no registers


def test_constexprs_by_index_path_and_the_spec_they_make():
    src = ASTSource(scaled_add, SIGNATURE, {(5,): 128}, ALIGNED)
    assert src.constants == {(5,): 128}
    spec = src.kernel_spec()
    assert set(spec.types) == {"in_ptr0", "in_ptr1", "out_ptr0", "xnumel", "scale"}
    assert spec.constants["XBLOCK"] == 128
    assert spec.divisible_by_16 == {"in_ptr0", "in_ptr1"}
    # another attrs / constants is another hash (inductor's cache key of the kernel)
    assert src.hash() != ASTSource(scaled_add, SIGNATURE, {"XBLOCK": 64}, ALIGNED).hash()
    assert src.hash() != ASTSource(scaled_add, SIGNATURE, {"XBLOCK": 128}).hash()


def test_a_cuda_target_compiles_for_that_arch():
    pytest.importorskip("llvmlite")
    src = ASTSource(scaled_add, SIGNATURE, {"XBLOCK": 128}, ALIGNED)
    binary = compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    assert binary.metadata.arch == "sm_90a" and binary.metadata.backend_name == "cuda"
    assert ".target sm_90a" in binary.asm["ptx"] and ".entry scaled_add" in binary.asm["ptx"]
    assert "tt.divisibility = 16" in binary.asm["ttir"]  # the aligned pointers
    binary80 = compile(src, target=("cuda", 80), options={"num_warps": 4})
    assert binary80.metadata.arch == "sm_80" and binary80.hash != binary.hash


def test_from_the_state_inductor_pickles_the_kernel_is_rebuilt():
    """inductor's TritonCompileResult.__getstate__ keeps the kernel's __dict__ without
    `module`, `function` and `run`, and __setstate__ makes the object with __new__."""
    binary = compile(ASTSource(scaled_add, SIGNATURE, {"XBLOCK": 64}), target=CPU)
    state = {**binary.__dict__, "metadata": binary.metadata._asdict(), "module": None,
             "function": None, "run": None}  # fmt: skip
    # what is tritium's in it pickles (the @jit function is inductor's to drop and restore)
    assert pickle.loads(pickle.dumps(state["_tritium_state"]))[1] == binary.module.runtime_params
    again = CompiledKernel.__new__(CompiledKernel)
    again.__dict__.update({**state, "metadata": KernelMetadata(**state["metadata"])})
    a, b = _arrays(70)
    out = np.zeros_like(a)
    _launch(again, (2, 1, 1), a, b, out, 70, 2.0, 64)
    np.testing.assert_allclose(out, a * 2.0 + b, rtol=1e-6)


def test_what_cannot_be_compiled_is_refused_with_one_message():
    with pytest.raises(NotSupportedError, match="ASTSource"):
        compile("kernel.ttgir", target=CPU)
    with pytest.raises(NotSupportedError, match="@triton.jit"):
        ASTSource(lambda x: x, {"x": "i32"})
    with pytest.raises(NotSupportedError, match="tuple elements"):
        ASTSource(scaled_add, SIGNATURE, {(5, 0): 1}).kernel_spec()
    with pytest.raises(ArgumentError, match="no parameter `YBLOCK`"):
        ASTSource(scaled_add, SIGNATURE, {"YBLOCK": 1})
    with pytest.raises(ArgumentError, match="backend 'cuda'"):
        compile(ASTSource(scaled_add, SIGNATURE, {"XBLOCK": 64}), target=("hip", "gfx90a", 64))


def test_the_backend_registry_and_options():
    assert set(backends) == {"nvidia", "cpu"} and backends["cpu"].driver is CPUDriver
    cpu = make_backend(CPU)
    assert cpu.parse_options({}).backend_name == "cpu" and cpu.get_codegen_implementation() == {}
    opts = make_backend(GPUTarget("cuda", 80, 32)).parse_options({"num_warps": 8, "foo": 1})
    assert opts.num_warps == 8 and opts.arch == "sm_80" and opts.extra == {"foo": 1}
    assert "fp8e4nv" not in opts.supported_fp8_dtypes  # (sm_89 and newer)
    assert "fp8e4nv" in make_backend(("cuda", 90)).parse_options({}).supported_fp8_dtypes
    assert vars(opts)["num_warps"] == 8  # inductor's get_backend_options reads __dict__


def test_the_served_driver_is_switched_as_inductor_switches_it(monkeypatch):
    for var, _, _ in triton_alias.INDUCTOR_SETTINGS:  # (install() sets them: undone after)
        monkeypatch.delenv(var, raising=False)
    saved = {n: m for n, m in sys.modules.items() if n == "triton" or n.startswith("triton.")}
    for name in saved:
        del sys.modules[name]
    triton_alias.install()
    try:
        triton = importlib.import_module("triton")
        driver = triton.runtime.driver
        assert isinstance(driver.active, DefaultDriver)
        assert isinstance(driver.active._obj, (CPUDriver, type(tritium.runtime.driver.active)))
        # triton_helpers.set_driver_to_cpu
        driver.set_active(triton.backends.backends["cpu"].driver())
        assert isinstance(driver.active, CPUDriver)
        assert driver.active.get_current_target() == CPU
        driver.reset_active()
        assert isinstance(driver.active, DefaultDriver)
        assert triton.compile is compile and triton.compiler.ASTSource is ASTSource
        # inductor compiles in this process, without the static launcher
        assert os.environ["TORCHINDUCTOR_COMPILE_THREADS"] == "1"
        assert os.environ["TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER"] == "0"
    finally:
        triton_alias.uninstall()
        sys.modules.update(saved)


def test_jit_functions_list_upstreams_params():
    params = scaled_add.params
    assert [p.name for p in params] == list(SIGNATURE)
    assert [p.num for p in params if p.is_constexpr] == [5]  # inductor's get_constexprs
    # src starts at the def, as upstream's (inductor parses "def " + src otherwise)
    assert scaled_add.src.startswith("def scaled_add(")


def test_a_cpu_bf16_tensor_reaches_the_interpreter_as_its_bits():
    torch = pytest.importorskip("torch")
    from tritium.runtime.array_kinds import as_host_array

    t = torch.tensor([1.0, -2.5, 3.0], dtype=torch.bfloat16)
    view = as_host_array(t)
    assert view.dtype == np.uint16
    view[0] = 0x4000  # 2.0 in bf16: written through to the tensor
    assert t[0].item() == 2.0


@pytest.mark.gpu
def test_a_kernel_for_the_current_gpu_launches_on_torchs_stream():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs torch with CUDA")
    from tritium.runtime.driver import active

    target = active.get_current_target()
    binary = compile(ASTSource(scaled_add, SIGNATURE, {"XBLOCK": 128}, ALIGNED), target=target,
                     options={"num_warps": 4, "num_stages": 1})  # fmt: skip
    a, b = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    out = torch.empty_like(a)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        _launch(binary, (8, 1, 1), a, b, out, 1000, 0.25, 128, stream=stream.cuda_stream)
    stream.synchronize()
    torch.testing.assert_close(out, a * 0.25 + b)
    assert binary.n_regs > 0 and binary.n_spills == 0 and binary.n_max_threads >= 128
