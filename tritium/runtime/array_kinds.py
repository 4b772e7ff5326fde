"""Every kind of array a kernel argument can be, in one place: how to read its address,
its dtype, which GPU holds it, and how to zero / save / restore it.

| kind | recognised by | address | dtype | device (ordinal) |
|---|---|---|---|---|
| `numpy` | `np.ndarray` | `a.ctypes.data` (host memory) | `a.dtype` | none: the Launcher stages it on the launch's device |
| `device_array` | tritium's `DeviceArray` | `a.ptr` | `a.dtype` | `a.device` |
| `torch` | a `torch` type with `data_ptr` and `is_cuda` | `a.data_ptr()` | `a.dtype` (`torch.float32`) | `a.get_device()` (-1 on the CPU) |
| `cupy` | a `cupy` type with `data.ptr` | `a.data.ptr` | `a.dtype` | `a.device.id` |
| `cai` | any other `__cuda_array_interface__` | its `data[0]` | its `typestr` as a numpy dtype | the pointer's, from `cuPointerGetAttribute` (None: unknown) |

Each fact is a Python expression over `{a}` (the argument): the generated launch function
(tritium/jit/launch.py) writes it inline, and the functions here are compiled from the same
text, so both read an argument the same way. torch's `data_ptr()` is ~20x cheaper than its
`__cuda_array_interface__`, hence the special kinds.

Users of this table: the Launcher (`device_pointer`: a dict from type to address getter,
numpy left out so that it takes the staging path), the specialisation key and the launch
fast path (tritium/jit/specialize.py, launch.py: the device is keyed, in place of torch's
`is_cuda`, so a launch's entry is per device), autotune (`zero`, `save`, `restore`,
`host_span`), and the interpreter (`as_host_array`).

A launch runs on the device its array arguments are on (`arguments_device`); two arguments
on different devices are an ArgumentError naming both, and a launch whose arguments carry
no device runs on the current one (runtime/devices.py).

Read-only arrays (`read_only_reason`): a numpy array whose `flags.writeable` is False (set
by the caller, a view of a `bytes` object, a `np.memmap` opened with mode "r"), or a
`__cuda_array_interface__` whose `data` says read-only. A kernel may read them; the launch
paths refuse them for a parameter the kernel may write (tritium/runtime/launcher.py). On
the Launcher's per-call path a read-only CAI array's getter raises KeyError, which sends
the call to the Launcher's slow path, where that check runs; torch, cupy and DeviceArray
have no read-only arrays.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tritium.dtype_names import dtype_to_triton, unsupported_dtype
from tritium.errors import ArgumentError
from tritium.runtime import memory
from tritium.runtime.arrays import DeviceArray

__all__ = [
    "ArrayKind",
    "DEVICE_POINTERS",
    "EXPRESSION_NAMES",
    "KINDS",
    "arguments_device",
    "as_host_array",
    "device_of",
    "device_pointer",
    "element_type",
    "host_span",
    "is_interned_dtype",
    "kind_of",
    "read_only_reason",
    "restore",
    "save",
    "zero",
]


@dataclass(frozen=True)
class ArrayKind:
    """How to read one kind of array argument (see the table in the module docstring)."""

    name: str
    pointer: str  # expression over {a}: the address of element 0
    dtype: str  # expression over {a}: its dtype object (what a key compares)
    # expression over {a}: the ordinal of the GPU holding it (-1: host memory, a torch CPU
    # tensor; None: not known); None: the kind is host memory (numpy)
    device: str | None
    read_fast: bool  # the generated launch function reads it inline (numpy: staged instead)
    get_pointer: Callable[[Any], int] = field(init=False, repr=False, compare=False)
    get_dtype: Callable[[Any], Any] = field(init=False, repr=False, compare=False)
    get_device: Callable[[Any], int | None] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "get_pointer", _compile(self.pointer))
        object.__setattr__(self, "get_dtype", _compile(self.dtype))
        object.__setattr__(self, "get_device", _compile(self.device or "None"))

    def element_type(self, a) -> str:
        """The Triton element type of array `a` ("fp32"); ArgumentError if it has none."""
        dt = self.get_dtype(a)
        name = dtype_to_triton(dt)
        if name is None:
            raise ArgumentError(unsupported_dtype(dt))
        return name


def _cai_device(a) -> int | None:
    """The device holding a `__cuda_array_interface__` array's memory (None: not known)."""
    return memory.pointer_device(a.__cuda_array_interface__["data"][0])


# names the expressions below use (the JIT's key functions and generated code get them too)
EXPRESSION_NAMES = {"_np_dtype": np.dtype, "_cai_device": _cai_device}


