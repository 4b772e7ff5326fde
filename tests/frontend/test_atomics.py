"""Atomics (`tl.atomic_add`, ..., `tl.atomic_cas`): the TTIR they print (upstream's syntax,
the float max/min trick), their results in the interpreter against sequential float64 /
Python-int references, and the errors for what upstream rejects."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tests.frontend.helpers import ttir, ttir_text
from tritium.errors import CompilationError, OutOfBoundsError
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir
from tritium.runtime.interpreter import interpret

THIS = __file__
RMW_OPS = ("add", "and", "or", "xor", "max", "min", "xchg")
INT_DTYPES = (np.int32, np.int64, np.uint32, np.uint64)
SIG = {
    np.int32: "i32",
    np.int64: "i64",
    np.uint32: "u32",
    np.uint64: "u64",
    np.float16: "fp16",
    np.float32: "fp32",
    np.float64: "fp64",
}


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")


@tritium.jit
def rmw_kernel(mem_ptr, idx_ptr, val_ptr, old_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    idx = tl.load(idx_ptr + offs, mask=m, other=-1)
    v = tl.load(val_ptr + offs, mask=m)
    p = mem_ptr + idx
    act = idx >= 0  # idx -1: masked off (and its address is out of bounds)
    if OP == "add":
        old = tl.atomic_add(p, v, mask=act)
    elif OP == "and":
        old = tl.atomic_and(p, v, mask=act)
    elif OP == "or":
        old = tl.atomic_or(p, v, mask=act)
    elif OP == "xor":
        old = tl.atomic_xor(p, v, mask=act)
    elif OP == "max":
        old = tl.atomic_max(p, v, mask=act)
    elif OP == "min":
        old = tl.atomic_min(p, v, mask=act)
    else:
        old = tl.atomic_xchg(p, v, mask=act)
    tl.store(old_ptr + offs, old, mask=m)


# ---------------------------------------------------------------------- references
def _wrap(v: int, dt) -> int:
    bits = np.dtype(dt).itemsize * 8
    v &= (1 << bits) - 1
    if np.issubdtype(dt, np.signedinteger) and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


PY_OPS = {
    "add": lambda a, b: a + b,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "max": max,
    "min": min,
    "xchg": lambda a, b: b,
}


def sequential(op, mem, idx, vals, order=None):
    """Element by element in `order` (default: row-major), in Python ints or float64:
    (final memory, old values)."""
    is_int = np.issubdtype(mem.dtype, np.integer)
    conv = int if is_int else float
    state = [conv(x) for x in mem]
    old = [0] * len(idx)
    for i in range(len(idx)) if order is None else order:
        j, v = idx[i], vals[i]
        if j < 0:
            continue
        old[i] = state[j]
        new = PY_OPS[op](state[j], conv(v))
        state[j] = _wrap(new, mem.dtype) if is_int else new
    kind = mem.dtype if is_int else np.float64
    return np.array(state, kind), np.array(old, kind)


def two_phase_order(vals, block):
    """The float max/min trick's order: per program, the sign-bit-clear values' atomic
    (row-major), then the sign-bit-set values' atomic."""
    neg = np.signbit(vals)
    order = []
    for start in range(0, len(vals), block):
        lanes = np.arange(start, min(start + block, len(vals)))
        order += list(lanes[~neg[lanes]]) + list(lanes[neg[lanes]])
    return order


def _random(rng, n, dt):
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    return rng.standard_normal(n).astype(dt)


def _indices(rng, n, n_mem, skip_every=5):
    idx = rng.integers(0, n_mem, n).astype(np.int32)
    idx[::skip_every] = -1
    return idx


def _sum_bound(idx, vals, n_mem, unit):
    """Sequential summation error bound per slot: count * unit * sum |x| (+ slack)."""
    absum = np.zeros(n_mem)
    cnt = np.zeros(n_mem)
    act = idx >= 0
    np.add.at(absum, idx[act], np.abs(vals[act].astype(np.float64)))
    np.add.at(cnt, idx[act], 1)
    return (cnt + 1) * unit * (absum + 1)


