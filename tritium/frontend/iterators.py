"""`tl.range` and `tl.static_range`: loop iterators the code generator recognises."""

from __future__ import annotations


class range:  # noqa: A001 - the Triton name
    """`for i in tl.range(start, end, step, num_stages=None, loop_unroll_factor=None,
    disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False)`: an `scf.for`
    loop carrying upstream's hint attributes (`tt.num_stages`, `tt.loop_unroll_factor`,
    `tt.disallow_acc_multi_buffer`, `tt.flatten`, `tt.warp_specialize`). The software
    pipeliner honours `num_stages` for this loop; the others are hints tritium records and
    does not act on (no loop unroller, no loop flattening, no warp specialization)."""

    def __init__(
        self,
        arg1,
        arg2=None,
        step=None,
        num_stages=None,
        loop_unroll_factor=None,
        disallow_acc_multi_buffer=False,
        flatten=False,
        warp_specialize=False,
    ):
        if arg2 is None:
            self.start, self.end = 0, arg1
        else:
            self.start, self.end = arg1, arg2
        self.step = 1 if step is None else step
        self.num_stages = num_stages
        self.loop_unroll_factor = loop_unroll_factor
        self.disallow_acc_multi_buffer = disallow_acc_multi_buffer
        self.flatten = flatten
        self.warp_specialize = warp_specialize


class static_range:
    """`for i in tl.static_range(start, end, step)`: unrolled at compile time; `i` is a constexpr."""

    def __init__(self, arg1, arg2=None, step=None):
        if arg2 is None:
            self.start, self.end = 0, arg1
        else:
            self.start, self.end = arg1, arg2
        self.step = 1 if step is None else step
