"""The register budget ptxas gets for loops of chained mma.sync dots (flash attention).

Left to itself, ptxas allocates a kernel whose loop chains two `mma.sync` dots through
registers (attention's S = Q K^T, the softmax, O += P V) below what its occupancy allows,
and schedules tight: the V fragments' `ldmatrix`, the accumulator's rescale and P @ V's
HMMAs wait until every exp2 is done. With the registers that cost no occupancy it overlaps
them with the MUFUs, as it does for upstream's PTX of the same kernel. So, for such kernels,
a second ptxas run with the top of the occupancy bracket of the first one's count:

    .reqntid 128                      .maxnreg 168
                              ->      .reqntid 128
    (ptxas: 152 registers,            (ptxas: 164 registers, 3 CTAs per SM still;
     3 CTAs of 4 warps per SM)         SASS loop of the D=64 forward, sm_90: static
                                       stall cycles per trip 918 -> 744, upstream 723)

kept when it spills no more than the first. Upstream's kernels reach that bracket's top on
their own (its forward: 168); `maxnreg` stays a user option upstream has and tritium ignores.
"""

from __future__ import annotations

from xdsl.ir import Operation

from tritium.codegen.tools import PtxasError
from tritium.ir.ttg_mma import is_mma, is_mma_v3
from tritium.ir.types import encoding_of

REGISTERS_PER_SM = 65536  # sm_70 .. sm_90
MAX_REGISTERS = 255
# sm -> (warps, CTAs) an SM holds at most (CUDA's occupancy tables)
_SM_LIMITS = {80: (64, 32), 86: (48, 16), 87: (48, 16), 89: (48, 24), 90: (64, 32)}


def _sm(arch: str) -> int:
    return int(arch.removeprefix("sm_").rstrip("a"))


def occupancy_ceiling(registers: int, num_warps: int, arch: str) -> int:
    """The most registers per thread that keep the CTAs per SM `registers` allows
    (registers are allocated per warp in blocks of 256: 8 per thread)."""
    warps_max, ctas_max = _SM_LIMITS.get(_sm(arch), (48, 16))
    per_warp = -(-registers // 8) * 8 * 32
    ctas = min(REGISTERS_PER_SM // (num_warps * per_warp), warps_max // num_warps, ctas_max)
    if ctas < 1:
        return registers
    return min(MAX_REGISTERS, REGISTERS_PER_SM // (ctas * num_warps * 32) // 8 * 8)


def _is_mma_sync_dot(op: Operation) -> bool:
    if op.name != "tt.dot":
        return False
    enc = encoding_of(op.results[0].type)
    return is_mma(enc) and not is_mma_v3(enc)


def chains_mma_dots(module: Operation) -> bool:
    """Some loop body computes an mma.sync dot's operand from another dot of that body."""
    return any(loop_chains_mma_dots(op) for op in module.walk() if op.name == "scf.for")


def loop_chains_mma_dots(loop: Operation) -> bool:
    """The body of `loop` (an scf.for) computes an mma.sync dot's operand from another dot
    of that body (lower/refill_offset.py asks this of the loop around a refill)."""
    for dot in (o for o in loop.walk() if o is not loop and _is_mma_sync_dot(o)):
        seen: set[int] = set()
        todo = [v.owner for v in dot.operands[:2]]
        while todo:
            op = todo.pop()
            if not isinstance(op, Operation) or id(op) in seen or not loop.is_ancestor(op):
                continue
            seen.add(id(op))
            if op is not dot and op.name == "tt.dot":
                return True
            todo += [v.owner for v in op.operands]
    return False


def with_maxnreg(ptx: str, registers: int) -> str:
    """The PTX with `.maxnreg registers` declared on its kernel (before its `.reqntid`)."""
    head, sep, tail = ptx.partition(".reqntid")
    if not sep or ".maxnreg" in head:
        return ptx
    return f"{head}.maxnreg {registers}\n{sep}{tail}"


def widen(ptx: str, first: tuple[bytes, dict], num_warps: int, arch: str, assemble):
    """(ptx, (cubin, usage)): the first assembly, or, when its registers sit below their
    occupancy bracket's top, the PTX with that budget and its assembly if it spills no more.
    `assemble(ptx, arch)` is codegen.tools.assemble."""
    usage = first[1]
    top = occupancy_ceiling(usage["registers"], num_warps, arch)
    if top <= usage["registers"]:
        return ptx, first
    wide = with_maxnreg(ptx, top)
    try:
        res = assemble(wide, arch)
    except PtxasError:  # the first assembly stands (its PTX passed)
        return ptx, first
    if wide == ptx or res is None or res[1]["spill_stores"] > usage["spill_stores"]:
        return ptx, first
    return wide, res
