"""Hopper's warpgroup MMA: `ttng.warp_group_dot` -> `wgmma.mma_async`, operands read by
the tensor cores from `#ttg.nvmma_shared` tiles through matrix descriptors (f32 += f16,
bf16 (k16), tf32 (k8), e4m3 / e5m2 (k32); s32 += s8 (k32): one 32-byte K step of a tile
row per instruction whatever the type);
`ttng.warp_group_dot_wait` -> `wgmma.wait_group`; `ttng.fence_async_shared` ->
`fence.proxy.async.shared::cta`.

    %d = ttng.warp_group_dot %a, %b, %c {isAsync = true} : !ttg.memdesc<128x64xf16, #shared, ...>
           * !ttg.memdesc<64x128xf16, #shared, ...> -> tensor<128x128xf32, #mma>   (8 warps)
      -> wgmma.fence.sync.aligned;
         4 x wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {64 x f32}, descA, descB, p, 1, 1, 0, 1;
         wgmma.commit_group.sync.aligned;
    ttng.warp_group_dot_wait %d, ... {pendings = 0 : i32}
      -> wgmma.wait_group.sync.aligned 0;   (the accumulators pass through it: later uses
                                             read them after the wait)

A 16-bit A operand may instead be a tensor in registers (`#ttg.dot_op<{opIdx = 0, parent
= #mma v3, kWidth = 2}>`: attention's P), wgmma's register-A form; per instruction each
thread passes four b32 words, its warp's 16 x 16 piece of A as mma.sync's m16n8k16 A
fragment (halves (g, 2t | 2t+1), (g+8, ..), (g, 8+2t | ..), (g+8, 8+..) for lane 4g + t),
packed before the wgmma.fence (registers written after it would make ptxas inject a
warpgroup.arrive), with B's transpose bit alone:

    %o = ttng.warp_group_dot %p, %v, %acc : tensor<128x64xf16, #ttg.dot_op<...>> * !ttg.memdesc<64x64xf16, ...>
      -> 4 x wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {32 x f32}, {a0, a1, a2, a3}, descB, p, 1, 1, 1;

Each warpgroup (4 consecutive warps, `#ttg.nvidia_mma` version 3: warps M-first; its
origin computed from the warp id lane 0 holds, `shfl.sync.idx`, so that ptxas builds the
descriptors in uniform registers) computes 64 x N tiles: for every repetition of the layout's CTA tile over the result, for every K
step of the instruction, one wgmma whose accumulator fragment is, per warp, the 16 x N
slice of registers d[i] at (8 * (i / 2 % 2), 8 * (i / 4) + i % 2) from the instruction's
origin (the accumulator layout's register bases, tritium.ir.layouts).

A matrix descriptor (64 bits) names a tile in shared memory: bits 0-13 the start address
/ 16, 16-29 the leading byte offset / 16 (from one swizzle-wide slab to the next: rows *
swizzle bytes), 32-45 the stride byte offset / 16 (from one 8-row group to the next:
8 * swizzle bytes), 62-63 the swizzle (1: 128 bytes, 2: 64, 3: 32). The start of an
instruction's operand is the tile's offset of its first element (rows a multiple of 8, so
no swizzle phase; the hardware swizzles the addresses it forms, which is why nvmma tiles
are 1024-byte aligned: analysis/allocation.py). `transposed` tiles (the first dim
contiguous) set the instruction's transpose bit for A; B's bit is set when its tile is
*not* transposed (N contiguous), as wgmma's B is K-major by default. Only 16-bit tiles
may be transposed: accelerate-matmul puts other types on wgmma only with K-major
operands, and this lowering refuses the rest.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    IntegerType,
    TensorType,
)
from xdsl.ir import Operation

from tritium.analysis.shared_bytes import element_bytes
from tritium.codegen.lower.context import FunctionLowering, lowers, unsupported
from tritium.codegen.lower.dot_mma import _pack2 as pack2
from tritium.codegen.lower.registers import register_index
from tritium.codegen.lower.shared import shuffle_idx, smem_base
from tritium.codegen.lower.types import f32, i32
from tritium.ir.arith import constant_value
from tritium.ir.shared_layout import SharedTile, memdesc_tile
from tritium.ir.types import element_type, encoding_of, shape_of

i64 = ir.IntType(64)
# operand element type -> PTX type (instruction K = 256 bits / element bits)
_KINDS = {Float16Type: "f16", BFloat16Type: "bf16", Float32Type: "tf32", Float8E4M3FNType: "e4m3",
          Float8E5M2Type: "e5m2", IntegerType: "s8"}  # fmt: skip
_TRANSPOSABLE = ("f16", "bf16")  # the only kinds whose tiles may be M- or N-major
_SWIZZLE_MODE = {128: 1, 64: 2, 32: 3}


def _log2(n: int) -> int:
    return n.bit_length() - 1


def descriptor_bits(tile: SharedTile, elem_bytes: int) -> int:
    """The descriptor's constant fields (everything but the start address) for a tile."""
    swizzle = tile.row_length * elem_bytes
    lead = tile.slab_size * elem_bytes >> 4
    stride = 8 * swizzle >> 4
    return (lead << 16) | (stride << 32) | (_SWIZZLE_MODE[swizzle] << 62)


