"""Scans (`tl.associative_scan`, `tl.cumsum`, `tl.cumprod`): the TTIR they print (upstream's
`tt.scan` syntax), their types (upstream's promotions), their results in the interpreter
against float64 / Python-int references, and the errors for misuse."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tests.frontend.helpers import ttir, ttir_text
from tritium.errors import CompilationError
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir
from tritium.runtime.interpreter import interpret

THIS = __file__


# ---------------------------------------------------------------------- kernels
@tritium.jit
def _first(a, b):
    return a


@tritium.jit
def _sub(a, b):
    return a - b


@tritium.jit
def _linear_recurrence(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@tritium.jit
def _one_of_two(a1, b1, a2, b2):
    return a1 + a2


@tritium.jit
def _running_argmax(v1, i1, v2, i2):
    take = v2 > v1
    return tl.where(take, v2, v1), tl.where(take, i2, i1)


@tritium.jit
def scan1d(
    x_ptr,
    y_ptr,
    n,
    OP: tl.constexpr,
    REVERSE: tl.constexpr,
    OTHER: tl.constexpr,
    BLOCK: tl.constexpr,
):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=OTHER)
    if OP == "cumsum":
        y = tl.cumsum(x, 0, reverse=REVERSE)
    elif OP == "cumprod":
        y = tl.cumprod(x, 0, reverse=REVERSE)
    elif OP == "first":
        y = tl.associative_scan(x, 0, _first, reverse=REVERSE)
    else:
        y = tl.associative_scan(x, 0, _sub, reverse=REVERSE)
    tl.store(y_ptr + offs, y, mask=m)


@tritium.jit
def scan2d(
    x_ptr,
    y_ptr,
    rows,
    cols,
    OP: tl.constexpr,
    AXIS: tl.constexpr,
    REVERSE: tl.constexpr,
    OTHER: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
):
    r = tl.arange(0, BM)[:, None]
    c = tl.arange(0, BN)[None, :]
    m = (r < rows) & (c < cols)
    x = tl.load(x_ptr + r * cols + c, mask=m, other=OTHER)
    if OP == "cumsum":
        y = tl.cumsum(x, AXIS, REVERSE)
    else:
        y = tl.cumprod(x, AXIS, REVERSE)
    tl.store(y_ptr + r * cols + c, y, mask=m)


@tritium.jit
def cumsum_dtype(x_ptr, y_ptr, OP: tl.constexpr, DTYPE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if OP == "cumsum":
        y = tl.cumsum(x, dtype=DTYPE)
    else:
        y = tl.cumprod(x, dtype=DTYPE)
    tl.store(y_ptr + offs, y)


@tritium.jit
def pair_scan(a_ptr, b_ptr, oa_ptr, ob_ptr, n, OP: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, 64)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=1)
    b = tl.load(b_ptr + offs, mask=m, other=0)
    if OP == "recurrence":
        ra, rb = tl.associative_scan((a, b), 0, _linear_recurrence, reverse=REVERSE)
    else:
        ra, rb = tl.associative_scan((a, offs), 0, _running_argmax, reverse=REVERSE)
    tl.store(oa_ptr + offs, ra, mask=m)
    tl.store(ob_ptr + offs, rb, mask=m)


@tritium.jit
def methods(x_ptr, s_ptr, p_ptr, f_ptr, BM: tl.constexpr, BN: tl.constexpr):
    idx = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + idx)
    tl.store(s_ptr + idx, x.cumsum(0))
    tl.store(p_ptr + idx, x.cumprod(axis=1, reverse=True))
    tl.store(f_ptr + idx, x.associative_scan(-1, _first))


# ---------------------------------------------------------------------- helpers
def _run(kernel, sig, constexprs, args, grid=(1,)):
    interpret(ttir(kernel, sig, constexprs), grid, args)


def _wrap_int(v: int, dt) -> int:
    bits = np.dtype(dt).itemsize * 8
    v &= (1 << bits) - 1
    if np.issubdtype(dt, np.signedinteger) and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def _int_ref(x, op, reverse, dt):
    """Inclusive scan in Python ints, wrapped to `dt` (two's complement)."""
    seq = [int(v) for v in (x[::-1] if reverse else x)]
    out, acc = [], None
    for v in seq:
        acc = v if acc is None else (acc + v if op == "cumsum" else acc * v)
        out.append(_wrap_int(acc, dt))
    out = np.array(out, dtype=dt)
    return out[::-1] if reverse else out


def _float_ref(x, op, reverse, axis=0):
    x = np.flip(x, axis) if reverse else x
    fn = np.cumsum if op == "cumsum" else np.cumprod
    ref = fn(x.astype(np.float64), axis=axis)
    return np.flip(ref, axis) if reverse else ref


def _float_bound(x, op, reverse, dt, axis=0):
    """Sequential-accumulation error bound per element (k = steps so far):
    sum: k * eps * (running sum of |x|); product: k * eps * |product|."""
    eps = float(np.finfo(dt).eps)
    k = np.cumsum(np.ones_like(x, dtype=np.float64), axis=axis)
    k = np.flip(k, axis) if reverse else k
    if op == "cumsum":
        return (k + 1) * eps * _float_ref(np.abs(x.astype(np.float64)), op, reverse, axis) + 1e-30
    return (k + 1) * eps * np.abs(_float_ref(x, op, reverse, axis)) + 1e-30


def _assert_close(got, x, op, reverse, dt, axis=0):
    ref = _float_ref(x, op, reverse, axis)
    bound = _float_bound(x, op, reverse, dt, axis)
    err = np.abs(got.astype(np.float64) - ref)
    assert (err <= bound).all(), f"max err/bound {np.max(err / bound)}"


def _bf16_bits_to_f64(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _f32_to_bf16_bits(x):
    """float32 values already exact in bf16 -> their bf16 bits."""
    return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _random(rng, n, dt, op):
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        if op == "cumprod":  # small factors, so products do not all wrap to 0
            return rng.integers(-3, 4, n).astype(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    if op == "cumprod":  # factors near 1: no overflow or underflow over 100 steps
        return rng.uniform(0.8, 1.25, n).astype(dt) * rng.choice([-1, 1], n).astype(dt)
    return rng.standard_normal(n).astype(dt)


SIG = {
    np.int8: "i8",
    np.int16: "i16",
    np.int32: "i32",
    np.int64: "i64",
    np.uint8: "u8",
    np.uint32: "u32",
    np.float16: "fp16",
    np.float32: "fp32",
    np.float64: "fp64",
}


# ---------------------------------------------------------------------- TTIR
def test_cumsum_prints_upstream_scan():
    text = ttir_text(
        scan1d, ["*i32", "*i32", "i32"], dict(OP="cumsum", REVERSE=False, OTHER=0, BLOCK=128)
    )
    m = re.search(
        r'%(\S+) = "tt.scan"\(%(\S+)\) <\{axis = 0 : i32, reverse = false\}> \(\{\n'
        r"\s+\^bb0\(%(\S+): i32, %(\S+): i32\):\n"
        r"\s+%(\S+) = arith.addi %\3, %\4 : i32\n"
        r"\s+tt.scan.return %\5 : i32\n"
        r"\s+\}\) : \(tensor<128xi32>\) -> tensor<128xi32>\n",
        text,
    )
    assert m, text
    assert text.count("tt.scan") == 2  # the op and its return: one scan
    assert print_ir(parse_module(text)) == text  # parses back unchanged


@pytest.mark.parametrize(
    "op,sig,arith",
    [
        ("cumsum", "fp32", "arith.addf"),
        ("cumprod", "fp32", "arith.mulf"),
        ("cumprod", "i64", "arith.muli"),
    ],
)
def test_region_is_one_arith_op(op, sig, arith):
    module = ttir(
        scan1d, [f"*{sig}", f"*{sig}", "i32"], dict(OP=op, REVERSE=True, OTHER=1, BLOCK=32)
    )
    scans = [o for o in module.walk() if o.name == "tt.scan"]
    assert len(scans) == 1
    body = [o.name for o in scans[0].combine_op.block.ops]
    assert body == [arith, "tt.scan.return"]
    assert scans[0].is_reverse
    assert "reverse = true" in print_ir(module)


def test_2d_negative_axis_and_types():
    text = ttir_text(
        scan2d,
        ["*fp16", "*fp16", "i32", "i32"],
        dict(OP="cumsum", AXIS=-1, REVERSE=False, OTHER=0, BM=8, BN=16),
    )
    assert "<{axis = 1 : i32, reverse = false}>" in text
    assert "}) : (tensor<8x16xf16>) -> tensor<8x16xf16>" in text


@pytest.mark.parametrize(
    "op,src,dtype,cast,scan_ty",
    [
        ("cumsum", "bf16", None, "arith.extf", "f32"),  # bf16 scans in fp32 (upstream)
        ("cumprod", "bf16", None, "arith.extf", "f32"),
        ("cumsum", "i8", None, "arith.extsi", "i32"),  # small ints as tl.sum
        ("cumsum", "i16", None, "arith.extsi", "i32"),
        ("cumsum", "u8", None, "arith.extui", "i32"),
        ("cumsum", "i1", None, "arith.extui", "i32"),  # bool sums as uint32
        ("cumprod", "i8", None, None, "i8"),  # upstream's cumprod does not widen
        ("cumsum", "i32", None, None, "i32"),
        ("cumsum", "fp16", tl.float32, "arith.extf", "f32"),  # dtype= casts first
        ("cumsum", "i32", tl.int64, "arith.extsi", "i64"),
        ("cumsum", "i8", tl.int8, None, "i8"),
        ("cumprod", "fp32", tl.float64, "arith.extf", "f64"),
    ],
)
def test_scan_types(op, src, dtype, cast, scan_ty):
    out = {"f32": "fp32", "f64": "fp64"}.get(scan_ty, scan_ty)
    module = ttir(cumsum_dtype, [f"*{src}", f"*{out}"], dict(OP=op, DTYPE=dtype, BLOCK=16))
    names = [o.name for o in module.walk()]
    scan = next(o for o in module.walk() if o.name == "tt.scan")
    assert str(scan.res[0].type) == f"tensor<16x{scan_ty}>"
    before = names[: names.index("tt.scan")]
    if cast is None:
        assert not any(n.startswith("arith.ext") for n in before), names
    else:
        assert before[-1] == cast, names


def test_two_operand_scan_prints_both():
    text = ttir_text(
        pair_scan, ["*fp32", "*fp32", "*fp32", "*fp32", "i32"], dict(OP="recurrence", REVERSE=False)
    )
    assert re.search(
        r'(%\S+:2|%\S+, %\S+) = "tt.scan"\(%\S+, %\S+\) <\{axis = 0 : i32, reverse = false\}>', text
    ), text
    assert re.search(r"\^bb0\(%\S+: f32, %\S+: f32, %\S+: f32, %\S+: f32\):", text), text
    assert re.search(r"tt.scan.return %\S+, %\S+ : f32, f32", text), text
    assert "(tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)" in text


# ---------------------------------------------------------------------- interpreter: 1D
INT_TYPES = (np.int32, np.int64, np.uint32)
FLOAT_TYPES = (np.float16, np.float32, np.float64)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dt", INT_TYPES + FLOAT_TYPES, ids=lambda d: np.dtype(d).name)
def test_1d_matches_reference(op, dt, reverse):
    rng = np.random.default_rng([(INT_TYPES + FLOAT_TYPES).index(dt), op == "cumsum", reverse])
    n = 101  # odd: a masked load of a 128-block; masked lanes get the identity
    x = _random(rng, n, dt, op)
    y = np.zeros(n, dt)
    sig = SIG[dt]
    other = 0 if op == "cumsum" else 1
    _run(
        scan1d,
        [f"*{sig}", f"*{sig}", "i32"],
        dict(OP=op, REVERSE=reverse, OTHER=other, BLOCK=128),
        [x, y, n],
    )
    if np.issubdtype(dt, np.integer):
        np.testing.assert_array_equal(y, _int_ref(x, op, reverse, dt))
    else:
        _assert_close(y, x, op, reverse, dt)


def test_bf16_scans_in_fp32():
    rng = np.random.default_rng(4)
    n = 77
    vals = rng.standard_normal(n).astype(np.float32)
    bits = (vals.view(np.uint32) >> 16).astype(np.uint16)  # truncated to bf16
    xv = _bf16_bits_to_f64(bits)
    for op, other in (("cumsum", 0), ("cumprod", 1)):
        y = np.zeros(n, np.float32)
        # the kernel stores fp32: the scan runs (and stays) in fp32
        module = ttir(
            scan1d, ["*bf16", "*fp32", "i32"], dict(OP=op, REVERSE=False, OTHER=other, BLOCK=128)
        )
        interpret(module, (1,), [bits, y, n])
        _assert_close(y, xv, op, False, np.float32)
    # 256 ones summed: bf16 accumulation would stop at 256 (8-bit mantissa); fp32 does not
    ones = np.full(300, 0x3F80, np.uint16)
    y = np.zeros(300, np.float32)
    interpret(
        ttir(
            scan1d, ["*bf16", "*fp32", "i32"], dict(OP="cumsum", REVERSE=False, OTHER=0, BLOCK=512)
        ),
        (1,),
        [ones, y, 300],
    )
    np.testing.assert_array_equal(y, np.arange(1, 301))


@pytest.mark.parametrize(
    "src,dst", [(np.int8, np.int32), (np.int16, np.int32), (np.uint8, np.uint32)]
)
def test_small_ints_promoted(src, dst):
    x = np.full(64, np.iinfo(src).max, src)
    y = np.zeros(64, dst)
    _run(
        cumsum_dtype,
        [f"*{SIG[src]}", f"*{SIG[dst]}"],
        dict(OP="cumsum", DTYPE=None, BLOCK=64),
        [x, y],
    )
    np.testing.assert_array_equal(y, np.arange(1, 65) * int(np.iinfo(src).max))


def test_cumprod_keeps_small_ints_and_wraps():
    x = np.full(8, 2, np.int8)
    y = np.zeros(8, np.int8)
    _run(cumsum_dtype, ["*i8", "*i8"], dict(OP="cumprod", DTYPE=None, BLOCK=8), [x, y])
    np.testing.assert_array_equal(y, [2, 4, 8, 16, 32, 64, -128, 0])  # as upstream: int8


def test_dtype_argument():
    x = np.full(16, 2**30, np.int32)
    y = np.zeros(16, np.int64)
    _run(cumsum_dtype, ["*i32", "*i64"], dict(OP="cumsum", DTYPE=tl.int64, BLOCK=16), [x, y])
    np.testing.assert_array_equal(y, np.arange(1, 17, dtype=np.int64) * 2**30)  # no i32 wrap
    y32 = np.zeros(16, np.int32)
    _run(cumsum_dtype, ["*i32", "*i32"], dict(OP="cumsum", DTYPE=None, BLOCK=16), [x, y32])
    np.testing.assert_array_equal(y32, (np.arange(1, 17, dtype=np.int64) * 2**30).astype(np.int32))
    # fp16 input, fp32 accumulation: 2048 + 1 is not representable in fp16, is in fp32
    h = np.ones(4096, np.float16)
    hy = np.zeros(4096, np.float32)
    _run(cumsum_dtype, ["*fp16", "*fp32"], dict(OP="cumsum", DTYPE=tl.float32, BLOCK=4096), [h, hy])
    np.testing.assert_array_equal(hy, np.arange(1, 4097))


@pytest.mark.parametrize("reverse", [False, True])
def test_non_commutative_combines_run_in_scan_order(reverse):
    rng = np.random.default_rng(12)
    n = 64  # the whole block: a masked tail would be where a reverse scan starts
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    y = np.zeros(n, np.int32)
    base = dict(REVERSE=reverse, OTHER=0, BLOCK=64)
    _run(scan1d, ["*i32", "*i32", "i32"], dict(OP="first", **base), [x, y, n])
    np.testing.assert_array_equal(y, np.full(n, x[-1] if reverse else x[0]))
    _run(scan1d, ["*i32", "*i32", "i32"], dict(OP="sub", **base), [x, y, n])
    # a left fold of `running - new` from the scan's start (not associative: order matters)
    seq = list(x[::-1] if reverse else x)
    acc, ref = None, []
    for v in seq:
        acc = int(v) if acc is None else acc - int(v)
        ref.append(acc)
    np.testing.assert_array_equal(y, ref[::-1] if reverse else ref)


# ---------------------------------------------------------------------- interpreter: 2D
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_2d_matches_reference(op, axis, reverse):
    rng = np.random.default_rng(3 * (axis + 1) + reverse)
    rows, cols = 5, 13  # odd: masked loads of an 8 x 16 block
    x = _random(rng, rows * cols, np.float32, op).reshape(rows, cols)
    y = np.zeros((rows, cols), np.float32)
    other = 0 if op == "cumsum" else 1
    _run(
        scan2d,
        ["*fp32", "*fp32", "i32", "i32"],
        dict(OP=op, AXIS=axis, REVERSE=reverse, OTHER=other, BM=8, BN=16),
        [x, y, rows, cols],
    )
    _assert_close(y, x, op, reverse, np.float32, axis=axis % 2)


def test_2d_int_exact_along_each_axis():
    rng = np.random.default_rng(8)
    x = rng.integers(-(2**31), 2**31, (8, 16)).astype(np.int32)
    for axis in (0, 1):
        y = np.zeros((8, 16), np.int32)
        _run(
            scan2d,
            ["*i32", "*i32", "i32", "i32"],
            dict(OP="cumsum", AXIS=axis, REVERSE=False, OTHER=0, BM=8, BN=16),
            [x, y, 8, 16],
        )
        np.testing.assert_array_equal(y, np.cumsum(x.astype(np.int64), axis=axis).astype(np.int32))


# ---------------------------------------------------------------------- tuples
@pytest.mark.parametrize("reverse", [False, True])
def test_linear_recurrence_pair(reverse):
    rng = np.random.default_rng(21)
    n = 50
    a = rng.uniform(-1.5, 1.5, n)
    b = rng.standard_normal(n)
    oa, ob = np.zeros(n), np.zeros(n)
    sig = ["*fp64"] * 4 + ["i32"]
    _run(pair_scan, sig, dict(OP="recurrence", REVERSE=reverse), [a, b, oa, ob, n])

    def loop(combine):
        idx = range(n - 1, -1, -1) if reverse else range(n)
        ra, rb, acc = np.zeros(n), np.zeros(n), None
        for i in idx:
            acc = (a[i], b[i]) if acc is None else combine(*acc, a[i], b[i])
            ra[i], rb[i] = acc
        return ra, rb

    ref_a, ref_b = loop(lambda a1, b1, a2, b2: (a1 * a2, b1 * a2 + b2))
    # float64 in the same order as the loop: bit-identical
    np.testing.assert_array_equal(oa, ref_a)
    np.testing.assert_array_equal(ob, ref_b)
    # the operands' order matters: (new, running) would give something else
    _, swapped_b = loop(lambda a1, b1, a2, b2: (a2 * a1, b2 * a1 + b1))
    assert not np.allclose(ob, swapped_b)


@pytest.mark.parametrize("reverse", [False, True])
def test_running_max_and_argmax(reverse):
    rng = np.random.default_rng(5)
    n = 64  # the whole block (see above)
    v = rng.integers(0, 20, n).astype(np.float32)  # many ties
    oa, oi = np.zeros(n, np.float32), np.zeros(n, np.int32)
    _run(
        pair_scan,
        ["*fp32", "*fp32", "*fp32", "*i32", "i32"],
        dict(OP="argmax", REVERSE=reverse),
        [v, np.zeros(n, np.float32), oa, oi, n],
    )
    order = range(n - 1, -1, -1) if reverse else range(n)
    best, ref_v, ref_i = None, np.zeros(n), np.zeros(n, np.int64)
    for i in order:
        if best is None or v[i] > v[best]:  # ties keep the earlier-scanned index
            best = i
        ref_v[i], ref_i[i] = v[best], best
    np.testing.assert_array_equal(oa, ref_v)
    np.testing.assert_array_equal(oi, ref_i)


# ---------------------------------------------------------------------- tensor methods
def test_tensor_methods(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    rng = np.random.default_rng(9)
    x = rng.uniform(0.5, 1.5, (4, 8)).astype(np.float32)
    s, p, f = (np.zeros((4, 8), np.float32) for _ in range(3))
    methods[(1,)](x, s, p, f, BM=4, BN=8)
    _assert_close(s, x, "cumsum", False, np.float32, axis=0)
    _assert_close(p, x, "cumprod", True, np.float32, axis=1)
    np.testing.assert_array_equal(f, np.repeat(x[:, :1], 8, axis=1))


# ---------------------------------------------------------------------- errors
def _marked_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn.fn)
    hits = [start + i for i, line in enumerate(lines) if "# <-" in line]
    assert len(hits) == 1
    return hits[0]


@tritium.jit
def err_axis(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
    tl.store(x_ptr, tl.sum(tl.cumsum(x, 2)))  # <-


@tritium.jit
def err_negative_axis(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(x_ptr, tl.sum(tl.cumprod(x, axis=-2)))  # <-


@tritium.jit
def err_scalar(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, tl.cumsum(x))  # <-


@tritium.jit
def err_count(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    a, b = tl.associative_scan((x, x), 0, _one_of_two)  # <-


@tritium.jit
def err_arity(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    a, b = tl.associative_scan((x, x), 0, _sub)  # <-


@tritium.jit
def err_not_jit(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(x_ptr + tl.arange(0, 16), tl.associative_scan(x, 0, tl.maximum))  # <-


@tritium.jit
def err_shapes(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    y = tl.load(x_ptr + tl.arange(0, 32))
    a, b = tl.associative_scan((x, y), 0, _linear_recurrence)  # <-


@tritium.jit
def err_runtime_axis(x_ptr, n):
    x = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(x_ptr, tl.sum(x.cumsum(n)))  # <-


@pytest.mark.parametrize(
    "fn,sig,match",
    [
        (err_axis, ["*fp32"], "scan axis 2 is out of range for a tensor of rank 2"),
        (err_negative_axis, ["*fp32"], "scan axis -2 is out of range for a tensor of rank 1"),
        (err_scalar, ["*fp32"], "cannot scan a scalar"),
        (err_count, ["*fp32"], "returned 1 value(s) for 2 scanned tensors"),
        (err_arity, ["*fp32"], "_sub(): too many positional arguments"),
        (err_not_jit, ["*fp32"], "must be a @jit function, got `maximum`"),
        (err_shapes, ["*fp32"], "same shape"),
        (err_runtime_axis, ["*fp32", "i32"], "must be a tl.constexpr integer"),
    ],
)
def test_errors_name_the_line(fn, sig, match):
    with pytest.raises(CompilationError) as info:
        ttir(fn, sig)
    err = info.value
    assert err.loc is not None and err.loc.file == THIS
    assert err.loc.line == _marked_line(fn), str(err)
    assert match.lower() in err.message.lower(), err.message


@tritium.jit
def _scan_pointers(p, BLOCK: tl.constexpr):
    q = tl.cumsum(p + tl.arange(0, BLOCK), 0)  # <-
    tl.store(q, 1.0)


def test_scanning_pointers_is_reported_at_the_users_line():
    with pytest.raises(CompilationError, match="cannot scan pointers") as info:
        ttir(_scan_pointers, ["*fp32"], {"BLOCK": 8})
    assert info.value.loc.file == __file__
