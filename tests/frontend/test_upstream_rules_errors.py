"""The compile-time side of the rules shared with upstream (test_upstream_rules.py runs
them): what the TTIR looks like, and the located errors where upstream raises one."""

import pytest

import tritium
import tritium.language as tl
from tests.frontend.helpers import op_names, ttir, ttir_text
from tritium.errors import CompilationError
from tritium.passes.canonicalize import canonicalize


def error_of(fn, sig, constexprs=None) -> CompilationError:
    with pytest.raises(CompilationError) as info:
        ttir(fn, sig, constexprs)
    err = info.value
    assert err.loc is not None and err.loc.file == __file__
    return err


# ---------------------------------------------------------------------- 1. min, max, print


@tritium.jit
def min_of_three(p):
    x = tl.load(p + tl.arange(0, 4))
    tl.store(p + tl.arange(0, 4), min(x, 1.0, 2.0))


@tritium.jit
def print_and_fold(p, B: tl.constexpr):
    print("x", tl.load(p))
    tl.store(p + tl.arange(0, min(B, 8)), 1.0)  # constexprs only: folded, a valid shape


def test_min_of_more_than_two_tensors_is_refused():
    err = error_of(min_of_three, "*fp32")
    assert "tl.minimum (as upstream), which takes exactly two operands, got 3" in err.message


def test_print_is_device_print_and_min_of_constexprs_folds():
    names = op_names(ttir(print_and_fold, "*fp32", {"B": 32}))
    assert "tt.print" in names and "tt.make_range" in names


# ---------------------------------------------------------------------- 2. assigned numbers


@tritium.jit
def assigned_shape(p):
    N = 4
    tl.store(p + tl.arange(0, N), 1.0)  # <- as upstream: N is a tensor now


@tritium.jit
def annotated_shape(p):
    N: tl.constexpr = 4
    S: tl.constexpr = (N, N)
    tl.store(p + tl.arange(0, N), tl.sum(tl.zeros(S, tl.float32), 0))


@tritium.jit
def assigned_tuple_shape(p):
    S = (4, 4)
    tl.store(p + tl.arange(0, 4), tl.sum(tl.zeros(S, tl.float32), 0))


@tritium.jit
def folded_constants(p):
    x = 5
    y = x * 2 + 1
    z = 0.5
    tl.store(p, (y + 1).to(tl.float32) * z)


def test_assigned_number_is_not_a_constexpr():
    err = error_of(assigned_shape, "*fp32")
    assert "tl.arange's end must be a tl.constexpr integer" in err.message
    assert err.loc.line == assigned_shape.line + 3
    assert "tl.constexpr integer" in error_of(assigned_tuple_shape, "*fp32").message
    ttir(annotated_shape, "*fp32")  # `N: tl.constexpr = 4` stays a compile-time value


def test_assigned_numbers_fold_away():
    text = ttir_text(folded_constants, "*fp32")
    assert "arith.constant 5 : i32" in text and "arith.muli" in text
    module = ttir(folded_constants, "*fp32")
    canonicalize(module)
    ops = [n for n in op_names(module) if n != "tt.return"]
    # the int arithmetic folds; the cast and the float multiply are left, as for a literal
    assert "arith.muli" not in ops and "arith.addi" not in ops, ops


def test_to_tensor_types():
    @tritium.jit
    def k(p):
        a = 5
        b = 2**31
        c = 2**40
        d = 1.5
        e = 1e-300
        f = True
        tl.static_assert(a.dtype == tl.int32)
        tl.static_assert(b.dtype == tl.uint32)
        tl.static_assert(c.dtype == tl.int64)
        tl.static_assert(d.dtype == tl.float32)
        tl.static_assert(e.dtype == tl.float64)
        tl.static_assert(f.dtype == tl.int1)

    ttir(k, "*fp32")


# ---------------------------------------------------------------------- 3. dtype methods


UPSTREAM_DTYPE_METHODS = [
    "is_fp8", "is_fp8e4nv", "is_fp8e4b8", "is_fp8e4b15", "is_fp8e5", "is_fp8e5b16", "is_fp16",
    "is_bf16", "is_fp32", "is_fp64", "is_int1", "is_int8", "is_int16", "is_int32", "is_int64",
    "is_uint8", "is_uint16", "is_uint32", "is_uint64", "is_floating", "is_standard_floating",
    "is_int_signed", "is_int_unsigned", "is_int", "is_bool", "kind", "is_block", "is_ptr",
    "is_const", "codegen_name",
]  # fmt: skip


