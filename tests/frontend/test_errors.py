"""Every kernel mistake gives a CompilationError naming FILE:LINE:COL, with a caret.

The offending line of each kernel below carries a `# <-` marker; the test checks the
error names exactly that line.
"""

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


def check(fn, sig, constexprs=None, match="", cls=CompilationError):
    with pytest.raises(cls) as info:
        ttir(fn, sig, constexprs)
    err = info.value
    assert err.loc is not None, "the error must name a source location"
    assert err.loc.file == THIS
    assert err.loc.line == marked_line(fn), str(err)
    text = str(err)
    assert text.startswith(f"{THIS}:{err.loc.line}:{err.loc.col}: error: ")
    assert "\n" in text and text.rstrip().endswith("^"), "source line and caret follow the message"
    assert match.lower() in err.message.lower(), err.message
    return err


@tritium.jit
def arange_runtime(x_ptr, n):
    offs = tl.arange(0, n)  # <-
    tl.store(x_ptr + offs, 1.0)


@tritium.jit
def arange_not_pow2(x_ptr):
    offs = tl.arange(0, 1000)  # <-
    tl.store(x_ptr + offs, 1.0)


@tritium.jit
def block_too_big(x_ptr):
    x = tl.zeros((2048, 1024), dtype=tl.float32)  # <-
    tl.store(x_ptr, tl.sum(x))


@tritium.jit
def ptr_plus_ptr(x_ptr, y_ptr):
    z = x_ptr + y_ptr  # <-
    tl.store(z, 1.0)


@tritium.jit
def load_non_pointer(n):
    x = tl.load(n)  # <-


@tritium.jit
def mask_shape(x_ptr):
    offs = tl.arange(0, 64)
    m = tl.arange(0, 32) < 4
    x = tl.load(x_ptr + offs, mask=m)  # <-


@tritium.jit
def store_shape(x_ptr):
    offs = tl.arange(0, 64)
    tl.store(x_ptr + offs, tl.zeros((32,), dtype=tl.float32))  # <-


@tritium.jit
def bad_axis(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 64))
    s = tl.sum(x, axis=2)  # <-


@tritium.jit
def dot_inner(a_ptr):
    a = tl.zeros((32, 16), dtype=tl.float16)
    b = tl.zeros((32, 32), dtype=tl.float16)
    c = tl.dot(a, b)  # <-


@tritium.jit
def dot_small(a_ptr):
    a = tl.zeros((8, 16), dtype=tl.float16)
    b = tl.zeros((16, 16), dtype=tl.float16)
    c = tl.dot(a, b)  # <-


@tritium.jit
def loop_type_change(x_ptr, n):
    acc = 0
    for i in range(0, n):  # <-
        acc += tl.load(x_ptr + i)
    tl.store(x_ptr, acc)


@tritium.jit
def branch_type_mismatch(x_ptr, n):
    if n > 0:  # <-
        v = tl.load(x_ptr)
    else:
        v = tl.zeros((16,), dtype=tl.float32)
    tl.store(x_ptr, v)


