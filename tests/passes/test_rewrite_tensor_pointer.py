"""`rewrite-tensor-pointer`: hand-written block-pointer TTIR, rewritten, then checked for
its shape (no block pointer left, masks only on the checked dims, i64 offsets, only the
changing parts carried by loops) and run in the interpreter against a numpy model of
block-pointer loads and stores. The interpreter checks every access, so a mask that lets
an out-of-bounds lane through fails the run."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Operation

import tritium
from tritium.errors import CompilationError, OutOfBoundsError
from tritium.ir import arith, tt
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir
from tritium.ir.tt_block_ptr import AdvanceOp, MakeTensorPtrOp, is_block_ptr
from tritium.ir.types import f32
from tritium.passes.pipeline import TTIR_PASSES, run_passes
from tritium.runtime.interpreter import interpret

RNG = np.random.default_rng(7)
NP = {"f32": np.float32, "f16": np.float16}


# --------------------------------------------------------------------------- helpers


def rewrite(text: str, passes=("rewrite-tensor-pointer",)):
    module = parse_module(text)
    run_passes(module, list(passes), verify=True)
    check_no_block_pointers(module)
    return module


def check_no_block_pointers(module) -> None:
    for op in module.walk():
        assert not isinstance(op, MakeTensorPtrOp | AdvanceOp), op.name
        values = [*op.operands, *op.results]
        for region in op.regions:
            for block in region.blocks:
                values += block.args
        assert not any(is_block_ptr(v.type) for v in values), op.name
        if isinstance(op, tt.LoadOp | tt.StoreOp):
            assert op.boundaryCheck is None
        if isinstance(op, tt.AddPtrOp) and isinstance(op.offset.type, TensorType):
            assert op.offset.type.element_type == IntegerType(64)


def slice_ops(value):
    """The ops `value` is computed from (its backward slice)."""
    seen, todo = [], [value]
    while todo:
        v = todo.pop()
        op = getattr(v, "owner", None)
        if isinstance(op, Operation) and op not in seen:
            seen.append(op)
            todo += list(op.operands)
    return seen


def masked_dims(value) -> set[int]:
    """The dims a mask compares (each bound check runs on a 1 x .. x n_d x .. x 1 index)."""
    dims = set()
    for op in slice_ops(value):
        if isinstance(op, arith.CmpiOp):
            shape = op.lhs.type.get_shape()
            big = [d for d, n in enumerate(shape) if n != 1]
            dims |= set(big) if len(shape) > 1 else {0}
    return dims


def memory_ops(module, cls):
    return [op for op in module.walk() if isinstance(op, cls)]


def ref_access(shape, strides, offsets, block, checks):
    """Element addresses of a block and which of them the boundary check keeps."""
    idx = np.indices(block)
    pos = [offsets[d] + idx[d] for d in range(len(block))]
    ok = np.ones(block, bool)
    for d in checks:
        ok &= (pos[d] >= 0) & (pos[d] < shape[d])
    addr = sum(p.astype(np.int64) * s for p, s in zip(pos, strides))
    return addr, ok


def ref_load(flat, shape, strides, offsets, block, checks, fill):
    addr, ok = ref_access(shape, strides, offsets, block, checks)
    out = np.full(block, fill, flat.dtype)
    out[ok] = flat[addr[ok]]
    return out, ok


def const(name: str, value: int, ty: str) -> str:
    return f"    %{name} = arith.constant {value} : {ty}\n"


def arr(values) -> str:
    return f"array<i32{': ' if len(values) else ''}{', '.join(map(str, values))}>"


def bt(block, elem: str) -> str:
    """The block tensor type, e.g. `tensor<8x16xf32>`."""
    return f"tensor<{'x'.join(map(str, block))}x{elem}>"


# --------------------------------------------------------------------------- loads


def load_kernel(block, elem, order, checks, padding) -> str:
    """out (contiguous block) = load(advance(make_tensor_ptr(x, shape, strides, offs), adv))
    with every parameter a kernel argument."""
    rank = len(block)
    t = bt(block, elem)
    args = [f"%x: !tt.ptr<{elem}>", f"%out: !tt.ptr<{elem}>"]
    for d in range(rank):
        args += [f"%shape{d}: i64", f"%stride{d}: i64", f"%off{d}: i32", f"%adv{d}: i32"]
    body = const("z", 0, "i32")
    out_strides = [int(np.prod(block[d + 1 :])) for d in range(rank)]
    for d in range(rank):
        body += const(f"ob{d}", block[d], "i64") + const(f"os{d}", out_strides[d], "i64")
    dims = range(rank)
    attrs = [f"boundaryCheck = {arr(checks)}"] if checks is not None else []
    if padding:
        attrs.append(f"padding = {padding} : i32")
    attr = f" {{{', '.join(attrs)}}}" if attrs else ""
    body += f"""
    %p = tt.make_tensor_ptr %x, [{", ".join(f"%shape{d}" for d in dims)}], [{", ".join(f"%stride{d}" for d in dims)}], [{", ".join(f"%off{d}" for d in dims)}] {{order = {arr(order)}}} : <{t}>
    %q = tt.advance %p, [{", ".join(f"%adv{d}" for d in dims)}] : <{t}>
    %v = tt.load %q{attr} : !tt.ptr<{t}> loc("k.py":5:9)
    %o = tt.make_tensor_ptr %out, [{", ".join(f"%ob{d}" for d in dims)}], [{", ".join(f"%os{d}" for d in dims)}], [{", ".join("%z" for _ in dims)}] {{order = {arr(order)}}} : <{t}>
    tt.store %o, %v : !tt.ptr<{t}>
    tt.return
