"""`tritium.compile`'s signature: parameter types written out, as a KernelSpec.

    parse_signature(add_kernel, "*fp32:16,*fp32:16,*fp32:16,i32", {"BLOCK_SIZE": 1024})
    parse_signature(add_kernel, {"x_ptr": "*fp32:16", ..., "n_elements": "i32:16"}, {...})

A type is a Triton signature name (`*fp32`, `i32`, `fp16`, ...); `:16` marks it divisible
by 16 (`tt.divisibility = 16`; for a pointer: 16-byte aligned), `:1` makes an int a
constant equal to 1. The JIT derives the same KernelSpec from a launch's arguments
(tritium/jit/specialize.py).
"""

from __future__ import annotations

from tritium.errors import ArgumentError
from tritium.frontend import core
from tritium.frontend.core import constexpr
from tritium.frontend.ttir import KernelSpec


def parse_signature(fn, signature, constexprs):
    """A KernelSpec from `tritium.compile`'s signature: a dict name -> "*fp32:16" / "i32" / ...,
    or a string / list in parameter order ("*fp32:16,*fp32:16,i32"), plus constexpr values."""
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
