# ruff: noqa: F841, B007
"""More kernel mistakes (the catalogue in docs/robustness.md; tests/frontend/test_errors.py
has the first ones): each raises the named error class with a message that says what is
wrong, located at FILE:LINE:COL of the line marked `# <-`, with the source line and a
caret, and no traceback from inside tritium in the message."""

from __future__ import annotations

import inspect

import pytest

import tritium
import tritium.language as tl
from tests.frontend.helpers import ttir
from tritium.errors import CompilationError, UnsupportedSyntaxError

THIS = __file__


def marked_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn.fn)
    hits = [start + i for i, line in enumerate(lines) if "# <-" in line]
    assert len(hits) == 1, "mark exactly one line with # <-"
    return hits[0]


def check(fn, sig, match, constexprs=None, cls=CompilationError, line_of=None):
    with pytest.raises(cls) as info:
        ttir(fn, sig, constexprs)
    err = info.value
    assert type(err) is cls
    assert err.loc is not None, "the error must name a source location"
    assert (err.loc.file, err.loc.line) == (THIS, marked_line(line_of or fn)), str(err)
    text = str(err)
    assert text.startswith(f"{THIS}:{err.loc.line}:{err.loc.col}: error: {err.message}")
    assert text.rstrip().endswith("^") and "Traceback" not in text
    assert match in err.message, err.message
    return err


# ------------------------------------------------------------------ shapes and block sizes


@tritium.jit
def zeros_runtime_shape(x_ptr, n):
    x = tl.zeros((n,), dtype=tl.float32)  # <-


@tritium.jit
def arange_over_2_20(x_ptr):
    x = tl.arange(0, 2**21)  # <-


@tritium.jit
def arange_backwards(x_ptr):
    x = tl.arange(8, 4)  # <-


@tritium.jit
def arange_float_bound(x_ptr):
    x = tl.arange(0, 16.0)  # <-


@tritium.jit
def broadcast_mismatch(x_ptr):
    x = tl.arange(0, 16) + tl.arange(0, 32)  # <-


@tritium.jit
def where_shape_mismatch(x_ptr):
    x = tl.where(tl.arange(0, 16) > 3, tl.zeros((32,), dtype=tl.float32), 1.0)  # <-


@tritium.jit
def reshape_wrong_size(x_ptr):
    x = tl.reshape(tl.arange(0, 16), (4, 8))  # <-


@tritium.jit
def permute_not_a_permutation(x_ptr):
    x = tl.permute(tl.zeros((4, 8), dtype=tl.float32), (0, 0))  # <-


@tritium.jit
def expand_dims_axis(x_ptr):
    x = tl.expand_dims(tl.arange(0, 16), 3)  # <-


@tritium.jit
def reduce_a_scalar(x_ptr):
    s = tl.sum(tl.load(x_ptr), axis=0)  # <-


@tritium.jit
def reduce_runtime_axis(x_ptr, a):
    s = tl.sum(tl.zeros((4, 4), dtype=tl.float32), axis=a)  # <-


@tritium.jit
def dot_element_types(x_ptr):
    a = tl.zeros((16, 16), dtype=tl.float16)
    c = tl.dot(a, tl.zeros((16, 16), dtype=tl.float32))  # <-


@tritium.jit
def dot_of_vectors(x_ptr):
    a = tl.zeros((16,), dtype=tl.float16)
    c = tl.dot(a, a)  # <-


# ------------------------------------------------------------------ types and pointers


@tritium.jit
def floordiv_of_floats(x_ptr):
    x = tl.load(x_ptr) // 2.0  # <-


@tritium.jit
def mixed_signedness_division(x_ptr, u_ptr):
    x = tl.load(x_ptr) // tl.load(u_ptr)  # <-


@tritium.jit
def negative_literal_unsigned(u_ptr):
    x = tl.load(u_ptr) + -1  # <-


@tritium.jit
def literal_over_64_bits(x_ptr):
    x = tl.load(x_ptr) + 2**70  # <-


@tritium.jit
def dtype_as_string(x_ptr):
    x = tl.load(x_ptr).to("float")  # <-


@tritium.jit
def full_dtype_as_string(x_ptr):
    x = tl.full((4,), 1.0, dtype="fp32")  # <-


@tritium.jit
def sqrt_of_int(x_ptr):
    s = tl.sqrt(tl.arange(0, 16))  # <-


@tritium.jit
def pointer_times_two(x_ptr):
    p = x_ptr * 2  # <-


@tritium.jit
def negate_pointer(x_ptr):
    p = -x_ptr  # <-


