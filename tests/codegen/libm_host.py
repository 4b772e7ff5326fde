"""Run the libm routines on this CPU: the very LLVM IR the backend emits for one element,
wrapped in a loop over arrays, JIT-compiled by llvmlite (the routines use only generic
LLVM operations: fma, sqrt, rint, integer ops, i128). Used by the accuracy tests."""

from __future__ import annotations

import ctypes

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from tritium.codegen.lower.context import FunctionLowering
from tritium.codegen.lower.libm import core
from tritium.codegen.lower.types import f32, f64, i32, i64

NP = {"float": np.float32, "double": np.float64, "i32": np.int32, "i64": np.int64}
_ENGINES: list = []  # keep the JIT engines (and their code) alive


def _module(emit, arg_types: list[ir.Type], ret: ir.Type) -> str:
    """`void run(T0 *a0, ..., R *out, i32 n)`: out[i] = emit(ctx, a0[i], ...)."""
    m = ir.Module("libm")
    params = [ir.PointerType()] * (len(arg_types) + 1) + [i32]
    fn = ir.Function(m, ir.FunctionType(ir.VoidType(), params), "run")
    ctx = FunctionLowering(m, fn, 1, 32)
    b = ctx.builder
    loop, body, done = (fn.append_basic_block(n) for n in ("loop", "body", "done"))
    ctx.threads.entry_builder.branch(loop)
    b.position_at_end(loop)
    i = b.phi(i32)
    i.add_incoming(ir.Constant(i32, 0), ctx.threads.entry)
    b.cbranch(b.icmp_signed("<", i, fn.args[-1]), body, done)
    b.position_at_end(body)
    xs = [
        b.load(b.gep(fn.args[k], [i], source_etype=t), typ=t) for k, t in enumerate(arg_types)
    ]
    b.store(emit(ctx, *xs), b.gep(fn.args[len(arg_types)], [i], source_etype=ret))
    i.add_incoming(b.add(i, ir.Constant(i32, 1)), b.block)
    b.branch(loop)
    b.position_at_end(done)
    b.ret_void()
    return str(m)


def compile_host(emit, arg_types: list[ir.Type], ret: ir.Type):
    """A numpy function running `emit` element by element on the host."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    old, core.TABLE_ADDRSPACE = core.TABLE_ADDRSPACE, 0  # host memory for the tables
    try:
        text = _module(emit, arg_types, ret)
    finally:
        core.TABLE_ADDRSPACE = old
    mod = llvm.parse_assembly(text)
    mod.verify()
    tm = llvm.Target.from_default_triple().create_target_machine()  # owned by the engine
    ee = llvm.create_mcjit_compiler(mod, tm)
    ee.finalize_object()
    _ENGINES.append(ee)
    n_ptr = len(arg_types) + 1
    cfn = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * n_ptr), ctypes.c_int)(
        ee.get_function_address("run")
    )
    names = [_np_name(t) for t in arg_types]

    def run(*xs):
        arrs = [np.ascontiguousarray(x, NP[n]) for x, n in zip(xs, names)]
        arrs = np.broadcast_arrays(*arrs)
        arrs = [np.ascontiguousarray(a) for a in arrs]
        out = np.empty(arrs[0].shape, NP[_np_name(ret)])
        cfn(*[a.ctypes.data for a in arrs], out.ctypes.data, out.size)
        return out

    return run


def _np_name(t: ir.Type) -> str:
    if t == f32:
        return "float"
    if t == f64:
        return "double"
    return {32: "i32", 64: "i64"}[t.width]


def ulps(got: np.ndarray, ref, ty) -> np.ndarray:
    """|got - ref| in units of the last place of ref in type `ty` (ref: float64, or mpmath
    values given as (hi, lo) float64 pairs for f64 results). Subnormal results count in
    the smallest subnormal's unit."""
    ty = np.dtype(ty)
    if isinstance(ref, tuple):
        hi, lo = ref
    else:
        hi, lo = np.asarray(ref, np.float64), np.zeros(np.shape(ref))
    info = np.finfo(ty)
    mag = np.abs(hi)
    e = np.floor(np.log2(np.maximum(mag, info.smallest_normal)))
    with np.errstate(invalid="ignore"):
        unit = np.ldexp(1.0, np.nan_to_num(e - info.nmant).astype(int))
    with np.errstate(over="ignore"):
        rounded = hi.astype(ty)
    # an overflow to the right infinity, or NaN for NaN, is exact
    same = (np.isinf(got) & (got == rounded)) | (np.isnan(got) & np.isnan(hi))
    got = got.astype(np.float64)
    with np.errstate(invalid="ignore"):
        diff = (got - hi) - lo
    return np.where(same, 0.0, np.abs(diff) / unit)


__all__ = ["compile_host", "ulps", "f32", "f64", "i32", "i64"]
