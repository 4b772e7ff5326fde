"""The interpreter's `tt.addptr`, `tt.load`, `tt.store`, `tt.int_to_ptr` and `tt.ptr_to_int`
on the address space (memory.py).

    %p = tt.addptr %base, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
        ->  base + int64(offs) * 4                      (pointers are int64 addresses)
    %x = tt.load %p, %mask, %other : tensor<128x!tt.ptr<f32>>
        ->  where(mask, mem[p], other)                 (masked-off lanes touch no memory)
    tt.store %p, %x, %mask : tensor<128x!tt.ptr<f32>>
        ->  mem[p] = x on the unmasked lanes
    %a = tt.ptr_to_int %p : !tt.ptr<f16> -> i64       ->  the program address (host or device)
    %q = tt.int_to_ptr %a : i64 -> !tt.ptr<f16>       ->  its virtual address, the array found
                                                          among the live ones (live_arrays.py)

Values go through their storage dtype (values.py: i1 as a byte, bf16 as its bits); a
bad unmasked lane raises `OutOfBoundsError` naming the op's source line.
"""

from __future__ import annotations

import numpy as np

from tritium.ir.types import bitwidth, element_type
from tritium.runtime.interpreter import values as rep
from tritium.runtime.interpreter.memory import MemoryFault, out_of_bounds


def _addptr(op, fc):
    p, o, out = fc(op.ptr), fc(op.offset), fc(op.result)
    pointee = element_type(op.ptr.type).pointee
    size = max(bitwidth(pointee) // 8, 1)

    def run(env, st):
        env[out] = env[p] + np.asarray(env[o]).astype(np.int64) * size

    return run


def _load(op, fc):
    p, out = fc(op.ptr), fc(op.result)
    m = fc(op.mask) if op.mask is not None else None
    o = fc(op.other) if op.other is not None else None
    elem = element_type(op.result.type)
    sdt = rep.storage_dtype(elem)

    def run(env, st):
        mask = env[m] if m is not None else None
        try:
            raw = st.mem.load(env[p], mask, sdt, "load")
        except MemoryFault as e:
            raise out_of_bounds(op, e, st) from None
        val = rep.from_storage(raw, elem)
        if o is not None:
            val = np.where(mask, val, env[o])
        env[out] = val[()]

    return run


def _store(op, fc):
    p, v = fc(op.ptr), fc(op.value)
    m = fc(op.mask) if op.mask is not None else None
    elem = element_type(op.value.type)
    sdt = rep.storage_dtype(elem)

    def run(env, st):
        try:
            st.mem.store(
                env[p], rep.to_storage(env[v], elem), env[m] if m is not None else None, sdt
            )
        except MemoryFault as e:
            raise out_of_bounds(op, e, st) from None

    return run


def _address(method: str):
    def build(op, fc):
        x, out = fc(op.operands[0]), fc(op.results[0])

        def run(env, st):
            env[out] = getattr(st.mem, method)(env[x])[()]

        return run

    return build


HANDLERS = {
    "tt.addptr": _addptr,
    "tt.load": _load,
    "tt.store": _store,
    "tt.int_to_ptr": _address("to_pointer"),
    "tt.ptr_to_int": _address("to_int"),
}

__all__ = ["HANDLERS"]