@tritium.jit
def tensor_if(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    if x > 0:  # <-
        tl.store(x_ptr, 1.0)


@tritium.jit
def undefined_name(x_ptr):
    tl.store(x_ptr, y)  # <-  # noqa: F821


SOME_GLOBAL = [1, 2]


@tritium.jit
def bad_global(x_ptr):
    tl.store(x_ptr, SOME_GLOBAL)  # <-


@tritium.jit
def returns_value(x_ptr):
    return tl.load(x_ptr)  # <-


@tritium.jit
def static_assert_fails(x_ptr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK % 32 == 0, "BLOCK must be a multiple of 32")  # <-


@tritium.jit
def bad_kwarg(x_ptr):
    x = tl.load(x_ptr, maskk=None)  # <-


@tritium.jit
def bad_cast(x_ptr):
    x = tl.load(x_ptr)
    y = x.to(tl.float32, bitcast=True)  # <-


@tritium.jit
def float_shift(x_ptr):
    x = tl.load(x_ptr)
    y = x << 2  # <-


@tritium.jit
def other_without_mask(x_ptr):
    x = tl.load(x_ptr, other=0.0)  # <-


@tritium.jit
def exp_of_int(x_ptr):
    x = tl.load(x_ptr)
    y = tl.exp(x)  # <-


@tritium.jit
def program_id_axis(x_ptr):
    p = tl.program_id(3)  # <-


def python_helper(x):
    return x


@tritium.jit
def calls_python(x_ptr):
    y = python_helper(x_ptr)  # <-


@tritium.jit
def min_on_tensor(x_ptr):
    x = tl.load(x_ptr)
    y = min(x, 1.0, 2.0)  # <- (a tensor: tl.minimum, which takes two)


@tritium.jit
def float_offset(x_ptr):
    p = x_ptr + 1.5  # <-


@tritium.jit
def bad_shape_index(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    y = x[3]  # <-


@tritium.jit
def unpack_mismatch(x_ptr):
    a, b = 1, 2, 3  # <-


CASES = [
    (arange_runtime, ["*fp32", "i32"], None, "constexpr"),
    (arange_not_pow2, ["*fp32"], None, "power of two"),
    (block_too_big, ["*fp32"], None, "2**20"),
    (ptr_plus_ptr, ["*fp32", "*fp32"], None, "two pointers"),
    (load_non_pointer, ["i32"], None, "needs a pointer"),
    (mask_shape, ["*fp32"], None, "mask of shape [32]"),
    (store_shape, ["*fp32"], None, "value of shape [32]"),
    (bad_axis, ["*fp32"], None, "axis 2 is out of range"),
    (dot_inner, ["*fp16"], None, "inner dimensions differ"),
    (dot_small, ["*fp16"], None, ">= 16"),
    (loop_type_change, ["*fp32", "i32"], None, "loop-carried variable `acc`"),
    (branch_type_mismatch, ["*fp32", "i32"], None, "`v` has type"),
    (tensor_if, ["*fp32"], None, "must be scalars"),
    (undefined_name, ["*fp32"], None, "name 'y' is not defined"),
    (bad_global, ["*fp32"], None, "global variable `SOME_GLOBAL`"),
    (returns_value, ["*fp32"], None, "cannot return a value"),
    (static_assert_fails, ["*fp32"], {"BLOCK": 48}, "BLOCK must be a multiple of 32"),
    (bad_kwarg, ["*fp32"], None, "unexpected keyword argument 'maskk'"),
    (bad_cast, ["*fp16"], None, "cannot bitcast fp16"),
    (float_shift, ["*fp32"], None, "integer operands"),
    (other_without_mask, ["*fp32"], None, "`other` needs a `mask`"),
    (exp_of_int, ["*i32"], None, "tl.exp expects"),
    (program_id_axis, ["*fp32"], None, "axis must be 0, 1 or 2"),
    (min_on_tensor, ["*fp32"], None, "tl.minimum"),
    (float_offset, ["*fp32"], None, "floating-point offset"),
    (bad_shape_index, ["*fp32"], None, "indexed with `:` and `None`"),
    (unpack_mismatch, ["*fp32"], None, "cannot unpack 3 values into 2 names"),
]


@pytest.mark.parametrize("fn, sig, constexprs, match", CASES, ids=[c[0].__name__ for c in CASES])
def test_kernel_mistakes(fn, sig, constexprs, match):
    check(fn, sig, constexprs, match)


def test_call_to_python_function_is_unsupported():
    err = check(
        calls_python,
        ["*fp32"],
        None,
        "non-jit function `python_helper`",
        cls=UnsupportedSyntaxError,
    )
    assert "@tritium.jit" in err.message


@tritium.jit
def uses_try(x_ptr):
    try:  # <-
        tl.store(x_ptr, 1.0)
    except Exception:
        pass


@tritium.jit
def uses_with(x_ptr):
    with open("f"):  # <-
        pass


@tritium.jit
def uses_lambda(x_ptr):
    f = lambda v: v  # <-  # noqa: E731


@tritium.jit
def uses_break(x_ptr, n):
    for i in range(0, n):
        break  # <-


@tritium.jit
def uses_continue(x_ptr, n):
    for i in range(0, n):
        continue  # <-


@tritium.jit
def uses_listcomp(x_ptr):
    xs = [i for i in range(4)]  # <-


@tritium.jit
def uses_nested_def(x_ptr):
    def inner():  # <-
        pass


@tritium.jit
def return_in_loop(x_ptr, n):
    for i in range(0, n):
        return  # <-


@pytest.mark.parametrize(
    "fn, what",
    [
        (uses_try, "try/except"),
        (uses_with, "with statements"),
        (uses_lambda, "lambda expressions"),
        (uses_break, "break"),
        (uses_continue, "continue"),
        (uses_listcomp, "list comprehensions"),
        (uses_nested_def, "nested function definitions"),
    ],
)
def test_unsupported_python_is_named(fn, what):
    err = check(
        fn,
        ["*fp32"] + (["i32"] if "n" in fn.arg_names else []),
        None,
        what,
        cls=UnsupportedSyntaxError,
    )
    assert "not supported" in err.message


def test_return_inside_loop():
    check(return_in_loop, ["*fp32", "i32"], None, "`return` inside a loop")


def test_kernel_called_directly():
    with pytest.raises(RuntimeError, match=r"launch it with arange_runtime\[grid\]"):
        arange_runtime(1, 2)


def test_missing_constexpr_in_signature():
    with pytest.raises(
        tritium.ArgumentError, match="missing value for constexpr parameter `BLOCK`"
    ):
        ttir(static_assert_fails, ["*fp32"])


def test_bad_signature_type():
    with pytest.raises(tritium.ArgumentError, match="unknown type '\\*f32'"):
        ttir(ptr_plus_ptr, ["*f32", "*fp32"])


def test_signature_arity():
    with pytest.raises(tritium.ArgumentError, match="lists 1 types but `ptr_plus_ptr` has 2"):
        ttir(ptr_plus_ptr, ["*fp32"])


def test_no_traceback_from_internals_in_message():
    err = check(mask_shape, ["*fp32"], None, "mask")
    assert "Traceback" not in str(err)
