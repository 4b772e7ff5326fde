"""The interpreter's atomics: `tt.atomic_rmw` and `tt.atomic_cas` on numpy.

    %old = tt.atomic_rmw add, acq_rel, gpu, %ptrs, %vals, %mask : (...) -> tensor<128xi32>

The unmasked elements are applied one at a time in row-major order, so elements that
share an address accumulate (as `np.add.at` does), and each element's result is the
value its address held just before its own update. Masked-off elements touch no memory
and give 0. Integer `add` wraps (two's complement), `umax`/`umin` compare as unsigned,
`fadd` adds in the element type (fp16 in fp16, bf16 rounded to bf16), `tt.atomic_cas`
compares bits (as the hardware's `atom.cas` does: -0.0 is not +0.0, a NaN equals
itself). `sem` and `scope` do not change anything here: programs run one after another.

Addresses are checked like a load's: a bad unmasked lane raises `OutOfBoundsError`
naming the op's source line.

How: the current values are loaded (bounds-checked), then applied in rounds: round r
takes the r-th element of each address (row-major), so each round updates distinct
addresses with numpy; the final values are stored back once.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type

from tritium.errors import TritiumError
from tritium.ir.locations import op_source_loc
from tritium.ir.types import element_type
from tritium.runtime.interpreter import values as rep
from tritium.runtime.interpreter.memory import MemoryFault, out_of_bounds


def _unsigned(f):
    def g(old, x):
        u = np.dtype(f"uint{old.dtype.itemsize * 8}")
        return f(old.view(u), x.view(u)).view(old.dtype)

    return g


_INT_RMW = {
    "add": np.add,  # on int arrays numpy wraps
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "max": np.maximum,
    "min": np.minimum,
    "umax": _unsigned(np.maximum),
    "umin": _unsigned(np.minimum),
    "exch": lambda old, x: x,
}


def _combine(op):
    """`f(old, x) -> new` on representation arrays, for this op's kind and element type."""
    elem, rmw = element_type(op.result.type), op.rmw
    if rmw == "exch":
        return _INT_RMW["exch"]
    if isinstance(elem, BFloat16Type) and rmw == "fadd":
        return lambda old, x: rep.round_bf16(old + x)
    if isinstance(elem, Float16Type | Float32Type | Float64Type) and rmw == "fadd":
        return np.add
    if rep.np_dtype(elem).kind in "iu" and rmw in _INT_RMW and rmw != "fadd":
        return _INT_RMW[rmw]
    loc = op_source_loc(op)
    raise TritiumError(
        f"{loc}: " * bool(loc) + f"the interpreter does not support tt.atomic_rmw {rmw} on {elem}"
    )


def _apply_in_order(addr, current, update):
    """Apply `update(state, lanes) -> new state` lane by lane in order, per address.

    `addr`: the active lanes' addresses (1-D, row-major order); `current`: what memory
    holds at each lane now. Returns (each lane's old value, unique addresses, their
    final values)."""
    uniq, first, inv = np.unique(addr, return_index=True, return_inverse=True)
    if uniq.size == addr.size:  # no address repeats: one vectorised step
        return current.copy(), addr, update(current, np.arange(addr.size))
    state = current[first]
    order = np.argsort(inv, kind="stable")  # lanes grouped by address, row-major within
    starts = np.searchsorted(inv[order], np.arange(uniq.size))
    rank = np.empty(addr.size, np.int64)
    rank[order] = np.arange(addr.size) - starts[inv[order]]
    old = np.empty_like(current)
    for r in range(int(rank.max()) + 1):
        lanes = np.flatnonzero(rank == r)
        g = inv[lanes]
        old[lanes] = state[g]
        state[g] = update(state[g], lanes)
    return old, uniq, state


def _run_atomic(op, st, addr, mask, elem, update, what: str):
    """Shared body: load (bounds-checked), apply in order, store; returns the old values."""
    sdt = rep.storage_dtype(elem)
    addr = np.asarray(addr)
    try:
        loaded = rep.from_storage(st.mem.load(addr, mask, sdt, what), elem)
    except MemoryFault as e:
        raise out_of_bounds(op, e, st) from None
    out = np.array(loaded, copy=True).reshape(-1)
    active = (
        np.arange(addr.size)
        if mask is None
        else np.flatnonzero(np.broadcast_to(mask, addr.shape).reshape(-1))
    )
    if active.size:
        old, where, final = _apply_in_order(
            addr.reshape(-1)[active], out[active], lambda s, lanes: update(s, active[lanes])
        )
        out[active] = old
        st.mem.store(where, rep.to_storage(final, elem), None, sdt, what)
    return out.reshape(addr.shape)[()]


def atomic_rmw(op, fc):
    p, v, out = fc(op.ptr), fc(op.val), fc(op.result)
    m = fc(op.mask) if op.mask is not None else None
    elem = element_type(op.result.type)
    f = _combine(op)
    what = f"atomic {op.rmw}"

    def run(env, st):
        addr = np.asarray(env[p])
        x = np.broadcast_to(np.asarray(env[v]), addr.shape).reshape(-1)
        mask = env[m] if m is not None else None
        env[out] = _run_atomic(op, st, addr, mask, elem, lambda s, i: f(s, x[i]), what)

    return run


def atomic_cas(op, fc):
    p, c, v, out = fc(op.ptr), fc(op.cmp), fc(op.val), fc(op.result)
    elem = element_type(op.result.type)

    def run(env, st):
        addr = np.asarray(env[p])
        cmp = np.broadcast_to(np.asarray(env[c]), addr.shape).reshape(-1)
        val = np.broadcast_to(np.asarray(env[v]), addr.shape).reshape(-1)
        cmp_bits = np.asarray(rep.to_bits(cmp, elem)).reshape(-1)

        def update(s, i):
            hit = np.asarray(rep.to_bits(s, elem)).reshape(-1) == cmp_bits[i]
            return np.where(hit, val[i], s)

        env[out] = _run_atomic(op, st, addr, None, elem, update, "atomic cas")

    return run


HANDLERS = {
    "tt.atomic_rmw": atomic_rmw,
    "tt.atomic_cas": atomic_cas,
}

__all__ = ["HANDLERS", "atomic_cas", "atomic_rmw"]
