"""How a `tt.gather` moves its elements (upstream's GatherLoweringHelper): with warp
shuffles when every warp holds all the source elements its results read, through shared
memory otherwise.

    %g = tt.gather %src[%idx] {axis = 0 : i32} : (tensor<64xf32, #src>, tensor<128xi32, #b>) -> ...
      #src = sizePerThread [2], threadsPerWarp [32], warpsPerCTA [4]: every warp holds all
      64 source elements -> warp-local: each result is 2 shfl.sync.idx + 1 select, no smem
      otherwise: the source goes to smem (row-major), bar.sync, each result is one ld.shared

A result element `(i, j)` (axis 0) reads `src[idx, j]` for an `idx` known only at run
time, so the gather is warp-local when, in every warp, the source elements of every
column `j` of that warp's results are all in the warp (`warp_local`, checked element by
element on the layouts). The shuffle then asks lane `lane(src coord)` for register
`reg(src coord)`: both are bit picks of the coordinate, since each basis of a blocked
layout moves one coordinate bit (`source_bits`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from xdsl.ir import Operation

from tritium.analysis.shared_bytes import align, element_bytes
from tritium.ir.layouts import Basis, LinearLayout, layout_of

# Layouts larger than this (in elements times replication) are not checked element by
# element: such a gather goes through shared memory.
_MAX_CHECKED = 1 << 16


@dataclass(frozen=True)
class Bit:
    """Index bit `bit` of a hardware index (register, lane) is coordinate `dim`'s bit
    `shift` (value `1 << shift`)."""

    bit: int
    dim: int
    shift: int


def source_bits(bases: tuple[Basis, ...]) -> list[Bit] | None:
    """The coordinate bit each non-zero basis moves; None when a basis moves more than one
    bit (not a blocked-like layout)."""
    out = []
    for i, basis in enumerate(bases):
        nonzero = [(d, x) for d, x in enumerate(basis) if x]
        if not nonzero:
            continue
        if len(nonzero) != 1 or nonzero[0][1] & (nonzero[0][1] - 1):
            return None
        d, x = nonzero[0]
        out.append(Bit(i, d, x.bit_length() - 1))
    return out


def _per_warp(layout: LinearLayout) -> list[set[Basis]]:
    return [
        {layout.coord(r, lane, w) for r in range(layout.num_registers) for lane in range(layout.num_lanes)}
        for w in range(layout.num_warps)
    ]


def warp_local(op: Operation) -> bool:
    """Whether every warp holds all the source elements its results may read."""
    return _warp_local(layout_of(op.src.type), layout_of(op.result.type), op.axis.value.data)


@cache
def _warp_local(src: LinearLayout, dst: LinearLayout, axis: int) -> bool:
    if source_bits(src.register) is None or source_bits(src.lane) is None:
        return False
    size = src.num_registers * src.num_lanes * src.num_warps
    if max(size, dst.num_registers * dst.num_lanes * dst.num_warps) > _MAX_CHECKED:
        return False
    n = src.shape[axis]
    held = _per_warp(src)
    # columns (the coordinate with the axis dropped) a warp holds whole
    whole: list[set[Basis]] = []
    for coords in held:
        count: dict[Basis, int] = {}
        for c in coords:
            key = c[:axis] + c[axis + 1 :]
            count[key] = count.get(key, 0) + 1
        whole.append({k for k, v in count.items() if v == n})
    for w, coords in enumerate(_per_warp(dst)):
        for c in coords:
            if c[:axis] + c[axis + 1 :] not in whole[w]:
                return False
    return True


def gather_scratch_bytes(op: Operation) -> int:
    """Shared memory a gather needs: none when warp-local, else the whole source."""
    if warp_local(op):
        return 0
    return align(math.prod(layout_of(op.src.type).shape) * element_bytes(op.src.type))


__all__ = ["Bit", "gather_scratch_bytes", "source_bits", "warp_local"]