@tritium.jit
def pointer_to_float(x_ptr):
    p = x_ptr.to(tl.float32)  # <-


@tritium.jit
def store_to_scalar(x_ptr, n):
    tl.store(n, 1.0)  # <-


@tritium.jit
def string_arithmetic(x_ptr):
    y = "a" + tl.load(x_ptr)  # <-


@tritium.jit
def tensor_attribute(x_ptr):
    y = tl.load(x_ptr).foo  # <-


@tritium.jit
def unknown_tl_function(x_ptr):
    y = tl.atomic_foo(x_ptr, 1)  # <-


@tritium.jit
def constexpr_division_by_zero(x_ptr, B: tl.constexpr):
    y = B // 0  # <-


@tritium.jit
def specialised_one_has_no_to(x_ptr, s):
    y = s.to(tl.float32)  # <-


# ------------------------------------------------------------------ control flow


@tritium.jit
def while_on_a_block(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    while x > 0:  # <-
        x = x - 1


@tritium.jit
def loop_step_zero(x_ptr, n):
    for i in range(0, n, 0):  # <-
        pass


@tritium.jit
def loop_float_bound(x_ptr):
    for i in range(0, 2.5):  # <-
        pass


@tritium.jit
def loop_target_tuple(x_ptr):
    for a, b in range(0, 4):  # <-
        pass


@tritium.jit
def for_else(x_ptr, n):
    for i in range(0, n):  # <-
        pass
    else:
        pass


@tritium.jit
def loop_over_list(x_ptr):
    for v in [1, 2]:  # <-
        pass


@tritium.jit
def static_range_runtime_bound(x_ptr, n):
    for i in tl.static_range(0, n):  # <-
        pass


@tritium.jit
def program_id_runtime_axis(x_ptr, n):
    p = tl.program_id(n)  # <-


@tritium.jit
def num_programs_axis(x_ptr):
    p = tl.num_programs(5)  # <-


@tritium.jit
def branch_float_constant_vs_int_block(x_ptr, n):
    x = tl.arange(0, 4)
    if n > 0:  # <-
        x = 1.5
    tl.store(x_ptr + tl.arange(0, 4), x)


@tritium.jit
def loop_float_constant_into_int_block(x_ptr, n):
    x = tl.arange(0, 4)
    for i in range(0, n):  # <-
        x = 2.75
    tl.store(x_ptr + tl.arange(0, 4), x)


@tritium.jit
def used_after_one_branch(x_ptr, n):
    if n > 0:
        y = 1.0
    tl.store(x_ptr, y)  # <-


@tritium.jit
def assign_to_subscript(x_ptr):
    x = tl.zeros((4,), dtype=tl.float32)
    x[0] = 1.0  # <-


@tritium.jit
def _add(a, b):
    return a + b


@tritium.jit
def helper_missing_argument(x_ptr):
    y = _add(1)  # <-


@tritium.jit
def recursive(x_ptr):
    recursive(x_ptr)  # <-


@tritium.jit
def f_string_of_tensor(x_ptr):
    tl.static_print(f"{x_ptr}")  # <-


CASES = [
    (
        zeros_runtime_shape,
        ["*fp32", "i32"],
        "every dimension of a shape must be a tl.constexpr integer",
    ),
    (arange_over_2_20, ["*fp32"], "exceeds the 2**20 element limit"),
    (arange_backwards, ["*fp32"], "end (4) must be greater than its start (8)"),
    (arange_float_bound, ["*fp32"], "tl.arange's end must be an integer, got 16.0"),
    (broadcast_mismatch, ["*fp32"], "incompatible shapes [16] and [32]"),
    (where_shape_mismatch, ["*fp32"], "incompatible shapes [16] and [32]"),
    (reshape_wrong_size, ["*fp32"], "cannot reshape [16] (16 elements) to [4, 8]"),
    (permute_not_a_permutation, ["*fp32"], "permutation [0, 0] does not fit a tensor of rank 2"),
    (expand_dims_axis, ["*fp32"], "expand_dims: invalid axis 3 for a result of rank 2"),
    (reduce_a_scalar, ["*fp32"], "cannot reduce a scalar"),
    (reduce_runtime_axis, ["*fp32", "i32"], "axis must be a tl.constexpr integer"),
    (dot_element_types, ["*fp32"], "operands must have the same element type, got fp16 and fp32"),
    (dot_of_vectors, ["*fp32"], "tl.dot needs two 2D (or 3D) blocks, got shapes [16] and [16]"),
    (floordiv_of_floats, ["*fp32"], "// needs integer operands, got fp32 and fp32"),
    (mixed_signedness_division, ["*i32", "*u32"], "different signedness"),
    (negative_literal_unsigned, ["*u32"], "unsigned tensor with a negative literal"),
    (literal_over_64_bits, ["*fp32"], "does not fit in 64 bits"),
    (dtype_as_string, ["*fp32"], "expected a dtype such as tl.float32, got 'float'"),
    (full_dtype_as_string, ["*fp32"], "expected a dtype such as tl.float32, got 'fp32'"),
    (sqrt_of_int, ["*fp32"], "tl.sqrt expects one of"),
    (pointer_times_two, ["*fp32"], "this operation does not take a pointer"),
    (negate_pointer, ["*fp32"], "cannot negate a pointer"),
    (pointer_to_float, ["*fp32"], "cannot cast pointer<fp32> to fp32"),
    (store_to_scalar, ["*fp32", "i32"], "tl.store needs a pointer"),
    (string_arithmetic, ["*fp32"], "unsupported operand 'a' of type str"),
    (tensor_attribute, ["*fp32"], "tensor has no attribute `foo`"),
    (unknown_tl_function, ["*fp32"], "`tritium.language` has no attribute `atomic_foo`"),
    (while_on_a_block, ["*fp32"], "conditions must be scalars, got a block of shape [16]"),
    (loop_step_zero, ["*fp32", "i32"], "the loop step must not be zero"),
    (loop_float_bound, ["*fp32"], "loop bounds must be integers, got 2.5"),
    (loop_target_tuple, ["*fp32"], "the loop variable must be a plain name"),
    (for_else, ["*fp32", "i32"], "for ... else is not supported"),
    (loop_over_list, ["*fp32"], "kernels can only loop over range(...)"),
    (static_range_runtime_bound, ["*fp32", "i32"], "tl.static_range bounds must be tl.constexpr"),
    (program_id_runtime_axis, ["*fp32", "i32"], "axis must be a tl.constexpr integer"),
    (num_programs_axis, ["*fp32"], "num_programs axis must be 0, 1 or 2, got 5"),
    (
        branch_float_constant_vs_int_block,
        ["*fp32", "i32"],
        "`x` has type fp32 in the then-branch but <[4], int32> in the else-branch",
    ),
    (
        loop_float_constant_into_int_block,
        ["*fp32", "i32"],
        "loop-carried variable `x` has type <[4], int32> before the loop but fp32",
    ),
    (used_after_one_branch, ["*fp32", "i32"], "name 'y' is not defined"),
    (assign_to_subscript, ["*fp32"], "only names and tuples of names can be assigned to"),
    (helper_missing_argument, ["*fp32"], "missing a required argument: 'b'"),
    (recursive, ["*fp32"], "calls nest deeper than 64 (is `recursive` recursive?)"),
    (f_string_of_tensor, ["*fp32"], "f-strings can only format compile-time values"),
]


@pytest.mark.parametrize("fn, sig, match", CASES, ids=[c[0].__name__ for c in CASES])
def test_kernel_mistake(fn, sig, match):
    check(fn, sig, match)


def test_constexpr_division_by_zero_names_the_operator():
    check(constexpr_division_by_zero, ["*fp32"], "cannot compute 4 // 0", {"B": 4})


def test_specialised_one_explains_itself():
    """`s` passed as 1 becomes the constant 1 (as upstream), which has no `.to`."""
    err = check(specialised_one_has_no_to, ["*fp32", "i32:1"], "`s` is the compile-time constant 1")
    assert "tl.cast(s, dtype)" in err.message


@tritium.jit
def yields(x_ptr):
    yield 1  # <-


@tritium.jit
def declares_global(x_ptr):
    global SOMETHING  # <-


def test_generator_and_global_are_unsupported_syntax():
    check(yields, ["*fp32"], "yield is not supported", cls=UnsupportedSyntaxError)
    check(
        declares_global,
        ["*fp32"],
        "global declarations are not supported",
        cls=UnsupportedSyntaxError,
    )


def test_assigned_number_is_a_tensor_of_its_own_type():
    """As upstream, `x = 3` makes an int32 scalar tensor: it cannot replace an fp32 block in
    a loop or a branch (upstream: "Loop-carried variable x has initial type ...")."""

    @tritium.jit
    def k(o_ptr, n):
        x = tl.zeros((4,), dtype=tl.float32)
        for i in range(0, n):  # <-
            x = 3
        tl.store(o_ptr + tl.arange(0, 4), x)

    check(k, ["*fp32", "i32"], "has type <[4], fp32> before the loop but int32")
