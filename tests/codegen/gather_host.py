"""Run a `tt.gather`'s lowering on this CPU: the very LLVM IR gather.py emits for one
thread, JIT-compiled by llvmlite and run for every thread of the CTA in turn, to see which
source element each result register receives. Used by test_gather_lowering.py.

Each source register holds a *tag* naming where it lives, `reg << 8 | warp << 5 | lane`
(both halves of a 64-bit register). The NVVM intrinsics become host functions:

    %tid.x            -> the thread being run (a global the driver loop sets)
    shfl.sync.idx     -> the tag with its lane field replaced by the lane asked for: what
                         that lane holds in the same register, exactly as the hardware
    bar.sync          -> nothing: the driver runs every thread twice, so the second run's
                         shared-memory loads see what every thread stored in the first
    global_smem       -> a host array of the module's `ttg.shared` bytes

A result tag then names the (register, lane, warp) the element came from, and the source
layout (ir/layouts.py) says which coordinate that is. No GPU, no model of the lowering:
only the hardware's data movement is emulated.
"""

from __future__ import annotations

import ctypes
import re

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from xdsl.ir import Operation

from tritium.codegen.lower import gather as _gather  # noqa: F401  (registers tt.gather)
from tritium.codegen.lower.context import FunctionLowering
from tritium.codegen.lower.shared import SMEM
from tritium.codegen.lower.types import i8, i32, llvm_type
from tritium.ir.layouts import LinearLayout, layout_of

_ENGINES: list = []  # keep the JIT engines (and their code) alive

# The emulated intrinsics (`llvm.nvvm.NAME` is called `emu.NAME` on the host).
_EMULATION = r"""
define i32 @"emu.read.ptx.sreg.tid.x"() {
  %t = load i32, ptr @"emu.tid"
  ret i32 %t
}
define i32 @"emu.shfl.sync.idx.i32"(i32 %mask, i32 %v, i32 %lane, i32 %clamp) {
  %keep = and i32 %v, -32
  %l = and i32 %lane, 31
  %r = or i32 %keep, %l
  ret i32 %r
}
define void @"emu.barrier0"() {
  ret void
}
"""


def tag(reg, lane, warp):
    return reg << 8 | warp << 5 | lane


def untag(t):
    """(register, lane, warp) of a tag."""
    return t >> 8, t & 31, (t >> 5) & 7


def _storage(t: ir.Type) -> ir.IntType:
    bits = {"float": 32, "double": 64}.get(str(t)) or t.width
    if bits not in (32, 64):
        raise NotImplementedError(f"tags need 32- or 64-bit sources, got {t}")
    return ir.IntType(bits)


def _module(op: Operation, num_warps: int, shared: int) -> str:
    """`thread(src, idx, out)`: one thread's gather (tid from @emu.tid), and
    `run(threads, calls, src, idx, out)`: call k runs thread k % threads on
    src[k % threads], idx[k], out[k] (each thread's registers, consecutive)."""
    src, dst = layout_of(op.src.type), layout_of(op.result.type)
    s_ty, i_ty, r_ty = llvm_type(op.src.type), llvm_type(op.indices.type), llvm_type(op.result.type)
    s_int, r_int = _storage(s_ty), _storage(r_ty)
    m = ir.Module("gather_host")
    smem = ir.GlobalVariable(m, ir.ArrayType(i8, max(shared, 16)), SMEM)
    smem.initializer = ir.Constant(smem.value_type, None)
    smem.align = 16
    smem.type = ir.PointerType()  # opaque, as shared.smem_base makes it
    tid_slot = ir.GlobalVariable(m, i32, "emu.tid")  # the thread being run
    tid_slot.initializer = ir.Constant(i32, 0)
    ptr = ir.PointerType()
    fn = ir.Function(m, ir.FunctionType(ir.VoidType(), [ptr] * 3), "thread")
    ctx = FunctionLowering(m, fn, num_warps, 32)
    body = fn.append_basic_block("body")
    b = ctx.builder
    b.position_at_end(body)
    s_ptr, i_ptr, o_ptr = fn.args

    def load(p, ty, k):
        return b.load(b.gep(p, [ir.Constant(i32, k)], source_etype=ty), typ=ty)

    ctx.set(op.src, [b.bitcast(load(s_ptr, s_int, r), s_ty) for r in range(src.num_registers)])
    ctx.set(op.indices, [load(i_ptr, i_ty, r) for r in range(dst.num_registers)])
    ctx.lower_op(op)
    for r, v in enumerate(ctx.get(op.result)):
        b.store(b.bitcast(v, r_int), b.gep(o_ptr, [ir.Constant(i32, r)], source_etype=r_int))
    b.ret_void()
    ctx.threads.entry_builder.branch(body)

    run = ir.Function(m, ir.FunctionType(ir.VoidType(), [i32, i32, ptr, ptr, ptr]), "run")
    threads, calls, s_all, i_all, o_all = run.args
    entry, loop, step, done = (run.append_basic_block(n) for n in ("entry", "loop", "step", "done"))
    b = ir.IRBuilder(entry)
    b.branch(loop)
    b.position_at_end(loop)
    k = b.phi(i32)
    k.add_incoming(ir.Constant(i32, 0), entry)
    b.cbranch(b.icmp_signed("<", k, calls), step, done)
    b.position_at_end(step)
    tid = b.srem(k, threads)
    b.store(tid, tid_slot)

    def at(p, ty, n, i):
        return b.gep(p, [b.mul(i, ir.Constant(i32, n))], source_etype=ty)

    b.call(fn, [at(s_all, s_int, src.num_registers, tid), at(i_all, i_ty, dst.num_registers, k),
                at(o_all, r_int, dst.num_registers, k)])  # fmt: skip
    k.add_incoming(b.add(k, ir.Constant(i32, 1)), step)
    b.branch(loop)
    b.position_at_end(done)
    b.ret_void()

    text = str(m)
    text = re.sub(r'declare [^\n]*@"?llvm\.nvvm\.[^\n]*\n', "", text)
    text = re.sub(r'@"?llvm\.nvvm\.([\w.]+)"?', r'@"emu.\1"', text)
    return text + _EMULATION