"""
    return f"module {{\n  tt.func public @k({', '.join(args)}) {{\n{body}  }}\n}}\n"


LOAD_CASES = {
    # name: (block, elem, order, checks, padding, shape, strides, [(offsets, advance)...])
    "1d-partial-end": ((16,), "f32", (0,), (0,), 1, (13,), (1,), [((0,), (0,)), ((0,), (8,))]),
    "1d-negative-nan": ((16,), "f32", (0,), (0,), 2, (13,), (1,), [((3,), (-7,)), ((5,), (-21,))]),
    "1d-stride3": ((8,), "f32", (0,), (0,), 1, (11,), (3,), [((6,), (0,)), ((2,), (-4,))]),
    "2d-both": ((8, 16), "f32", (1, 0), (0, 1), 1, (13, 10), (10, 1), [((8, 0), (0, 0)), ((0, 4), (-3, -6))]),
    "2d-cols-only": ((8, 16), "f32", (1, 0), (1,), 1, (13, 10), (10, 1), [((4, 0), (1, -2))]),
    "2d-rows-only": ((8, 8), "f32", (1, 0), (0,), 1, (13, 10), (10, 1), [((8, 2), (0, 0)), ((0, 0), (-5, 1))]),
    "2d-no-check": ((8, 8), "f32", (1, 0), (), None, (13, 10), (10, 1), [((2, 1), (0, 1))]),
    "2d-transposed-nan": ((8, 16), "f32", (0, 1), (0, 1), 2, (13, 10), (1, 13), [((2, 3), (-5, -6)), ((9, 0), (0, 0))]),
    "2d-f16-nan": ((16, 8), "f16", (1, 0), (0, 1), 2, (13, 10), (10, 1), [((7, 5), (0, 0))]),
    "2d-no-padding": ((8, 16), "f32", (1, 0), (0, 1), None, (13, 10), (10, 1), [((8, 0), (0, 0))]),
}  # fmt: skip


@pytest.mark.parametrize("case", list(LOAD_CASES))
def test_block_pointer_load(case):
    block, elem, order, checks, padding, shape, strides, runs = LOAD_CASES[case]
    module = rewrite(load_kernel(block, elem, order, checks, padding))

    (load,) = memory_ops(module, tt.LoadOp)
    assert str(load.location) == 'loc("k.py":5:9)'  # the new load keeps the old one's line
    if checks:
        assert load.mask is not None and masked_dims(load.mask) == set(checks)
        assert (load.other is not None) == (padding is not None)
    else:
        assert load.mask is None and load.other is None
    store = memory_ops(module, tt.StoreOp)[0]
    assert store.mask is None  # no boundary check: no mask

    size = int(np.dot(np.array(shape) - 1, strides)) + 1
    x = RNG.standard_normal(size).astype(NP[elem])
    fill = {1: 0.0, 2: np.nan, None: 0.0}[padding]
    for offsets, advance in runs:
        out = np.full(block, 12345.0, NP[elem])
        args = [x, out]
        for d in range(len(block)):
            args += [shape[d], strides[d], offsets[d], advance[d]]
        interpret(module, (1,), args)
        at = [o + a for o, a in zip(offsets, advance)]
        ref, ok = ref_load(x, shape, strides, at, block, checks, fill)
        if padding is None:  # masked lanes are unspecified upstream (zero here)
            out, ref = out[ok], ref[ok]
        np.testing.assert_array_equal(out, ref)


def test_load_cases_reach_the_edges():
    """The cases above do read partial blocks (else their masks would test nothing)."""
    partial = 0
    for block, _, _, checks, _, shape, strides, runs in LOAD_CASES.values():
        for offsets, advance in runs:
            at = [o + a for o, a in zip(offsets, advance)]
            _, ok = ref_access(shape, strides, at, block, checks)
            partial += not ok.all()
    assert partial >= 8


def test_unchecked_out_of_bounds_is_not_masked():
    """Dims not in boundaryCheck are not masked: reading past them faults in the interpreter."""
    module = rewrite(load_kernel((8, 8), "f32", (1, 0), (1,), 1))
    x = np.zeros(130, np.float32)
    out = np.zeros((8, 8), np.float32)
    with pytest.raises(OutOfBoundsError) as e:
        interpret(module, (1,), [x, out, 13, 10, 8, 8, 1, 0, 0, 0])  # rows 8..15 of 13
    assert "k.py:5:9" in str(e.value)


# --------------------------------------------------------------------------- stores


def store_kernel(block, checks) -> str:
    """store(make_tensor_ptr(out, [M, N], [sm, 1], [om, on]), src block) with boundaryCheck."""
    t = bt(block, "f32")
    bm, bn = block
    return f"""
