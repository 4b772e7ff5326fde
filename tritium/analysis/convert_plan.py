"""Layout conversions: which register of one layout holds an element of another on the same
thread (`register_map`), and, when elements change threads, where each element sits in
the shared-memory buffer the conversion goes through (`convert_plan`).

    %c = ttg.convert_layout %x : tensor<64x64xf32, #rows> -> tensor<64x64xf32, #cols>
      registers cannot do it (elements change threads): the tensor goes through smem,
      row-major in the destination's order, rows padded by one element when the two
      layouts' fastest dims differ (a transpose: strided accesses then hit distinct banks)

    %c = ttg.convert_layout %acc : tensor<128x256xf16, #mma_v3> -> tensor<128x256xf16, #blocked>
      a wgmma accumulator (the GEMM epilogue): each warp stores 8 rows x 4 lanes at once,
      so rows are padded by the 8 columns a row's 4 lanes store (16 bytes here): the 8 rows
      then start in different banks (unpadded, 512-byte rows put all 8 in the same banks:
      8-way conflicts); on sm_90+ the rows go 16 bytes at a time with stmatrix, whose 8
      rows per matrix the odd pitch (33 x 16 bytes) puts in distinct bank groups too

Shape ops (broadcast, expand_dims, trans, reshape) use `register_map` too: they never
move data between threads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Attribute

from tritium.ir.layouts import LinearLayout, layout_of
from tritium.ir.ttg import layout_order
from tritium.ir.ttg_mma import is_mma_v3
from tritium.ir.types import encoding_of

Coord = tuple[int, ...]


def register_map(
    src: LinearLayout, dst: LinearLayout, to_src: Callable[[Coord], Coord]
) -> list[int] | None:
    """For each register of `dst`, the register of `src` holding the same element on the
    same thread, or None when some element lives on another thread. `to_src` maps a
    coordinate of dst's shape to src's (it must be linear over XOR, as all maps here are).
    """
    for dst_bases, src_bases in ((dst.lane, src.lane), (dst.warp, src.warp)):
        if len(dst_bases) != len(src_bases):
            return None
        if any(to_src(d) != s for d, s in zip(dst_bases, src_bases)):
            return None
    where: dict[Coord, int] = {}
    for r in range(src.num_registers):
        where.setdefault(src.register_coord(r), r)
    out = []
    for r in range(dst.num_registers):
        c = to_src(dst.register_coord(r))
        if c not in where:
            return None
        out.append(where[c])
    return out


@dataclass(frozen=True)
class ConvertPlan:
    """A layout conversion through smem: element at coordinate c lives at
    `sum(c[d] * strides[d])` (elements)."""

    src: LinearLayout
    dst: LinearLayout
    strides: tuple[int, ...]
    size: int  # elements the buffer holds (padding included)


def convert_plan(src_t: Attribute, dst_t: Attribute) -> ConvertPlan | None:
    """None when every thread finds the values it needs in its own registers."""
    src, dst = layout_of(src_t), layout_of(dst_t)
    if register_map(src, dst, lambda c: c) is not None:
        return None
    shape = src.shape
    order = layout_order(encoding_of(dst_t))
    src_fast = layout_order(encoding_of(src_t))[0]
    pad = _row_pad(src_t, src_fast, order[0], shape)
    strides = [0] * len(shape)
    stride = 1
    for k, d in enumerate(order):
        strides[d] = stride
        stride *= shape[d] + (pad if k == 0 else 0)
    return ConvertPlan(src, dst, tuple(strides), stride)


def _row_pad(src_t: Attribute, src_fast: int, dst_fast: int, shape: tuple[int, ...]) -> int:
    """Elements of padding after each row of the buffer (see the module docstring)."""
    if len(shape) < 2 or shape[dst_fast] == 1:
        return 0
    if src_fast != dst_fast:
        return 1
    if is_mma_v3(encoding_of(src_t)):
        # One store of a warp covers 8 rows, each with a run of lanes x contiguous registers
        # (4 x 2 columns); padding by that run puts the rows side by side in the banks. The
        # mma.sync (v2) epilogue keeps its unpadded rows (sm_89 PTX unchanged).
        src = layout_of(src_t)
        lanes = 1 << sum(1 for b in src.lane if b[dst_fast])
        return lanes * src.contiguous_registers(dst_fast)
    return 0


__all__ = ["ConvertPlan", "Coord", "convert_plan", "register_map"]
