"""`reorder-instructions`: a conversion through shared memory that widens a value moves down
to its first user when a dot runs in between (register pressure, as upstream's pass of
this name sinks conversions for).

    scf.for ... {
      %lse = tt.load %p, %m : tensor<64x!tt.ptr<f32>, #blocked1>                  (1 register)
      %l = ttg.convert_layout %lse : tensor<64xf32, #blocked1>
                                   -> tensor<64xf32, #ttg.slice<{dim = 0, parent = #mma}>>   (16)
      %s = tt.dot %k, %q, %z : ... -> tensor<64x64xf32, #mma>
      %e = tt.expand_dims %l {axis = 0 : i32} ...
  =>
    scf.for ... {
      %lse = tt.load %p, %m : tensor<64x!tt.ptr<f32>, #blocked1>
      %s = tt.dot %k, %q, %z : ... -> tensor<64x64xf32, #mma>
      %l = ttg.convert_layout %lse : ... -> tensor<64xf32, #ttg.slice<{dim = 0, parent = #mma}>>
      %e = tt.expand_dims %l {axis = 0 : i32} ...

Converted where it stands, the wider result (a row statistic replicated over the mma
layout's lanes: 16 registers per thread for one of the source's) stays live through the
dots before its use, beside their accumulators and fragments. The attention backward's
dK/dV loop converts lse and delta (1D, one register each as loaded) to the slice of the
accumulator layout; at the top of the loop their 32 registers were live through all four
dots, and at 64x64 tiles, 4 warps, D = 64, causal, ptxas ran out (255 registers, one
value spilled; 239 and none after, the loop 6 SASS instructions shorter). Only such
conversions move: one through shared memory (`convert_plan`: a register permutation
costs nothing to keep early), whose result holds more registers per thread than its
source, with a `tt.dot` between it and its first user in its block. The load stays where
it is (its latency hidden by the dots), and so does everything else; the barriers the
conversion needs are placed afterwards (`membar`), around its new position.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from tritium.analysis.convert_plan import convert_plan
from tritium.ir.layouts import elements_per_thread


def _first_user(op: Operation, block: Block) -> Operation | None:
    """The earliest op of `block` that uses `op`'s result (itself or in a nested region)."""
    users = {u.operation for u in op.results[0].uses}
    for candidate in block.ops:
        if candidate in users or any(candidate.is_ancestor(u) for u in users):
            return candidate
    return None


def _sink_target(op: Operation) -> Operation | None:
    """Where the conversion `op` should stand instead (its first user), or None."""
    src_t, dst_t = op.operands[0].type, op.results[0].type
    if elements_per_thread(dst_t) <= elements_per_thread(src_t):
        return None
    if convert_plan(src_t, dst_t) is None:
        return None
    block = op.parent_block()
    first = _first_user(op, block) if block is not None else None
    if first is None:
        return None
    between = block.ops
    seen = False
    for o in between:
        if o is first:
            break
        if seen and o.name == "tt.dot":
            return first
        seen = seen or o is op
    return None


class ReorderInstructionsPass(ModulePass):
    name = "reorder-instructions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        converts = [o for o in op.walk() if o.name == "ttg.convert_layout"]
        for cvt in converts:
            target = _sink_target(cvt)
            if target is not None:
                cvt.detach()
                target.parent_block().insert_op_before(cvt, target)


__all__ = ["ReorderInstructionsPass"]
