"""The tensor-core dot: `mma.sync` on fragments of the #mma / #ttg.dot_op layouts.

    fp16:  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {d0..d3}, {a0..a3}, {b0, b1}, {c0..c3};
    bf16:  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 ...
    tf32:  mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {d0..d3}, {a0..a3}, {b0, b1}, {c0..c3};
           (each fp32 operand first rounded with cvt.rna.tf32.f32)
    int8:  mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 (int32 accumulators, "r")
    fp8:   mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 (any pair of e4m3 / e5m2; sm_89+)
    fp16 accumulators: mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {d0, d1}, ..., {c0, c1}
           and m16n8k32 .f16.e4m3.e4m3.f16: C and D are two f16x2 words, (m, n | n+1) and
           (m+8, n | n+1)

On sm_90 and newer (Hopper's fp8 tensor cores are wgmma-only: ptxas emulates each fp8
mma.sync with two f16 ones and converts its fragments every time), an fp8 dot is run as
upstream runs it there (`decomposeMixedModeDotOp`: fp8 promoted to fp16 for mma v2 on all
targets but sm_89): each fp8 fragment word (4 K elements, kWidth 4) is converted once, by
two `cvt.rn.f16x2.{e4m3,e5m2}x2`, into a low word (k, k+1) and a high word (k+2, k+3),
and each m16n8k32 step becomes two m16n8k16 f16 mmas:

    A words a0..a3 (k 4t.., rows m / m+8, K halves 0 / 16), B words b0, b1:
    mma.m16n8k16.f32.f16.f16.f32 {d}, {lo a0, lo a1, hi a0, hi a1}, {lo b0, hi b0}, {c}
    mma.m16n8k16.f32.f16.f16.f32 {d}, {lo a2, lo a3, hi a2, hi a3}, {lo b1, hi b1}, {d}

(the f16 instruction's K index 2t + j is the step's 4t + j, 2t + 8 + j its 4t + 2 + j,
the same permutation for A and B, so the sum is the same).

One instruction per (16-row block of the warp's M range, 8-column block of its N range,
K step). Its fragments, by register-part coordinate (lanes and warps are already where
the instruction wants them, by the layouts' construction, tritium.ir.layouts):

    C / D:  (m, n), (m, n+1), (m+8, n), (m+8, n+1)            (4 x f32)
    A:      words at (m, k), (m+8, k), (m, k+4w), (m+8, k+4w)   (w = kWidth; a word is
    B:      words at (k, n), (k+4w, n)                          w consecutive K elements)

where a word is 2 halves packed in a b32 (fp16 / bf16), 4 bytes (int8 / fp8: kWidth 4) or
one tf32. K steps are the outer
loop, so consecutive instructions are independent; the accumulator of each (m, n) block
chains through the K steps in ascending order.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    IntegerType,
)
from xdsl.ir import Operation

from tritium.codegen.lower.context import FunctionLowering, unsupported
from tritium.codegen.lower.fp8 import fp8x2_to_f16x2
from tritium.codegen.lower.ldmatrix import LdmatrixReader
from tritium.codegen.lower.local_memory import load_registers, read_by_mma
from tritium.codegen.lower.registers import register_index
from tritium.codegen.lower.types import f16, f32, i32
from tritium.ir.layouts import LinearLayout
from tritium.ir.ttg import compute_capability
from tritium.ir.types import bitwidth, element_type, is_fp8, shape_of

# operand element type -> (PTX type, instruction K)
_KINDS = {Float16Type: ("f16", 16), BFloat16Type: ("bf16", 16), Float32Type: ("tf32", 8)}
_KINDS |= {Float8E4M3FNType: ("e4m3", 32), Float8E5M2Type: ("e5m2", 32), IntegerType: ("s8", 32)}
# accumulator element type -> (PTX type, LLVM type of one register)
_ACCS = {Float32Type: ("f32", f32), IntegerType: ("s32", i32), Float16Type: ("f16", i32)}


@dataclass(frozen=True)
class MmaInstruction:
    """The mma.sync a dot's element types select: its text, operand types, words per
    fragment and the LLVM type of one accumulator register."""

    text: str
    instr_k: int
    per_word: int  # operand elements per b32 word (32 / bits: 1, 2 or 4)
    packed_acc: bool  # fp16 accumulators: two per b32 register

    @property
    def acc_regs(self) -> int:
        return 2 if self.packed_acc else 4


def mma_instruction(a_elem, b_elem, acc_elem) -> MmaInstruction | None:
    """The instruction for these element types, or None when mma.sync has none."""
    ka, kb = _KINDS.get(type(a_elem)), _KINDS.get(type(b_elem))
    acc = _ACCS.get(type(acc_elem))
    if ka is None or kb is None or acc is None or ka[1] != kb[1]:
        return None
    (ta, k), (tb, _), (tc, _) = ka, kb, acc
    ints = (tc == "s32") + (ta == "s8") + (tb == "s8")
    fp8 = k == 32 and ta != "s8"
    if (
        ints not in (0, 3)
        or (ta != tb and not fp8)
        or (tc == "f16" and ta not in ("f16", "e4m3", "e5m2"))
    ):
        return None
    if ints and (bitwidth(a_elem), bitwidth(b_elem), bitwidth(acc_elem)) != (8, 8, 32):
        return None
    n = 2 if tc == "f16" else 4
    d = ", ".join(f"${i}" for i in range(n))
    c = ", ".join(f"${i}" for i in range(n + 6, 2 * n + 6))
    text = (
        f"mma.sync.aligned.m16n8k{k}.row.col.{tc}.{ta}.{tb}.{tc} "
        f"{{{d}}}, {{${n}, ${n + 1}, ${n + 2}, ${n + 3}}}, {{${n + 4}, ${n + 5}}}, {{{c}}};"
    )
    return MmaInstruction(text, k, {8: 1, 16: 2, 32: 4}[k], tc == "f16")


def _word(ctx: FunctionLowering, regs, first: int, per_word: int, memo) -> ir.Value:
    """The b32 word holding registers first .. first + per_word - 1 (tf32: rounded)."""
    key = first
    if key in memo:
        return memo[key]
    b = ctx.builder
    if per_word == 1:
        fty = ir.FunctionType(i32, [f32])
        word = b.asm(fty, "cvt.rna.tf32.f32 $0, $1;", "=r,f", [regs.get(first)], side_effect=False)
    else:
        vec = ir.Constant(ir.VectorType(regs.get(first).type, per_word), None)
        for j in range(per_word):
            vec = b.insert_element(vec, regs.get(first + j), ir.Constant(i32, j))
        word = b.bitcast(vec, i32)
    memo[key] = word
    return word


class _Operand:
    """An operand's registers: already lowered, or read from its shared tile on demand
    (a `local_load` deferred to the dot, `read_by_mma`: ldmatrix, or vector ld.shared)."""

    def __init__(self, ctx: FunctionLowering, value):
        self.ctx, self.value = ctx, value
        load = value.owner
        self.tile = None
        self.reader = None
        self.plain: dict[int, ir.Value] = {}
        if isinstance(load, Operation) and load.name == "ttg.local_load" and read_by_mma(load):
            base, mem = self.tile = (ctx.get1(load.src), load.src.type)
            self.reader = LdmatrixReader.of(ctx, value.type, base, mem)
        else:
            self.regs = ctx.get(value)

    def fetch(self, registers) -> None:
        if self.tile is None:
            return
        if self.reader is not None:
            self.reader.fetch(registers)
            return
        want = set(registers) - set(self.plain)
        if want:
            base, mem = self.tile
            self.plain.update(load_registers(self.ctx, self.value.type, base, mem, want))

    def get(self, r: int) -> ir.Value:
        if self.tile is None:
            return self.regs[r]
        self.fetch([r])
        return self.reader.regs[r] if self.reader is not None else self.plain[r]


@dataclass(frozen=True)
class MmaStep:
    """One mma.sync: the first register of each A word and B word, the C registers."""

    a: tuple[int, int, int, int]
    b: tuple[int, int]
    c: tuple[int, int, int, int]


def mma_steps(
    la: LinearLayout, lb: LinearLayout, lc: LinearLayout, k_total: int, instr_k: int, per_word: int
) -> list[MmaStep]:
    """The instructions of one dot, in issue order (K steps outermost)."""
    ia, ib, ic = register_index(la), register_index(lb), register_index(lc)
    half = 4 * per_word  # the second K half of a fragment (k + 4 words)

    def reg(index: dict, coord, what: str) -> int:
        r = index.get(coord)
        if r is None:
            raise NotImplementedError(f"mma.sync: no {what} register at {coord}")
        return r

    blocks = sorted({(m, n) for (m, n) in ic if m % 16 == 0 and n % 8 == 0})
    steps = []
    for k0 in range(0, k_total, instr_k):
        for m, n in blocks:
            a = tuple(
                reg(ia, (m + dm, k0 + dk), "A") for dm, dk in ((0, 0), (8, 0), (0, half), (8, half))
            )
            b = tuple(reg(ib, (k0 + dk, n), "B") for dk in (0, half))
            c = tuple(reg(ic, (m + dm, n + dn), "C") for dm, dn in _C)
            steps.append(MmaStep(a, b, c))
    return steps


def lower_mma_dot(ctx: FunctionLowering, op: Operation) -> None:
    b = ctx.builder
    ea, eb, ec = element_type(op.a.type), element_type(op.b.type), element_type(op.d.type)
    instr = mma_instruction(ea, eb, ec)
    if instr is None:
        raise unsupported(op, f"mma.sync for {ea} x {eb} operands with a {ec} accumulator")
    if is_fp8(ea) and compute_capability(op) < 89:
        raise unsupported(
            op, f"fp8 mma.sync needs sm_89 or newer (target sm_{compute_capability(op)})"
        )
    instr_k, per_word = instr.instr_k, instr.per_word
    if len(shape_of(op.d.type)) != 2:
        raise unsupported(op, "batched (3D) dots are not supported on mma")
    la, lb, lc = ctx.layout(op.a.type), ctx.layout(op.b.type), ctx.layout(op.d.type)
    a, bb = _Operand(ctx, op.a), _Operand(ctx, op.b)
    acc = list(ctx.get(op.c))
    try:
        steps = mma_steps(la, lb, lc, shape_of(op.a.type)[1], instr_k, per_word)
    except NotImplementedError as e:
        raise unsupported(op, f"{e} (layouts disagree)") from None
    promoted = is_fp8(ea) and compute_capability(op) >= 90  # the module docstring
    if promoted:
        instr = mma_instruction(Float16Type(), Float16Type(), ec)
    n, reg = instr.acc_regs, _ACCS[type(ec)][1]
    fty = ir.FunctionType(ir.LiteralStructType([reg] * n), [i32] * 6 + [reg] * n)
    rc = "f" if reg == f32 else "r"
    constraint = ",".join([f"={rc}"] * n + ["r"] * 6 + [str(i) for i in range(n)])
    words_a: dict = {}
    words_b: dict = {}
    # K step by K step; the fragments of step k + 1 are read (ldmatrix) before the mmas of
    # step k are issued, so the loads overlap the tensor-core work (register double buffer)
    k_steps = max(1, shape_of(op.a.type)[1] // instr_k)
    per = len(steps) // k_steps
    chunks = [steps[i * per : (i + 1) * per] for i in range(k_steps)]

    def prefetch(chunk) -> None:
        a.fetch({r + j for st in chunk for r in st.a for j in range(per_word)})
        bb.fetch({r + j for st in chunk for r in st.b for j in range(per_word)})

    prefetch(chunks[0])
    for i, chunk in enumerate(chunks):
        if i + 1 < len(chunks):
            prefetch(chunks[i + 1])
        if promoted:
            fragments = [_f16_fragments(ctx, a, bb, st, words_a, words_b, ea, eb) for st in chunk]
            issues = [(st, f[h]) for h in (0, 1) for st, f in zip(chunk, fragments)]
        else:
            issues = [
                (st, [_word(ctx, a, r, per_word, words_a) for r in st.a]
                 + [_word(ctx, bb, r, per_word, words_b) for r in st.b])
                for st in chunk
            ]  # fmt: skip
        for st, words in issues:
            cs = [acc[r] for r in st.c]
            if instr.packed_acc:  # (m, n | n+1), (m+8, n | n+1) as two f16x2 words
                cs = [_pack2(b, cs[0], cs[1]), _pack2(b, cs[2], cs[3])]
            res = b.asm(fty, instr.text, constraint, words + cs, side_effect=False)
            out = [b.extract_value(res, j) for j in range(n)]
            if instr.packed_acc:
                out = [h for w in out for h in _unpack2(b, w)]
            for j, r in enumerate(st.c):
                acc[r] = out[j]
    # registers that duplicate another (replicated layouts) take its final value
    first = register_index(lc)
    ctx.set(op.d, [acc[first[lc.register_coord(r)]] for r in range(lc.num_registers)])


_C = ((0, 0), (0, 1), (8, 0), (8, 1))


def promoted_halves(st: MmaStep) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The two m16n8k16 f16 mmas replacing the fp8 m16n8k32 step `st` (the module
    docstring): their A words then B words, each as (first register of the fp8 word,
    half): half 0 is the word's elements 0 and 1 converted, half 1 its elements 2 and 3."""
    a0, a1, a2, a3 = st.a
    b0, b1 = st.b
    first = [(a0, 0), (a1, 0), (a0, 1), (a1, 1), (b0, 0), (b0, 1)]
    second = [(a2, 0), (a3, 0), (a2, 1), (a3, 1), (b1, 0), (b1, 1)]
    return first, second


