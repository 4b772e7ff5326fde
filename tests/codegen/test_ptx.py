"""Every hand-written kernel: TTGIR -> verified LLVM IR -> PTX with the expected
instructions -> assembled by ptxas with no local memory, stack or spills."""

from __future__ import annotations

import pytest

import tests.codegen.kernels_control  # noqa: F401  (registers its cases)
import tests.codegen.kernels_dtypes  # noqa: F401
import tests.codegen.kernels_reduce  # noqa: F401
from tests.codegen.kernels import CASES, lower_ttgir
from tritium.codegen import llir_to_ptx, tools
from tritium.codegen.ptx import ARCHS

NAMES = sorted(CASES)


def compile_case(name: str, arch: str = "sm_89") -> str:
    llir, _ = lower_ttgir(CASES[name].ttgir)
    return llir_to_ptx(llir, arch)


@pytest.mark.parametrize("name", NAMES)
def test_ptx_has_expected_instructions(name):
    ptx = compile_case(name)
    case = CASES[name]
    assert ".reqntid" in ptx
    for s in case.ptx_has:
        assert s in ptx, f"{name}: expected {s!r} in the PTX"
    for s in case.ptx_lacks:
        assert s not in ptx, f"{name}: did not expect {s!r} in the PTX"


@pytest.mark.parametrize("name", NAMES)
def test_ptxas_assembles_without_local_memory(name, ptxas):
    usage = tools.ptxas_usage(compile_case(name), "sm_89")
    assert usage is not None
    assert usage["local"] == 0 and usage["stack_frame"] == 0, usage["log"]
    assert usage["spill_stores"] == 0 and usage["spill_loads"] == 0, usage["log"]
    assert 0 < usage["registers"] <= CASES[name].max_registers, usage["log"]


@pytest.mark.parametrize("arch", ARCHS)
def test_every_arch_assembles(arch, ptxas):
    ptx = compile_case("add_vec4", arch)
    assert f".target {arch}" in ptx and ".version 8.7" in ptx
    cubin = tools.ptxas(ptx, arch)
    assert cubin[:4] == b"\x7fELF"


def test_vector_add_matches_upstream_shape():
    """Upstream's add_kernel (sizePerThread 1): 8 scalar loads per operand, each address a
    base plus a constant, as in upstream's add_kernel.ptx; 4-wide: 2 v4 loads each."""
    ptx = compile_case("add_upstream")
    assert ptx.count("ld.global.b32") == 16 and ptx.count("st.global.b32") == 8
    assert ptx.count("mul.wide.s32") == 1  # one 64-bit offset, then base + immediate
    ptx4 = compile_case("add_vec4")
    assert ptx4.count("ld.global.v4.b32") == 4 and ptx4.count("st.global.v4.b32") == 2
    assert ptx4.count("setp.lt.s32") == 2  # one mask bit per 4 elements
