"""Which ops need shared-memory scratch while they run, and how many bytes.

    tt.reduce across warps             its per-warp partials (reduce_plan.py)
    ttg.convert_layout between threads the whole tile (convert_plan.py)
    tt.scan across warps               the warps' totals (scan_plan.py)
    tt.atomic_rmw / atomic_cas         the old values, when threads that did not perform
                                       the atomic hold copies of its elements and use them
    tt.gather not within warps         the whole source (gather_plan.py)
    tt.histogram                       one i32 counter per bin

Scratch is written and read inside its op (every thread writes, a barrier, every thread
reads), so it lives only while the op runs: the allocator (allocation.py) places it, the
barrier analysis (membar.py) sees its two accesses.
"""

from __future__ import annotations

import math

from xdsl.ir import Operation

from tritium.analysis.convert_plan import convert_plan
from tritium.analysis.gather_plan import gather_scratch_bytes
from tritium.analysis.reduce_plan import plan_for_reduce
from tritium.analysis.scan_plan import plan_for_scan
from tritium.analysis.shared_bytes import align, element_bytes
from tritium.ir.layouts import layout_of


def atomic_broadcast_strides(op: Operation) -> tuple[int, ...] | None:
    """Row-major element strides of the smem buffer through which an atomic's old values
    reach the threads that did not perform it (its layout replicates elements across
    threads, or it is a scalar, done by thread 0); None when no such thread exists."""
    layout = layout_of(op.operands[0].type)
    if layout is None:
        return ()  # a scalar
    if not (layout.free_lane_mask or layout.free_warp_mask):
        return None
    strides, stride = [0] * len(layout.shape), 1
    for d in reversed(range(len(layout.shape))):
        strides[d], stride = stride, stride * layout.shape[d]
    return tuple(strides)


def scratch_bytes(op: Operation) -> int:
    """Bytes of shared memory `op` needs while it runs (0: none)."""
    if op.name == "tt.reduce":
        plan = plan_for_reduce(op)
        return plan.scratch_bytes([v.type for v in op.operands])
    if op.name == "ttg.convert_layout":
        plan = convert_plan(op.operands[0].type, op.results[0].type)
        return 0 if plan is None else align(plan.size * element_bytes(op.operands[0].type))
    if op.name == "tt.scan":
        slots = plan_for_scan(op).slots()
        return sum(align(slots * element_bytes(v.type)) for v in op.operands)
    if op.name in ("tt.atomic_rmw", "tt.atomic_cas") and op.results[0].uses:
        if atomic_broadcast_strides(op) is None:
            return 0
        layout = layout_of(op.operands[0].type)
        count = math.prod(layout.shape) if layout is not None else 1
        return align(count * element_bytes(op.results[0].type))
    if op.name == "tt.gather":
        return gather_scratch_bytes(op)
    if op.name == "tt.histogram":
        return align(math.prod(layout_of(op.results[0].type).shape) * 4)
    return 0


__all__ = ["atomic_broadcast_strides", "scratch_bytes"]
