"""Lowering details: the kernel signature and metadata, the index maths helpers, one pass
over the ops (vector widths come from the axis info, computed before), clear errors for
what is not supported yet, and the ptxas / disassembler wrappers."""

from __future__ import annotations

import re

import pytest

import tests.codegen.kernels_control  # noqa: F401  (registers its cases)
from tests.codegen.kernels import B1, CASES, UPSTREAM, lower_ttgir, module
from tritium.codegen import llir_to_ptx, tools
from tritium.codegen.lower.context import LOWERINGS
from tritium.codegen.lower.shape import register_map
from tritium.codegen.ptx import optimize
from tritium.ir.layouts import linear_layout
from tritium.ir.ttg import BlockedEncodingAttr, SliceEncodingAttr


def lower(text: str):
    return lower_ttgir(text)


# --------------------------------------------------------------------------- signature


def test_kernel_signature_and_metadata():
    llir, meta = lower((UPSTREAM / "add_kernel.ttgir").read_text())
    assert meta == {
        "name": "add_kernel",
        "num_warps": 4,
        "threads_per_warp": 32,
        "shared": 0,
        "params": [
            {"name": "x_ptr", "type": "*fp32"},
            {"name": "y_ptr", "type": "*fp32"},
            {"name": "output_ptr", "type": "*fp32"},
            {"name": "n_elements", "type": "i32"},
        ],
    }
    assert (
        "define ptx_kernel void @add_kernel(ptr addrspace(1) %x_ptr, ptr addrspace(1) %y_ptr, "
        "ptr addrspace(1) %output_ptr, i32 %n_elements)" in llir
    )
    assert '"nvvm.reqntid"="128"' in llir


def test_reqntid_follows_num_warps():
    text = CASES["add_upstream"].ttgir.replace('"ttg.num-warps" = 4', '"ttg.num-warps" = 8')
    text = text.replace("warpsPerCTA = [4]", "warpsPerCTA = [8]")
    llir, meta = lower(text)
    assert meta["num_warps"] == 8
    assert ".reqntid 256" in llir_to_ptx(llir)


def test_signature_strings_for_other_types():
    text = module(
        B1,
        """
  tt.func public @k(%a: !tt.ptr<f16>, %b: !tt.ptr<bf16>, %c: i64, %d: f32, %e: !tt.ptr<i8>, %f: i1, %g: f64) attributes {noinline = false} {
    tt.return
  }""",
    )
    _, meta = lower(text)
    assert [p["type"] for p in meta["params"]] == [
        "*fp16",
        "*bf16",
        "i64",
        "fp32",
        "*i8",
        "i1",
        "fp64",
    ]


def test_optimize_keeps_a_verifiable_module():
    llir, _ = lower(CASES["add_vec4"].ttgir)
    opt = optimize(llir)
    assert "asm sideeffect" in opt and "ld.global.v4.b32" in opt


def test_unknown_arch_is_refused():
    llir, _ = lower(CASES["add_vec4"].ttgir)
    with pytest.raises(ValueError, match="sm_75"):
        llir_to_ptx(llir, "sm_75")


# --------------------------------------------------------------------------- errors


def test_unsupported_op_names_itself():
    # tt.dot is another stage.
    text = module(
        "#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>",
        """
  tt.func public @k(%x: f32) attributes {noinline = false} {
    %a = tt.splat %x : f32 -> tensor<16x16xf32, #blocked>
    %d = tt.dot %a, %a, %a : tensor<16x16xf32, #blocked> * tensor<16x16xf32, #blocked> -> tensor<16x16xf32, #blocked>
    tt.return
  }""",
    )
    with pytest.raises(NotImplementedError, match=r"tt\.dot"):
        lower(text)


def test_convert_layout_across_threads_goes_through_shared_memory():
    text = module(
        "\n".join(
            [
                B1,
                "#b4 = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>",
            ]
        ),
        """
  tt.func public @k(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #blocked>
    %c = ttg.convert_layout %r : tensor<1024xi32, #blocked> -> tensor<1024xi32, #b4>
    %f = arith.sitofp %c : tensor<1024xi32, #b4> to tensor<1024xf32, #b4>
    %s = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #b4>
    %r4 = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #b4>
    %p = tt.addptr %s, %r4 : tensor<1024x!tt.ptr<f32>, #b4>, tensor<1024xi32, #b4>
    tt.store %p, %f : tensor<1024x!tt.ptr<f32>, #b4>
    tt.return
  }""",
    )
    llir, meta = lower(text)
    assert meta["shared"] == 4096  # the whole tile, 1024 x i32
    ptx = llir_to_ptx(llir)
    assert ptx.count("bar.sync") == 1
    assert ptx.count("st.shared.b32") == 8  # 8 scalar registers, 512 bytes apart
    assert ptx.count("ld.shared.v4.b32") == 2  # 4 consecutive elements per load


def test_non_splat_constant_is_not_implemented():
    text = module(
        "#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>",
        """
  tt.func public @k(%x: !tt.ptr<f32>) attributes {noinline = false} {
    %c = arith.constant dense<[1, 2]> : tensor<2xi32, #blocked>
    tt.return
  }""",
        num_warps=1,
    )
    with pytest.raises(NotImplementedError, match="arith.constant"):
        lower(text)