module {{
  tt.func public @k(%src: !tt.ptr<f32>, %out: !tt.ptr<f32>, %M: i64, %N: i64, %sm: i64, %om: i32, %on: i32) {{
{const("z", 0, "i32")}{const("one", 1, "i64")}{const("bm", bm, "i64")}{const("bn", bn, "i64")}
    %s = tt.make_tensor_ptr %src, [%bm, %bn], [%bn, %one], [%z, %z] {{order = array<i32: 1, 0>}} : <{t}>
    %v = tt.load %s : !tt.ptr<{t}>
    %o = tt.make_tensor_ptr %out, [%M, %N], [%sm, %one], [%om, %on] {{order = array<i32: 1, 0>}} : <{t}>
    tt.store %o, %v {{boundaryCheck = {arr(checks)}}} : !tt.ptr<{t}> loc("k.py":9:5)
    tt.return
  }}
}}
"""


@pytest.mark.parametrize(
    "checks,runs",
    [
        ((0, 1), [(8, 4), (-3, -5), (10, 3)]),
        ((0,), [(8, 0), (-2, 1)]),
        ((1,), [(0, 4), (3, -6)]),
    ],
)
def test_block_pointer_store(checks, runs):
    block, (m, n, sm) = (8, 8), (13, 10, 12)  # rows padded to 12 elements, 10 used
    module = rewrite(store_kernel(block, checks))
    store = memory_ops(module, tt.StoreOp)[0]
    assert store.mask is not None and masked_dims(store.mask) == set(checks)
    assert str(store.location) == 'loc("k.py":9:5)'
    src = RNG.standard_normal(block).astype(np.float32)
    for om, on in runs:
        out = np.full(m * sm, -7.0, np.float32)
        interpret(module, (1,), [src, out, m, n, sm, om, on])
        addr, ok = ref_access((m, n), (sm, 1), (om, on), block, checks)
        ref = np.full(m * sm, -7.0, np.float32)
        ref[addr[ok]] = src[ok]
        np.testing.assert_array_equal(out, ref)
        assert not ok.all()


# --------------------------------------------------------------------------- loops


MATMUL = """
module {
  tt.func public @matmul(%a: !tt.ptr<f32>, %b: !tt.ptr<f32>, %c: !tt.ptr<f32>, %M: i64, %N: i64, %K: i64, %K32: i32) {
    %pm = tt.get_program_id x : i32
    %pn = tt.get_program_id y : i32
    %c16 = arith.constant 16 : i32
    %c8 = arith.constant 8 : i32
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %om = arith.muli %pm, %c16 : i32
    %on = arith.muli %pn, %c16 : i32
    %ap = tt.make_tensor_ptr %a, [%M, %K], [%K, %one], [%om, %c0] {order = array<i32: 1, 0>} : <tensor<16x8xf32>>
    %bp = tt.make_tensor_ptr %b, [%K, %N], [%N, %one], [%c0, %on] {order = array<i32: 1, 0>} : <tensor<8x16xf32>>
    %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
    %r:3 = scf.for %k = %c0 to %K32 step %c8 iter_args(%acc = %zero, %pa = %ap, %pb = %bp) -> (tensor<16x16xf32>, !tt.ptr<tensor<16x8xf32>>, !tt.ptr<tensor<8x16xf32>>) : i32 {
      %x = tt.load %pa {boundaryCheck = array<i32: 0, 1>, padding = 1 : i32} : !tt.ptr<tensor<16x8xf32>>
      %y = tt.load %pb {boundaryCheck = array<i32: 0, 1>, padding = 1 : i32} : !tt.ptr<tensor<8x16xf32>>
      %d = tt.dot %x, %y, %acc, inputPrecision = ieee : tensor<16x8xf32> * tensor<8x16xf32> -> tensor<16x16xf32>
      %pa2 = tt.advance %pa, [%c0, %c8] : <tensor<16x8xf32>>
      %pb2 = tt.advance %pb, [%c8, %c0] : <tensor<8x16xf32>>
      scf.yield %d, %pa2, %pb2 : tensor<16x16xf32>, !tt.ptr<tensor<16x8xf32>>, !tt.ptr<tensor<8x16xf32>>
    } {tt.num_stages = 2 : i32}
    %cp = tt.make_tensor_ptr %c, [%M, %N], [%N, %one], [%om, %on] {order = array<i32: 1, 0>} : <tensor<16x16xf32>>
    tt.store %cp, %r#0 {boundaryCheck = array<i32: 0, 1>} : !tt.ptr<tensor<16x16xf32>>
    tt.return
  }
}
"""


@pytest.mark.parametrize("passes", [("rewrite-tensor-pointer",), TTIR_PASSES])
def test_for_loop_advancing_two_block_pointers(passes):
    module = rewrite(MATMUL, passes)
    (loop,) = memory_ops(module, scf.ForOp)
    # Carried: the accumulator, A's column offset and B's row offset (i64); base, shape,
    # strides and the offsets that never move stay outside the loop.
    types = [v.type for v in loop.iter_args]
    assert types == [TensorType(f32, [16, 16]), IntegerType(64), IntegerType(64)]
    assert "tt.num_stages" in loop.attributes  # the loop keeps its hints

    m, n, k = 37, 19, 29
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    interpret(module, (3, 2), [a, b, c, m, n, k, k])
    ref = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    assert np.all(np.abs(c - ref) <= 1e-6 * scale)


NESTED = """
module {
  tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %R: i64, %C: i64, %R32: i32, %C32: i32) {
    %c0 = arith.constant 0 : i32
    %c4 = arith.constant 4 : i32
    %c8 = arith.constant 8 : i32
    %one = arith.constant 1 : i64
    %c8_i64 = arith.constant 8 : i64
    %p = tt.make_tensor_ptr %x, [%R, %C], [%C, %one], [%c0, %c0] {order = array<i32: 1, 0>} : <tensor<4x8xf32>>
    %o = tt.make_tensor_ptr %out, [%R, %c8_i64], [%c8_i64, %one], [%c0, %c0] {order = array<i32: 1, 0>} : <tensor<4x8xf32>>
    %zero = arith.constant dense<0.000000e+00> : tensor<4x8xf32>
    %r:2 = scf.for %i = %c0 to %R32 step %c4 iter_args(%pr = %p, %po = %o) -> (!tt.ptr<tensor<4x8xf32>>, !tt.ptr<tensor<4x8xf32>>) : i32 {
      %s:2 = scf.for %j = %c0 to %C32 step %c8 iter_args(%acc = %zero, %q = %pr) -> (tensor<4x8xf32>, !tt.ptr<tensor<4x8xf32>>) : i32 {
        %v = tt.load %q {boundaryCheck = array<i32: 0, 1>, padding = 1 : i32} : !tt.ptr<tensor<4x8xf32>>
        %acc2 = arith.addf %acc, %v : tensor<4x8xf32>
        %q2 = tt.advance %q, [%c0, %c8] : <tensor<4x8xf32>>
        scf.yield %acc2, %q2 : tensor<4x8xf32>, !tt.ptr<tensor<4x8xf32>>
      }
      tt.store %po, %s#0 {boundaryCheck = array<i32: 0>} : !tt.ptr<tensor<4x8xf32>>
      %pr2 = tt.advance %pr, [%c4, %c0] : <tensor<4x8xf32>>
      %po2 = tt.advance %po, [%c4, %c0] : <tensor<4x8xf32>>
      scf.yield %pr2, %po2 : !tt.ptr<tensor<4x8xf32>>, !tt.ptr<tensor<4x8xf32>>
    }
    tt.return
  }
}
"""


def test_nested_loops():
    """The outer loop moves two block pointers down; the inner one restarts from the outer
    pointer and moves right: each loop carries only the offsets it changes."""
    module = rewrite(NESTED)
    outer, inner = memory_ops(module, scf.ForOp)
    assert [str(v.type) for v in outer.iter_args] == ["i64", "i64"]
    assert [str(v.type) for v in inner.iter_args] == ["tensor<4x8xf32>", "i64"]
    r, c = 11, 21
    x = RNG.standard_normal((r, c)).astype(np.float32)
    out = np.full((r, 8), np.nan, np.float32)
    interpret(module, (1,), [x, out, r, c, r, c])
    padded = np.zeros((r, 24), np.float32)
    padded[:, :c] = x
    np.testing.assert_allclose(out, padded.reshape(r, 3, 8).sum(1), rtol=1e-5, atol=1e-6)


IF_SELECT = """
module {
  tt.func public @k(%x: !tt.ptr<f32>, %w: !tt.ptr<f32>, %out: !tt.ptr<f32>, %flag: i32, %da: i32, %db: i32) {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %c13 = arith.constant 13 : i64
    %c10 = arith.constant 10 : i64
    %c8 = arith.constant 8 : i64
    %p = tt.make_tensor_ptr %x, [%c13, %c10], [%c10, %one], [%c0, %c0] {order = array<i32: 1, 0>} : <tensor<8x8xf32>>
    %cond = arith.cmpi ne, %flag, %c0 : i32
    %q = scf.if %cond -> (!tt.ptr<tensor<8x8xf32>>) {
      %a = tt.advance %p, [%da, %c0] : <tensor<8x8xf32>>
      scf.yield %a : !tt.ptr<tensor<8x8xf32>>
    } else {
      %b = tt.advance %p, [%c0, %db] : <tensor<8x8xf32>>
      scf.yield %b : !tt.ptr<tensor<8x8xf32>>
    }
    %v = tt.load %q {boundaryCheck = array<i32: 0, 1>, padding = 2 : i32} : !tt.ptr<tensor<8x8xf32>>
SECOND
    %u = tt.load %r {boundaryCheck = array<i32: 0, 1>} : !tt.ptr<tensor<8x8xf32>>
    %sum = arith.addf %v, %u : tensor<8x8xf32>
    %o = tt.make_tensor_ptr %out, [%c8, %c8], [%c8, %one], [%c0, %c0] {order = array<i32: 1, 0>} : <tensor<8x8xf32>>
    tt.store %o, %sum : !tt.ptr<tensor<8x8xf32>>
    tt.return
  }
}
"""


SECOND_IF = """    %r = scf.if %cond -> (!tt.ptr<tensor<8x8xf32>>) {
      scf.yield %q : !tt.ptr<tensor<8x8xf32>>
    } else {
      %s = tt.make_tensor_ptr %w, [%c8, %c8], [%c8, %one], [%c0, %c0] {order = array<i32: 1, 0>} : <tensor<8x8xf32>>
      scf.yield %s : !tt.ptr<tensor<8x8xf32>>
    }"""
SECOND_SELECT = """    %s = tt.make_tensor_ptr %w, [%c8, %c8], [%c8, %one], [%c0, %c0] {order = array<i32: 1, 0>} : <tensor<8x8xf32>>
    %r = arith.select %cond, %q, %s : !tt.ptr<tensor<8x8xf32>>"""


@pytest.mark.parametrize("second", ["if", "select"])
def test_if_choosing_between_two_advanced_pointers(second):
    """%q = if c: advance(p, [da, 0]) else: advance(p, [0, db]); then %r = c ? %q : a
    block pointer on another array, by `scf.if` or by `arith.select`."""
    module = rewrite(IF_SELECT.replace("SECOND", SECOND_IF if second == "if" else SECOND_SELECT))
    ifs = memory_ops(module, scf.IfOp)
    # Same base/shape/strides in both branches: only the two offsets are yielded.
    assert [v.type for v in ifs[0].output] == [IntegerType(64)] * 2
    if second == "if":
        # Different block pointers: the second if also yields base, shape and row stride
        # (the unit column stride is the same SSA value in both branches).
        assert [str(v.type) for v in ifs[1].output] == ["!tt.ptr<f32>"] + ["i64"] * 5
    x = RNG.standard_normal(130).astype(np.float32)
    w = RNG.standard_normal(64).astype(np.float32)
    for flag, da, db in [(1, 7, 0), (0, 0, 5), (1, -3, 0), (0, 0, -6)]:
        out = np.zeros((8, 8), np.float32)
        interpret(module, (1,), [x, w, out, flag, da, db])
        at = (da, 0) if flag else (0, db)
        v, _ = ref_load(x, (13, 10), (10, 1), at, (8, 8), (0, 1), np.nan)
        u = v if flag else w.reshape(8, 8)
        np.testing.assert_array_equal(out, v + u)


WHILE = """
module {
  tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %n: i64, %n32: i32) {
    %c0 = arith.constant 0 : i32
    %c4 = arith.constant 4 : i32
    %one = arith.constant 1 : i64
    %p = tt.make_tensor_ptr %x, [%n], [%one], [%c0] {order = array<i32: 0>} : <tensor<4xf32>>
    %zero = arith.constant dense<0.000000e+00> : tensor<4xf32>
    %r:3 = scf.while (%i = %c0, %acc = %zero, %q = %p) : (i32, tensor<4xf32>, !tt.ptr<tensor<4xf32>>) -> (i32, tensor<4xf32>, !tt.ptr<tensor<4xf32>>) {
      %go = arith.cmpi slt, %i, %n32 : i32
      scf.condition(%go) %i, %acc, %q : i32, tensor<4xf32>, !tt.ptr<tensor<4xf32>>
    } do {
    ^bb0(%i2: i32, %acc2: tensor<4xf32>, %q2: !tt.ptr<tensor<4xf32>>):
      %v = tt.load %q2 {boundaryCheck = array<i32: 0>, padding = 1 : i32} : !tt.ptr<tensor<4xf32>>
      %acc3 = arith.addf %acc2, %v : tensor<4xf32>
      %q3 = tt.advance %q2, [%c4] : <tensor<4xf32>>
      %i3 = arith.addi %i2, %c4 : i32
      scf.yield %i3, %acc3, %q3 : i32, tensor<4xf32>, !tt.ptr<tensor<4xf32>>
    }
    %o = tt.make_tensor_ptr %out, [%n], [%one], [%c0] {order = array<i32: 0>} : <tensor<4xf32>>
    %last = tt.advance %r#2, [%c0] : <tensor<4xf32>>
    tt.store %o, %r#1 : !tt.ptr<tensor<4xf32>>
    %o2 = tt.advance %o, [%c4] : <tensor<4xf32>>
    %v2 = tt.load %last {boundaryCheck = array<i32: 0>, padding = 1 : i32} : !tt.ptr<tensor<4xf32>>
    tt.store %o2, %v2 : !tt.ptr<tensor<4xf32>>
    tt.return
  }
}
"""


def test_while_loop_carries_only_the_offset():
    module = rewrite(WHILE)
    (loop,) = memory_ops(module, scf.WhileOp)
    assert [str(v.type) for v in loop.arguments] == ["i32", "tensor<4xf32>", "i64"]
    assert len(loop.res) == 3
    n = 11
    x = RNG.standard_normal(n).astype(np.float32)
    out = np.zeros(8, np.float32)
    interpret(module, (1,), [x, out, n, n])
    padded = np.concatenate([x, np.zeros(1, np.float32)]).reshape(3, 4)
    np.testing.assert_allclose(out[:4], padded.sum(0), rtol=1e-6)
    np.testing.assert_array_equal(out[4:], np.zeros(4))  # the pointer past the end: all masked


# --------------------------------------------------------------------------- IR shape


def test_offsets_and_products_are_i64():
    """Offsets are widened once and summed in i64, and offsets * strides is i64: an
    address 2**32 elements away stays 2**32 away (in i32 it would wrap back into x)."""
    module = rewrite(load_kernel((4,), "f32", (0,), (), None))
    text = print_ir(module)
    assert "arith.extsi %off0 : i32 to i64" in text and "arith.extsi %adv0 : i32 to i64" in text
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(4, np.float32)
    with pytest.raises(OutOfBoundsError, match="element offset 4294967296 "):
        interpret(module, (1,), [x, out, 2**40, 2**32, 0, 0])  # lane 1 at 1 * 2**32
    i32_max = 2**31 - 1
    with pytest.raises(OutOfBoundsError, match="element offset 4294967294 "):
        interpret(module, (1,), [x, out, 2**40, 1, i32_max, i32_max])  # no wrap to -2
    interpret(module, (1,), [x, out, 2**40, 1, i32_max, -i32_max + 3])
    np.testing.assert_array_equal(out, x[3:7])


def test_constant_bounds_need_no_mask_and_docstring_example():
    module = rewrite(open_example())
    text = print_ir(module)
    (load,) = memory_ops(module, tt.LoadOp)
    # rows 64..95 of %M (unknown): checked; columns 0..63 of 64: provably in bounds
    assert masked_dims(load.mask) == {0}
    assert "dense<0.000000e+00>" in text
    (store,) = memory_ops(module, tt.StoreOp)
    assert masked_dims(store.mask) == {0}
    for cmp in (op for op in module.walk() if isinstance(op, arith.CmpiOp)):
        # offsets 64 and 0 are constants >= 0: only the upper bounds are compared
        assert cmp.predicate_name == "slt"


def open_example() -> str:
    return """
