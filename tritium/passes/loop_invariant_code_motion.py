"""`loop-invariant-code-motion`: hoist pure, loop-invariant ops out of `scf.for` bodies.

    scf.for %i = %c0 to %n step %c1024 iter_args(%acc = %z) -> (f32) : i32 {
      %offs = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
      %o = tt.splat %i : i32 -> tensor<1024xi32>
      ...
  =>
    %offs = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    scf.for %i = %c0 to %n step %c1024 iter_args(%acc = %z) -> (f32) : i32 {
      %o = tt.splat %i : i32 -> tensor<1024xi32>
      ...

xDSL's `LoopInvariantCodeMotionPass` works with our dialects as is: it moves ops that are
side-effect free and speculatable (our `Pure` ops; not `tt.load`, not divisions) and whose
operands are all defined outside the loop, innermost loops first. Upstream's `triton-licm`
also hoists loads behind a "loop runs at least once" guard; this one does not.
"""

from __future__ import annotations

from xdsl.transforms.loop_invariant_code_motion import LoopInvariantCodeMotionPass

__all__ = ["LoopInvariantCodeMotionPass"]
