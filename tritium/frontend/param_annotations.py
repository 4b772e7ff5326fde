"""Kernel parameter annotations, read as upstream reads them.

    @tritium.jit
    def k(x_ptr: tl.const, out_ptr: tl.pi32_t, n: tl.int64, scale: tl.float32, B: tl.constexpr):

* `tl.constexpr` (or any annotation naming it): a compile-time parameter (jit.py);
* `tl.const` (or a string `"const *fp32"` / `"*kfp32"`): the pointer points to read-only
  data; a store or atomic through it is a compile error naming the parameter;
* a dtype (`tl.int32`, `tl.float16`, `tl.pi32_t`, `tl.pointer_type(tl.float32)`, or a
  string such as `"i64"`, `"fp32"`, `"*fp16"`, `"tl.int32"`): the parameter has that type
  whatever the argument's own type would give. As upstream, an int argument of an
  integer-annotated parameter is still specialised on divisibility by 16 (not on `== 1`:
  the parameter keeps its type), floats and bools are not specialised, and the launch
  converts the value to the type or refuses it (a float for an integer, a number that
  does not fit).

Anything else (`x: int`, `p: torch.Tensor`) is ignored, as upstream ignores it.
"""

from __future__ import annotations

import inspect

from tritium.errors import ArgumentError
from tritium.frontend import core

_NAMES = {
    "int1": "i1", "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "fp16", "fp16": "fp16", "bfloat16": "bf16", "bf16": "bf16",
    "float32": "fp32", "fp32": "fp32", "float64": "fp64", "fp64": "fp64",
}  # fmt: skip


def _from_string(s: str) -> tuple[core.dtype | None, bool]:
    s = s.strip().strip("'\"").strip()  # under `from __future__ import annotations`
    s = s.removeprefix("tl.").removeprefix("triton.language.")
    const = "const" in s or s.startswith("*k")
    if s == "const":
        return None, True
    s = s.removeprefix("const ").strip()
    s = "*" + s[2:] if s.startswith("*k") else s
    if s.endswith("*"):
        s = "*" + s[:-1].strip()
    ptr = s.startswith("*")
    base = s.removeprefix("*").removeprefix("tl.").removesuffix("_t")
    sig = _NAMES.get(base, base)
    try:
        ty = core.dtype_from_signature(("*" if ptr else "") + sig)
    except KeyError:
        return None, const
    return ty, const


def parse(annotation) -> tuple[core.dtype | None, bool]:
    """(the dtype the annotation names or None, whether it marks the pointer `tl.const`)."""
    if annotation is inspect.Parameter.empty or annotation is None:
        return None, False
    if isinstance(annotation, core.constexpr):
        annotation = annotation.value
    if annotation is core.const:
        return None, True
    if isinstance(annotation, core.dtype):
        return (None if annotation.is_void() else annotation), False
    if isinstance(annotation, str) and "constexpr" not in annotation:
        return _from_string(annotation)
    return None, False


def param_types(fn) -> tuple[dict[str, core.dtype], set[str]]:
    """For a JITFunction: {parameter: annotated dtype} and the parameters marked tl.const."""
    types, const = {}, set()
    for name, p in fn.signature.parameters.items():
        if name in fn.constexpr_names:
            continue
        ty, is_const = parse(p.annotation)
        if ty is not None:
            types[name] = ty
        if is_const:
            const.add(name)
    return types, const


_SCALAR_KINDS = ("int", "float", "bool")


def specialise(spec, name: str, ty: core.dtype, kind: str, facts: dict, value) -> None:
    """Put parameter `name`, annotated `ty`, into the KernelSpec for an argument of `kind`
    with the keyed `facts` (tritium/jit/specialize.py's RULES; not called for constexprs
    and None)."""
    is_int = kind in ("int", "bool")
    if ty.is_ptr():
        ok = kind not in _SCALAR_KINDS
    elif ty.is_floating():
        ok = kind in _SCALAR_KINDS
    else:  # integers and bool: no float (the launch would have to truncate it)
        ok = is_int
    if not ok:
        raise ArgumentError(
            f"argument `{name}` is annotated {ty} but was given "
            f"{type(value).__name__} {value!r:.40}"
        )
    spec.types[name] = ty
    if (ty.is_ptr() and facts.get("aligned")) or (
        ty.is_int() and not ty.is_bool() and kind == "int" and facts.get("div16")
    ):
        spec.divisible_by_16.add(name)


__all__ = ["param_types", "parse", "specialise"]