# ---------------------------------------------------------------------- interpreter: int families
@pytest.mark.parametrize("dt", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", RMW_OPS)
def test_int_rmw_matches_sequential_reference(interp, op, dt):
    rng = np.random.default_rng(10 * RMW_OPS.index(op) + INT_DTYPES.index(dt))
    n, n_mem = 77, 9  # odd size over three programs, many repeated addresses, masked lanes
    mem = _random(rng, n_mem, dt)
    idx = _indices(rng, n, n_mem)
    vals = _random(rng, n, dt)
    old = np.full(n, 3, dt)
    ref_mem, ref_old = sequential(op, mem, idx, vals)
    rmw_kernel[(3,)](mem, idx, vals, old, n, OP=op, BLOCK=32)
    np.testing.assert_array_equal(mem, ref_mem)
    np.testing.assert_array_equal(old, ref_old)  # masked-off lanes give 0
    assert (old[idx < 0] == 0).all()


def test_int_add_wraps_and_unsigned_compares_as_unsigned(interp):
    mem = np.array([2**31 - 1, 5], np.int32)
    old = np.zeros(2, np.int32)
    rmw_kernel[(1,)](
        mem, np.array([0, 1], np.int32), np.array([1, 0], np.int32), old, 2, OP="add", BLOCK=2
    )
    assert mem[0] == -(2**31) and old[0] == 2**31 - 1
    umem = np.array([1, 2**32 - 1], np.uint32)
    uold = np.zeros(2, np.uint32)
    rmw_kernel[(1,)](
        umem,
        np.array([0, 1], np.int32),
        np.array([2**31, 7], np.uint32),
        uold,
        2,
        OP="max",
        BLOCK=2,
    )
    np.testing.assert_array_equal(umem, [2**31, 2**32 - 1])  # signed max would keep 1
    np.testing.assert_array_equal(uold, [1, 2**32 - 1])


# ---------------------------------------------------------------------- interpreter: floats
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.float16], ids=lambda d: np.dtype(d).name)
def test_float_add_matches_float64_reference(interp, dt):
    rng = np.random.default_rng(7)
    n, n_mem = 200, 11
    mem = _random(rng, n_mem, dt)
    idx = _indices(rng, n, n_mem)
    vals = _random(rng, n, dt)
    old = np.zeros(n, dt)
    start = mem.copy()
    ref_mem, ref_old = sequential("add", mem, idx, vals)
    rmw_kernel[(4,)](mem, idx, vals, old, n, OP="add", BLOCK=64)
    unit = float(np.finfo(dt).eps)
    bound = _sum_bound(idx, vals, n_mem, unit) + np.abs(start.astype(np.float64)) * unit
    assert (np.abs(mem - ref_mem) <= bound).all(), np.abs(mem - ref_mem) / bound
    act = idx >= 0
    np.testing.assert_allclose(old[act], ref_old[act], rtol=0, atol=float(bound.max()))
    assert (old[~act] == 0).all()
    # exactness where no address repeats: the first touch of each address sees `start`
    first = {j: i for i, j in reversed(list(enumerate(idx))) if j >= 0}
    for j, i in first.items():
        assert old[i] == start[j]


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["max", "min", "xchg"])
def test_float_max_min_xchg_exact(interp, op, dt):
    rng = np.random.default_rng(11)
    n, n_mem = 90, 6
    mem = _random(rng, n_mem, dt)
    idx = _indices(rng, n, n_mem, skip_every=4)
    vals = _random(rng, n, dt)
    old = np.full(n, 5, dt)
    ref_mem, ref_old = sequential(op, mem, idx, vals)
    if op != "xchg":
        # final values are order-free; old values follow the trick's two atomics
        _, ref_old = sequential(op, mem, idx, vals, order=two_phase_order(vals, 32))
    rmw_kernel[(3,)](mem, idx, vals, old, n, OP=op, BLOCK=32)
    np.testing.assert_array_equal(mem.astype(np.float64), ref_mem)
    np.testing.assert_array_equal(old.astype(np.float64), ref_old)
    assert (old[idx < 0] == 0).all()


