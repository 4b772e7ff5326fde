"""How a `tt.scan` maps onto its layout's bits (upstream's ScanLoweringHelper): chunk
registers, then lanes, then warps, then repetitions along the scan axis.

    %s = "tt.scan"(%x) <{axis = 0, reverse = false}> : tensor<1024xi32, #blocked(4 regs,
         32 lanes, 4 warps)>
      chunk = 2 register bits, lanes = 5 lane bits, warps = 2 warp bits, reps = 1 register
      bit; smem: one slot per (group, warp, lane): the warps' totals

Pure index maths: the allocator asks it for sizes (`ScanPlan.slots`), the lowering
(codegen/lower/scan.py) for the steps.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation

from tritium.ir.layouts import LinearLayout, layout_of


@dataclass(frozen=True)
class ScanPlan:
    """How a `tt.scan` along `axis` maps onto its layout's bits (each list in ascending
    order of the axis position it moves): `chunk` register bits (contiguous elements of
    one thread), then `lanes` (a run of lane-id bits), then `warps` (a run of warp-id
    bits), then `reps` register bits (the layout repeated along the axis). Every other
    non-free bit tells independent scans (rows) apart. `groups` are the register indexes
    with the chunk and free bits cleared: one chunk each."""

    layout: LinearLayout
    axis: int
    chunk: tuple[int, ...]
    lanes: tuple[int, ...]
    warps: tuple[int, ...]
    reps: tuple[int, ...]
    groups: tuple[int, ...]

    def slots(self) -> int:
        """Smem slots per operand: one per (group, warp, lane) when warps share the axis."""
        if not self.warps:
            return 0
        return len(self.groups) * self.layout.num_warps * self.layout.num_lanes


def _axis_bits(bases, axis: int) -> list[tuple[int, int]]:
    """[(axis value, bit)] of the bits that move `axis`; raises if a bit moves it and
    another dim at once."""
    out = []
    for bit, basis in enumerate(bases):
        if basis[axis]:
            if any(x for d, x in enumerate(basis) if d != axis):
                raise NotImplementedError(
                    f"layout basis {basis} moves the scan axis and another dim"
                )
            out.append((basis[axis], bit))
    return out


def _is_run(bits: list[int]) -> bool:
    return all(b == bits[0] + i for i, b in enumerate(bits))


def scan_plan(layout: LinearLayout, axis: int) -> ScanPlan:
    """The ScanPlan of a scan along `axis` of a tensor in `layout`; NotImplementedError
    for layouts whose bits do not follow registers < lanes < warps < registers along the
    axis (blocked layouts and their slices always do)."""
    kinds = []
    for kind, bases in (("r", layout.register), ("l", layout.lane), ("w", layout.warp)):
        kinds += [(v, kind, bit) for v, bit in _axis_bits(bases, axis)]
    kinds.sort()
    if [v for v, _, _ in kinds] != [1 << i for i in range(len(kinds))]:
        raise NotImplementedError(f"the scan axis is not laid out bit by bit in {layout}")
    pattern = "".join(k for _, k, _ in kinds)
    n_chunk = len(pattern) - len(pattern.lstrip("r"))
    rest = pattern[n_chunk:]
    n_lanes = len(rest) - len(rest.lstrip("l"))
    rest = rest[n_lanes:]
    n_warps = len(rest) - len(rest.lstrip("w"))
    if set(rest[n_warps:]) - {"r"}:
        raise NotImplementedError(
            f"scan axis bits in the order {pattern} (registers, lanes, warps)"
        )
    bits = [b for _, _, b in kinds]
    chunk = tuple(bits[:n_chunk])
    lanes = tuple(bits[n_chunk : n_chunk + n_lanes])
    warps = tuple(bits[n_chunk + n_lanes : n_chunk + n_lanes + n_warps])
    reps = tuple(bits[n_chunk + n_lanes + n_warps :])
    if not (_is_run(list(lanes)) and _is_run(list(warps))):
        raise NotImplementedError("scan axis lanes / warps are not consecutive id bits")
    cleared = layout.free_register_mask | sum(1 << b for b in chunk)
    groups = tuple(r for r in range(layout.num_registers) if not r & cleared)
    return ScanPlan(layout, axis, chunk, lanes, warps, reps, groups)


def plan_for_scan(op: Operation) -> ScanPlan:
    layout = layout_of(op.operands[0].type)
    return scan_plan(layout, op.axis.value.data)


__all__ = ["ScanPlan", "plan_for_scan", "scan_plan"]
