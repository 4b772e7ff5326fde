"""The accurate f32 log / log2 / sin / cos of libm.py, checked without a GPU: the very
LLVM IR the backend emits is JIT-compiled for this CPU (the functions use only generic
LLVM operations: fma, integer ops, i128, f64) and compared with numpy in float64, in
ulps, over random inputs across the whole f32 range and the special values."""

from __future__ import annotations

import ctypes

import llvmlite.binding as llvm
import numpy as np
import pytest
from llvmlite import ir

import tritium.codegen.lower.libm as libm
from tritium.codegen.lower.context import FunctionLowering
from tritium.codegen.lower.types import f32, i32

FUNCS = {
    "log": (lambda ctx, x: libm.log_f32(ctx, x, False), np.log, 1.0),
    "log2": (lambda ctx, x: libm.log_f32(ctx, x, True), np.log2, 1.0),
    "sin": (lambda ctx, x: libm.sin_cos_f32(ctx, x, False), np.sin, 1.5),
    "cos": (lambda ctx, x: libm.sin_cos_f32(ctx, x, True), np.cos, 1.5),
}


def _module(emit) -> str:
    """`void run(float *in, float *out, i32 n)`: out[i] = f(in[i])."""
    m = ir.Module("libm")
    fn = ir.Function(
        m, ir.FunctionType(ir.VoidType(), [ir.PointerType(), ir.PointerType(), i32]), "run"
    )
    ctx = FunctionLowering(m, fn, 1, 32)
    b = ctx.builder
    loop, body, done = (fn.append_basic_block(n) for n in ("loop", "body", "done"))
    ctx.threads.entry_builder.branch(loop)
    b.position_at_end(loop)
    i = b.phi(i32)
    i.add_incoming(ir.Constant(i32, 0), ctx.threads.entry)
    b.cbranch(b.icmp_signed("<", i, fn.args[2]), body, done)
    b.position_at_end(body)
    x = b.load(b.gep(fn.args[0], [i], source_etype=f32), typ=f32)
    b.store(emit(ctx, x), b.gep(fn.args[1], [i], source_etype=f32))
    i.add_incoming(b.add(i, ir.Constant(i32, 1)), b.block)
    b.branch(loop)
    b.position_at_end(done)
    b.ret_void()
    return str(m)


@pytest.fixture(scope="module")
def jit():
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    engines = []

    def compile_fn(name: str):
        old, libm.TABLE_ADDRSPACE = libm.TABLE_ADDRSPACE, 0  # host memory for the 2/pi table
        try:
            text = _module(FUNCS[name][0])
        finally:
            libm.TABLE_ADDRSPACE = old
        mod = llvm.parse_assembly(text)
        mod.verify()
        tm = llvm.Target.from_default_triple().create_target_machine()  # owned by the engine
        ee = llvm.create_mcjit_compiler(mod, tm)
        ee.finalize_object()
        engines.append(ee)
        cfn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)(
            ee.get_function_address("run")
        )

        def run(x: np.ndarray) -> np.ndarray:
            x = np.ascontiguousarray(x, np.float32)
            y = np.empty_like(x)
            cfn(x.ctypes.data, y.ctypes.data, len(x))
            return y

        return run

    return compile_fn


def ulps(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    r32 = np.abs(ref).astype(np.float32)
    unit = (np.nextafter(r32, np.float32(np.inf)) - r32).astype(np.float64)
    return np.abs(got.astype(np.float64) - ref) / unit


def inputs(name: str) -> np.ndarray:
    rng = np.random.default_rng(3)
    if name.startswith("log"):
        parts = [np.exp(rng.uniform(-103, 88.7, 200_000)), rng.uniform(0.5, 2.0, 100_000)]
    else:
        sign = rng.choice([-1.0, 1.0], 100_000)
        parts = [rng.uniform(-100, 100, 200_000), np.exp(rng.uniform(-20, 88, 100_000)) * sign]
    return np.concatenate(parts).astype(np.float32)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_accuracy_in_ulps(jit, name):
    run = jit(name)
    _, ref_fn, bound = FUNCS[name]
    x = inputs(name)
    x = x[np.isfinite(x)]
    err = ulps(run(x), ref_fn(x.astype(np.float64)))
    assert err.max() <= bound, (name, float(err.max()), float(x[np.argmax(err)]))


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_special_values(jit, name):
    run = jit(name)
    x = np.array(
        [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, 1e-40, 131072.0, 3.4e38],
        np.float32,
    )
    with np.errstate(all="ignore"):
        want = FUNCS[name][1](x.astype(np.float64)).astype(np.float32)
    got = run(x)
    np.testing.assert_allclose(got, want, rtol=2.5e-7, atol=0, equal_nan=True)
    assert np.array_equal(np.signbit(got[:2]), np.signbit(want[:2]))  # -0 stays -0 for sin
