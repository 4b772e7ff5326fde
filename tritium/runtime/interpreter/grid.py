"""The interpreter's entry: `interpret(module, grid, args)` runs a kernel for every program id.

    module = parse_module(ttir_text)
    interpret(module, grid=(n_rows,), args=[x, out, n_rows, n_cols])   # x, out: numpy arrays

Checks the arguments against the `tt.func`'s parameters (numpy arrays, objects numpy
can view through `__dlpack__`, or device arrays, for pointers; ints that fit, numbers for
floats), maps the arrays into one address space (memory.py), compiles every `tt.func` of
the module once (function.py), then runs the kernel once per program id, in order (x
fastest), reading and writing the arrays in place. Device arrays (torch CUDA tensors,
cupy, DeviceArray), given or reached by address, are copied to the host and back
(live_arrays.py).
"""

from __future__ import annotations

import operator

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, IntegerType, ModuleOp, TensorType

from tritium.errors import ArgumentError
from tritium.ir.tt import FuncOp
from tritium.ir.types import PointerType
from tritium.runtime.array_kinds import kind_of
from tritium.runtime.interpreter import values as rep
from tritium.runtime.interpreter.blocks import State
from tritium.runtime.interpreter.function import Function
from tritium.runtime.interpreter.live_arrays import DeviceCopies, LiveArrays
from tritium.runtime.interpreter.memory import AddressSpace

__all__ = ["interpret"]


def interpret(module: ModuleOp, grid: tuple[int, ...], args: list, kernel: str | None = None):
    """Run `kernel` (default: the module's only public `tt.func`) for every program id."""
    funcs = {op.sym_name.data: op for op in module.body.block.ops if isinstance(op, FuncOp)}
    func = funcs.get(kernel) if kernel is not None else _default_kernel(funcs)
    if func is None:
        raise ArgumentError(f"no tt.func named {kernel!r} in the module (have {list(funcs)})")
    dims = tuple(int(g) for g in grid)
    if not 1 <= len(dims) <= 3 or min(dims) < 0:
        raise ArgumentError(f"grid must be 1 to 3 non-negative ints, got {grid!r}")
    dims = dims + (1,) * (3 - len(dims))

    params = func.function_type.inputs.data
    names = [a.name_hint or f"arg{i}" for i, a in enumerate(func.body.blocks.first.args)]
    if len(args) != len(params):
        raise ArgumentError(
            f"{func.sym_name.data} takes {len(params)} arguments ({', '.join(names)}), "
            f"got {len(args)}"
        )
    copies = DeviceCopies()
    try:
        _run(func, funcs, dims, params, names, args, copies)
    finally:
        copies.write_back()


def _run(func, funcs, dims, params, names, args, copies: DeviceCopies) -> None:
    arrays = []
    values: list = [None] * len(args)
    for i, (t, name, a) in enumerate(zip(params, names, args)):
        if isinstance(t, PointerType):
            arrays.append((i, name, *_array_arg(a, name, copies)))
        else:
            values[i] = _scalar_arg(a, t, name)
    memory = AddressSpace([(name, a, shift) for _, name, a, shift in arrays], LiveArrays(copies))
    for (i, *_), ptr in zip(arrays, memory.pointers):
        values[i] = np.int64(ptr)

    compiled = {name: Function(f) for name, f in funcs.items()}
    st = State(memory, compiled, dims)
    entry = compiled[func.sym_name.data]
    with np.errstate(all="ignore"):
        for z in range(dims[2]):
            for y in range(dims[1]):
                for x in range(dims[0]):
                    st.pid = (np.int32(x), np.int32(y), np.int32(z))
                    entry.call(st, values)


def _default_kernel(funcs: dict[str, FuncOp]) -> FuncOp | None:
    if len(funcs) == 1:
        return next(iter(funcs.values()))
    public = [f for f in funcs.values() if f.sym_visibility and f.sym_visibility.data == "public"]
    if len(public) != 1:
        raise ArgumentError(f"the module has several tt.funcs {list(funcs)}: pass kernel=NAME")
    return public[0]


def _array_arg(a, name: str, copies: DeviceCopies) -> tuple[np.ndarray, int]:
    """The argument's host array and shift (program address - host address)."""
    if isinstance(a, np.ndarray):
        if a.dtype.hasobject:  # its bytes are references: a store would corrupt them
            raise ArgumentError(
                f"argument {name!r}: an array of dtype {a.dtype} holds Python objects, "
                "which a kernel cannot read or write"
            )
        return a, 0
    kind = kind_of(a)
    if kind is not None and (kind.name != "torch" or a.is_cuda):
        return copies.view(a, name)
    if hasattr(a, "__dlpack__"):
        try:
            return np.from_dlpack(a), 0
        except Exception as e:  # a GPU tensor, say
            msg = f"argument {name!r}: cannot view {type(a).__name__} as numpy: {e}"
            raise ArgumentError(msg) from None
    raise ArgumentError(
        f"argument {name!r} is a pointer: pass a numpy array, not {type(a).__name__}"
    )


def _scalar_arg(v, t, name: str):
    if isinstance(t, TensorType):
        raise ArgumentError(f"argument {name!r}: tensor parameters cannot be passed to a kernel")
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v.item()
    if isinstance(t, IntegerType):
        w = t.width.data
        try:
            iv = operator.index(v)
        except TypeError:
            raise ArgumentError(f"argument {name!r} is {t}: expected an int, got {v!r}") from None
        if not -(1 << max(w - 1, 0)) <= iv < (1 << w):
            raise ArgumentError(f"argument {name!r}: {iv} does not fit in {t}")
        return rep.wrap_int(iv, t)
    if isinstance(v, bool) or not isinstance(v, int | float | np.integer | np.floating):
        raise ArgumentError(f"argument {name!r} is {t}: expected a number, got {v!r}")
    value = rep.np_dtype(t).type(v)
    return rep.round_bf16(value) if isinstance(t, BFloat16Type) else value
