"""`import tritium.language as tl`: the Triton language, with upstream's names."""

from tritium.frontend.builtins import (  # noqa: F401
    abs,
    arange,
    argmax,
    argmin,
    broadcast,
    broadcast_to,
    cast,
    ceil,
    clamp,
    constexpr_function,
    cos,
    device_assert,
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
    load,
    log,
    log2,
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
    sqrt,
    sqrt_rn,
    static_assert,
    static_print,
    store,
    sum,
    tanh,
    trans,
    umulhi,
    view,
    where,
    xor_sum,
    zeros,
    zeros_like,
)
from tritium.frontend.builtins_atomic import (  # noqa: F401
    atomic_add,
    atomic_and,
    atomic_cas,
    atomic_max,
    atomic_min,
    atomic_or,
    atomic_xchg,
    atomic_xor,
)
from tritium.frontend.builtins_block_ptr import advance, make_block_ptr  # noqa: F401
from tritium.frontend.builtins_print import device_print  # noqa: F401
from tritium.frontend.builtins_scan import associative_scan, cumprod, cumsum  # noqa: F401
from tritium.frontend.core import (  # noqa: F401
    bfloat16,
    block_type,
    constexpr,
    dtype,
    float16,
    float32,
    float64,
    int1,
    int8,
    int16,
    int32,
    int64,
    pointer_type,
    tensor,
    uint8,
    uint16,
    uint32,
    uint64,
    void,
)
from tritium.frontend.iterators import range, static_range  # noqa: F401
from tritium.frontend.standard import cdiv, sigmoid, softmax, swizzle2d  # noqa: F401

bool = int1  # noqa: A001
float8e5 = None  # fp8 types are not supported yet


class PropagateNan:
    NONE = "NONE"
    ALL = "ALL"


from tritium.frontend import math_namespace as math  # noqa: E402,F401
from tritium.language import extra  # noqa: E402,F401