def _compile(expr: str) -> Callable[[Any], Any]:
    return eval(f"lambda a: {expr.format(a='a')}", dict(EXPRESSION_NAMES))  # noqa: S307


_CAI = "{a}.__cuda_array_interface__"
# tritium.reinterpret's arrays (a numpy subclass, a CAI wrapper) name the type they are read as
_REINTERPRETED = 'getattr({a}, "_tritium_dtype", None) or '
KINDS = {
    k.name: k
    for k in (
        ArrayKind("numpy", "{a}.ctypes.data", _REINTERPRETED + "{a}.dtype", None, False),
        ArrayKind("device_array", "{a}.ptr", "{a}.dtype", "{a}.device", read_fast=True),
        ArrayKind("torch", "{a}.data_ptr()", "{a}.dtype", "{a}.get_device()", read_fast=True),
        ArrayKind("cupy", "{a}.data.ptr", "{a}.dtype", "{a}.device.id", read_fast=True),
        ArrayKind(
            "cai",
            _CAI + '["data"][0]',
            _REINTERPRETED + f'_np_dtype({_CAI}["typestr"])',
            "_cai_device({a})",
            False,
        ),
    )
}

_BY_TYPE: dict[type, ArrayKind | None] = {
    np.ndarray: KINDS["numpy"],
    DeviceArray: KINDS["device_array"],
    int: None,
    float: None,
    bool: None,
    type(None): None,
}


def kind_of(a) -> ArrayKind | None:
    """The kind of array `a` is (remembered per type), or None if it is not an array."""
    t = type(a)
    try:
        return _BY_TYPE[t]
    except KeyError:
        pass
    module = getattr(t, "__module__", "") or ""
    if isinstance(a, np.ndarray):
        kind = KINDS["numpy"]
    elif module.startswith("torch") and hasattr(a, "data_ptr") and hasattr(a, "is_cuda"):
        kind = KINDS["torch"]
    elif module.startswith("cupy") and hasattr(getattr(a, "data", None), "ptr"):
        kind = KINDS["cupy"]
    elif hasattr(a, "__cuda_array_interface__"):
        kind = KINDS["cai"]
    else:
        return None  # not remembered: another object of this type may grow the attribute
    _BY_TYPE[t] = kind
    return kind


def device_of(a) -> int | None:
    """The ordinal of the GPU holding array `a`, or None (host memory, not an array, or a
    `__cuda_array_interface__` pointer CUDA does not know)."""
    kind = kind_of(a)
    if kind is None:
        return None
    d = kind.get_device(a)
    return None if d is None or d < 0 else int(d)


def arguments_device(kernel: str, named: Iterable[tuple[str, Any]]) -> int | None:
    """The one device the array arguments `named` ((name, value) pairs) live on, or None
    when none carries one (scalars, numpy arrays, CPU tensors: the caller then takes the
    current device). Arguments on two devices are an ArgumentError naming both."""
    first = None
    for name, a in named:
        d = device_of(a)
        if d is None:
            continue
        if first is None:
            first = (name, d)
        elif d != first[1]:
            raise ArgumentError(
                f"kernel '{kernel}': argument '{first[0]}' is on cuda:{first[1]} but argument "
                f"'{name}' is on cuda:{d}; a launch runs on one device, so give it arrays on "
                f"one device (move them with .to('cuda:{first[1]}'), or copy between devices "
                "first)"
            )
    return None if first is None else first[1]


def is_interned_dtype(v) -> bool:
    """`v` is a dtype object its library makes once per type (numpy's builtin dtypes,
    torch's): equal dtypes are the same object, so `is` compares them."""
    if isinstance(v, np.dtype):
        return v.isbuiltin == 1
    t = type(v)
    return t.__name__ == "dtype" and (getattr(t, "__module__", "") or "").startswith("torch")


def element_type(a) -> str | None:
    """The Triton element type of array `a` ("fp32"), or None if `a` is not an array."""
    kind = kind_of(a)
    return None if kind is None else kind.element_type(a)


# --------------------------------------------------------------------------- the Launcher's view


def _torch_device_pointer(t: Any) -> int:
    if not t.is_cuda:
        raise ArgumentError(
            "a torch tensor on the CPU was passed for a pointer parameter: move it to the GPU "
            "(.cuda()) or pass a numpy array, which tritium copies"
        )
    return t.data_ptr()


def _null(_: Any) -> int:
    return 0


def _cai_pointer(a: Any) -> int:
    ptr, read_only = a.__cuda_array_interface__["data"]
    if read_only:  # the Launcher's slow path checks it against what the kernel writes
        raise KeyError("read-only")
    return ptr


