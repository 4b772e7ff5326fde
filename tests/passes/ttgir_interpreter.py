"""Run TTGIR with shared-memory tiles and async copies in tritium's CPU interpreter, checking
the cross-thread hazards a GPU would race on.

    with shared_memory_model(landing="wait") as model:
        interpret(module, grid, args)                  # tritium.runtime.interpreter

The interpreter runs one program at a time as if it were one thread; these handlers add
the `ttg` memory ops (local_alloc / memdesc_index / memdesc_trans (a view: its loads
and stores transpose) / async copies / commit / wait / local_load / local_store /
local_dealloc) and `gpu.barrier` with the ordering rules of
the GPU:

* a cp.async's data may land any time between its issue and the `async_wait` that
  covers its commit group: `landing="issue"` writes it at once, `landing="wait"` at the
  wait (a correct schedule computes the same in both);
* only `gpu.barrier` (placed by the membar pass) synchronises threads: `async_wait` makes
  the calling thread's copies land, other threads see them after the next barrier;
* a read of a stage whose copy has not been waited for, or that was written (a store, a
  local_alloc with a source, a waited copy) since the last barrier, is a RAW race; a write
  or a copy into a stage that some thread read or wrote since the last barrier is a WAR
  (WAW) race: all raise `HazardError`, as does a read of a stage nothing ever wrote;
* Hopper's `ttng.warp_group_dot` reads its tiles (A may be a tensor: registers) until a `ttng.warp_group_dot_wait`
  leaves fewer groups than its own in flight (`pendings`): issuing it is a read (RAW
  checks as a local_load), a copy or store into a tile an unretired wgmma reads is a WAR
  race, and a retired wgmma's read counts from its wait (other threads' wgmmas are known
  retired only after the next barrier); deallocating such a tile, or ending the kernel
  with wgmma groups in flight, raises too. (The product is computed at issue: the
  accumulator is only read by the dot chain and the waits, which pass it through.)
"""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

import numpy as np
from xdsl.dialects.builtin import TensorType

from tritium.ir.gpu import BarrierOp
from tritium.ir.ttg_memory import (
    AsyncCommitGroupOp,
    AsyncCopyGlobalToLocalOp,
    AsyncWaitOp,
    LocalAllocOp,
    LocalDeallocOp,
    LocalLoadOp,
    LocalStoreOp,
    MemDescIndexOp,
    MemDescTransOp,
)
from tritium.ir.ttng import FenceAsyncSharedOp, WarpGroupDotOp, WarpGroupDotWaitOp
from tritium.runtime.interpreter import ops
from tritium.runtime.interpreter import values as rep
from tritium.runtime.interpreter.dot import dot as dot_builder
from tritium.runtime.interpreter.memory import MemoryFault, out_of_bounds


class HazardError(AssertionError):
    """The schedule would race on a GPU."""


class SharedModel:
    def __init__(self, landing: str):
        assert landing in ("issue", "wait")
        self.landing = landing
        self.open: list = []  # copies issued since the last commit
        self.groups: list[list] = []  # committed, not yet waited for
        self.epoch = 0  # barriers so far
        self.last_read: dict = {}  # (id(slots), index) -> epoch of its last read
        self.last_write: dict = {}  # (id(slots), index) -> epoch of its last (visible) write
        self.wgmma: list[list] = []  # the tiles of each wgmma group in flight, oldest first
        self.copies = self.waits = self.barriers = self.dots = self.dot_waits = 0

    def barrier(self) -> None:
        self.epoch += 1
        self.barriers += 1

    def pending(self, slots, index) -> bool:
        return any(s is slots and i == index for g in [*self.groups, self.open] for s, i, _ in g)

    def since_barrier(self, table: dict, slots, index) -> bool:
        return table.get((id(slots), index), -1) >= self.epoch

    def wgmma_reads(self, slots, index) -> bool:
        return any(s is slots and i == index for g in self.wgmma for s, i in g)

    def write(self, slots, index, what: str) -> None:
        """A plain write of a stage: it must not race with reads or writes since the last
        barrier, nor with a wgmma in flight."""
        if self.wgmma_reads(slots, index):
            raise HazardError(f"{what} into a stage a wgmma in flight reads (WAR)")
        if self.since_barrier(self.last_read, slots, index):
            raise HazardError(f"{what} into a stage read since the last barrier (WAR)")
        if self.since_barrier(self.last_write, slots, index):
            raise HazardError(f"{what} into a stage written since the last barrier (WAW)")
        self.last_write[(id(slots), index)] = self.epoch