def _dyn_offset(ctx: FunctionLowering, tile: SharedTile, dim: int, value: ir.Value) -> ir.Value:
    """Element offset of coordinate `value` along `dim` of the tile (`value` a multiple of 8
    when `dim` holds rows, so no swizzle phase)."""
    b = ctx.builder
    e = tile.row_length
    if dim == tile.order[1]:
        return b.shl(value, ir.Constant(i32, _log2(e)))
    slab = b.lshr(value, ir.Constant(i32, _log2(e)))
    within = b.and_(value, ir.Constant(i32, e - 1))
    return b.add(b.shl(slab, ir.Constant(i32, _log2(tile.slab_size))), within)


class _Descriptors:
    """The descriptors of one operand tile: `at(coord)` for the instruction whose first
    element is this thread's warpgroup origin (`dyn`, per dim) plus `coord`."""

    def __init__(self, ctx: FunctionLowering, mem, dyn: tuple[ir.Value | None, ir.Value | None]):
        self.ctx, self.tile = ctx, memdesc_tile(mem.type)
        self.elem = element_bytes(mem.type.element_type)
        b = ctx.builder
        start = b.add(b.ptrtoint(smem_base(ctx), i32), ctx.get1(mem))  # the tile's address
        for d, v in enumerate(dyn):
            if v is not None:
                off = _dyn_offset(ctx, self.tile, d, v)
                start = b.add(start, b.shl(off, ir.Constant(i32, _log2(self.elem))))
        self.start = start
        self.bits = descriptor_bits(self.tile, self.elem)
        self.memo: dict[tuple[int, int], ir.Value] = {}

    def at(self, coord: tuple[int, int]) -> ir.Value:
        """The descriptor at `coord`: the origin's, plus the 16-byte units to `coord` in
        its 64-bit value (as upstream's: no field is rebuilt between the wgmmas of a
        group). Exact because shared addresses stay under 2^18 (the 14-bit field never
        carries into the next) and an instruction's offset is a multiple of 16 bytes."""
        if coord not in self.memo:
            b = self.ctx.builder
            if (0, 0) not in self.memo:
                addr = b.and_(self.start, ir.Constant(i32, 0x3FFFF))
                field = b.zext(b.lshr(addr, ir.Constant(i32, 4)), i64)
                self.memo[(0, 0)] = b.or_(field, ir.Constant(i64, self.bits))
            offset = self.tile.offset(coord) * self.elem
            assert offset % 16 == 0, offset  # rows a multiple of 8, K steps of 32 bytes
            base = self.memo[(0, 0)]
            self.memo[coord] = b.add(base, ir.Constant(i64, offset >> 4)) if offset else base
        return self.memo[coord]


def _asm(ctx: FunctionLowering, text: str) -> None:
    ctx.builder.asm(ir.FunctionType(ir.VoidType(), []), text, "~{memory}", [], side_effect=True)


def _kinds(op: Operation) -> tuple[str, str, str] | None:
    """(accumulator, A, B) PTX types of a warp_group_dot, or None where wgmma has none:
    f32 += f16 x f16, bf16 x bf16, tf32 x tf32, e4m3 / e5m2 x e4m3 / e5m2; s32 += s8 x s8."""
    ea, eb, ec = op.a.type.element_type, op.b.type.element_type, element_type(op.d.type)
    ka, kb = _KINDS.get(type(ea)), _KINDS.get(type(eb))
    if ka == "s8" and ea == eb and ea.width.data == 8 and isinstance(ec, IntegerType):
        return ("s32", ka, kb) if ec.width.data == 32 else None
    fp8 = ("e4m3", "e5m2")
    if not isinstance(ec, Float32Type) or ka is None or ka == "s8":
        return None
    if ka in fp8 and kb in fp8:
        return "f32", ka, kb
    if ea != eb or ka in fp8 or (ka == "tf32" and op.input_precision != "tf32"):
        return None
    return "f32", ka, kb


