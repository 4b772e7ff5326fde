"""What a launch's arguments say about the kernel to compile.

As upstream: an array argument becomes a pointer to its dtype, marked
`tt.divisibility = 16` when its address is 16-byte aligned; a Python int is `i32` when it
fits, else `i64` (`u64` past 2**63), is marked divisible by 16 when it is, and becomes a
constant when it equals 1; a float is `fp32`; a bool is `i1`; `None` is a constexpr.
`arg_key` is the cheap per-launch summary of exactly those facts.
"""

from __future__ import annotations

import numbers

import numpy as np

from tritium.dtype_names import DTYPE_TO_TRITON
from tritium.errors import ArgumentError
from tritium.frontend import core
from tritium.frontend.core import constexpr

LAUNCH_OPTIONS = frozenset(
    {
        "num_warps",
        "num_stages",
        "num_ctas",
        "debug",
        "stream",
        "arch",
        "enable_fp_fusion",
        "maxnreg",
    }
)

_NP_TO_SIG = DTYPE_TO_TRITON
_TYPESTR_TO_SIG = {
    "b1": "i1",
    "i1": "i8",
    "i2": "i16",
    "i4": "i32",
    "i8": "i64",
    "u1": "u8",
    "u2": "u16",
    "u4": "u32",
    "u8": "u64",
    "f2": "fp16",
    "f4": "fp32",
    "f8": "fp64",
}


def int_signature(v: int) -> str:
    if -(2**31) <= v < 2**31:
        return "i32"
    if -(2**63) <= v < 2**63:
        return "i64"
    if 2**63 <= v < 2**64:
        return "u64"
    raise ArgumentError(f"integer argument {v} does not fit in 64 bits")


def _torch_sig(t) -> str:
    name = str(t.dtype).removeprefix("torch.")
    sig = _NP_TO_SIG.get(name)
    if sig is None:
        raise ArgumentError(f"unsupported torch dtype {t.dtype}")
    return sig


def pointer_info(v) -> tuple[str, int] | None:
    """(element signature, address) of an array-like argument, or None if it is not one."""
    if isinstance(v, np.ndarray):
        return _NP_TO_SIG.get(v.dtype.name) or _bad_dtype(v.dtype), v.ctypes.data
    mod = type(v).__module__
    if mod.startswith("torch") and hasattr(v, "data_ptr"):
        return _torch_sig(v), v.data_ptr()
    cai = getattr(v, "__cuda_array_interface__", None)
    if cai is not None:
        ts = cai["typestr"]
        sig = getattr(v, "_tritium_elem_sig", None) or _TYPESTR_TO_SIG.get(ts[1:])
        if sig is None:
            raise ArgumentError(f"unsupported array element type {ts}")
        return sig, cai["data"][0]
    return None


def _bad_dtype(dt):
    raise ArgumentError(f"arrays of dtype {dt} cannot be passed to a kernel")


def _int_key(v: int):
    if -(2**31) <= v < 2**31:
        return ("i32", v == 1, not v & 15)
    return (int_signature(v), v == 1, not v & 15)


def _ndarray_key(v: np.ndarray):
    sig = _NP_SIG_BY_DTYPE.get(v.dtype)
    if sig is None:
        sig = _NP_TO_SIG.get(v.dtype.name) or _bad_dtype(v.dtype)
    return ("*" + sig, not v.ctypes.data & 15)


def _numpy_dtypes() -> dict:
    out = {}
    for name, sig in _NP_TO_SIG.items():
        try:
            out[np.dtype(name)] = sig
        except TypeError:  # bfloat16, fp8: not numpy dtypes (ml_dtypes' are found by name)
            pass
    return out


_NP_SIG_BY_DTYPE = _numpy_dtypes()

# Per-type key functions: the launch fast path does one dict lookup per argument. Types
# seen for the first time (torch tensors, device arrays) are added by `_learn`.
_KEYERS: dict = {
    int: _int_key,
    float: lambda v: "fp32",
    bool: lambda v: "i1",
    type(None): lambda v: ("c", None),
    np.ndarray: _ndarray_key,
}


def _learn(v):
    """Register a fast key function for the type of array-like `v`, if it is one."""
    t = type(v)
    if isinstance(v, np.ndarray) and hasattr(v, "_tritium_elem_sig"):  # tritium.reinterpret

        def reinterpreted_key(x):
            return ("*" + (x._tritium_elem_sig or _ndarray_key(x)[0][1:]), not x.ctypes.data & 15)

        _KEYERS[t] = reinterpreted_key
        return reinterpreted_key
    if t.__module__.startswith("torch") and hasattr(v, "data_ptr"):
        sigs: dict = {}

        def torch_key(x):
            sig = sigs.get(x.dtype)
            if sig is None:
                sig = sigs[x.dtype] = "*" + _torch_sig(x)
            return (sig, not x.data_ptr() & 15)

        _KEYERS[t] = torch_key
        return torch_key
    if hasattr(v, "__cuda_array_interface__"):

        def cai_key(x):
            info = pointer_info(x)
            return ("*" + info[0], not info[1] & 15)

        _KEYERS[t] = cai_key
        return cai_key
    return None