_MODEL: list[SharedModel] = []


def _m() -> SharedModel:
    return _MODEL[-1]


def _alloc(op, fc):
    out = fc(op.result)
    src = fc(op.src) if op.src is not None else None
    n = op.result.type.get_shape()[0]

    def run(env, st):
        if src is None:
            env[out] = ([None] * n, None)
        else:
            env[out] = ([np.array(env[src])], 0)
            _m().write(env[out][0], 0, "local_alloc")

    return run


def _index(op, fc):
    src, idx, out = fc(op.src), fc(op.index), fc(op.result)

    def run(env, st):
        slots = env[src][0]
        i = int(env[idx])
        if not 0 <= i < len(slots):
            raise HazardError(f"ttg.memdesc_index {i} outside {len(slots)} stages")
        env[out] = (slots, i)

    return run


def _trans(op, fc):
    """A transposed view: (slots, index, True); loads and stores through it transpose."""
    src, out = fc(op.src), fc(op.result)
    assert op.order_list == [1, 0]

    def run(env, st):
        slots, i, *t = env[src]
        env[out] = (slots, i, not (t and t[0]))

    return run


def _view(env, v):
    """(slots, index, transposed) of a memdesc value."""
    slots, i, *t = env[v]
    return slots, i, bool(t and t[0])


def _copy(op, fc):
    p, dst, tok = fc(op.src), fc(op.result_buf), fc(op.token)
    m = fc(op.mask) if op.mask is not None else None
    elem = op.result_buf.type.element_type
    sdt = rep.storage_dtype(elem)

    def run(env, st):
        model = _m()
        slots, i, trans = _view(env, dst)
        if model.wgmma_reads(slots, i):
            raise HazardError("async copy into a stage a wgmma in flight reads (WAR)")
        if model.since_barrier(model.last_read, slots, i):
            raise HazardError("async copy into a stage read since the last barrier (WAR)")
        if model.since_barrier(model.last_write, slots, i):
            raise HazardError("async copy into a stage written since the last barrier (WAW)")
        mask = env[m] if m is not None else None
        try:
            raw = st.mem.load(env[p], mask, sdt, "load")
        except MemoryFault as e:
            raise out_of_bounds(op, e, st) from None
        val = rep.from_storage(raw, elem)
        if mask is not None:
            val = np.where(mask, val, np.zeros_like(val))
        if trans:
            val = np.ascontiguousarray(val.T)
        model.open.append((slots, i, val))
        model.copies += 1
        if model.landing == "issue":
            slots[i] = val
        env[tok] = 0

    return run


def _commit(op, fc):
    out = fc(op.result)

    def run(env, st):
        model = _m()
        model.groups.append(model.open)
        model.open = []
        env[out] = 0

    return run


def _wait(op, fc):
    out, num = fc(op.result), op.num

    def run(env, st):
        model = _m()
        while len(model.groups) > num:
            for slots, i, val in model.groups.pop(0):
                slots[i] = val
                model.last_write[(id(slots), i)] = model.epoch  # others: after a barrier
        model.waits += 1
        env[out] = 0

    return run


def _read(env, v, what: str):
    """A read of the tile memdesc `v` views: its value, after the RAW checks."""
    model = _m()
    slots, i, trans = _view(env, v)
    if model.pending(slots, i):
        raise HazardError(f"{what} of a stage whose async copy was not waited for (RAW)")
    if model.since_barrier(model.last_write, slots, i):
        raise HazardError(f"{what} of a stage written since the last barrier (RAW)")
    if slots[i] is None:
        raise HazardError(f"{what} of a stage nothing wrote")
    model.last_read[(id(slots), i)] = model.epoch
    return np.ascontiguousarray(slots[i].T) if trans else slots[i]


