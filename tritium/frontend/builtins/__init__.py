"""The `tl` builtins: functions the code generator calls with the compiler in hand.

A builtin is an ordinary Python function marked with `@builtin`; when a kernel calls it,
the code generator passes `_semantic` (the typing rules and op builder, `semantic.py`)
and `_generator` (to inline `@jit` helpers such as a reduction's combine function).
Their signatures and defaults follow upstream Triton's `triton.language`. This module is
the entry: it gathers them for `tritium.language` and the code generator. The files, by
upstream's groups of `tl` functions, each import only `base.py`, the semantic layer,
core, ir, and one another downwards (scan -> reduction -> combine -> elementwise);
combine.py's combine functions, being `@jit` functions, also need the `jit` decorator:

    base.py            `@builtin`, `is_builtin`, argument checks, `constexpr_function`
    creation.py        program_id, num_programs, arange, full, zeros, zeros_like, full_like, cat
    memory.py          load, store                 block_ptr.py   make_block_ptr, advance
    elementwise.py     where, maximum, minimum, clamp, exp, log, sqrt, ..., fdiv, fma, umulhi
    shape.py           cast, to, broadcast_to, expand_dims, reshape, view, ravel, permute, trans,
                       join, split
    linear_algebra.py  dot                         hints.py       multiple_of, max_contiguous, ...,
                                                                  assume, debug_barrier
    inline_asm.py      inline_asm_elementwise
    tensor_descriptor.py  make_tensor_descriptor, tensor_descriptor (.load / .store), ...
    debug.py           static_assert, static_print, device_assert, device_print
    atomic.py          atomic_add, ..., atomic_cas
    reduction.py       reduce, sum, max, min, argmax, argmin, xor_sum
    scan.py            associative_scan, cumsum, cumprod, histogram, gather
    combine.py         the combine region of reductions and scans, the standard combine functions
"""

from tritium.frontend.builtins.atomic import (
    atomic_add,
    atomic_and,
    atomic_cas,
    atomic_max,
    atomic_min,
    atomic_or,
    atomic_xchg,
    atomic_xor,
)
from tritium.frontend.builtins.base import builtin, constexpr_function, is_builtin
from tritium.frontend.builtins.block_ptr import advance, make_block_ptr
from tritium.frontend.builtins.creation import (
    arange,
    cat,
    full,
    full_like,
    num_programs,
    program_id,
    zeros,
    zeros_like,
)
from tritium.frontend.builtins.debug import (
    device_assert,
    device_print,
    static_assert,
    static_print,
)
from tritium.frontend.builtins.elementwise import (
    abs,
    ceil,
    clamp,
    cos,
    div_rn,
    erf,
    exp,
    exp2,
    fdiv,
    floor,
    fma,
    log,
    log2,
    maximum,
    minimum,
    rsqrt,
    sin,
    sqrt,
    sqrt_rn,
    tanh,
    umulhi,
    where,
)
from tritium.frontend.builtins.hints import (
    assume,
    debug_barrier,
    max_constancy,
    max_contiguous,
    multiple_of,
)
from tritium.frontend.builtins.inline_asm import inline_asm_elementwise
from tritium.frontend.builtins.linear_algebra import dot
from tritium.frontend.builtins.memory import load, store
from tritium.frontend.builtins.reduction import argmax, argmin, max, min, reduce, sum, xor_sum
from tritium.frontend.builtins.scan import associative_scan, cumprod, cumsum, gather, histogram
from tritium.frontend.builtins.shape import (
    broadcast,
    broadcast_to,
    cast,
    expand_dims,
    join,
    permute,
    ravel,
    reshape,
    split,
    to,
    trans,
    view,
)
from tritium.frontend.builtins.tensor_descriptor import (
    load_tensor_descriptor,
    make_tensor_descriptor,
    store_tensor_descriptor,
    tensor_descriptor,
)

__all__ = [
    "abs",
    "advance",
    "arange",
    "argmax",
    "argmin",
    "associative_scan",
    "assume",
    "atomic_add",
    "atomic_and",
    "atomic_cas",
    "atomic_max",
    "atomic_min",
    "atomic_or",
    "atomic_xchg",
    "atomic_xor",
    "broadcast",
    "broadcast_to",
    "builtin",
    "cast",
    "cat",
    "ceil",
    "clamp",
    "constexpr_function",
    "cos",
    "cumprod",
    "cumsum",
    "debug_barrier",
    "device_assert",
    "device_print",
    "div_rn",
    "dot",
    "erf",
    "exp",
    "exp2",
    "expand_dims",
    "fdiv",
    "floor",
    "fma",
    "full",
    "full_like",
    "inline_asm_elementwise",
    "gather",
    "histogram",
    "is_builtin",
    "join",
    "load",
    "load_tensor_descriptor",
    "log",
    "log2",
    "make_block_ptr",
    "make_tensor_descriptor",
    "max",
    "max_constancy",
    "max_contiguous",
    "maximum",
    "min",
    "minimum",
    "multiple_of",
    "num_programs",
    "permute",
    "program_id",
    "ravel",
    "reduce",
    "reshape",
    "rsqrt",
    "sin",
    "split",
    "sqrt",
    "sqrt_rn",
    "static_assert",
    "static_print",
    "store",
    "store_tensor_descriptor",
    "sum",
    "tanh",
    "tensor_descriptor",
    "to",
    "trans",
    "umulhi",
    "view",
    "where",
    "xor_sum",
    "zeros",
    "zeros_like",
]
