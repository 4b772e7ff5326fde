"""Triton's typing rules as the frontend applies them (checked on the TTIR it emits)."""

from __future__ import annotations

import pytest

import tritium
import tritium.language as tl
from tests.frontend.helpers import op_names, result_types, ttir, ttir_text


@tritium.jit
def binop_kernel(x_ptr, y_ptr, out_ptr, OP: tl.constexpr):
    x = tl.load(x_ptr)
    y = tl.load(y_ptr)
    if OP == "add":
        z = x + y
    elif OP == "div":
        z = x / y
    elif OP == "floordiv":
        z = x // y
    elif OP == "mod":
        z = x % y
    elif OP == "lit_mul":
        z = x * 2.0
    elif OP == "lit_add":
        z = x + 1
    else:
        z = x < y
    tl.store(out_ptr, z)


def _out_type(sig_x, sig_y, op, out="*fp64"):
    m = ttir(binop_kernel, [sig_x, sig_y, out], {"OP": op})
    loads = result_types(m, "tt.load")
    stored = [op for op in m.walk() if op.name == "tt.store"][0]
    return loads, str(stored.value.owner.operands[0].type) if stored.value.owner.name.startswith(
        "arith."
    ) and "ext" in stored.value.owner.name else None


@pytest.mark.parametrize(
    "a, b, op, expect",
    [
        ("*i32", "*i64", "add", "arith.extsi"),  # i32 op i64 promotes to i64
        ("*fp16", "*fp16", "div", "arith.divf"),
        ("*fp16", "*fp32", "add", "arith.extf"),
        ("*u32", "*i32", "add", "arith.addi"),
        ("*i32", "*i32", "floordiv", "arith.divsi"),
        ("*u32", "*u32", "floordiv", "arith.divui"),
        ("*i32", "*i32", "mod", "arith.remsi"),
        ("*fp32", "*fp32", "mod", "arith.remf"),
        ("*u8", "*u8", "lt", "arith.cmpi"),
    ],
)
def test_binary_ops_emit_expected_op(a, b, op, expect):
    names = op_names(ttir(binop_kernel, [a, b, "*fp64"], {"OP": op}))
    assert expect in names


def _compute_type(a, b, op):
    m = ttir(binop_kernel, [a, b, "*fp64"], {"OP": op})
    arith_ops = [
        o for o in m.walk() if o.name.startswith("arith.") and o.name not in ("arith.constant",)
    ]
    main = [
        o
        for o in arith_ops
        if o.name
        in (
            "arith.addi",
            "arith.addf",
            "arith.divf",
            "arith.mulf",
            "arith.muli",
            "arith.divsi",
            "arith.divui",
            "arith.remsi",
            "arith.remui",
            "arith.remf",
            "arith.cmpi",
            "arith.cmpf",
        )
    ][0]
    return str(main.operands[0].type)


@pytest.mark.parametrize(
    "a, b, op, compute",
    [
        ("*i32", "*i64", "add", "i64"),
        ("*i64", "*i32", "add", "i64"),
        ("*fp16", "*fp16", "add", "f16"),
        ("*fp16", "*fp16", "div", "f32"),  # / on halves computes in fp32, as upstream
        ("*bf16", "*bf16", "add", "bf16"),
        ("*bf16", "*fp16", "add", "f16"),  # upstream checks fp16 before bf16
        ("*fp16", "*fp32", "add", "f32"),
        ("*i8", "*i8", "lit_add", "i8"),  # a literal does not widen a tensor of its kind
        ("*fp16", "*fp16", "lit_mul", "f16"),
        ("*i32", "*i32", "lit_mul", "f32"),  # int * float literal -> fp32
        ("*i32", "*i32", "div", "f32"),  # int / int -> fp32
        ("*u16", "*i32", "add", "i32"),
        ("*u32", "*i32", "add", "i32"),  # same rank: unsigned wins (signless i32 in the IR)
    ],
)
def test_computation_type(a, b, op, compute):
    assert _compute_type(a, b, op) == compute


def test_unsigned_negative_literal_is_rejected():
    @tritium.jit
    def k(x_ptr):
        x = tl.load(x_ptr)
        tl.store(x_ptr, x + (-1))

    with pytest.raises(tritium.CompilationError, match="unsigned"):
        ttir(k, ["*u32"])


def test_floordiv_mixed_signedness_is_rejected():
    with pytest.raises(tritium.CompilationError, match="signedness"):
        ttir(binop_kernel, ["*u32", "*i32", "*fp64"], {"OP": "floordiv"})


@tritium.jit
def scalar_args_kernel(out_ptr, a, b):
    tl.store(out_ptr, a + b)


def test_i64_scalar_argument_promotes_i32():
    text = ttir_text(scalar_args_kernel, ["*i64", "i32", "i64"])
    assert "%a: i32" in text and "%b: i64" in text
    assert "arith.extsi %a : i32 to i64" in text
    assert "arith.addi" in text and ": i64" in text


@tritium.jit
def offsets_kernel(x_ptr, big, BLOCK: tl.constexpr):
    offs = big + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))


def test_i64_offsets_reach_addptr():
    text = ttir_text(offsets_kernel, ["*fp32", "i64"], {"BLOCK": 128})
    assert "tt.addptr %" in text and "tensor<128xi64>" in text


def test_debug_adds_overflow_checks():
    plain = ttir_text(scalar_args_kernel, ["*i32", "i32", "i32"])
    checked = ttir_text(scalar_args_kernel, ["*i32", "i32", "i32"], debug=True)
    assert "tt.assert" not in plain
    assert "tt.assert" in checked and "int32 overflow detected for operation add" in checked
    assert "arith.extsi" in checked and "2147483647" in checked and "-2147483648" in checked


def test_divisibility_and_equal_to_one_specialisation():
    import numpy as np

    from tritium.jit.specialize import build_spec

    x = np.zeros(64, np.float32)
    spec = build_spec(scalar_args_kernel, [x, 32, 1])
    assert spec.divisible_by_16 == {"out_ptr", "a"}
    assert "b" in spec.constants and spec.constants["b"].value == 1
    m = ttir(scalar_args_kernel, ["*fp32:16", "i32:16", "i32:1"])
    f = [op for op in m.walk() if op.name == "tt.func"][0]
    assert len(f.body.block.args) == 2  # b == 1 is folded into the body
    text = ttir_text(scalar_args_kernel, ["*fp32:16", "i32:16", "i32:1"])
    assert text.count("tt.divisibility = 16") == 2


def test_big_int_argument_is_i64():
    import numpy as np

    from tritium.jit.specialize import build_spec

    x = np.zeros(4, np.float32)

    def signature(v):
        return build_spec(scalar_args_kernel, [x, v, 3]).types["a"].signature

    assert signature(2**31 - 1) == "i32"
    assert signature(2**31) == "i64"
    assert signature(-(2**31) - 1) == "i64"
    assert signature(2**63) == "u64"