@lowers("ttng.warp_group_dot")
def warp_group_dot(ctx: FunctionLowering, op: Operation) -> None:
    ea, eb, ec = op.a.type.element_type, op.b.type.element_type, element_type(op.d.type)
    kinds = _kinds(op)
    if kinds is None:
        raise unsupported(op, f"wgmma for {ea} x {eb} operands with a {ec} accumulator")
    acc_kind, kind_a, kind_b = kinds
    if op.use_c is not None:
        raise unsupported(op, "ttng.warp_group_dot with a useC operand")
    registers_a = isinstance(op.a.type, TensorType)  # wgmma's {a0..a3} form: P @ V
    mma = encoding_of(op.d.type)
    wpc, (_, instr_n, instr_k) = mma.warpsPerCTA, mma.instrShape
    m_total, n_total = shape_of(op.d.type)
    k_total = op.a.type.get_shape()[-1]
    lc = ctx.layout(op.d.type)
    b = ctx.builder

    wg_m, wg_n = _warpgroup_origin(ctx, lc, instr_n)
    desc_a = None if registers_a else _Descriptors(ctx, op.a, (wg_m, None))
    desc_b = _Descriptors(ctx, op.b, (None, wg_n))
    trans_a = int(desc_a is not None and desc_a.tile.order[0] == 0)  # M contiguous
    trans_b = int(desc_b.tile.order[0] == 1)  # N contiguous (wgmma's B is K-major)
    if (trans_a or trans_b) and kind_a not in _TRANSPOSABLE:
        raise unsupported(op, f"wgmma on {kind_a} tiles that are not K-major")
    if registers_a and kind_a not in _TRANSPOSABLE:
        raise unsupported(op, f"wgmma with {kind_a} A operands in registers")

    n_regs = instr_n // 2
    n_a = 4 if registers_a else 1  # A: four b32 words (8 halves) per thread, or a descriptor
    outs = ", ".join(f"${i}" for i in range(n_regs))
    a_arg = "{" + ", ".join(f"${n_regs + j}" for j in range(4)) + "}" if registers_a else f"${n_regs}"
    # scale-d (p: accumulate), then A's and B's scale (1) and transpose bits where the
    # types have them (16-bit floats: both, B's only for A in registers; tf32, fp8: the
    # scales; integers: neither)
    trans = f"{trans_b}" if registers_a else f"{trans_a}, {trans_b}"
    imms = {"s8": "", "f16": f", 1, 1, {trans}", "bf16": f", 1, 1, {trans}"}
    text = (
        f"{{ .reg .pred p; setp.ne.b32 p, ${n_regs + n_a + 1}, 0; "
        f"wgmma.mma_async.sync.aligned.m64n{instr_n}k{instr_k}.{acc_kind}.{kind_a}.{kind_b} "
        f"{{{outs}}}, {a_arg}, ${n_regs + n_a}, p{imms.get(kind_a, ', 1, 1')}; }}"
    )
    reg, cons = (i32, "=r") if acc_kind == "s32" else (f32, "=f")
    a_types, a_cons = ([i32] * 4, ["r"] * 4) if registers_a else ([i64], ["l"])
    fty = ir.FunctionType(ir.LiteralStructType([reg] * n_regs), a_types + [i64, i32] + [reg] * n_regs)
    constraint = ",".join([cons] * n_regs + a_cons + ["l", "r"] + [str(i) for i in range(n_regs)])

    index = register_index(lc)
    acc = list(ctx.get(op.c))
    frag = [(8 * (i // 2 % 2), 8 * (i // 4) + i % 2) for i in range(n_regs)]
    a_words = _RegisterA(ctx, op.a, m_total, 16 * wpc[0], instr_k) if registers_a else None
    _asm(ctx, "wgmma.fence.sync.aligned;")  # after A's words are packed: they are read
    one, zero = ir.Constant(i32, 1), ir.Constant(i32, 0)
    # a zero accumulator (attention's S = Q K^T): the first K step does not read it
    # (scale-d = 0), so no register is zeroed for it
    fresh = constant_value(op.c) == 0
    for rm in range(0, m_total, 16 * wpc[0]):
        for rn in range(0, n_total, instr_n * wpc[1]):
            regs = [index[(rm + dm, rn + dn)] for dm, dn in frag]
            for k0 in range(0, k_total, instr_k):
                a = a_words.at(rm, k0) if a_words is not None else [desc_a.at((rm, k0))]
                if fresh and k0 == 0:
                    args = a + [desc_b.at((k0, rn)), zero] + [ir.Constant(reg, ir.Undefined)] * n_regs
                else:
                    args = a + [desc_b.at((k0, rn)), one] + [acc[r] for r in regs]
                res = b.asm(fty, text, constraint, args, side_effect=True)
                for j, r in enumerate(regs):
                    acc[r] = b.extract_value(res, j)
    _asm(ctx, "wgmma.commit_group.sync.aligned;")
    ctx.set(op.d, [acc[index[lc.register_coord(r)]] for r in range(lc.num_registers)])


def _warpgroup_origin(ctx: FunctionLowering, lc, instr_n: int) -> tuple[ir.Value, ir.Value]:
    """This thread's warpgroup origin in the accumulator layout `lc` (its coordinate with
    the lane bits cleared: a function of the warp alone), from the warp id as lane 0 holds
    it (`shfl.sync.idx`, here at the dot, as upstream's): ptxas then knows the descriptors
    built from it are the same across the warp and builds them in uniform registers, where
    wgmma reads them (from per-thread registers each needs an R2UR move first)."""
    b = ctx.builder
    warp = shuffle_idx(ctx, ctx.threads.warp, ir.Constant(i32, 0))
    coords = [ir.Constant(i32, 0), ir.Constant(i32, 0)]
    for bit, basis in enumerate(lc.warp):
        on = b.and_(b.lshr(warp, ir.Constant(i32, bit)), ir.Constant(i32, 1))
        for d, x in enumerate(basis):
            if x:
                coords[d] = b.or_(coords[d], b.mul(on, ir.Constant(i32, x)))
    wg_m = b.and_(coords[0], ir.Constant(i32, ~63 & 0xFFFFFFFF))
    wg_n = b.and_(coords[1], ir.Constant(i32, ~(instr_n - 1) & 0xFFFFFFFF))
    return wg_m, wg_n


class _RegisterA:
    """A 16-bit A operand in registers (`#ttg.dot_op<{opIdx = 0, parent = #mma v3,
    kWidth = 2}>`): for the instruction at (m, k), this thread's four b32 words, the
    m16n8k16 A fragment of its warp's 16 rows (halves at (g, 2t | 2t+1), (g+8, ..),
    (g, 8+2t | ..), (g+8, 8+..) for lane 4g + t, by register coordinate)."""

    def __init__(self, ctx: FunctionLowering, value, m_total: int, m_step: int, instr_k: int):
        regs, index = ctx.get(value), register_index(ctx.layout(value.type))
        self.words: dict[tuple[int, int], list[ir.Value]] = {}
        for m in range(0, m_total, m_step):  # all packed before the wgmma.fence
            for k in range(0, value.type.get_shape()[-1], instr_k):
                out = []
                for dm, dk in ((0, 0), (8, 0), (0, 8), (8, 8)):
                    lo, hi = index[(m + dm, k + dk)], index[(m + dm, k + dk + 1)]
                    out.append(pack2(ctx.builder, regs[lo], regs[hi]))
                self.words[(m, k)] = out

    def at(self, m: int, k: int) -> list[ir.Value]:
        return self.words[(m, k)]


@lowers("ttng.warp_group_dot_wait")
def warp_group_dot_wait(ctx: FunctionLowering, op: Operation) -> None:
    """`wgmma.wait_group N` with every register of the tensor inputs tied through it."""
    regs, where = [], []
    for i, v in enumerate(op.inputs):
        if isinstance(v.type, TensorType):
            vals = ctx.get(v)
            where.append((i, len(regs), len(vals)))
            regs += vals
    if regs:
        tys = [r.type for r in regs]
        cons = ["=f" if t == f32 else "=r" for t in tys]
        fty = ir.FunctionType(ir.LiteralStructType(tys), tys)
        constraint = ",".join(cons + [str(j) for j in range(len(regs))])
        res = ctx.builder.asm(
            fty, f"wgmma.wait_group.sync.aligned {op.pendings};", constraint, regs, side_effect=True
        )
        out = [ctx.builder.extract_value(res, j) for j in range(len(regs))]
    else:
        _asm(ctx, f"wgmma.wait_group.sync.aligned {op.pendings};")
    for i, (v, r) in enumerate(zip(op.inputs, op.outputs, strict=True)):
        got = next(((s, n) for j, s, n in where if j == i), None)
        ctx.set(r, out[got[0] : got[0] + got[1]] if got else ctx.get(v))


@lowers("ttng.fence_async_shared")
def fence_async_shared(ctx: FunctionLowering, op: Operation) -> None:
    _asm(ctx, "fence.proxy.async.shared::cta;")


__all__ = ["descriptor_bits", "fence_async_shared", "warp_group_dot", "warp_group_dot_wait"]
