"""`accelerate-matmul`: put `tt.dot` on the tensor cores (mma.sync) where it fits, and give
the FMA dot its operand layouts otherwise.

    #blocked = #ttg.blocked<{sizePerThread = [4, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
    %d = tt.dot %a, %b, %c : tensor<64x32xf16, #blocked1> * tensor<32x64xf16, #blocked2>
                             -> tensor<64x64xf32, #blocked>
  => (sm_80 and newer, fp16 / bf16 operands, or fp32 with inputPrecision = tf32)
    #mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
    %a1 = ttg.convert_layout %a : ... -> tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
    %b1 = ttg.convert_layout %b : ... -> tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>>
    %c1 = ttg.convert_layout %c : ... -> tensor<64x64xf32, #mma>
    %d1 = tt.dot %a1, %b1, %c1 : ... -> tensor<64x64xf32, #mma>
    %d = ttg.convert_layout %d1 : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
  => (int8 -> int32 and fp8 (sm_89+; fp32 or fp16 accumulators): kWidth = 4, m16n8k32;
      fp16 -> fp16 accumulators: kWidth = 2, m16n8k16)
  => (otherwise: fp32 ieee / tf32x3, other integers, batched dots, sm < 80; fp8 operands
      are then promoted to the accumulator's type with tt.fp_to_fp, as upstream)
    %a1 = ttg.convert_layout %a : ... -> tensor<64x32xf32, #ttg.dot_op<{opIdx = 0, parent = #blocked}>>
    %b1 = ttg.convert_layout %b : ... -> tensor<32x64xf32, #ttg.dot_op<{opIdx = 1, parent = #blocked}>>
    %d = tt.dot %a1, %b1, %c : ... -> tensor<64x64xf32, #blocked>

The next remove-layout-conversions moves the loop-carried accumulator (and the epilogue
up to the store) into #mma, as upstream's second run does; the converts to dot-operand
layouts go through shared memory (optimize-dot-operands, or the software pipeliner).

warpsPerCTA is upstream's `warpsPerTileV2`: warps double along M while M / 16 per warp is
at least N / 16 per warp, else along N; a dot chained to another (one's result reaches
the other's operands, as in attention) takes the other's warps if it is on mma already,
else puts all warps along the longer of M and N; a batched dot along the batch. So both
dots of attention share one #mma with warps along M only, and P = softmax(Q K^T) reaches
P @ V in registers (optimize-dot-operands leaves that conversion alone).
kWidth is 32 / element bits: 2 for fp16 / bf16 (m16n8k16), 1 for tf32 (m16n8k8), 4 for
int8 / fp8 (m16n8k32).

On sm_90a (`mma_v3=True`: Options.arch "sm_90a"), a dot wgmma can run goes to
`#ttg.nvidia_mma` version 3 instead (upstream's mma v3), its operands staged in
`#ttg.nvmma_shared` tiles (shared_layout.operand_shared_encoding) that the wgmma-pipeline
pass hands to `ttng.warp_group_dot`:

    #mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], instrShape = [16, 128, 16]}>
    %a1 = ttg.convert_layout %a : ... -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
    (int8 -> int32, fp8 -> fp32: instrShape = [16, N, 32], kWidth = 4; tf32: [16, N, 8], kWidth = 1)

Eligible (`mma_v3_shape`, conservative): fp16 / bf16 operands with fp32 accumulators
(instruction K 16), tf32 (fp32 operands, inputPrecision = tf32: K 8), fp8 e4m3 / e5m2
with fp32 accumulators (K 32; `max_num_imprecise_acc` unset or at least the dot's K) and
int8 with int32 ones (K 32), the last three only with both operands K-major (A's K
contiguous, B's too: wgmma transposes 16-bit tiles only), a 2D dot, num_warps a multiple
of 4, M a multiple of 64, N of 16, K of the instruction's K.
Chained dots (attention's S = Q K^T, then P @ V with P computed from S) go to wgmma all
together or not at all: every dot of the chain (transitively) must be eligible as above
with warpsPerCTA = [num_warps, 1] (M a multiple of 16 * num_warps: each warp owns 16 rows
of every dot), no B operand may be computed from another dot of the chain, and an A
operand that is must be 16-bit, and what its computation does with the chain's results
must be elementwise ops, reductions, expand_dims / broadcast / splat, make_range and
constants (the softmax, the causal mask, the cast; the backward's dS^T = P^T * (dP^T -
delta), two dots' results combined): it then stays in registers, since the first
accumulator's layout, cast to 16 bits, is the register-A fragment of the next wgmma
(`ttg_mma.is_mma_to_dot_shortcut`), as upstream's dot_op<{opIdx = 0, parent = #mma v3}>
from registers. Values that do not depend on the chain's dots may come from anything
(the attention backward's per-iteration lse and delta loads, `lse[None, :]`): they are
converted into the accumulator's layout where they join it. Each dot keeps its own
instrShape (Q K^T: N = BLOCK_N; P @ V: N = the head dim), as upstream. Anything else in
a chain (a transposed P, as in dV += tl.trans(p) @ dO; BLOCK_M = 64 on 8 warps) keeps
the whole chain on mma.sync. The attention backward's dK/dV kernel, which works on the
transposed scores (S^T = K Q^T), so goes to wgmma whole: S^T and dP^T read K / V and
the Q / dO stages (transposed views, the software pipeliner's `ttg.memdesc_trans`),
dV += P^T dO and dK += dS^T Q take P^T and dS^T in registers.
The rest keeps mma.sync, as before. instrShape is upstream's `mmaVersionToInstrShape`
(the largest N <= 256 dividing N that leaves each warpgroup's share of N whole),
warpsPerCTA upstream's `warpsPerTileV3` (warpgroups along M while M has 16 rows per warp left, then along N). An fp8 dot left on mma.sync keeps its fp8 operands (kWidth 4) here;
on sm_90 and newer the backend converts each fragment to f16 once and issues f16 mmas
(codegen/lower/dot_mma.py), which is upstream's upcast for mma v2 on targets other than sm_89.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    ModuleOp,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass

from tritium.ir import tt
from tritium.ir.ttg import (
    BlockedEncodingAttr,
    ConvertLayoutOp,
    compute_capability,
    layout_order,
    num_warps_of,
)
from tritium.ir.ttg_mma import DotOperandEncodingAttr, NvidiaMmaEncodingAttr
from tritium.ir.types import (
    bitwidth,
    element_type,
    encoding_of,
    is_fp8,
    is_int,
    shape_of,
    with_element,
    with_encoding,
)
from tritium.passes.utils import insert_after, insert_before, is_elementwise


def mma_k_width(dot: tt.DotOp, capability: int) -> int | None:
    """kWidth of the mma.sync operands for this dot, or None when it stays on FMA."""
    if capability < 80:
        return None
    a, c = element_type(dot.a.type), element_type(dot.c.type)
    shape_a, shape_b = shape_of(dot.a.type), shape_of(dot.b.type)
    if len(shape_a) != 2:
        return None
    native_fp8 = is_fp8(a) and capability >= 89  # mma.sync .e4m3 / .e5m2: sm_89 and newer
    if isinstance(c, Float32Type) and isinstance(a, Float16Type | BFloat16Type):
        k_width, instr_k = 2, 16
    elif isinstance(c, Float32Type) and isinstance(a, Float32Type) and dot.input_precision == "tf32":
        k_width, instr_k = 1, 8
    elif isinstance(c, Float16Type) and isinstance(a, Float16Type):
        k_width, instr_k = 2, 16  # fp16 accumulators: mma .f16.f16.f16.f16
    elif isinstance(c, Float32Type | Float16Type) and native_fp8:
        k_width, instr_k = 4, 32
    elif is_int(c) and is_int(a) and bitwidth(a) == 8 and bitwidth(c) == 32:
        k_width, instr_k = 4, 32  # int8 -> int32: mma .s32.s8.s8.s32
    else:
        return None
    m, k = shape_a
    n = shape_b[1]
    if m % 16 or n % 8 or k % instr_k:
        return None
    return k_width


def mma_v3_k(dot: tt.DotOp) -> int | None:
    """wgmma's instruction K for this dot's types (256 bits of an operand row), or None:
    fp16 / bf16 (k16) and tf32 (fp32 with inputPrecision = tf32, k8) with fp32
    accumulators, int8 with int32 ones (k32), fp8 e4m3 / e5m2, mixed too, with fp32 ones
    (k32) when `max_num_imprecise_acc` is unset or covers the dot's K (the tensor cores
    accumulate fp8 products in reduced precision across the whole K, upstream's Hopper
    default; a smaller value, which upstream honours by splitting the accumulation, keeps
    mma.sync). Operands other than 16-bit ones must be K-major in shared memory (wgmma
    transposes only 16-bit tiles): `_k_major` below."""
    a, b, c = element_type(dot.a.type), element_type(dot.b.type), element_type(dot.d.type)
    if isinstance(c, Float32Type) and isinstance(a, Float16Type | BFloat16Type) and b == a:
        return 16
    if isinstance(c, Float32Type) and isinstance(a, Float32Type) and b == a:
        return 8 if dot.input_precision == "tf32" else None
    if is_int(c) and bitwidth(c) == 32 and is_int(a) and bitwidth(a) == 8 and b == a:
        return 32
    fp8 = Float8E4M3FNType | Float8E5M2Type  # wgmma's e4m3 / e5m2
    if isinstance(c, Float32Type) and isinstance(a, fp8) and isinstance(b, fp8):
        limit = dot.maxNumImpreciseAcc.value.data if dot.maxNumImpreciseAcc is not None else 0
        return 32 if limit == 0 or limit >= shape_of(dot.a.type)[-1] else None
    return None


def _k_major(v: SSAValue, op_idx: int) -> bool:
    """Whether operand `op_idx` comes (through layout conversions) from a layout that
    keeps K fastest, such as a load's coalesced one: the order its tile is staged in
    (the pipeliner and optimize-dot-operands take it from the value they stage)."""
    while isinstance(v.owner, ConvertLayoutOp):
        v = v.owner.src
    enc = encoding_of(v.type)
    return isinstance(enc, BlockedEncodingAttr) and layout_order(enc)[0] == 1 - op_idx


def mma_v3_shape(dot: tt.DotOp, num_warps: int) -> tuple[list[int], list[int]] | None:
    """(warpsPerCTA, instrShape) of the wgmma layout for this dot, or None (mma.sync)."""
    if len(shape_of(dot.a.type)) != 2 or num_warps % 4:
        return None
    if not _chained_dots(dot):
        return _v3_shape(dot, num_warps, _k_major(dot.a, 0))
    group = _dot_group(dot)
    shapes = {}
    for d in group:
        in_registers = _operand_from_dots(d.a, group)  # as attention's P
        if _operand_from_dots(d.b, group) or (in_registers and not _register_a(d, group)):
            return None
        a_ok = in_registers or _k_major(d.a, 0)
        shapes[id(d)] = _v3_shape(d, num_warps, a_ok, [num_warps, 1])  # warps along M
    return None if None in shapes.values() else shapes[id(dot)]


def _v3_shape(
    dot: tt.DotOp, num_warps: int, a_ok: bool, wpc: list[int] | None = None
) -> tuple[list[int], list[int]] | None:
    """mma_v3_shape of one dot (`a_ok`: A is K-major or in registers; `wpc`: the warps
    its chain imposes, else upstream's warpsPerTileV3)."""
    instr_k = mma_v3_k(dot)
    if instr_k is None:
        return None
    if instr_k != 16 and not (a_ok and _k_major(dot.b, 1)):
        return None
    shape_a, shape_b = shape_of(dot.a.type), shape_of(dot.b.type)
    (m, k), n = shape_a, shape_b[1]
    if m % 64 or n % 16 or k % instr_k:
        return None
    if wpc is None:
        wpc = [4, 1]
        while wpc[0] * wpc[1] < num_warps:
            if m > 16 * wpc[0]:
                wpc[0] *= 2
            else:
                wpc[1] *= 2
    n_warps = max(1, num_warps // max(1, m // 16))
    instr_n = 256
    while instr_n > 8 and (n % instr_n or instr_n > max(8, n // n_warps)):
        instr_n //= 2
    if 16 * wpc[0] > m or instr_n * wpc[1] > n:
        return None
    return wpc, [16, instr_n, instr_k]


# what may lie between a dot's result and the register A operand of the next (attention's
# softmax: scale, row max / sum, exp2, the causal mask, the cast to 16 bits); all of it
# keeps the first dot's accumulator layout, so P lands in the A fragment unmoved
_REGISTER_A_OPS = ("tt.reduce", "tt.expand_dims", "tt.broadcast", "tt.splat", "tt.make_range",
                   "arith.constant", "ttg.convert_layout", "tt.dot")  # fmt: skip


def _operand_from_dots(v: SSAValue, group: list[tt.DotOp]) -> bool:
    """Whether operand `v` is computed (within its region) from a result of the group."""
    return any(op in group for op in _backward_slice(v))


def _register_a(dot: tt.DotOp, group: list[tt.DotOp]) -> bool:
    """Whether the dot's A operand, computed from another dot of its chain, can stay in
    registers, as attention's P (the module docstring): 16-bit, computed by elementwise
    ops, reductions and broadcasts from the group's accumulators. Values that do not
    depend on the group's dots (the backward's per-iteration lse and delta loads, their
    address math) may come from anything: they are converted into the accumulator's
    layout where they join it."""
    if bitwidth(element_type(dot.a.type)) != 16:
        return False
    found = _backward_slice(dot.a)
    from_dots = {id(op) for op in found if op in group}
    grown = True
    while grown:  # the slice's ops that the group's results reach
        grown = False
        for op in found:
            if id(op) not in from_dots and any(id(v.owner) in from_dots for v in op.operands):
                from_dots.add(id(op))
                grown = True
    return all(
        is_elementwise(op) or op.name in _REGISTER_A_OPS for op in found if id(op) in from_dots
    )


def _backward_slice(v: SSAValue) -> list[Operation]:
    """The ops of `v`'s region that `v` is computed from, up to the dots it reaches
    (included, their operands not followed)."""
    region = v.owner.parent_region() if isinstance(v.owner, Operation) else None
    found: list[Operation] = []
    seen: set[int] = set()
    todo = [v]
    while todo:
        owner = todo.pop().owner
        if not isinstance(owner, Operation) or id(owner) in seen:
            continue
        seen.add(id(owner))
        if owner.parent_region() is not region:
            continue
        found.append(owner)
        if not isinstance(owner, tt.DotOp):
            todo += list(owner.operands)
    return found


def _dot_group(dot: tt.DotOp) -> list[tt.DotOp]:
    """The dot and every dot chained to it, transitively (all go to wgmma, or none)."""
    group, todo = [dot], [dot]
    while todo:
        for other in _chained_dots(todo.pop()):
            if other not in group:
                group.append(other)
                todo.append(other)
    return group


def _chained_dots(dot: tt.DotOp) -> list[tt.DotOp]:
    """The other tt.dots of the dot's region that its result reaches or that reach its
    operands (upstream's multiRootGetSlice, forward and backward, within the region)."""
    region = dot.parent_region()
    found: list[tt.DotOp] = []
    seen: set[int] = {id(dot)}

    def visit(op: Operation) -> bool:
        if id(op) in seen or op.parent_region() is not region:
            return False
        seen.add(id(op))
        if isinstance(op, tt.DotOp):
            found.append(op)
        return True

    todo: list[SSAValue] = [dot.d]
    while todo:  # forward
        for use in todo.pop().uses:
            if visit(use.operation):
                todo += list(use.operation.results)
    todo = list(dot.operands)
    while todo:  # backward
        owner = todo.pop().owner
        if isinstance(owner, Operation) and visit(owner):
            todo += list(owner.operands)
    return found


def warps_per_tile(dot: tt.DotOp | None, shape: tuple[int, ...], num_warps: int) -> list[int]:
    """upstream's `warpsPerTileV2` (see the module docstring; `dot` None: not chained)."""
    if len(shape) == 3:
        return [num_warps, 1, 1]
    chained = _chained_dots(dot) if dot is not None else []
    for other in chained:
        enc = encoding_of(other.d.type)
        if isinstance(enc, NvidiaMmaEncodingAttr) and len(shape_of(other.d.type)) == len(shape):
            return list(enc.warpsPerCTA)  # already placed: the same warps, so the result
            # of one feeds the other in registers (mma -> dot operand, no shared memory)
    if chained:
        return [num_warps, 1] if shape[0] >= shape[1] else [1, num_warps]
    ret = [1, 1]
    per_warp = (16, 8)
    while ret[0] * ret[1] < num_warps:
        if shape[0] // per_warp[0] // ret[0] >= shape[1] // (per_warp[1] * 2) // ret[1]:
            if ret[0] < shape[0] // per_warp[0]:
                ret[0] *= 2
            else:
                ret[1] *= 2
        else:
            ret[1] *= 2
    return ret


def _convert(before: Operation, v: SSAValue, layout: Attribute) -> SSAValue:
    if encoding_of(v.type) == layout:
        return v
    return insert_before(before, ConvertLayoutOp(v, with_encoding(v.type, layout))).result


def _to_mma(
    dot: tt.DotOp, k_width: int, num_warps: int, v3: tuple[list[int], list[int]] | None = None
) -> None:
    shape = shape_of(dot.d.type)
    if v3 is not None:
        mma = NvidiaMmaEncodingAttr(v3[0], v3[1], version_major=3)
    else:
        mma = NvidiaMmaEncodingAttr(warps_per_tile(dot, shape, num_warps))
    a = _convert(dot, dot.a, DotOperandEncodingAttr(0, mma, k_width))
    b = _convert(dot, dot.b, DotOperandEncodingAttr(1, mma, k_width))
    c = _convert(dot, dot.c, mma)
    new = tt.DotOp(a, b, c, dot.input_precision)
    if dot.maxNumImpreciseAcc is not None:
        new.properties["maxNumImpreciseAcc"] = dot.maxNumImpreciseAcc
    insert_before(dot, new)
    back = insert_after(new, ConvertLayoutOp(new.d, dot.d.type))
    dot.d.replace_all_uses_with(back.result)
    dot.detach()
    dot.erase()


def _to_fma(dot: tt.DotOp) -> None:
    parent = encoding_of(dot.d.type)
    if not isinstance(parent, BlockedEncodingAttr):
        return
    acc = element_type(dot.d.type)
    for i, v in enumerate((dot.a, dot.b)):
        v = _convert(dot, v, DotOperandEncodingAttr(i, parent))
        if is_fp8(v.type):  # no FMA on fp8: operands promoted to the accumulator's type
            v = insert_before(dot, tt.FpToFpOp(v, with_element(v.type, acc))).result
        dot.operands[i] = v


def accelerate_matmul(module: ModuleOp, mma_v3: bool = False) -> None:
    """`mma_v3`: the target is sm_90a, so eligible dots go to wgmma (the module docstring)."""
    capability = compute_capability(module)
    num_warps = num_warps_of(module)
    for dot in [op for op in module.walk() if isinstance(op, tt.DotOp)]:
        if not isinstance(encoding_of(dot.d.type), BlockedEncodingAttr):
            continue  # already on mma (upstream TTGIR) or not TTGIR
        k_width = mma_k_width(dot, capability)
        v3 = mma_v3_shape(dot, num_warps) if mma_v3 and capability >= 90 else None
        if k_width is not None:
            _to_mma(dot, k_width, num_warps, v3)
        else:
            _to_fma(dot)


@dataclass(frozen=True)
class AccelerateMatmulPass(ModulePass):
    name = "accelerate-matmul"

    mma_v3: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        accelerate_matmul(op, self.mma_v3)


__all__ = [
    "AccelerateMatmulPass",
    "accelerate_matmul",
    "mma_k_width",
    "mma_v3_k",
    "mma_v3_shape",
    "warps_per_tile",
]
