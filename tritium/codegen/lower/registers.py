"""A thread's registers by coordinate: which register holds a given element.

    #blocked<{sizePerThread = [2, 2], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1],
              order = [1, 0]}> on 16x16: register bases (0, 1), (1, 0)
    register_index -> {(0, 0): 0, (0, 1): 1, (1, 0): 2, (1, 1): 3}

The coordinate of register r is its register part (`LinearLayout.register_coord(r)`) XOR
the thread's part, which every register of the thread shares; so within one thread a
register is named by its register part. Dots find their operands this way: accumulator
register (m, n) takes A's register at (m, k) and B's at (k, n) (dot_fma.py, dot_mma.py),
the thread parts agreeing by construction of the dot-operand layouts.
"""

from __future__ import annotations

from tritium.ir.layouts import LinearLayout


def register_index(layout: LinearLayout) -> dict[tuple[int, ...], int]:
    """Register-part coordinate -> the first register holding it (later ones with the
    same coordinate are replicas)."""
    out: dict[tuple[int, ...], int] = {}
    for r in range(layout.num_registers):
        out.setdefault(layout.register_coord(r), r)
    return out


__all__ = ["register_index"]