def test_f64_transcendental_is_an_accurate_routine():
    # f64 math has no approximate instruction: libm's exp (fma, integer scaling by 2^k)
    text = module(
        B1,
        """
  tt.func public @k(%x: f64) attributes {noinline = false} {
    %y = math.exp %x : f64
    %z = math.erf %y : f64
    tt.return
  }""",
    )
    llir, _ = lower(text)
    assert "llvm.fma.f64" in llir and "approx" not in llir


def test_unknown_libdevice_symbol_is_refused():
    text = module(
        B1,
        """
  tt.func public @k(%x: f32) attributes {noinline = false} {
    %y = tt.extern_elementwise %x {libname = "", libpath = "", pure = true, symbol = "__nv_lgammaf"} : (f32) -> f32
    tt.return
  }""",
    )
    with pytest.raises(NotImplementedError, match="__nv_lgammaf"):
        lower(text)


# --------------------------------------------------------------------------- index maths


def test_register_map_for_broadcast_and_expand_dims():
    parent = BlockedEncodingAttr([1, 4], [2, 16], [4, 1], [1, 0])
    cols = linear_layout(SliceEncodingAttr(0, parent), (64,))
    row = linear_layout(parent, (1, 64))
    full = linear_layout(parent, (32, 64))
    # expand_dims: each [1, 64] register is the slice register holding the same column.
    m = register_map(cols, row, lambda c: c[1:])
    assert [cols.register_coord(i)[0] for i in m] == [
        row.register_coord(r)[1] for r in range(len(m))
    ]
    # broadcast [1, 64] -> [32, 64]: 16 registers, rows repeat the 4 column registers.
    assert register_map(row, full, lambda c: (0, c[1])) == [0, 1, 2, 3] * 4


def test_register_map_refuses_cross_thread_moves():
    a = linear_layout(BlockedEncodingAttr([1], [32], [4], [0]), (1024,))
    b = linear_layout(BlockedEncodingAttr([4], [32], [4], [0]), (1024,))
    assert register_map(a, b, lambda c: c) is None
    assert register_map(a, a, lambda c: c) == list(range(8))


def test_each_op_is_lowered_once(monkeypatch):
    # The loops' carried pointers: aligned in one kernel, not in the other. Either way
    # the axis info decides the vector width before emission; nothing is retried.
    calls: dict[str, int] = {}
    for name, fn in list(LOWERINGS.items()):

        def counted(ctx, op, fn=fn, name=name):
            calls[name] = calls.get(name, 0) + 1
            fn(ctx, op)

        monkeypatch.setitem(LOWERINGS, name, counted)
    for case, width in (("loop_pointers_aligned", ".v4"), ("loop_pointers_unaligned", "")):
        calls.clear()
        llir, _ = lower(CASES[case].ttgir)
        assert calls["scf.for"] == 2 and calls["tt.load"] == 2, calls
        loads = re.findall(r"ld\.global(\.v4)?\.b32", llir)
        assert loads and all(w == width for w in loads), (case, loads)


# --------------------------------------------------------------------------- tools


def test_ptxas_reports_errors(ptxas):
    with pytest.raises(tools.PtxasError, match="ptxas"):
        tools.ptxas(".version 8.7\n.target sm_89\n.address_size 64\nthis is not ptx\n", "sm_89")


def test_tools_absent(monkeypatch):
    monkeypatch.setattr(tools, "find_tool", lambda name: None)
    assert tools.ptxas("", "sm_89") is None
    assert tools.ptxas_usage("", "sm_89") is None
    assert tools.disassemble(b"") is None


def test_disassemble_when_present(ptxas):
    if tools.find_tool("nvdisasm") is None and tools.find_tool("cuobjdump") is None:
        pytest.skip("neither nvdisasm nor cuobjdump is installed")
    llir, _ = lower(CASES["add_vec4"].ttgir)
    sass = tools.disassemble(tools.ptxas(llir_to_ptx(llir), "sm_89"))
    assert "LDG.E.128" in sass


# --------------------------------------------------------------------------- ownership


def _store_lines(name: str) -> list[str]:
    llir, _ = lower(CASES[name].ttgir)
    return [ln.strip() for ln in llir_to_ptx(llir).splitlines() if "st.global" in ln]


def test_replicated_store_is_done_by_owners_only():
    # 64 elements on 128 threads: warps 2 and 3 hold copies and must not store them.
    llir, _ = lower(CASES["replicated_store"].ttgir)
    assert re.search(r"and i32 %\S+, 64\n", llir.split("body:")[0])  # tid & free warp bit
    lines = _store_lines("replicated_store")
    assert len(lines) == 1 and lines[0].startswith("@%p")
    # No replication and no mask: plain stores.
    assert all(not ln.startswith("@") for ln in _store_lines("casts_f16_bf16"))


def test_scalar_store_is_done_by_thread_zero():
    llir, _ = lower(CASES["scf_if_while_scalars"].ttgir)
    assert "icmp eq i32" in llir.split("body:")[0]  # tid == 0
    scalar = [ln for ln in _store_lines("scf_if_while_scalars") if "st.global.b32" in ln]
    assert sum(ln.startswith("@%p") for ln in scalar) == 2  # the two scalar stores


def test_layout_must_match_the_module_warps():
    text = CASES["add_upstream"].ttgir.replace('"ttg.num-warps" = 4', '"ttg.num-warps" = 2')
    with pytest.raises(NotImplementedError, match="4 warps"):
        lower(text)
