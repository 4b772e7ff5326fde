"""Where each op's shared-memory scratch lives: byte offsets and the kernel's total.

    allocate(module) -> Allocation(offsets={reduce_op: 0, reduce_op2: 16, convert: 32}, total=4384)

Every buffer is scratch for one op (a reduction's partials, a layout conversion's tile):
it is written and read inside that op, so no two are live at once. Upstream puts them all
at offset 0 and pays a `bar.sync` before each reuse (write-after-read). Here small
buffers (<= SMALL bytes, which is what reductions need) each get their own range, so
consecutive reductions need no barrier between them; larger buffers share one region
placed after the small ones. `total` is the sum of the small ones plus the largest large
one, rounded up to 16 bytes.

The `allocate-shared-memory` pass records the result in the IR as upstream does
(`allocation.offset = N : i32` on the op, `ttg.shared = total : i32` on the module);
`read_allocation` takes it from there, or computes it for TTGIR that did not go
through the pass (hand-written test kernels).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation

from tritium.codegen.scratch import align, scratch_bytes

SMALL = 1024
OFFSET_ATTR = "allocation.offset"
SHARED_ATTR = "ttg.shared"


@dataclass
class Allocation:
    offsets: dict[Operation, int] = field(default_factory=dict)
    sizes: dict[Operation, int] = field(default_factory=dict)
    total: int = 0

    def range_of(self, op: Operation) -> tuple[int, int] | None:
        if op not in self.offsets:
            return None
        return self.offsets[op], self.offsets[op] + self.sizes[op]


def allocate(module: Operation) -> Allocation:
    """Offsets for every op of `module` that needs scratch (see the module docstring)."""
    alloc = Allocation()
    large: list[Operation] = []
    offset = 0
    for op in module.walk():
        size = scratch_bytes(op)
        if not size:
            continue
        alloc.sizes[op] = size
        if size <= SMALL:
            alloc.offsets[op] = offset
            offset += align(size)
        else:
            large.append(op)
    for op in large:
        alloc.offsets[op] = offset
    alloc.total = align(offset + max((alloc.sizes[op] for op in large), default=0))
    return alloc


def read_allocation(module: Operation) -> Allocation:
    """The allocation recorded by the pass, or a fresh one when the module has none."""
    if SHARED_ATTR not in module.attributes:
        return allocate(module)
    total = module.attributes[SHARED_ATTR]
    alloc = Allocation(total=total.value.data if isinstance(total, IntegerAttr) else 0)
    for op in module.walk():
        size = scratch_bytes(op)
        if not size:
            continue
        attr = op.attributes.get(OFFSET_ATTR)
        if not isinstance(attr, IntegerAttr):
            raise ValueError(f"{op.name} needs {size} bytes of shared memory but has no offset")
        alloc.offsets[op] = attr.value.data
        alloc.sizes[op] = size
        if alloc.offsets[op] + size > alloc.total:
            raise ValueError(f"{op.name}: its shared memory ends past ttg.shared = {alloc.total}")
    return alloc


__all__ = ["Allocation", "allocate", "read_allocation"]
