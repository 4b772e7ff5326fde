"""Raw launch entries: what the generated `kernel[grid](...)` function needs to call
`cuLaunchKernel` itself, without going through `Launcher.__call__`.

An entry is a plain tuple, unpacked in one step by the generated code:

    (cuLaunchKernel, function, pack_into, pool, block_x, shared, stream0, name, device)

* `pack_into(buf, 0, *values)` writes the launch's values into a parameter buffer. It takes
  the *candidates*: every parameter the generated code may pack (all non-constexpr
  parameters it guards), in order. Candidates the kernel was specialised on (an int equal
  to 1 became a constant) are written into slots the kernel does not read, so one
  generated function serves every specialisation of its argument types.
* `pool` is a list of `(buf, argv_address)` pairs: a ctypes buffer of 8-byte slots, one per
  candidate, and the address of a `void*[]` pointing at the slots the kernel reads.
  `pool.pop()` / `pool.append()` are atomic, so two threads never pack into the same buffer
  (cuda-python releases the GIL inside cuLaunchKernel); a thread that finds the pool empty
  takes the Launcher's own, locked path. This costs ~40 ns against ~100 ns for a lock.

* `function` is loaded on GPU `device` (an ordinal): the generated code reads torch's current
  stream there, and its key, which names the device of every array argument, only leads to
  entries of that device.

Only a Launcher that has been called once (module loaded, arguments checked) and is not in
debug mode gives entries; bf16 scalars (which need a conversion) get none.
"""

from __future__ import annotations

import ctypes
import struct
from typing import Any

POOL_SIZE = 4  # concurrent launches of one specialisation before the locked path


def _slot_code(code: str) -> str:
    """`code` padded with zero bytes to one 8-byte slot ("<" sizes: no implicit padding)."""
    size = struct.calcsize("<" + code)
    return code + (f"{8 - size}x" if size < 8 else "")


def build_entry(launcher: Any, candidates: list[tuple[str, str]]) -> tuple | None:
    """A raw entry for `launcher`, packing `candidates` = [(name, struct code for the
    candidate when the kernel does not read it)], or None where the fast path cannot serve
    this kernel (not loaded yet, debug mode, a bf16 scalar, a parameter that is no candidate)."""
    if not launcher._ready or launcher._function is None or launcher.debug:
        return None
    if launcher._bf16_index:
        return None
    index = {name: j for j, (name, _) in enumerate(candidates)}
    slots = []  # the candidate slot of each kernel parameter, in kernel order
    codes = [_slot_code(code) for _, code in candidates]
    for p in launcher.params:
        j = index.get(p.name)
        if j is None:
            return None
        slots.append(j)
        codes[j] = _slot_code(p.code)
    pack = struct.Struct("<" + "".join(codes)).pack_into
    n = max(len(candidates), 1)
    pool = []
    keep = []  # the ctypes objects behind the addresses in `pool`
    for _ in range(POOL_SIZE):
        data = (ctypes.c_uint64 * n)()
        base = ctypes.addressof(data)
        argv = (ctypes.c_void_p * max(len(slots), 1))(*[base + 8 * j for j in slots])
        keep.append(argv)
        pool.append((data, ctypes.addressof(argv) if slots else 0))
    launcher._entry_buffers = getattr(launcher, "_entry_buffers", []) + keep
    return (
        launcher._launch,
        launcher._function,
        pack,
        pool,
        launcher._block_x,
        launcher.shared,
        launcher._stream0,
        launcher.name,
        launcher.device,
    )