def _f16_fragments(ctx, a, bb, st: MmaStep, words_a, words_b, ea, eb) -> tuple[list, list]:
    """The f16x2 words of `promoted_halves(st)`, each fp8 word converted once (two
    cvt.rn.f16x2.*x2, memoized by register)."""

    def half(operand, elem, memo, r: int, h: int) -> ir.Value:
        if (r, h) not in memo:
            operand.fetch(range(r, r + 4))
            pair = (operand.get(r + 2 * h), operand.get(r + 2 * h + 1))
            memo[r, h] = fp8x2_to_f16x2(ctx, elem, pair)
        return memo[r, h]

    return tuple(
        [half(a, ea, words_a, r, h) for r, h in words[:4]]
        + [half(bb, eb, words_b, r, h) for r, h in words[4:]]
        for words in promoted_halves(st)
    )


def _pack2(b: ir.IRBuilder, lo: ir.Value, hi: ir.Value) -> ir.Value:
    vec = ir.Constant(ir.VectorType(lo.type, 2), None)
    vec = b.insert_element(vec, lo, ir.Constant(i32, 0))
    return b.bitcast(b.insert_element(vec, hi, ir.Constant(i32, 1)), i32)


def _unpack2(b: ir.IRBuilder, word: ir.Value) -> list[ir.Value]:
    vec = b.bitcast(word, ir.VectorType(f16, 2))
    return [b.extract_element(vec, ir.Constant(i32, j)) for j in range(2)]


__all__ = [
    "MmaInstruction",
    "MmaStep",
    "lower_mma_dot",
    "mma_instruction",
    "mma_steps",
    "promoted_halves",
]