def _bits(x, dt):
    return np.array(x, dt).view(np.uint32 if dt == np.float32 else np.uint64)


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_float_max_min_signed_zero_and_nan(interp, dt):
    nan, neg_nan = np.array(np.nan, dt), -np.array(np.nan, dt)
    mem0 = np.array([-1.0, 0.0, -0.0, 3.0, nan, neg_nan, 1.0, -2.0], dt)
    vals = np.array([-0.0, -0.0, 0.0, nan, 1.0, 1.0, neg_nan, 4.0], dt)
    idx = np.arange(8, dtype=np.int32)
    # upstream's bit trick: -0 < +0; +NaN wins a max and loses a min; -NaN the reverse
    expect = {
        "max": [-0.0, 0.0, 0.0, nan, nan, 1.0, 1.0, 4.0],
        "min": [-1.0, -0.0, -0.0, 3.0, 1.0, neg_nan, neg_nan, -2.0],
    }
    for op, want in expect.items():
        mem, old = mem0.copy(), np.zeros(8, dt)
        rmw_kernel[(1,)](mem, idx, vals, old, 8, OP=op, BLOCK=8)
        np.testing.assert_array_equal(_bits(mem, dt), _bits(want, dt), err_msg=op)
        np.testing.assert_array_equal(_bits(old, dt), _bits(mem0, dt), err_msg=op)


def test_bf16_add_rounds_each_step():
    # No numpy bf16 dtype: run the TTIR on uint16 bit patterns.
    module = ttir(rmw_kernel, ["*bf16", "*i32", "*bf16", "*bf16", "i32"], {"OP": "add", "BLOCK": 4})
    one, eps = 0x3F80, 0x3B80  # 1.0 and 2**-8 (half a bf16 ulp at 1.0)
    mem = np.array([one], np.uint16)
    vals = np.array([eps, eps, eps, one], np.uint16)
    old = np.zeros(4, np.uint16)
    interpret(module, (1,), [mem, np.zeros(4, np.int32), vals, old, 4])
    # 1 + 2**-8 rounds to even (1.0) each time: sequential bf16 adds, not one float32 sum
    np.testing.assert_array_equal(old, [one, one, one, one])
    assert mem[0] == 0x4000  # 2.0