# type -> device address getter, for the Launcher's per-call dict lookup. Filled by
# `device_pointer` as types are seen; numpy arrays are deliberately absent (staged).
DEVICE_POINTERS: dict[type, Callable[[Any], int]] = {
    DeviceArray: operator.attrgetter("ptr"),
    type(None): _null,
}


def device_pointer(a: Any) -> Callable[[Any], int] | None:
    """The device address getter for `a`'s type (remembered in DEVICE_POINTERS), or None for
    numpy arrays (staged) and non-arrays."""
    getter = DEVICE_POINTERS.get(type(a))
    if getter is not None:
        return getter
    kind = kind_of(a)
    if kind is None or kind.name == "numpy":
        return None
    getter = {"torch": _torch_device_pointer, "cai": _cai_pointer}.get(kind.name, kind.get_pointer)
    DEVICE_POINTERS[type(a)] = getter
    return getter


def read_only_reason(a: Any) -> str | None:
    """What makes array `a` read-only ("a read-only numpy array (flags.writeable is False)"),
    or None when a kernel may write it (and for anything that is not an array)."""
    if isinstance(a, np.ndarray):
        if a.flags.writeable:
            return None
        b = a
        while True:
            if isinstance(b, np.memmap) and getattr(b, "mode", None) == "r":
                return (
                    "a read-only view of a file (a numpy.memmap opened with mode='r'; "
                    "mode='r+' writes the file, mode='c' a private copy)"
                )
            if not isinstance(b.base, np.ndarray):
                break
            b = b.base
        if isinstance(b.base, bytes):
            return (
                "a read-only view of a bytes object (np.frombuffer of bytes, which cannot "
                "change; use a bytearray, or copy it with np.array)"
            )
        return "a read-only numpy array (flags.writeable is False)"
    kind = kind_of(a)
    if kind is not None and kind.name == "cai" and a.__cuda_array_interface__["data"][1]:
        return "a device array whose __cuda_array_interface__ marks it read-only"
    return None


def host_span(a: np.ndarray) -> tuple[int, int]:
    """[low, high) host addresses of the memory a (possibly strided) numpy array touches."""
    if a.size == 0:
        return a.ctypes.data, a.ctypes.data
    lo = hi = a.ctypes.data
    for n, s in zip(a.shape, a.strides):
        if s >= 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return lo, hi + a.itemsize


# --------------------------------------------------------------------------- the interpreter


def as_host_array(v):
    """An argument as the interpreter takes it: numpy arrays and scalars pass through; CPU
    torch tensors become numpy views of the same memory (writes land in the tensor); device
    arrays pass through (the interpreter copies their memory in and back out)."""
    if isinstance(v, np.ndarray) or v is None or isinstance(v, (int, float, bool, np.generic)):
        return v
    kind = kind_of(v)
    if kind is not None and kind.name == "torch" and not v.is_cuda:
        if "float8" in str(v.dtype):  # numpy has no fp8: its bytes, read as the tensor's type
            import torch

            from tritium.runtime.reinterpret import ReinterpretedArray

            view = v.detach().view(torch.uint8).numpy().view(ReinterpretedArray)
            view._tritium_dtype = str(v.dtype).removeprefix("torch.")
            return view
        return v.detach().numpy()
    if kind is not None:
        return v
    if hasattr(v, "__array__"):
        return np.asarray(v)
    return v


# --------------------------------------------------------------------------- autotune


def zero(a) -> None:
    """Fill array `a` with zero bytes."""
    kind = kind_of(a)
    name = kind.name if kind is not None else None
    if name == "numpy":
        if not a.flags.writeable:
            raise ArgumentError(f"reset_to_zero: cannot zero {read_only_reason(a)}")
        a.fill(0)
    elif name == "torch":
        a.zero_()
    elif name == "device_array":
        memory.memset_d8(a.ptr, 0, a.nbytes, None, a.device)
    else:
        raise ArgumentError(f"reset_to_zero: cannot zero a {type(a).__name__}")


def save(a):
    """A copy of array `a`'s contents, for `restore`."""
    kind = kind_of(a)
    name = kind.name if kind is not None else None
    if name == "numpy":
        return a.copy()
    if name == "torch":
        return a.clone()
    if name == "device_array":
        return a.numpy()
    raise ArgumentError(f"restore_value: cannot save a {type(a).__name__}")


def restore(a, saved) -> None:
    """Put back the contents `save(a)` returned."""
    name = kind_of(a).name  # type: ignore[union-attr]  (save accepted it)
    if name == "numpy":
        if a.flags.writeable:  # (no launch writes a read-only array: nothing to put back)
            a[...] = saved
    elif name == "torch":
        a.copy_(saved)
    else:
        a.copy_from(saved)
