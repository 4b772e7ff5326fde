"""The interpreter's `tt.reduce`: the combine region on whole arrays, in a tree.

    %s = "tt.reduce"(%x) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      tt.reduce.return %r : f32
    }) : (tensor<128xf32>) -> f32

The reduced axis is moved last; each round pairs neighbours (lower index on the left)
and runs the region (compiled once, run with `blocks.run_block`) on all pairs at once,
an odd last element passing through: log2(n) region runs.
"""

from __future__ import annotations

import numpy as np

from tritium.runtime.interpreter.blocks import run_block


def reduce(op, fc):
    """Builder of the `tt.reduce` closure (registered in ops.py's table)."""
    srcs, outs = [fc(v) for v in op.srcs], [fc(r) for r in op.res]
    axis = op.axis.value.data
    body = fc.region(op.combine_op)

    def run(env, st):
        vals = [np.moveaxis(np.asarray(env[s]), axis, -1) for s in srcs]
        n = vals[0].shape[-1]
        while n > 1:
            even = n - n % 2
            left = [v[..., 0:even:2] for v in vals]
            right = [v[..., 1:even:2] for v in vals]
            shape = left[0].shape
            res = [
                r if np.shape(r) == shape else np.broadcast_to(r, shape)
                for r in run_block(body, env, st, left + right)
            ]
            if n % 2:
                res = [np.concatenate([r, v[..., even:]], axis=-1) for r, v in zip(res, vals)]
            vals, n = res, even // 2 + n % 2
        for o, v in zip(outs, vals):
            env[o] = v[..., 0][()]

    return run


HANDLERS = {"tt.reduce": reduce}

__all__ = ["HANDLERS", "reduce"]
