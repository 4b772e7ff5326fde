"""Every example kernel (but matmul: tt.dot is another stage) compiles to PTX that ptxas
accepts with no local memory, with and without divisibility hints, at the sizes the
benchmarks use (BLOCK and num_warps as the examples pick them)."""

from __future__ import annotations

import importlib

import pytest

import tritium
from tritium.codegen import tools

# example -> (kernel name, signature with ":16" hints, constexprs, num_warps)
KERNELS = {
    "vector_add": ("add_kernel", "*fp32:16,*fp32:16,*fp32:16,i32:16", {"BLOCK_SIZE": 1024}, 4),
    "softmax": (
        "softmax_kernel",
        "*fp32:16,*fp32:16,i32:16,i32:16,i32:16",
        {"BLOCK_SIZE": 4096},
        8,
    ),
    "causal_softmax": (
        "softmax_causal_simple_kernel",
        "*fp32:16,*fp32:16,i32,i32:16,i32:16,i32:16,i32:16",
        {"BLOCK_SIZE": 128},
        4,
    ),
    "rms_norm": (
        "rms_norm_simple_kernel",
        "*fp32:16,*fp32:16,*fp32:16,i32:16,i32:16,i32:16,fp32",
        {"BLOCK_SIZE": 2048},
        4,
    ),
    "online_softmax": (
        "online_softmax_kernel",
        "*fp32:16,*fp32:16,i32:16,i32:16,i32:16",
        {"BLOCK_SIZE": 1024},
        4,
    ),
    "layer_norm": (
        "layer_norm_kernel",
        "*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32:16,i32:16,fp32",
        {"BLOCK_SIZE": 1024},
        4,
    ),
    "dropout": (
        "seeded_dropout_kernel",
        "*fp32:16,*fp32:16,i32:16,fp32,i64",
        {"BLOCK_SIZE": 1024},
        4,
    ),
    "multi_gpu": (  # (its forward and softmax kernels are simpler relatives of the above)
        "layer_norm_bwd",
        "*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32:16,i32:16",
        {"BLOCK": 512},  # (4 warps: 4 elements per thread, so v4 accesses)
        4,
    ),
}


def test_every_example_but_matmul_is_listed():
    from tests.test_examples import EXAMPLES

    # (the matmul examples: tests/codegen/test_dot_ptx.py)
    # (flash_attention: tests/test_flash_attention.py)
    dots = {"matmul", "matmul_fp16_grouped", "matmul_autotune", "flash_attention"}
    assert set(EXAMPLES) - dots == set(KERNELS)


@pytest.mark.parametrize("hints", [True, False], ids=["div16", "plain"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_example_compiles_to_ptx_ptxas_accepts(name, hints, ptxas):
    kernel_name, sig, consts, num_warps = KERNELS[name]
    fn = getattr(importlib.import_module(f"examples.{name}"), kernel_name)
    if not hints:
        sig = sig.replace(":16", "")
    k = tritium.compile(fn, signature=sig, constexprs=consts, num_warps=num_warps, stop="ptx")
    usage = tools.ptxas_usage(k.asm["ptx"])
    assert usage["local"] == 0 and usage["stack_frame"] == 0, usage["log"]
    assert usage["spill_stores"] == 0 and usage["spill_loads"] == 0, usage["log"]
    if name not in ("vector_add", "dropout"):  # (no reductions there)
        assert "shfl.sync.bfly.b32" in k.asm["ptx"] and k.metadata.shared > 0
    if hints and name != "causal_softmax":  # (causal: n_rows unaligned; rows still are)
        assert "ld.global.v4.b32" in k.asm["ptx"]
