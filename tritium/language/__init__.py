"""`import tritium.language as tl`: the Triton language, with upstream's names."""

import builtins as _builtins

from tritium.dataclass_bytecode import dataclass_bytecode as _dataclass_bytecode
from tritium.gc_pause import gc_paused as _gc_paused

# the frontend's modules load xDSL's and tritium's op classes: no garbage, many dataclasses
with _gc_paused(), _dataclass_bytecode():
    from tritium.frontend import builtins as _frontend  # noqa: F401

from tritium.frontend.builtins import (  # noqa: F401
    abs,
    advance,
    arange,
    argmax,
    argmin,
    associative_scan,
    assume,
    atomic_add,
    atomic_and,
    atomic_cas,
    atomic_max,
    atomic_min,
    atomic_or,
    atomic_xchg,
    atomic_xor,
    broadcast,
    broadcast_to,
    cast,
    cat,
    ceil,
    clamp,
    constexpr_function,
    cos,
    cumprod,
    cumsum,
    debug_barrier,
    device_assert,
    device_print,
    div_rn,
    dot,
    erf,
    exp,
    exp2,
    expand_dims,
    fdiv,
    floor,
    fma,
    full,
    full_like,
    gather,
    histogram,
    inline_asm_elementwise,
    join,
    load,
    load_tensor_descriptor,
    log,
    log2,
    make_block_ptr,
    make_tensor_descriptor,
    max,
    max_constancy,
    max_contiguous,
    maximum,
    min,
    minimum,
    multiple_of,
    num_programs,
    permute,
    program_id,
    ravel,
    reduce,
    reshape,
    rsqrt,
    sin,
    split,
    sqrt,
    sqrt_rn,
    static_assert,
    static_print,
    store,
    store_tensor_descriptor,
    sum,
    tanh,
    tensor_descriptor,
    trans,
    umulhi,
    view,
    where,
    xor_sum,
    zeros,
    zeros_like,
)
from tritium.frontend.core import (  # noqa: F401
    bfloat16,
    block_type,
    const,
    constexpr,
    dtype,
    float8e4b8,
    float8e4b15,
    float8e4nv,
    float8e5,
    float8e5b16,
    float16,
    float32,
    float64,
    int1,
    int8,
    int16,
    int32,
    int64,
    pi32_t,
    pointer_type,
    tensor,
    uint8,
    uint16,
    uint32,
    uint64,
    void,
)
from tritium.frontend.iterators import range, static_range  # noqa: F401
from tritium.frontend.random import (  # noqa: F401
    pair_uniform_to_normal,
    philox,
    philox_impl,
    rand,
    rand4x,
    randint,
    randint4x,
    randn,
    randn4x,
    uint_to_uniform_float,
)
from tritium.frontend.standard import (  # noqa: F401
    bitonic_merge,
    cdiv,
    flip,
    interleave,
    sigmoid,
    softmax,
    sort,
    swizzle2d,
    topk,
)

bool = int1  # noqa: A001
# upstream's `tl.tuple`: a kernel's tuples are Python tuples (`tl.tuple([a, b])`,
# `isinstance(t, tl.tuple)`)
tuple = _builtins.tuple  # noqa: A001


class PropagateNan:
    NONE = "NONE"
    ALL = "ALL"


from tritium.frontend import math_namespace as math  # noqa: E402,F401


def __getattr__(name):
    # `tl.extra` (libdevice's ~150 functions, each built with its signature) loads on first
    # use: most kernels never call libdevice
    if name == "extra":
        import importlib

        return importlib.import_module("tritium.language.extra")
    raise AttributeError(f"module 'tritium.language' has no attribute {name!r}")
