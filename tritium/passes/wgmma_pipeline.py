"""`wgmma-pipeline`: a `tt.dot` on the wgmma layout (`#ttg.nvidia_mma` version 3) reads its
operands straight from their shared tiles: `ttng.warp_group_dot` on the tiles, then
`ttng.warp_group_dot_wait` (upstream's `WGMMAPipeline`, `asyncLaunchDots`, on tritium's
pipelined loop).

    %a = ttg.local_load %sa token %w : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
    %b = ttg.local_load %sb token %w : !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>>
    %d = tt.dot %a, %b, %acc : ... -> tensor<128x128xf32, #mma>
  =>
    %d0 = ttng.warp_group_dot %sa, %sb, %acc {inputPrecision = 0 : i32, isAsync = true} : !ttg.memdesc<128x64xf16, ...> * !ttg.memdesc<64x128xf16, ...> -> tensor<128x128xf32, #mma>
    %d:3 = ttng.warp_group_dot_wait %d0, %sa, %sb {pendings = 0 : i32} : tensor<128x128xf32, #mma>, !ttg.memdesc<...>, !ttg.memdesc<...>

Runs after optimize-dot-operands, when every operand of such a dot is a `ttg.local_load`
of a `#ttg.nvmma_shared` tile (the software pipeliner's ring, or optimize-dot-operands'
`local_alloc`). A tile that ordinary stores fill (`local_alloc` of a value) gets a
`ttng.fence_async_shared` before the dot (upstream's FenceInsertion), which the membar
pass's barrier then follows: st.shared, fence.proxy.async, bar.sync, wgmma. The wait keeps no group in flight (`pendings = 0`): tritium's pipeliner
refills, at the top of the next iteration, the tile this dot reads, so the wgmma must be
done by then (keeping one group in flight, upstream's `pendings = 1`, needs the copies to
target the tile read two iterations ago: not done yet).
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tritium.analysis.membar import tile_alloc
from tritium.ir import tt
from tritium.ir.ttg_memory import LocalLoadOp
from tritium.ir.ttg_mma import NVMMASharedEncodingAttr, is_mma_v3
from tritium.ir.ttng import FenceAsyncSharedOp, WarpGroupDotOp, WarpGroupDotWaitOp
from tritium.ir.types import encoding_of
from tritium.passes.utils import insert_after, insert_before


def _tile_of(v) -> object | None:
    """The nvmma tile a dot operand was loaded from, or None."""
    load = v.owner
    if isinstance(load, LocalLoadOp) and isinstance(load.src.type.encoding, NVMMASharedEncodingAttr):
        return load.src
    return None


def _written_by_threads(tile) -> bool:
    """Whether ordinary stores fill the tile (`local_alloc` of a value, `local_store`),
    which the tensor cores, another memory proxy, see only after a fence.proxy.async;
    tiles only async copies fill need none (upstream's FenceInsertion)."""
    alloc = tile_alloc(tile)
    if alloc.operands:
        return True
    todo = [alloc.results[0]]
    while todo:
        for use in todo.pop().uses:
            if use.operation.name == "ttg.memdesc_index":
                todo.append(use.operation.results[0])
            elif use.operation.name == "ttg.local_store":
                return True
    return False


def wgmma_pipeline(module: ModuleOp) -> int:
    """Rewrite the wgmma dots (module docstring); returns how many."""
    count = 0
    for dot in [op for op in module.walk() if isinstance(op, tt.DotOp)]:
        if not is_mma_v3(encoding_of(dot.d.type)):
            continue
        tiles = [_tile_of(dot.a), _tile_of(dot.b)]
        if None in tiles:
            raise NotImplementedError(
                "a tt.dot on #ttg.nvidia_mma version 3 needs both operands loaded from "
                "#ttg.nvmma_shared tiles (run optimize-dot-operands first)"
            )
        loads = [dot.a.owner, dot.b.owner]
        if any(_written_by_threads(t) for t in tiles):
            insert_before(dot, FenceAsyncSharedOp())
        wg = insert_before(dot, WarpGroupDotOp(tiles[0], tiles[1], dot.c, dot.input_precision))
        wait = insert_after(wg, WarpGroupDotWaitOp([wg.d, *tiles], pendings=0))
        dot.d.replace_all_uses_with(wait.outputs[0])
        dot.detach()
        dot.erase()
        for load in loads:
            if load.parent is not None and not load.results[0].uses:
                load.detach()
                load.erase()
        count += 1
    return count


class WgmmaPipelinePass(ModulePass):
    name = "wgmma-pipeline"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        wgmma_pipeline(op)


__all__ = ["WgmmaPipelinePass", "wgmma_pipeline"]
