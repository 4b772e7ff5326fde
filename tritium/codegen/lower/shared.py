"""Moving values between threads: warp shuffles, shared-memory stores and loads, barriers.

    shuffle_xor(ctx, v, 16)          -> shfl.sync.bfly.b32 d, v, 16, 31, -1   (any scalar type:
                                        64-bit values take two shuffles, i1/i8/i16 one)
    smem_address(ctx, 32 + 4 * k)    -> i32 address in the shared window (global_smem + off)
    store_shared(ctx, addr, vs, p)   -> @p st.shared.v4.b32 [ addr + 0 ], { ... };
    load_shared(ctx, addr, ty, 4)    -> ld.shared.v4.b32 (an LLVM vector load)
    gpu.barrier, barrier(ctx)        -> bar.sync 0

Shared memory is one dynamic buffer, `@global_smem = external addrspace(3) global
[0 x i8], align 16` (`.extern .shared .align 16 .b8 global_smem[]` in PTX, sized at
launch by `metadata["shared"]`), addressed with 32-bit pointers (`--nvptx-short-ptr`,
as upstream). Stores that only some threads make are predicated inline PTX (like
`tt.store`); loads are plain LLVM loads, which LLVM may merge or drop but never moves
across a barrier.

Barriers are decided before lowering (the `membar` pass puts `gpu.barrier` ops in the IR);
the lowering only emits them. A `gpu.barrier` right before an op with scratch (a
reduction, scan, conversion or atomic with `allocation.offset`) is emitted where that op
starts using shared memory (`sync`): what the op does before (in-thread combines,
shuffles, the atomics themselves) touches registers only. The barrier between an op's own
scratch writes and reads is the op's (`barrier`), as upstream's lowering emits it.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.analysis.allocation import offset_of
from tritium.codegen.lower.context import FunctionLowering, lowers, unsupported
from tritium.codegen.lower.memory import Words
from tritium.codegen.lower.types import byte_size, i1, i8, i32, i64
from tritium.ir.layouts import LinearLayout

SMEM = "global_smem"


# --------------------------------------------------------------------------- storage


def storage_type(ty: ir.Type) -> ir.Type:
    """How a register of type `ty` is kept in shared memory (i1 as a byte, pointers as i64)."""
    if ty == i1:
        return i8
    if isinstance(ty, ir.PointerType):
        return i64
    return ty


def to_storage(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    if v.type == i1:
        return b.zext(v, i8)
    if isinstance(v.type, ir.PointerType):
        return b.ptrtoint(v, i64)
    return v


def from_storage(b: ir.IRBuilder, v: ir.Value, ty: ir.Type) -> ir.Value:
    if ty == i1:
        return b.icmp_unsigned("!=", v, ir.Constant(i8, 0))
    if isinstance(ty, ir.PointerType):
        return b.inttoptr(v, ty)
    return v


# --------------------------------------------------------------------------- shuffles


def _shfl(ctx: FunctionLowering, mode: str, word: ir.Value, arg: ir.Value) -> ir.Value:
    fn = ctx.intrinsic(f"llvm.nvvm.shfl.sync.{mode}.i32", i32, [i32, i32, i32, i32])
    return ctx.builder.call(fn, [ir.Constant(i32, -1), word, arg, ir.Constant(i32, 31)])


def _shuffle(ctx: FunctionLowering, mode: str, v: ir.Value, arg: ir.Value) -> ir.Value:
    b = ctx.builder
    ty = v.type
    x = to_storage(b, v)
    bits = byte_size(x.type) * 8
    if not isinstance(x.type, ir.IntType):
        x = b.bitcast(x, ir.IntType(bits))
    if bits == 64:
        lo = _shfl(ctx, mode, b.trunc(x, i32), arg)
        hi = _shfl(ctx, mode, b.trunc(b.lshr(x, ir.Constant(i64, 32)), i32), arg)
        y = b.or_(b.zext(lo, i64), b.shl(b.zext(hi, i64), ir.Constant(i64, 32)))
    elif bits < 32:
        y = b.trunc(_shfl(ctx, mode, b.zext(x, i32), arg), ir.IntType(bits))
    else:
        y = _shfl(ctx, mode, x, arg)
    st = storage_type(ty)
    if not isinstance(st, ir.IntType):
        y = b.bitcast(y, st)
    return from_storage(b, y, ty)


def shuffle_xor(ctx: FunctionLowering, v: ir.Value, mask: int) -> ir.Value:
    """The value `v` of lane `lane ^ mask` (shfl.sync.bfly)."""
    return _shuffle(ctx, "bfly", v, ir.Constant(i32, mask))


def shuffle_idx(ctx: FunctionLowering, v: ir.Value, lane: ir.Value) -> ir.Value:
    """The value `v` of lane `lane` (shfl.sync.idx)."""
    return _shuffle(ctx, "idx", v, lane)


# --------------------------------------------------------------------------- shared memory


def smem_base(ctx: FunctionLowering) -> ir.GlobalVariable:
    g = ctx.module.globals.get(SMEM)
    if g is None:
        g = ir.GlobalVariable(ctx.module, ir.ArrayType(i8, 0), SMEM, addrspace=3)
        g.linkage = "external"
        g.align = 16
        g.type = ir.PointerType(addrspace=3)  # an opaque pointer, like every other one here
    return g


def smem_pointer(ctx: FunctionLowering, offset: ir.Value) -> ir.Value:
    """`global_smem + offset` (bytes, i32) as a `ptr addrspace(3)`."""
    return ctx.builder.gep(smem_base(ctx), [offset], source_etype=i8)


def barrier(ctx: FunctionLowering) -> None:
    """`bar.sync 0`, unless the previous instruction of the block already is one (no
    shared-memory access can sit between them: back-to-back barriers are one)."""
    fn = ctx.intrinsic("llvm.nvvm.barrier0", ir.VoidType(), [])
    block = ctx.builder.block
    if block.instructions and _is_call_to(block.instructions[-1], fn):
        return
    ctx.builder.call(fn, [])


def _is_call_to(instr: ir.Instruction, fn) -> bool:
    return isinstance(instr, ir.CallInstr) and instr.callee is fn


def store_shared(
    ctx: FunctionLowering, offset: ir.Value, values: list[ir.Value], pred: ir.Value | None
) -> None:
    """Store consecutive `values` (one vector instruction, at most 16 bytes, aligned) at
    byte `offset`; only where `pred` holds when given."""
    b = ctx.builder
    values = [to_storage(b, v) for v in values]
    if pred is None:
        ptr = smem_pointer(ctx, offset)
        size = byte_size(values[0].type) * len(values)
        if len(values) == 1:
            b.store(values[0], ptr, align=size)
            return
        vec = ir.Constant(ir.VectorType(values[0].type, len(values)), None)
        for k, v in enumerate(values):
            vec = b.insert_element(vec, v, ir.Constant(i32, k))
        b.store(vec, ptr, align=size)
        return
    words = Words(values[0].type, len(values))
    n = words.count
    ins = ", ".join(f"${i}" for i in range(n))
    addr = b.ptrtoint(smem_pointer(ctx, offset), i32)
    args = words.pack(b, values) + [addr, pred]
    constraint = ",".join([words.constraint] * n + ["r", "b"])
    text = f"@${n + 1} st.shared{words.suffix} [ ${n} + 0 ], {{ {ins} }};"
    fty = ir.FunctionType(ir.VoidType(), [a.type for a in args])
    b.asm(fty, text, constraint, args, side_effect=True)


def load_shared(ctx: FunctionLowering, offset: ir.Value, ty: ir.Type, count: int) -> list[ir.Value]:
    """Load `count` consecutive registers of type `ty` from byte `offset` (aligned to
    their total size) with one instruction."""
    b = ctx.builder
    st = storage_type(ty)
    ptr = smem_pointer(ctx, offset)
    size = byte_size(st) * count
    if count == 1:
        return [from_storage(b, b.load(ptr, typ=st, align=size), ty)]
    vec = b.load(ptr, typ=ir.VectorType(st, count), align=size)
    return [from_storage(b, b.extract_element(vec, ir.Constant(i32, k)), ty) for k in range(count)]


# --------------------------------------------------------------------------- addressing


def thread_offset(
    ctx: FunctionLowering, layout: LinearLayout, strides: tuple[int, ...]
) -> tuple[ir.Value | None, int]:
    """`sum(thread_coord[d] * strides[d])` for this thread in `layout` (None when it is 0
    on every thread), emitted once in the entry block, and a power of two dividing it."""
    div = 1 << 30
    for base in layout.lane + layout.warp:
        for d, x in enumerate(base):
            if x and strides[d]:
                t = x * strides[d]
                div = min(div, t & -t)
    if div == 1 << 30:
        return None, div

    def make() -> ir.Value:
        eb = ctx.threads.entry_builder
        total = None
        for c, s in zip(ctx.threads.thread_coords(layout), strides):
            if not s or isinstance(c, ir.Constant):
                continue
            term = c if s == 1 else eb.mul(c, ir.Constant(i32, s))
            total = term if total is None else eb.add(total, term)
        return total

    return ctx.threads.entry_value(("offset", layout, strides), make), div


def vector_width(consts: list[int], thread_div: int, max_v: int) -> int:
    """Registers per access: the largest v <= max_v such that every aligned group of v
    registers sits at consecutive element offsets starting at a multiple of v."""
    v = max_v
    while v > 1:
        if (
            len(consts) % v == 0
            and thread_div % v == 0
            and all(
                consts[g] % v == 0 and all(consts[g + k] == consts[g] + k for k in range(v))
                for g in range(0, len(consts), v)
            )
        ):
            return v
        v //= 2
    return 1


def offset_value(ctx: FunctionLowering, thread: ir.Value | None, const: int) -> ir.Value:
    """`thread + const` as an i32 (bytes)."""
    c = ir.Constant(i32, const)
    return c if thread is None else ctx.builder.add(thread, c)


def scratch_offset(op: Operation) -> int:
    """Where `op`'s scratch starts (its `allocation.offset`, from allocate-shared-memory)."""
    offset = offset_of(op)
    if offset is None:
        raise unsupported(op, "no allocation.offset: run allocate-shared-memory first")
    return offset


def _uses_scratch(op: Operation | None) -> bool:
    return op is not None and op.name != "ttg.local_alloc" and offset_of(op) is not None


@lowers("gpu.barrier")
def gpu_barrier(ctx: FunctionLowering, op: Operation) -> None:
    if _uses_scratch(op.next_op):
        ctx.pending_barrier = op.next_op  # emitted by `sync` when that op starts on smem
        return
    barrier(ctx)


def sync(ctx: FunctionLowering, op: Operation) -> None:
    """Where `op` starts writing its scratch: the `gpu.barrier` placed right before it."""
    if ctx.pending_barrier is op:
        ctx.pending_barrier = None
        barrier(ctx)


__all__ = [
    "barrier",
    "gpu_barrier",
    "load_shared",
    "scratch_offset",
    "shuffle_idx",
    "shuffle_xor",
    "smem_pointer",
    "store_shared",
    "sync",
    "thread_offset",
    "vector_width",
]
