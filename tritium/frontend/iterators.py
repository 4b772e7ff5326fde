"""`tl.range` and `tl.static_range`: loop iterators the code generator recognises."""

from __future__ import annotations


class range:  # noqa: A001 - the Triton name
    """`for i in tl.range(start, end, step, num_stages=None, loop_unroll_factor=None)`: an
    `scf.for` loop; the extra arguments are hints for the pipeliner and unroller."""

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


class static_range:
    """`for i in tl.static_range(start, end, step)`: unrolled at compile time; `i` is a constexpr."""

    def __init__(self, arg1, arg2=None, step=None):
        if arg2 is None:
            self.start, self.end = 0, arg1
        else:
            self.start, self.end = arg1, arg2
        self.step = 1 if step is None else step