# ---------------------------------------------------------------------- histogram, scalars, cas
@tritium.jit
def histogram_kernel(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    bucket = tl.load(x_ptr + offs, mask=m, other=0)
    tl.atomic_add(hist_ptr + bucket, 1, mask=m)


def test_histogram(interp):
    x = np.random.default_rng(3).integers(0, 13, 1000).astype(np.int32)
    hist = np.zeros(13, np.int32)
    histogram_kernel[(tritium.cdiv(x.size, 256),)](x, hist, x.size, BLOCK=256)
    np.testing.assert_array_equal(hist, np.bincount(x, minlength=13))


@tritium.jit
def counter_kernel(count_ptr, fsum_ptr, out_ptr, SEM: tl.constexpr, SCOPE: tl.constexpr):
    pid = tl.program_id(0)
    ticket = tl.atomic_add(count_ptr, 1, sem=SEM, scope=SCOPE)
    tl.atomic_add(fsum_ptr, pid.to(tl.float64) * 0.5, sem=SEM, scope=SCOPE)
    tl.store(out_ptr + pid, ticket)


@pytest.mark.parametrize(
    "sem,scope",
    [
        (None, None),
        ("relaxed", "cta"),
        ("acquire", "sys"),
        ("release", "gpu"),
        ("acq_rel", "cta"),
    ],
)
def test_scalar_pointer_counter(interp, sem, scope):
    count, fsum = np.zeros(1, np.int32), np.zeros(1, np.float64)
    tickets = np.full(10, -1, np.int32)
    counter_kernel[(10,)](count, fsum, tickets, SEM=sem, SCOPE=scope)
    assert count[0] == 10 and fsum[0] == 0.5 * sum(range(10))
    np.testing.assert_array_equal(tickets, np.arange(10))  # programs run in order


@tritium.jit
def scalar_masked_kernel(p, o):
    pid = tl.program_id(0)
    tl.store(o + pid, tl.atomic_add(p, 5, mask=pid % 2 == 0))
    tl.store(o + 8 + pid, tl.atomic_cas(p + 1, pid, 100 + pid))


def test_scalar_mask_and_scalar_cas(interp):
    mem, old = np.array([0, 3], np.int32), np.full(16, -1, np.int32)
    scalar_masked_kernel[(8,)](mem, old)
    np.testing.assert_array_equal(mem, [20, 103])  # even programs add; program 3 swaps
    np.testing.assert_array_equal(old, [0, 0, 5, 0, 10, 0, 15, 0] + [3] * 4 + [103] * 4)


@tritium.jit
def cas_kernel(lock_ptr, cmp_ptr, val_ptr, old_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    first = tl.atomic_cas(lock_ptr, 0, tl.program_id(0) + 1)  # only program 0 wins
    tl.store(old_ptr + BLOCK * tl.num_programs(0) + tl.program_id(0), first)
    c = tl.load(cmp_ptr + offs)
    v = tl.load(val_ptr + offs)
    old = tl.atomic_cas(lock_ptr + 1 + offs % 3, c, v)
    tl.store(old_ptr + tl.program_id(0) * BLOCK + offs, old)


def test_cas_lock_and_block_sequence(interp):
    rng = np.random.default_rng(5)
    block, grid = 16, 2
    mem = np.array([0, 1, 2, 3], np.int32)
    cmp = rng.integers(0, 4, block).astype(np.int32)
    val = rng.integers(0, 4, block).astype(np.int32)
    old = np.full(block * grid + grid, -7, np.int32)
    ref, ref_old = [0, 1, 2, 3], []
    for _ in range(grid):  # sequential reference
        for i in range(block):
            j = 1 + i % 3
            ref_old.append(ref[j])
            if ref[j] == cmp[i]:
                ref[j] = int(val[i])
    cas_kernel[(grid,)](mem, cmp, val, old, BLOCK=block)
    np.testing.assert_array_equal(old[-grid:], [0, 1])  # the lock: program 0 took it
    assert mem[0] == 1
    np.testing.assert_array_equal(mem[1:], ref[1:])
    np.testing.assert_array_equal(old[:-grid], ref_old)


@tritium.jit
def fcas_kernel(p, c, v, o, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    old = tl.atomic_cas(p + offs, tl.load(c + offs), tl.load(v + offs))
    tl.store(o + offs, old)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64, np.uint32])
def test_cas_compares_bits(interp, dt):
    if np.issubdtype(dt, np.floating):
        mem0 = np.array([0.0, -0.0, np.nan, 1.5], dt)
        cmp = np.array([-0.0, -0.0, np.nan, 1.5], dt)  # +0 != -0; NaN (same bits) == NaN
        hit = [False, True, True, True]
    else:
        mem0 = np.array([0, 2**31, 5, 6], dt)
        cmp = np.array([1, 2**31, 5, 7], dt)
        hit = [False, True, True, False]
    val = np.array([9, 8, 7, 6], dt)
    mem, old = mem0.copy(), np.zeros(4, dt)
    fcas_kernel[(1,)](mem, cmp, val, old, BLOCK=4)
    np.testing.assert_array_equal(old.view(np.uint8), mem0.view(np.uint8))
    np.testing.assert_array_equal(mem.view(np.uint8), np.where(hit, val, mem0).view(np.uint8))


@tritium.jit
def oob_kernel(p, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(p + offs, 1, mask=offs < n)  # <-


def test_out_of_bounds_names_the_line(interp):
    buf = np.zeros(8, np.int32)
    oob_kernel[(1,)](buf, 8, BLOCK=16)  # masked lanes past the end are fine
    assert (buf == 1).all()
    with pytest.raises(OutOfBoundsError, match=r"out-of-bounds atomic add at lane \(8,\)") as e:
        oob_kernel[(1,)](buf, 9, BLOCK=16)
    assert e.value.loc.line == _marked_line(oob_kernel)
    assert (buf == 1).all()  # the faulting op changed nothing


# ---------------------------------------------------------------------- TTIR
@tritium.jit
def one_op(
    p, v_ptr, m_ptr, OP: tl.constexpr, MASKED: tl.constexpr, SEM: tl.constexpr, SCOPE: tl.constexpr
):
    offs = tl.arange(0, 128)
    v = tl.load(v_ptr + offs)
    if MASKED:
        m = tl.load(m_ptr + offs) != 0
    else:
        m = None
    if OP == "add":
        old = tl.atomic_add(p + offs, v, m, SEM, SCOPE)
    elif OP == "max":
        old = tl.atomic_max(p + offs, v, m, SEM, SCOPE)
    elif OP == "min":
        old = tl.atomic_min(p + offs, v, m, SEM, SCOPE)
    elif OP == "and":
        old = tl.atomic_and(p + offs, v, m, SEM, SCOPE)
    elif OP == "or":
        old = tl.atomic_or(p + offs, v, m, SEM, SCOPE)
    elif OP == "xor":
        old = tl.atomic_xor(p + offs, v, m, SEM, SCOPE)
    else:
        old = tl.atomic_xchg(p + offs, v, m, SEM, SCOPE)
    tl.store(v_ptr + offs, old)


def _one_op(op, ty, masked=True, sem=None, scope=None):
    return ttir_text(
        one_op,
        [f"*{ty}", f"*{ty}", "*i8"],
        {"OP": op, "MASKED": masked, "SEM": sem, "SCOPE": scope},
    )


def _rmw_lines(text):
    return [line.strip() for line in text.splitlines() if "tt.atomic_rmw" in line]


ATOMIC_RE = (
    r"%\w+ = tt.atomic_rmw {rmw}, {sem}, {scope}, %\w+, %\w+, %\w+ : "
    r"\(tensor<128x!tt.ptr<{ir}>>, tensor<128x{ir}>, tensor<128xi1>\) -> tensor<128x{ir}>"
)


@pytest.mark.parametrize(
    "op,ty,rmw,ir",
    [
        ("add", "fp32", "fadd", "f32"), ("add", "fp16", "fadd", "f16"), ("add", "bf16", "fadd", "bf16"),
        ("add", "fp64", "fadd", "f64"), ("add", "i32", "add", "i32"), ("add", "u64", "add", "i64"),
        ("max", "i32", "max", "i32"), ("max", "u32", "umax", "i32"), ("min", "i64", "min", "i64"),
        ("min", "u64", "umin", "i64"), ("and", "i32", "and", "i32"), ("or", "u32", "or", "i32"),
        ("xor", "i64", "xor", "i64"), ("xchg", "fp32", "exch", "f32"), ("xchg", "u64", "exch", "i64"),
    ],
)  # fmt: skip
def test_rmw_prints_upstream_syntax(op, ty, rmw, ir):
    (line,) = _rmw_lines(_one_op(op, ty))
    assert re.fullmatch(ATOMIC_RE.format(rmw=rmw, sem="acq_rel", scope="gpu", ir=ir), line), line


@pytest.mark.parametrize("sem", ["relaxed", "acquire", "release", "acq_rel"])
@pytest.mark.parametrize("scope", ["gpu", "cta", "sys"])
def test_sem_and_scope_are_printed(sem, scope):
    (line,) = _rmw_lines(_one_op("add", "i32", sem=sem, scope=scope))
    assert re.fullmatch(ATOMIC_RE.format(rmw="add", sem=sem, scope=scope, ir="i32"), line), line


def test_no_mask_gives_all_true_mask_as_upstream():
    text = _one_op("add", "fp32", masked=False)
    (line,) = _rmw_lines(text)
    mask = line.split(", ")[5].split(" ")[0]
    assert re.search(rf"{re.escape(mask)} = arith.constant dense<true> : tensor<128xi1>", text)


@pytest.mark.parametrize("ty,ir,width", [("fp32", "i32", 31), ("fp64", "i64", 63)])
@pytest.mark.parametrize("op,pos_rmw,neg_rmw", [("max", "max", "umin"), ("min", "min", "umax")])
def test_float_max_min_trick(ty, ir, width, op, pos_rmw, neg_rmw):
    text = _one_op(op, ty)
    pos, neg = _rmw_lines(text)
    assert re.fullmatch(ATOMIC_RE.format(rmw=pos_rmw, sem="acq_rel", scope="gpu", ir=ir), pos)
    assert re.fullmatch(ATOMIC_RE.format(rmw=neg_rmw, sem="acq_rel", scope="gpu", ir=ir), neg)
    fl = ir.replace("i", "f")
    assert f"tensor<128x!tt.ptr<{fl}>> -> tensor<128x!tt.ptr<{ir}>>" in text  # pointer view
    assert re.search(rf"arith.constant {width} : {ir}\n", text)  # shifted out: the sign bit
    assert "arith.shrui" in text and "arith.select" in text
    assert re.search(rf"tt.bitcast %\w+ : tensor<128x{ir}> -> tensor<128x{fl}>", text)


@tritium.jit
def scalar_ops(p, q):
    a = tl.atomic_cas(p, 0, 1)
    b = tl.atomic_cas(q, 1.5, 2.0, sem="release", scope="sys")
    tl.atomic_xchg(p, a)
    tl.atomic_add(q, b)


def test_scalar_cas_and_rmw_text_round_trips():
    module = ttir(scalar_ops, ["*i32", "*fp64"])
    text = print_ir(module)
    assert re.search(
        r"= tt.atomic_cas acq_rel, gpu, %p, %\w+, %\w+ : \(!tt.ptr<i32>, i32, i32\) -> i32", text
    )
    assert re.search(
        r"= tt.atomic_cas release, sys, %q, %\w+, %\w+ : \(!tt.ptr<f64>, f64, f64\) -> f64", text
    )
    assert re.search(
        r"tt.atomic_rmw exch, acq_rel, gpu, %p, %a\w*, %\w+ : \(!tt.ptr<i32>, i32, i1\)", text
    )
    assert re.search(
        r"tt.atomic_rmw fadd, acq_rel, gpu, %q, %b\w*, %\w+ : \(!tt.ptr<f64>, f64, i1\)", text
    )
    assert print_ir(parse_module(text)) == text


# ---------------------------------------------------------------------- errors
def _marked_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn.fn)
    (hit,) = [start + i for i, line in enumerate(lines) if "# <-" in line]
    return hit


@tritium.jit
def not_a_pointer(n):
    tl.atomic_add(n, 1)  # <-


@tritium.jit
def narrow(p):
    tl.atomic_add(p + tl.arange(0, 16), 1)  # <-


@tritium.jit
def half_max(p):
    tl.atomic_max(p, 1.0)  # <-


@tritium.jit
def half_xchg(p):
    tl.atomic_xchg(p, 1.0)  # <-


@tritium.jit
def half_cas(p):
    tl.atomic_cas(p, 1.0, 2.0)  # <-


@tritium.jit
def float_and(p):
    tl.atomic_and(p, 1)  # <-


@tritium.jit
def bad_sem(p):
    tl.atomic_or(p, 1, sem="seq_cst")  # <-


@tritium.jit
def bad_scope(p):
    tl.atomic_cas(p, 1, 2, scope="system")  # <-


@tritium.jit
def runtime_sem(p, s):
    tl.atomic_add(p, 1, sem=s)  # <-


@tritium.jit
def block_into_scalar(p):
    tl.atomic_add(p, tl.zeros((16,), dtype=tl.int32))  # <-


@tritium.jit
def shape_mismatch(p):
    tl.atomic_min(p + tl.arange(0, 64), tl.zeros((32,), dtype=tl.int32))  # <-


@pytest.mark.parametrize(
    "fn,sig,match",
    [
        (not_a_pointer, ["i32"], "tl.atomic_add needs a pointer or a block of pointers"),
        (narrow, ["*i8"], "atomics need 32- or 64-bit elements, got a pointer to int8"),
        (narrow, ["*u16"], "atomics need 32- or 64-bit elements, got a pointer to uint16"),
        (narrow, ["*i1"], "atomics need 32- or 64-bit elements, got a pointer to int1"),
        (half_max, ["*fp16"], "tl.atomic_max does not support fp16"),
        (half_max, ["*bf16"], "tl.atomic_max does not support bf16"),
        (half_xchg, ["*fp16"], "tl.atomic_xchg does not support fp16"),
        (half_cas, ["*bf16"], "tl.atomic_cas does not support bf16"),
        (float_and, ["*fp32"], "tl.atomic_and needs integer elements, got a pointer to fp32"),
        (bad_sem, ["*i32"], "sem must be one of 'relaxed', 'acquire', 'release', 'acq_rel', got 'seq_cst'"),
        (bad_scope, ["*i32"], "scope must be one of 'gpu', 'cta', 'sys', got 'system'"),
        (runtime_sem, ["*i32", "i32"], "sem must be a compile-time string"),
        (block_into_scalar, ["*i32"], "needs a block of pointers, not a scalar pointer"),
        (shape_mismatch, ["*i32"], "value of shape [32] does not fit pointers of shape [64]"),
    ],
    ids=lambda x: x if isinstance(x, str) else None,
)  # fmt: skip
def test_errors_name_the_line(fn, sig, match):
    with pytest.raises(CompilationError) as info:
        ttir(fn, sig)
    err = info.value
    assert err.loc is not None and err.loc.file == THIS
    assert err.loc.line == _marked_line(fn), str(err)
    assert match in err.message, err.message
