"""Global memory: `tt.addptr`, `tt.load`, `tt.store`, as upstream does them.

    %p = tt.addptr %base, %offs : tensor<1024x!tt.ptr<f32>, #b4>, tensor<1024xi32, #b4>
      -> p_k = getelementptr float, ptr addrspace(1) base_k, i64 (sext offs_k)
         (a K / V refill in attention's loop: one offset, extended as lower/refill_offset.py says)
    %x = tt.load %p, %mask, %other                    (4 contiguous, 16-byte aligned)
      -> mov.u32 $0, $6; ... @$5 ld.global.v4.b32 { $0, $1, $2, $3 }, [ $4 + 0 ];
    tt.store %p, %x, %mask
      -> @$5 st.global.v4.b32 [ $4 + 0 ], { $0, $1, $2, $3 };

Loads and stores are PTX inline asm (predicated by the mask, `other` moved into the
destination first), like upstream's, so that a masked-off lane never touches memory.
The vector width comes from the TTGIR's axis info (`AxisInfoAnalysis.vector_width`,
upstream's rule): the layout's contiguous elements per thread, capped by the pointers'
contiguity and alignment, the mask's constancy and 16 bytes; each aligned group of that
many registers is one instruction under the mask of its first register. Stores of a replicated layout are done by the owning
thread and register only (`LinearLayout.is_owner`); a scalar store by thread 0 only.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.codegen.lower.context import FunctionLowering, lowers, unsupported
from tritium.codegen.lower.types import byte_size, i1, i8, i64, llvm_type, memory_type
from tritium.ir.types import element_type


def _in_loop(op: Operation) -> bool:
    return op.parent_op() is not None and op.parent_op().name == "scf.for"


@lowers("tt.addptr")
def addptr(ctx: FunctionLowering, op: Operation) -> None:
    b = ctx.builder
    elem = memory_type(element_type(op.ptr.type).pointee)
    if _in_loop(op):
        from tritium.codegen.lower import refill_offset  # (lazily: loops only)

        if refill_offset.applies(op):  # a refill in attention's loop: one 64-bit offset
            wide = refill_offset.wide_offset(ctx, op)
            ctx.set(op.result, [b.gep(p, [wide], source_etype=elem) for p in ctx.get(op.ptr)])
            return

    def emit(p: ir.Value, off: ir.Value) -> ir.Value:
        wide = off
        if off.type.width < 64:
            wide = b.zext(off, i64) if off.type.width == 1 else b.sext(off, i64)
        return b.gep(p, [wide], source_etype=elem)

    ctx.set(op.result, ctx.zip_map([ctx.get(op.ptr), ctx.get(op.offset)], emit))


# --------------------------------------------------------------------------- vectors


class Words:
    """How v elements of `elem` travel through inline asm: as 1, 2 or 4 PTX words."""

    def __init__(self, elem: ir.Type, vec: int):
        self.elem, self.vec = elem, vec
        size = byte_size(elem)
        total = size * vec
        self.bits = 64 if size == 8 else 32 if total >= 4 else total * 8
        self.count = total * 8 // self.bits
        self.per_word = self.bits // (size * 8)
        self.reg_bits = max(self.bits, 16)  # an 8-bit word lives in a 16-bit register
        self.int = ir.IntType(self.reg_bits)
        self.constraint = {16: "h", 32: "r", 64: "l"}[self.reg_bits]
        self.suffix = {1: "", 2: ".v2", 4: ".v4"}[self.count] + f".b{self.bits}"

    def pack(self, b: ir.IRBuilder, values: list[ir.Value]) -> list[ir.Value]:
        words = []
        for w in range(self.count):
            part = [_to_int(b, v) for v in values[w * self.per_word : (w + 1) * self.per_word]]
            if self.per_word == 1:
                word = part[0]
            else:
                vty = ir.VectorType(part[0].type, self.per_word)
                vec = ir.Constant(vty, None)
                for k, x in enumerate(part):
                    vec = b.insert_element(vec, x, ir.Constant(ir.IntType(32), k))
                word = b.bitcast(vec, ir.IntType(self.bits))
            if word.type.width < self.reg_bits:
                word = b.zext(word, self.int)
            words.append(word)
        return words

    def unpack(self, b: ir.IRBuilder, words: list[ir.Value]) -> list[ir.Value]:
        ity = ir.IntType(byte_size(self.elem) * 8)
        out = []
        for word in words:
            if self.bits < self.reg_bits:
                word = b.trunc(word, ir.IntType(self.bits))
            if self.per_word == 1:
                out.append(_from_int(b, word, self.elem))
                continue
            vec = b.bitcast(word, ir.VectorType(ity, self.per_word))
            for k in range(self.per_word):
                x = b.extract_element(vec, ir.Constant(ir.IntType(32), k))
                out.append(_from_int(b, x, self.elem))
        return out


def _to_int(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    if isinstance(v.type, ir.IntType):
        return v
    if isinstance(v.type, ir.PointerType):
        return b.ptrtoint(v, i64)
    return b.bitcast(v, ir.IntType(byte_size(v.type) * 8))


def _from_int(b: ir.IRBuilder, x: ir.Value, ty: ir.Type) -> ir.Value:
    if isinstance(ty, ir.IntType):
        return x
    if isinstance(ty, ir.PointerType):
        return b.inttoptr(x, ty)
    return b.bitcast(x, ty)


def _asm(b: ir.IRBuilder, ret: ir.Type, text: str, constraint: str, args: list[ir.Value]):
    fty = ir.FunctionType(ret, [a.type for a in args])
    return b.asm(fty, text, constraint, args, side_effect=True)


def _space(op: Operation) -> None:
    space = element_type(op.ptr.type).address_space.data
    if space != 1:
        raise unsupported(op, f"pointers to address space {space} are not supported")


# --------------------------------------------------------------------------- load


def _load_instruction(op: Operation) -> str:
    cache, evict = op.cache_modifier, op.eviction_policy
    if op.isVolatile is not None and op.isVolatile.value.data:
        return "ld.volatile.global"
    if cache in ("wb", "wt"):
        raise unsupported(op, f"cache modifier .{cache} is for stores only")
    if cache != "none":
        return f"ld.global.{cache}"
    if evict != "evict_normal":
        return f"ld.global.L1::{evict}"
    return "ld.global"


@lowers("tt.load")
def load(ctx: FunctionLowering, op: Operation) -> None:
    _space(op)
    b = ctx.builder
    ptrs = ctx.get(op.ptr)
    masks = ctx.get(op.mask) if op.mask is not None else None
    others = ctx.get(op.other) if op.other is not None and masks is not None else None
    result_ty = llvm_type(op.result.type)
    elem = memory_type(op.result.type)
    vec = ctx.axis.vector_width(op)
    words = Words(elem, vec)
    instr = _load_instruction(op) + words.suffix
    memo: dict[tuple[int, ...], list[ir.Value]] = {}
    out: list[ir.Value] = []
    for g in range(0, len(ptrs), vec):
        pred = masks[g] if masks is not None else None
        other = others[g : g + vec] if others is not None else None
        key = tuple(map(id, [ptrs[g], pred] + (other or [])))
        if key not in memo:
            memo[key] = _emit_load(ctx, words, instr, ptrs[g], pred, other)
        out += memo[key]
    if result_ty != elem:  # i1 is a byte in memory
        out = ctx.zip_map([out], lambda x: b.icmp_unsigned("!=", x, ir.Constant(i8, 0)))
    ctx.set(op.result, out)


def _emit_load(ctx, words: Words, instr, ptr, pred, other) -> list[ir.Value]:
    b = ctx.builder
    n = words.count
    outs = ", ".join(f"${i}" for i in range(n))
    args: list[ir.Value] = [ptr]
    lines = []
    if pred is None:
        lines.append(f"{instr} {{ {outs} }}, [ ${n} + 0 ];")
        constraint = ",".join(["=" + words.constraint] * n + ["l"])
    else:
        args.append(pred)
        inits = words.pack(b, other) if other is not None else None
        for i in range(n):
            src = f"${n + 2 + i}" if inits else "0x0"
            lines.append(f"mov.b{words.reg_bits} ${i}, {src};")
        lines.append(f"@${n + 1} {instr} {{ {outs} }}, [ ${n} + 0 ];")
        constraint = ",".join(["=" + words.constraint] * n + ["l", "b"])
        if inits:
            args += inits
            constraint += "," + ",".join([words.constraint] * n)
    ret = words.int if n == 1 else ir.LiteralStructType([words.int] * n)
    res = _asm(b, ret, "\n\t".join(lines), constraint, args)
    raw = [res] if n == 1 else [b.extract_value(res, i) for i in range(n)]
    return words.unpack(b, raw)


# --------------------------------------------------------------------------- store


def _store_instruction(op: Operation) -> str:
    cache, evict = op.cache_modifier, op.eviction_policy
    if cache in ("ca", "cv", "lu"):
        raise unsupported(op, f"cache modifier .{cache} is for loads only")
    if cache != "none":
        return f"st.global.{cache}"
    if evict != "evict_normal":
        return f"st.global.L1::{evict}"
    return "st.global"


def owned(b: ir.IRBuilder, mask: ir.Value | None, owner: ir.Value | None, memo: dict):
    """The predicate of a write that only the owner of an element may do: `mask & owner`
    (either may be None: no condition), one `and` per distinct mask (`memo`)."""
    if owner is None:
        return mask
    if mask is None:
        return owner
    if id(mask) not in memo:
        memo[id(mask)] = b.and_(mask, owner)
    return memo[id(mask)]


@lowers("tt.store")
def store(ctx: FunctionLowering, op: Operation) -> None:
    _space(op)
    b = ctx.builder
    ptrs, values = ctx.get(op.ptr), ctx.get(op.value)
    masks = ctx.get(op.mask) if op.mask is not None else None
    elem = memory_type(op.value.type)
    if llvm_type(op.value.type) == i1:
        values = ctx.zip_map([values], lambda x: b.zext(x, i8))
    layout = ctx.layout(op.ptr.type)
    owner = ctx.threads.owner_predicate(layout)
    free_registers = layout.free_register_mask if layout is not None else 0
    vec = ctx.axis.vector_width(op)
    words = Words(elem, vec)
    instr = _store_instruction(op) + words.suffix
    preds: dict[int, ir.Value] = {}
    for g in range(0, len(ptrs), vec):
        if g & free_registers:  # a duplicate of a register stored already
            continue
        pred = owned(b, masks[g] if masks is not None else None, owner, preds)
        _emit_store(ctx, words, instr, ptrs[g], pred, values[g : g + vec])


def _emit_store(ctx, words: Words, instr, ptr, pred, values) -> None:
    b = ctx.builder
    n = words.count
    ins = ", ".join(f"${i}" for i in range(n))
    args = words.pack(b, values) + [ptr]
    constraint = ",".join([words.constraint] * n + ["l"])
    text = f"{instr} [ ${n} + 0 ], {{ {ins} }};"
    if pred is not None:
        args.append(pred)
        constraint += ",b"
        text = f"@${n + 1} " + text
    _asm(b, ir.VoidType(), text, constraint, args)
