"""The TTIR tritium prints for every example: the expected ops, a verified module, and
print -> parse -> print round-trips to the same text (with and without locations)."""

from __future__ import annotations

import collections
import pathlib

import pytest

from examples.causal_softmax import softmax_causal_simple_kernel
from examples.dropout import seeded_dropout_kernel
from examples.layer_norm import layer_norm_kernel
from examples.matmul import matmul_tiled_kernel
from examples.matmul_autotune import matmul_kernel as matmul_autotune_kernel
from examples.matmul_fp16_grouped import matmul_fp16_grouped_kernel
from examples.online_softmax import online_softmax_kernel
from examples.rms_norm import rms_norm_simple_kernel
from examples.softmax import softmax_kernel
from examples.vector_add import add_kernel
from tests.frontend.helpers import op_names, ttir
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir

UPSTREAM = pathlib.Path(__file__).resolve().parents[1] / "data" / "upstream"

KERNELS = {
    "matmul_fp16": (
        matmul_fp16_grouped_kernel,
        "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32,i32,i32,i32,i32,i32",
        {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8},
        ["tt.dot", "scf.for", "arith.truncf", "arith.minsi"],
    ),
    "matmul_autotune": (
        matmul_autotune_kernel,
        "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32",
        {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32},
        ["tt.dot", "scf.for", "arith.truncf"],
    ),
    "add": (
        add_kernel,
        "*fp32:16,*fp32:16,*fp32:16,i32",
        {"BLOCK_SIZE": 1024},
        ["tt.get_program_id", "tt.make_range", "tt.load", "arith.addf", "tt.store"],
    ),
    "softmax": (
        softmax_kernel,
        "*fp32:16,*fp32:16,i32,i32,i32",
        {"BLOCK_SIZE": 1024},
        ["tt.reduce", "arith.maxnumf", "math.exp", "arith.divf"],
    ),
    "causal": (
        softmax_causal_simple_kernel,
        "*fp32:16,*fp32:16,i32,i32,i32,i32,i32",
        {"BLOCK_SIZE": 2048},
        ["scf.if", "arith.remsi", "arith.select", "tt.reduce"],
    ),
    "rms": (
        rms_norm_simple_kernel,
        "*fp32:16,*fp32:16,*fp32:16,i32,i32,i32,fp32",
        {"BLOCK_SIZE": 2048},
        ["math.sqrt", "arith.sitofp", "tt.reduce"],
    ),
    "online": (
        online_softmax_kernel,
        "*fp32:16,*fp32:16,i32,i32,i32",
        {"BLOCK_SIZE": 1024},
        ["scf.for", "scf.yield", "tt.reduce", "math.exp"],
    ),
    "layer_norm": (
        layer_norm_kernel,
        "*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32,i32,fp32",
        {"BLOCK_SIZE": 1024},
        ["scf.for", "math.sqrt", "arith.select"],
    ),
    "dropout": (
        seeded_dropout_kernel,
        "*fp32:16,*fp32:16,i32,fp32,i64",
        {"BLOCK_SIZE": 1024},
        ["tt.mulhiui", "arith.sitofp", "arith.cmpf", "arith.select", "arith.divf"],
    ),
    "matmul": (
        matmul_tiled_kernel,
        "*fp32:16,*fp32:16,*fp32:16,i32,i32,i32",
        {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32},
        ["tt.dot", "tt.expand_dims", "tt.broadcast", "scf.for"],
    ),
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_example_ttir(name):
    fn, sig, cx, expected = KERNELS[name]
    module = ttir(fn, sig, cx)
    names = set(op_names(module))
    for op in expected:
        assert op in names, f"{op} missing from {name}'s TTIR"
    for locations in (False, True):
        text = print_ir(module, locations=locations)
        assert print_ir(parse_module(text), locations=locations) == text


def test_matmul_dot_defaults_to_tf32():
    fn, sig, cx, _ = KERNELS["matmul"]
    text = print_ir(ttir(fn, sig, cx))
    assert "inputPrecision = tf32" in text
    assert "tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>" in text


def _ops_without_constants(module) -> collections.Counter:
    return collections.Counter(n for n in op_names(module) if n != "arith.constant")


def test_vector_add_has_upstreams_ops():
    """Same ops, same counts as upstream Triton 3.6's TTIR for this kernel (constants aside:
    upstream's canonicalizer folds them first)."""
    ours = ttir(add_kernel, "*fp32,*fp32,*fp32,i32", {"BLOCK_SIZE": 1024})
    theirs = parse_module((UPSTREAM / "add_kernel.ttir").read_text())
    assert _ops_without_constants(ours) == _ops_without_constants(theirs)
