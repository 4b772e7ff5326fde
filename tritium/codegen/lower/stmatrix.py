"""16-bit mma fragments stored to shared memory with `stmatrix` (sm_90+): four 8x8 b16
matrices per instruction, the mirror of ldmatrix (ldmatrix.py).

    %c = ttg.convert_layout %acc : tensor<128x256xf16, #ttg.nvidia_mma<{versionMajor = 3, ...}>>
                                 -> tensor<128x256xf16, #blocked>
    before: st.shared.b32 [%r1+0], %r10;  st.shared.b32 [%r1+4224], %r11;  ...   (64 per thread)
    after:  stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r1+0], {%r10, %r11, %r12, %r13};
            stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r1+64], {...};     ...   (16 per thread)

Lane 4g + t of a warp supplies word t (two elements along the buffer's contiguous dim) of
row g of each matrix; lane L gives the address of row L % 8 of matrix L / 8. That is
exactly what the layout of an mma accumulator (v2 or v3) holds when its lane bases are
the m8n8 fragment's (`fragment_lanes`: columns 2, 4, rows 1, 2, 4) and its register
basis 0 steps the contiguous dim by one element, so matrix j of an instruction is word
4i + j of the thread (registers 8i + 2j, 8i + 2j + 1), and a matrix row is 8 consecutive
elements: 16 bytes at `sum(coord[d] * strides[d])` of the conversion's buffer
(`tritium.analysis.convert_plan`). The row addresses form a linear layout over (lane,
warp) (`row_addresses`, shared with ldmatrix), so they take the same thread-offset +
immediate split as the plain stores.

Only where it is bank-conflict free: the 8 rows of a matrix (16 bytes each) must fall in
the 8 distinct 16-byte bank groups, i.e. the buffer's row pitch is an odd number of
16-byte units. The wgmma (v3) accumulator's rows are padded by 16 bytes (convert_plan),
so its epilogue qualifies; the mma.sync (v2) buffer keeps unpadded rows (512-byte pitch
for 256 columns, sm_89 PTX unchanged), on which stmatrix would be 8-way conflicted, so
it keeps its st.shared.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from tritium.codegen.lower.context import FunctionLowering
from tritium.codegen.lower.ldmatrix import fragment_lanes, row_addresses
from tritium.codegen.lower.memory import Words
from tritium.codegen.lower.shared import offset_value, smem_pointer, thread_offset
from tritium.codegen.lower.types import i32
from tritium.ir.layouts import LinearLayout

ROW_BYTES = 16  # one matrix row: 8 b16 elements


@dataclass(frozen=True)
class StmatrixPlan:
    """How a 16-bit layout's registers go to a buffer with `stmatrix.x{x}`."""

    layout: LinearLayout  # the stored values' layout
    address: LinearLayout  # lane L: row L % 8 of matrix L / 8 (`row_addresses`)
    strides: tuple[int, ...]  # the buffer's, in elements
    x: int  # matrices per instruction

    @property
    def per_instruction(self) -> int:
        """Registers each instruction stores (two per matrix)."""
        return 2 * self.x


def stmatrix_plan(
    layout: LinearLayout, strides: tuple[int, ...], elem_bytes: int, base: int
) -> StmatrixPlan | None:
    """The plan for storing `layout`'s registers at `base + sum(coord[d] * strides[d]) *
    elem_bytes` with stmatrix, or None when stmatrix cannot do it without bank conflicts
    (see the module docstring). The caller checks the target (sm_90+)."""
    rank = layout.rank
    if elem_bytes != 2 or rank < 2 or len(layout.lane) != 5 or strides.count(1) != 1:
        return None
    fast = strides.index(1)
    rows = [d for d, x in enumerate(layout.lane[2]) if x]
    if len(rows) != 1 or rows[0] == fast:
        return None
    row = rows[0]
    if list(layout.lane) != fragment_lanes(rank, fast, row, 2):
        return None
    regs = layout.register
    if not regs or regs[0] != tuple(1 if d == fast else 0 for d in range(rank)):
        return None
    words = layout.num_registers // 2
    x = 4 if words % 4 == 0 else 2 if words % 2 == 0 else 1
    if any(not any(regs[k]) for k in range(1, x.bit_length())):
        return None  # a duplicate inside one instruction
    # each matrix row is 8 consecutive, 16-byte aligned elements of one buffer row
    if any(b[fast] % 8 for b in regs[1:] + layout.warp):
        return None
    if base % ROW_BYTES or any(s * elem_bytes % ROW_BYTES for d, s in enumerate(strides) if d != fast):
        return None
    if (strides[row] * elem_bytes // ROW_BYTES) % 2 == 0:
        return None  # the 8 rows of a matrix would share bank groups
    address = row_addresses(layout, row, 1, x)
    return StmatrixPlan(layout, address, strides, x)


def store_matrices(
    ctx: FunctionLowering, plan: StmatrixPlan, regs: list[ir.Value], base: int
) -> None:
    """One `stmatrix.sync.aligned.m8n8.x{x}.shared.b16` per `plan.per_instruction`
    registers (duplicates of registers stored already are skipped)."""
    b = ctx.builder
    name = f"llvm.nvvm.stmatrix.sync.aligned.m8n8.x{plan.x}.b16"
    fn = ctx.intrinsic(name, ir.VoidType(), [ir.PointerType(addrspace=3)] + [i32] * plan.x)
    thread, _ = thread_offset(ctx, plan.address, plan.strides)
    elem = ir.Constant(i32, 2)
    n = plan.per_instruction
    words = Words(regs[0].type, n)
    for first in range(0, len(regs), n):
        if first & plan.layout.free_register_mask:
            continue
        coord = plan.layout.register_coord(first)
        slot = sum(c * s for c, s in zip(coord, plan.strides))
        addr = b.add(b.mul(offset_value(ctx, thread, slot), elem), ir.Constant(i32, base))
        b.call(fn, [smem_pointer(ctx, addr)] + words.pack(b, regs[first : first + n]))


__all__ = ["StmatrixPlan", "stmatrix_plan", "store_matrices"]
