"""Which pointer parameters a kernel may write (tritium.analysis.pointer_writes): stores and
atomics reached from a parameter through addptr / splat / broadcast, block pointers, loop-
carried and branch-selected pointers, calls and block arguments; "may write everything"
where the analysis loses track (a loaded pointer, int_to_ptr of an unknown integer); and
the result in the kernel's metadata (tritium.compile, the JIT cache, AOT files)."""

from __future__ import annotations

import json

import pytest
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def
from xdsl.rewriter import InsertPoint, Rewriter

import tritium
import tritium.language as tl
from tritium.analysis.pointer_writes import written_params
from tritium.compiler import Dumper, make_ttir
from tritium.frontend.signature import parse_signature
from tritium.ir import tt
from tritium.ir.parser import parse_module
from tritium.options import Options


def ttir(fn, signature: str, **constexprs):
    spec = parse_signature(fn, signature, constexprs)
    module, _ = make_ttir(fn, spec, Options(), Dumper(None), None)
    return module


# --------------------------------------------------------------------------- Python kernels


@tritium.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tritium.jit
def scatter(x_ptr, idx_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    i = tl.load(idx_ptr + offs)  # an offset loaded from memory is still an offset of out_ptr
    tl.store(out_ptr + i, tl.load(x_ptr + offs))


@tritium.jit
def loop_carried(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    pa = a_ptr + tl.arange(0, BLOCK)
    pb = b_ptr + tl.arange(0, BLOCK)
    pc = c_ptr + tl.arange(0, BLOCK)
    for _ in range(n):  # three pointers carried by one scf.for, each in its own position
        tl.store(pc, tl.load(pa) + tl.load(pb))
        pa += BLOCK
        pb += BLOCK
        pc += BLOCK


@tritium.jit
def while_carried(a_ptr, o_ptr, n):
    p = a_ptr
    q = o_ptr
    i = 0
    while i < n:
        tl.store(q, tl.load(p))
        p += 1
        q += 1
        i += 1


@tritium.jit
def branch_selected(a_ptr, b_ptr, o_ptr, c_ptr, n):
    if n > 0:
        p = a_ptr
        w = o_ptr
    else:
        p = b_ptr
        w = c_ptr
    tl.store(w, tl.load(p))


@tritium.jit
def block_pointers(a_ptr, o_ptr, start_ptr, n, BLOCK: tl.constexpr):
    start = tl.load(start_ptr)  # loaded offsets keep the block pointer's base
    a = tl.make_block_ptr(a_ptr, (n,), (1,), (start,), (BLOCK,), (0,))
    o = tl.make_block_ptr(o_ptr, (n,), (1,), (start,), (BLOCK,), (0,))
    for _ in range(2):
        tl.store(o, tl.load(a, boundary_check=(0,)), boundary_check=(0,))
        a = tl.advance(a, (BLOCK,))
        o = tl.advance(o, (BLOCK,))


@tritium.jit
def atomics(a_ptr, sum_ptr, lock_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(sum_ptr + offs, tl.load(a_ptr + offs))
    tl.atomic_cas(lock_ptr, 0, 1)


@tritium.jit
def reads_only(a_ptr, b_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.device_print("sum", tl.sum(tl.load(a_ptr + offs) + tl.load(b_ptr + offs)))


@tritium.jit
def int_to_ptr_of_an_int(a_ptr, b_ptr, addr, BLOCK: tl.constexpr):
    p = addr.to(tl.pointer_type(tl.float32))  # an address the analysis cannot follow
    tl.store(p + tl.arange(0, BLOCK), tl.load(a_ptr + tl.arange(0, BLOCK)))


@tritium.jit
def int_to_ptr_of_a_pointer(a_ptr, b_ptr, BLOCK: tl.constexpr):
    q = (a_ptr.to(tl.int64) + 16).to(tl.pointer_type(tl.float32))  # still based on a_ptr
    tl.store(q + tl.arange(0, BLOCK), tl.load(b_ptr + tl.arange(0, BLOCK)))


@pytest.mark.parametrize(
    "fn, signature, constexprs, expected",
    [
        (add, "*fp32,*fp32,*fp32,i32", {"BLOCK": 64}, {"x_ptr": 0, "y_ptr": 0, "out_ptr": 1}),
        (scatter, "*fp32,*i64,*fp32", {"BLOCK": 16}, {"x_ptr": 0, "idx_ptr": 0, "out_ptr": 1}),
        (
            loop_carried,
            "*fp32,*fp32,*fp32,i32",
            {"BLOCK": 16},
            {"a_ptr": 0, "b_ptr": 0, "c_ptr": 1},
        ),
        (while_carried, "*fp32,*fp32,i32", {}, {"a_ptr": 0, "o_ptr": 1}),
        (
            branch_selected,
            "*fp32,*fp32,*fp32,*fp32,i32",
            {},
            {"a_ptr": 0, "b_ptr": 0, "o_ptr": 1, "c_ptr": 1},
        ),
        (
            block_pointers,
            "*fp32,*fp32,*i32,i32",
            {"BLOCK": 16},
            {"a_ptr": 0, "o_ptr": 1, "start_ptr": 0},
        ),
        (atomics, "*fp32,*fp32,*i32", {"BLOCK": 16}, {"a_ptr": 0, "sum_ptr": 1, "lock_ptr": 1}),
        (reads_only, "*fp32,*fp32", {"BLOCK": 16}, {"a_ptr": 0, "b_ptr": 0}),
        (int_to_ptr_of_an_int, "*fp32,*fp32,i64", {"BLOCK": 16}, {"a_ptr": 1, "b_ptr": 1}),
        (int_to_ptr_of_a_pointer, "*fp32,*fp32", {"BLOCK": 16}, {"a_ptr": 1, "b_ptr": 0}),
    ],
)
def test_written_params_of_python_kernels(fn, signature, constexprs, expected):
    got = written_params(ttir(fn, signature, **constexprs))
    assert got == {k: bool(v) for k, v in expected.items()}


# --------------------------------------------------------------------------- hand-written IR


def test_a_loaded_pointer_may_write_every_parameter():
    module = parse_module("""
module {
  tt.func public @k(%pp: !tt.ptr<!tt.ptr<f32>>, %a: !tt.ptr<f32>, %n: i32) {
    %p = tt.load %pp : !tt.ptr<!tt.ptr<f32>>
    %c = arith.constant 1.0 : f32
    tt.store %p, %c : !tt.ptr<f32>
    tt.return
  }
}
""")
    assert written_params(module) == {"pp": True, "a": True}  # n is no pointer


def test_calls_and_block_arguments_pass_pointers_by_position():
    module = parse_module("""
module {
  tt.func private @put(%dst: !tt.ptr<f32>, %src: !tt.ptr<f32>) -> !tt.ptr<f32> {
    %v = tt.load %src : !tt.ptr<f32>
    tt.store %dst, %v : !tt.ptr<f32>
    tt.return %src : !tt.ptr<f32>
  }
  tt.func public @k(%a: !tt.ptr<f32>, %b: !tt.ptr<f32>, %c: !tt.ptr<f32>, %d: !tt.ptr<f32>,
                    %n: i32) {
    %r = tt.call @put(%b, %a) : (!tt.ptr<f32>, !tt.ptr<f32>) -> !tt.ptr<f32>
    %z = arith.constant 0 : i32
    %neg = arith.cmpi slt, %n, %z : i32
    cf.cond_br %neg, ^bb1(%r, %c : !tt.ptr<f32>, !tt.ptr<f32>), ^bb1(%d, %r : !tt.ptr<f32>, !tt.ptr<f32>)
  ^bb1(%w: !tt.ptr<f32>, %unused: !tt.ptr<f32>):
    %x = arith.constant 2.0 : f32
    tt.store %w, %x : !tt.ptr<f32>
    tt.return
  }
}
""")
    # put writes its first argument (b); the call returns its second (a), which reaches
    # %w on one edge, d on the other; c only reaches the unused argument
    assert written_params(module) == {"a": True, "b": True, "c": False, "d": True}


@irdl_op_definition
class OpaqueOp(IRDLOperation):
    """An op the analysis does not know, neither Pure nor a known reader."""

    name = "test.opaque"
    ptr = operand_def()


def test_an_unknown_op_taking_a_pointer_is_taken_to_write_through_it():
    module = ttir(reads_only, "*fp32,*fp32", BLOCK=16)
    func = next(op for op in module.walk() if isinstance(op, tt.FuncOp))
    b = func.body.blocks.first.args[1]
    Rewriter.insert_op(OpaqueOp.create(operands=[b]), InsertPoint.at_start(func.body.blocks.first))
    assert written_params(module) == {"a_ptr": False, "b_ptr": True}


# --------------------------------------------------------------------------- in the metadata


def test_compile_records_writes_per_pointer_parameter():
    k = tritium.compile(add, "*fp32,*fp32,*fp32,i32", {"BLOCK": 64}, stop="ptx")
    assert [(p["name"], p.get("writes")) for p in k.metadata.params] == [
        ("x_ptr", False), ("y_ptr", False), ("out_ptr", True), ("n", None),
    ]  # fmt: skip
    # stopped at TTIR (no codegen facts): the parameters come from the signature
    k = tritium.compile(add, "*fp32,*fp32,*fp32,i32", {"BLOCK": 64}, stop="ttir")
    assert [p.get("writes") for p in k.metadata.params] == [False, False, True, None]


def test_writes_survive_the_kernel_cache(monkeypatch, tmp_path):
    from tritium.compiler import compile_jit
    from tritium.runtime import cache

    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    spec = parse_signature(add, "*fp32,*fp32,*fp32,i32", {"BLOCK": 64})
    first = compile_jit(add, spec, Options(arch="sm_89"))
    cache.default_cache().clear_memory()
    monkeypatch.setattr("tritium.compiler.lower", lambda *a: pytest.fail("not from the cache"))
    again = compile_jit(add, spec, Options(arch="sm_89"))  # from disk
    assert again.metadata.params == first.metadata.params
    assert [p.get("writes") for p in again.metadata.params] == [False, False, True, None]


def test_saved_metadata_carries_writes(tmp_path):
    from tritium.runtime.metadata import kernel_metadata

    k = tritium.compile(add, "*fp32,*fp32,*fp32,i32", {"BLOCK": 64}, stop="ptx")
    meta = json.loads(json.dumps(kernel_metadata(k)))
    assert [p.get("writes") for p in meta["params"]] == [False, False, True, None]
