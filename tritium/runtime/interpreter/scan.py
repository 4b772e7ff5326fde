"""The interpreter's `tt.scan`: an inclusive scan along `axis` on numpy.

    %1 = "tt.scan"(%0) <{axis = 0 : i32, reverse = false}> ({
    ^bb0(%acc: i32, %x: i32):
      %s = arith.addi %acc, %x : i32
      tt.scan.return %s : i32
    }) : (tensor<128xi32>) -> tensor<128xi32>

`out[0] = x[0]`, then `out[i] = combine(out[i-1], x[i])` for i = 1, 2, ... in order, so a
non-associative or non-commutative combine region gives exactly the left-to-right
result (the GPU's tree order may differ for such regions). `reverse = true` runs from
the last element down: `out[n-1] = x[n-1]`, `out[i] = combine(out[i+1], x[i])`. With N
operands the region takes the N running values, then the N new elements, and returns N.

How: the scanned axis is moved last, and the region (compiled once, run with
`blocks.run_block`) is evaluated once per position along it, on whole slices
`v[..., i:i+1]`: n region runs, each vectorised over the other dimensions.
"""

from __future__ import annotations

import numpy as np

from tritium.runtime.interpreter.blocks import run_block


def scan(op, fc):
    """Builder of the `tt.scan` closure (registered in ops.py's table)."""
    srcs, outs = [fc(v) for v in op.srcs], [fc(r) for r in op.res]
    axis, reverse = op.axis.value.data, op.is_reverse
    body = fc.region(op.combine_op)

    def run(env, st):
        vals = [np.moveaxis(np.asarray(env[s]), axis, -1) for s in srcs]
        n = vals[0].shape[-1]
        res = [np.empty_like(v) for v in vals]
        order = range(n - 1, -1, -1) if reverse else range(n)
        first = order[0]
        acc = [v[..., first : first + 1] for v in vals]
        shape = acc[0].shape
        for r, a in zip(res, acc):
            r[..., first : first + 1] = a
        for i in order[1:]:
            new = [v[..., i : i + 1] for v in vals]
            acc = [
                a if np.shape(a) == shape else np.broadcast_to(a, shape)
                for a in run_block(body, env, st, acc + new)
            ]
            for r, a in zip(res, acc):
                r[..., i : i + 1] = a
        for o, r in zip(outs, res):
            env[o] = np.moveaxis(r, -1, axis)

    return run


HANDLERS = {"tt.scan": scan}

__all__ = ["HANDLERS", "scan"]