class HostGather:
    """A gather op's lowering, runnable on the host: `run(indices)` says for every result
    register which source (register, lane, warp) it was read from, `source_coords` which
    element that is."""

    def __init__(self, op: Operation, num_warps: int, shared: int):
        if num_warps > 8:
            raise NotImplementedError("tags have 3 warp bits")
        self.op = op
        self.num_warps = num_warps
        self.src: LinearLayout = layout_of(op.src.type)
        self.dst: LinearLayout = layout_of(op.result.type)
        self.axis = op.axis.value.data
        self.s_int = _storage(llvm_type(op.src.type))
        self.i_np = {32: np.int32, 64: np.int64}[llvm_type(op.indices.type).width]
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        mod = llvm.parse_assembly(_module(op, num_warps, shared))
        mod.verify()
        tm = llvm.Target.from_default_triple().create_target_machine()
        ee = llvm.create_mcjit_compiler(mod, tm)
        ee.finalize_object()
        _ENGINES.append(ee)
        args = [ctypes.c_int, ctypes.c_int] + [ctypes.c_void_p] * 3
        self._run = ctypes.CFUNCTYPE(None, *args)(ee.get_function_address("run"))

    @property
    def threads(self) -> int:
        return 32 * self.num_warps

    def source_tags(self) -> np.ndarray:
        """[thread, register]: the tag of every source register (both halves if 64-bit)."""
        tid = np.arange(self.threads)[:, None]
        t = tag(np.arange(self.src.num_registers)[None, :], tid & 31, tid >> 5).astype(np.int64)
        if self.s_int.width == 64:
            return t | t << 32
        return t.astype(np.int32)

    def result_coords(self) -> np.ndarray:
        """[thread, register, dim]: the coordinate each result register holds."""
        tid = np.arange(self.threads)[:, None]
        return coords(self.dst, np.arange(self.dst.num_registers)[None, :], tid & 31, tid >> 5)

    def run(self, indices: np.ndarray) -> np.ndarray:
        """indices: [round, thread, register]: each round runs every thread once on its
        index registers. Returns [round, thread, register, (reg, lane, warp)]: where each
        result register's element came from."""
        rounds = indices.shape[0]
        idx = np.ascontiguousarray(indices, self.i_np)
        src = np.ascontiguousarray(self.source_tags())
        out = np.zeros(idx.shape, np.int64 if self.s_int.width == 64 else np.int32)
        n = rounds * self.threads
        for _ in range(2):  # the second pass reads shared memory every thread has written
            self._run(self.threads, n, src.ctypes.data, idx.ctypes.data, out.ctypes.data)
        if self.s_int.width == 64:
            lo, hi = out & 0xFFFFFFFF, out >> 32 & 0xFFFFFFFF
            assert (lo == hi).all(), "the halves of a 64-bit register came from different places"
            out = lo
        reg, lane, warp = untag(out.astype(np.int64))
        return np.stack([reg, lane, warp], -1)

    def source_coords(self, where: np.ndarray) -> np.ndarray:
        """[..., dim]: the source coordinate a (reg, lane, warp) triple holds; -1 where the
        triple names no register (the lowering read something that is no source register)."""
        reg, lane, warp = np.moveaxis(where, -1, 0)
        out = coords(self.src, reg, lane, warp)
        valid = (reg < self.src.num_registers) & (warp < self.src.num_warps)
        return np.where(valid[..., None], out, -1)


def coords(layout: LinearLayout, reg, lane, warp) -> np.ndarray:
    """`layout.coord(reg, lane, warp)` over arrays: [..., dim]."""
    reg, lane, warp = np.broadcast_arrays(reg, lane, warp)
    out = np.zeros((*reg.shape, layout.rank), np.int64)
    for index, bases in ((reg, layout.register), (lane, layout.lane), (warp, layout.warp)):
        for i, basis in enumerate(bases):
            out ^= (index[..., None] >> i & 1) * np.array(basis, np.int64)
    return out


__all__ = ["HostGather", "coords", "tag", "untag"]