module {
  tt.func public @k(%arg0: !tt.ptr<f16>, %arg1: !tt.ptr<f16>, %M: i64) {
    %c0_i32 = arith.constant 0 : i32
    %c64_i32 = arith.constant 64 : i32
    %c1_i64 = arith.constant 1 : i64
    %c64_i64 = arith.constant 64 : i64
    %0 = tt.make_tensor_ptr %arg0, [%M, %c64_i64], [%c64_i64, %c1_i64], [%c0_i32, %c0_i32] {order = array<i32: 1, 0>} : <tensor<32x64xf16>>
    %1 = tt.advance %0, [%c64_i32, %c0_i32] : <tensor<32x64xf16>>
    %2 = tt.load %1 {boundaryCheck = array<i32: 0, 1>, padding = 1 : i32} : !tt.ptr<tensor<32x64xf16>>
    %3 = tt.make_tensor_ptr %arg1, [%M, %c64_i64], [%c64_i64, %c1_i64], [%c0_i32, %c0_i32] {order = array<i32: 1, 0>} : <tensor<32x64xf16>>
    tt.store %3, %2 {boundaryCheck = array<i32: 0>} : !tt.ptr<tensor<32x64xf16>>
    tt.return
  }
}
"""


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "snippet,message",
    [
        (
            """
  tt.func private @g(%p: !tt.ptr<tensor<4xf32>>) {
    tt.return
  }
  tt.func public @k(%x: !tt.ptr<f32>, %n: i64) {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %p = tt.make_tensor_ptr %x, [%n], [%one], [%c0] {order = array<i32: 0>} : <tensor<4xf32>>
    tt.call @g(%p) : (!tt.ptr<tensor<4xf32>>) -> () loc("k.py":3:4)
    tt.return
  }""",
            "tt.func",
        ),
        (
            """
  tt.func public @k(%x: !tt.ptr<f32>, %n: i64) -> !tt.ptr<tensor<4xf32>> {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %p = tt.make_tensor_ptr %x, [%n], [%one], [%c0] {order = array<i32: 0>} : <tensor<4xf32>>
    tt.return %p : !tt.ptr<tensor<4xf32>> loc("k.py":3:4)
  }""",
            "tt.return",
        ),
        (
            """
  tt.func public @k(%x: !tt.ptr<i32>, %n: i64) {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %p = tt.make_tensor_ptr %x, [%n], [%one], [%c0] {order = array<i32: 0>} : <tensor<4xi32>>
    %v = tt.load %p {boundaryCheck = array<i32: 0>, padding = 2 : i32} : !tt.ptr<tensor<4xi32>> loc("k.py":3:4)
    tt.return
  }""",
            "NaN padding",
        ),
    ],
)
def test_unsupported_uses_are_compilation_errors(snippet, message):
    module = parse_module("module {" + snippet + "\n}")
    with pytest.raises(CompilationError, match=message) as e:
        run_passes(module, ["rewrite-tensor-pointer"])
    if message != "tt.func":
        assert e.value.loc is not None and str(e.value.loc) == "k.py:3:4"


# --------------------------------------------------------------------------- GPU path


@pytest.mark.parametrize("kernel", ["matmul", "f16-nan"])
def test_rewritten_kernels_compile_and_assemble(kernel, tmp_path, ptxas):
    """The GPU path takes the rewritten IR (the software pipeliner included) to PTX that
    ptxas accepts."""
    text = MATMUL if kernel == "matmul" else load_kernel((16, 8), "f16", (1, 0), (0, 1), 2)
    path = tmp_path / "k.ttir"
    path.write_text(text)
    k = tritium.compile(str(path), stop="ptx")
    assert "make_tensor_ptr" not in k.asm["ttir"] and "!tt.ptr<tensor" not in k.asm["ttir"]
    ptx = tmp_path / "k.ptx"
    ptx.write_text(k.asm["ptx"])
    proc = subprocess.run(
        [ptxas, "-arch=sm_89", str(ptx), "-o", str(tmp_path / "k.cubin")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