def arg_key(v, is_constexpr: bool, no_specialize: bool):
    """A hashable summary of what an argument means for compilation."""
    if is_constexpr:
        v = v.value if isinstance(v, constexpr) else v
        return ("c", v if not isinstance(v, list) else tuple(v))
    if no_specialize:
        k = arg_key(v, False, False)
        if isinstance(k, tuple) and k[0] != "c":
            return k[0] if not k[0].startswith("*") else (k[0], True)
        return k
    f = _KEYERS.get(type(v)) or _learn(v)
    if f is not None:
        return f(v)
    if isinstance(v, constexpr):
        return ("c", v.value)
    if isinstance(v, np.generic):
        return _NP_TO_SIG.get(v.dtype.name) or _bad_dtype(v.dtype)
    if isinstance(v, numbers.Integral):
        return _int_key(int(v))
    if isinstance(v, numbers.Real):
        return "fp32"
    raise ArgumentError(f"cannot pass a {type(v).__name__} to a kernel")


def options_key(opts: dict) -> tuple:
    """Launch options as part of a cache key (the stream is not part of what is compiled)."""
    return tuple(sorted((k, v) for k, v in opts.items() if k != "stream"))


def launch_key(kinds, vals):
    """The specialisation part of a launch's cache key: one entry per parameter.
    `kinds[i]` is 0 for a runtime parameter, 1 for a constexpr, 2 for do_not_specialize."""
    keyers = _KEYERS
    out = []
    for v, kind in zip(vals, kinds):
        if kind == 0:
            f = keyers.get(type(v))
            out.append(f(v) if f is not None else arg_key(v, False, False))
        else:
            out.append(arg_key(v, kind == 1, kind == 2))
    return tuple(out)


def _launch_dtype(sig: str):
    try:
        return core.dtype_from_signature(sig)
    except KeyError:
        raise ArgumentError(f"arguments of type {sig} are not supported yet") from None


def build_spec(fn, vals):
    """The KernelSpec for parameter values `vals` (in order) of JITFunction `fn`."""
    from tritium.frontend.ttir import KernelSpec

    spec = KernelSpec()
    for i, (name, v) in enumerate(zip(fn.arg_names, vals)):
        key = arg_key(v, i in fn.constexpr_indices, name in fn.do_not_specialize)
        if isinstance(key, tuple) and key[0] == "c":
            spec.constants[name] = constexpr(key[1])
            continue
        if isinstance(key, str):
            spec.types[name] = _launch_dtype(key)
            continue
        sig = key[0]
        if sig.startswith("*"):
            spec.types[name] = _launch_dtype(sig)
            if key[1] and name not in fn.do_not_specialize:
                spec.divisible_by_16.add(name)
            continue
        _, is_one, div16 = key
        if is_one:
            spec.constants[name] = constexpr(1)
            continue
        spec.types[name] = _launch_dtype(sig)
        if div16:
            spec.divisible_by_16.add(name)
    return spec


def parse_signature(fn, signature, constexprs):
    """A KernelSpec from `tritium.compile`'s signature: a dict name -> "*fp32:16" / "i32" / ...,
    or a string / list in parameter order ("*fp32:16,*fp32:16,i32"), plus constexpr values."""
    from tritium.frontend.ttir import KernelSpec

    constexprs = dict(constexprs or {})
    if isinstance(signature, str):
        signature = [s.strip() for s in signature.split(",") if s.strip()]
    if isinstance(signature, (list, tuple)):
        runtime = [n for n in fn.arg_names if n not in constexprs and n not in fn.constexpr_names]
        if len(signature) != len(runtime):
            raise ArgumentError(
                f"the signature lists {len(signature)} types but `{fn.__name__}` has {len(runtime)} runtime parameters: {', '.join(runtime)}"
            )
        signature = dict(zip(runtime, signature))
    spec = KernelSpec()
    for name in fn.arg_names:
        if name in constexprs:
            spec.constants[name] = constexpr(constexprs[name])
            continue
        if name in fn.constexpr_names:
            raise ArgumentError(
                f"missing value for constexpr parameter `{name}` (give it with --constexpr {name}=VALUE)"
            )
        if name not in signature:
            raise ArgumentError(f"the signature has no type for parameter `{name}`")
        ty = str(signature[name]).strip()
        if ty == "constexpr":
            raise ArgumentError(
                f"parameter `{name}` is marked constexpr in the signature but has no value"
            )
        base, _, attr = ty.partition(":")
        try:
            spec.types[name] = core.dtype_from_signature(base)
        except KeyError:
            raise ArgumentError(
                f"unknown type '{base}' for parameter `{name}`; use e.g. *fp32, *fp16, *bf16, *i32, i32, i64, u32, fp32, fp16, i1"
            ) from None
        if attr == "16":
            spec.divisible_by_16.add(name)
        elif attr == "1":
            if spec.types[name].is_ptr():
                raise ArgumentError(f"`{name}`: a pointer cannot be specialised as equal to 1")
            del spec.types[name]
            spec.constants[name] = constexpr(1)
        elif attr:
            raise ArgumentError(
                f"unknown specialisation ':{attr}' for parameter `{name}` (use :16 for 'divisible by 16', :1 for 'equal to 1')"
            )
    extra = set(constexprs) - set(fn.arg_names)
    if extra:
        raise ArgumentError(f"`{fn.__name__}` has no parameter(s) named {', '.join(sorted(extra))}")
    extra = set(signature) - set(fn.arg_names)
    if extra:
        raise ArgumentError(f"`{fn.__name__}` has no parameter(s) named {', '.join(sorted(extra))}")
    return spec