def _load(op, fc):
    src, out = fc(op.src), fc(op.result)

    def run(env, st):
        env[out] = _read(env, src, "local_load")

    return run


class _TileValue:
    """A wgmma operand as tt.dot's builder sees it: a tensor read from the tile."""

    def __init__(self, mem):
        self.type = TensorType(mem.type.element_type, mem.type.get_shape())


def _warp_group_dot(op, fc):
    """A is a tile or, in wgmma's register form (attention's P @ V), a tensor."""
    operands = [(v, _TileValue(v)) for v in (op.a, op.b) if not isinstance(v.type, TensorType)]
    tile_values = dict(operands)
    va, vb = (tile_values.get(v, v) for v in (op.a, op.b))
    shim = SimpleNamespace(a=va, b=vb, c=op.c, d=op.d, input_precision=op.input_precision)
    product = dot_builder(shim, fc)
    reads = [(fc(v), fc(tv)) for v, tv in operands]

    def run(env, st):
        model = _m()
        for tile, value in reads:
            env[value] = _read(env, tile, "warp_group_dot")
        product(env, st)
        model.wgmma.append([_view(env, tile)[:2] for tile, _ in reads])
        model.dots += 1

    return run


def _warp_group_dot_wait(op, fc):
    ins, outs, pendings = [fc(v) for v in op.inputs], [fc(v) for v in op.outputs], op.pendings

    def run(env, st):
        model = _m()
        while len(model.wgmma) > pendings:
            for slots, i in model.wgmma.pop(0):
                model.last_read[(id(slots), i)] = model.epoch
        model.dot_waits += 1
        for x, y in zip(ins, outs, strict=True):
            env[y] = env[x]

    return run


def _fence(op, fc):
    return lambda env, st: None


def _store(op, fc):
    src, dst = fc(op.src), fc(op.dst)

    def run(env, st):
        slots, i, trans = _view(env, dst)
        _m().write(slots, i, "local_store")
        slots[i] = np.array(env[src].T if trans else env[src])

    return run


def _dealloc(op, fc):
    src = fc(op.src)

    def run(env, st):
        slots = env[src][0]
        model = _m()
        if any(model.pending(slots, i) for i in range(len(slots))):
            raise HazardError("local_dealloc of a buffer with copies in flight")
        if any(model.wgmma_reads(slots, i) for i in range(len(slots))):
            raise HazardError("local_dealloc of a buffer a wgmma in flight reads")

    return run


def _barrier(op, fc):
    def run(env, st):
        _m().barrier()

    return run


HANDLERS = {
    BarrierOp: _barrier,
    LocalAllocOp: _alloc,
    MemDescIndexOp: _index,
    MemDescTransOp: _trans,
    AsyncCopyGlobalToLocalOp: _copy,
    AsyncCommitGroupOp: _commit,
    AsyncWaitOp: _wait,
    LocalLoadOp: _load,
    LocalStoreOp: _store,
    LocalDeallocOp: _dealloc,
    WarpGroupDotOp: _warp_group_dot,
    WarpGroupDotWaitOp: _warp_group_dot_wait,
    FenceAsyncSharedOp: _fence,
}


@contextlib.contextmanager
def shared_memory_model(landing: str = "wait"):
    """Install the handlers for the duration of the block; yields the model (counters)."""
    model = SharedModel(landing)
    saved = {cls: ops.HANDLERS.get(cls) for cls in HANDLERS}
    ops.HANDLERS.update(HANDLERS)
    _MODEL.append(model)
    try:
        yield model
        if model.groups or model.open:
            raise HazardError("the kernel ended with async copies not waited for")
        if model.wgmma:
            raise HazardError("the kernel ended with wgmma groups in flight")
    finally:
        _MODEL.pop()
        for cls, h in saved.items():
            if h is None:
                ops.HANDLERS.pop(cls, None)
            else:
                ops.HANDLERS[cls] = h


__all__ = ["HazardError", "SharedModel", "shared_memory_model"]