def test_dtype_has_upstreams_methods():
    for name in UPSTREAM_DTYPE_METHODS:
        getattr(tl.float32, name)()
    assert tl.int16.int_bitwidth == tl.int16.primitive_bitwidth == 16
    assert tl.uint8.int_signedness == tl.dtype.SIGNEDNESS.UNSIGNED
    assert tl.bfloat16.fp_mantissa_width == 7 and tl.float16.exponent_bias == 15
    assert tl.int8.get_int_min_value() == -128 and tl.uint16.get_int_max_value() == 65535
    assert tl.float64.scalar is tl.float64 and tl.int32.itemsize == 4
    assert tl.dtype.is_dtype("fp32") and not tl.dtype.is_dtype("fp128")
    assert tl.pi32_t == tl.pointer_type(tl.int32)


# ---------------------------------------------------------------------- 4. annotations


@tritium.jit
def store_to_const(x_ptr: tl.const, y_ptr):
    v = tl.load(x_ptr)
    tl.store(y_ptr, v)
    tl.store(x_ptr + 1, v)  # <-


@tritium.jit
def atomic_on_const(x_ptr: "const *fp32"):  # noqa: F722, F821
    tl.atomic_add(x_ptr, 1.0)


@tritium.jit
def typed_scalars(x_ptr, n: tl.int64, s: tl.float16, m: "i16"):  # noqa: F722, F821
    tl.store(x_ptr, n + s + m)


def test_store_through_const_pointer_names_the_parameter():
    err = error_of(store_to_const, "*fp32,*fp32")
    assert err.loc.line == store_to_const.line + 4
    assert "cannot store to a constant pointer (parameter `x_ptr` is annotated tl.const" in (
        err.message
    )
    assert "tl.atomic_add: cannot store to a constant pointer" in error_of(
        atomic_on_const, "*fp32"
    ).message


def test_scalar_annotations_type_the_parameters():
    from tritium.jit.specialize import build_spec

    spec = build_spec(typed_scalars, [None, 1, 2, 32])
    assert (spec.types["n"], spec.types["s"], spec.types["m"]) == (
        tl.int64,
        tl.float16,
        tl.int16,
    )
    assert "m" in spec.divisible_by_16 and list(spec.constants) == ["x_ptr"]  # None
    text = ttir_text(typed_scalars, "*fp32,i64,fp16,i16")
    assert "%n: i64" in text and "%s: f16" in text and "%m: i16" in text


# ---------------------------------------------------------------------- 5. loops


@tritium.jit
def zero_step(p, n):
    for i in range(0, n, 0):  # <-
        tl.store(p + i, 1.0)


def test_zero_step_is_refused():
    assert "the loop step must not be zero" in error_of(zero_step, "*fp32,i32").message


def test_negative_step_runs_upwards_and_mirrors_the_index():
    @tritium.jit
    def k(p, T):
        for i in range(T, -1, -2):
            tl.store(p + i, 1.0)

    text = ttir_text(k, "*fp32,i32")
    assert "scf.for" in text and "arith.subi" in text and "arith.addi" in text


# ---------------------------------------------------------------------- 6, 7. returns, errors


@tritium.jit
def _value_or_bare_return(x, a):
    if a > 0:
        return x
    return


@tritium.jit
def inconsistent_returns(p, a):
    tl.store(p, _value_or_bare_return(tl.load(p), a))


@tritium.jit
def narrow_plus_wide_constant(p):
    x = tl.load(p + tl.arange(0, 4)).to(tl.int8)
    tl.store(p + tl.arange(0, 4), (x + 300).to(tl.float32))  # <-


@tritium.jit
def expand_duplicate(p):
    _ = tl.expand_dims(tl.arange(0, 4), (1, -2))


@tritium.jit
def expand_out_of_range(p):
    _ = tl.expand_dims(tl.arange(0, 4), -3)


@tritium.jit
def store_wrong_shape(p):
    tl.store(p + tl.arange(0, 4), tl.zeros((8,), tl.float32))


def test_errors_where_upstream_raises_one():
    assert "inconsistent return types" in error_of(inconsistent_returns, "*fp32,i32").message
    err = error_of(narrow_plus_wide_constant, "*fp32")
    assert "scalar 300 is out of range for type int8" in err.message
    assert "duplicate axes" in error_of(expand_duplicate, "*fp32").message
    assert "invalid axis -3" in error_of(expand_out_of_range, "*fp32").message
    assert "value of shape [8] does not fit pointers of shape [4]" in (
        error_of(store_wrong_shape, "*fp32").message
    )
