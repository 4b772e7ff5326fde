"""Atomics: `tt.atomic_rmw` and `tt.atomic_cas`, one predicated PTX `atom` per element.

    %old = tt.atomic_rmw fadd, acq_rel, gpu, %p, %v, %m : (tensor<256x!tt.ptr<f32>, #b>, ...)
      -> mov.b32 $0, 0x0;
         @$3 atom.acq_rel.gpu.global.add.f32 $0, [ $1 + 0 ], $2;
    %old = tt.atomic_cas acq_rel, gpu, %p, %c, %v : (!tt.ptr<i32>, i32, i32) -> i32
      -> @$4 atom.acq_rel.gpu.global.cas.b32 $0, [ $1 + 0 ], $2, $3;

Unlike a store, an atomic is not idempotent: where the layout holds an element in several
registers or threads (a 64-element tensor over 128 threads, or a scalar), only the owner
(register bits and thread bits with a zero basis cleared; thread 0 for a scalar) performs
it. The old values then exist only in the owner: a duplicate register copies its owner's
register, and when other threads need the result (it is used, and the layout replicates
across threads), the owners write it to shared-memory scratch (`tritium.analysis.scratch`)
and everyone reads it back after a barrier, as a `ttg.convert_layout` would.

Values travel as integer registers of their width (PTX lets a .b32 register feed an .f32
atom). Types: add .u32/.u64/.f32/.f64 and .noftz.f16 (.noftz.bf16 from sm_90); max/min
.s32/.s64 (umax/umin .u32/.u64); and/or/xor/exch/cas .b32/.b64.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from tritium.analysis.scratch import atomic_broadcast_strides
from tritium.analysis.shared_bytes import element_bytes
from tritium.codegen.lower.context import FunctionLowering, lowers, unsupported
from tritium.codegen.lower.memory import _asm, _from_int, _to_int, owned
from tritium.codegen.lower.shared import (
    barrier,
    load_shared,
    offset_value,
    scratch_offset,
    store_shared,
    sync,
    thread_offset,
)
from tritium.codegen.lower.types import BFloatType, byte_size, i32, llvm_type

_PTX_OP = {
    "add": "add", "fadd": "add", "and": "and", "or": "or", "xor": "xor",
    "max": "max", "min": "min", "umax": "max", "umin": "min", "exch": "exch",
}  # fmt: skip


def _type_suffix(op: Operation, rmw: str, ty: ir.Type) -> str:
    bits = byte_size(ty) * 8
    if rmw == "fadd":
        if isinstance(ty, BFloatType):
            if _arch(op) < 90:
                raise unsupported(op, "atomic add of bf16 needs sm_90 (Hopper) or newer")
            return ".noftz.bf16"
        if isinstance(ty, ir.HalfType):
            return ".noftz.f16"
        return {32: ".f32", 64: ".f64"}[bits]
    if bits not in (32, 64):
        raise unsupported(op, f"atomic {rmw} of {bits}-bit elements (32 or 64 bits only)")
    if rmw == "add":
        return f".u{bits}"
    if rmw in ("max", "min"):
        return f".s{bits}"
    if rmw in ("umax", "umin"):
        return f".u{bits}"
    return f".b{bits}"


def _arch(op: Operation) -> int:
    module = op
    while module is not None and not isinstance(module, ModuleOp):
        module = module.parent_op()
    target = module.attributes.get("ttg.target") if module is not None else None
    text = getattr(target, "data", "cuda:89")
    return int(text.split(":")[-1])


def _instruction(op: Operation, rmw: str | None, ty: ir.Type) -> str:
    sem, scope = op.sem.data, op.scope.data
    if rmw is None:
        return f"atom.{sem}.{scope}.global.cas.b{byte_size(ty) * 8}"
    return f"atom.{sem}.{scope}.global.{_PTX_OP[rmw]}{_type_suffix(op, rmw, ty)}"


def _emit(ctx, instr: str, ty: ir.Type, ptr, values: list, pred) -> ir.Value:
    """One predicated atom: the old value (0 where `pred` is false)."""
    b = ctx.builder
    bits = byte_size(ty) * 8
    word = ir.IntType(max(bits, 16))
    c = {16: "h", 32: "r", 64: "l"}[word.width]
    args = [ptr] + [_to_int(b, v) for v in values]
    ins = ", ".join(f"${i + 2}" for i in range(len(values)))
    text = f"{instr} $0, [ $1 + 0 ], {ins};"
    constraint = ",".join([f"={c}", "l"] + [c] * len(values))
    if pred is not None:
        p = len(values) + 2
        text = f"mov.b{word.width} $0, 0x0;\n\t@${p} {text}"
        args.append(pred)
        constraint += ",b"
    return _from_int(b, _asm(b, word, text, constraint, args), ty)


def _lower(ctx: FunctionLowering, op: Operation, rmw: str | None, operands: list) -> None:
    b = ctx.builder
    ptrs = ctx.get(op.ptr)
    regs = [ctx.get(v) for v in operands]
    masks = ctx.get(op.mask) if rmw is not None and op.mask is not None else None
    ty = llvm_type(op.result.type)
    instr = _instruction(op, rmw, ty)
    layout = ctx.layout(op.ptr.type)
    owner = ctx.threads.owner_predicate(layout)
    free = layout.free_register_mask if layout is not None else 0
    out: list[ir.Value | None] = [None] * len(ptrs)
    preds: dict[int, ir.Value] = {}
    for r in range(len(ptrs)):
        if r & free:
            continue  # a duplicate register: its owner register does the update
        mask = masks[r] if masks is not None else None
        if isinstance(mask, ir.Constant) and mask.constant in (1, True):
            mask = None  # upstream's TTIR spells "no mask" as a constant true one
        pred = owned(b, mask, owner, preds)
        out[r] = _emit(ctx, instr, ty, ptrs[r], [v[r] for v in regs], pred)
    for r in range(len(ptrs)):
        if out[r] is None:
            out[r] = out[r & ~free]
    if _needs_broadcast(op):
        out = _broadcast(ctx, op, out, owner)
    ctx.set(op.result, out)


def _needs_broadcast(op: Operation) -> bool:
    return bool(op.result.uses) and atomic_broadcast_strides(op) is not None


def _broadcast(ctx: FunctionLowering, op: Operation, out: list, owner) -> list:
    """The owners' old values to every thread holding the element: through smem."""
    b = ctx.builder
    strides = atomic_broadcast_strides(op)
    layout = ctx.layout(op.ptr.type)
    base = scratch_offset(op)
    size = element_bytes(op.result.type)
    ty = llvm_type(op.result.type)

    def address(thread, const: int) -> ir.Value:
        slot = offset_value(ctx, thread, const)
        return b.add(b.mul(slot, ir.Constant(i32, size)), ir.Constant(i32, base))

    if layout is None:  # a scalar: thread 0 did it
        sync(ctx, op)
        store_shared(ctx, address(None, 0), [out[0]], owner)
        barrier(ctx)
        return load_shared(ctx, address(None, 0), ty, 1)
    thread, _ = thread_offset(ctx, layout, strides)
    slots = [
        sum(c * s for c, s in zip(layout.register_coord(r), strides))
        for r in range(layout.num_registers)
    ]
    sync(ctx, op)
    for r, v in enumerate(out):
        if not r & layout.free_register_mask:
            store_shared(ctx, address(thread, slots[r]), [v], owner)
    barrier(ctx)
    return [load_shared(ctx, address(thread, slots[r]), ty, 1)[0] for r in range(len(out))]


@lowers("tt.atomic_rmw")
def atomic_rmw(ctx: FunctionLowering, op: Operation) -> None:
    _lower(ctx, op, op.atomic_rmw_op.data, [op.val])


@lowers("tt.atomic_cas")
def atomic_cas(ctx: FunctionLowering, op: Operation) -> None:
    _lower(ctx, op, None, [op.cmp, op.val])
