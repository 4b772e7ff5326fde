"""`tl.math`: the elementwise math functions under upstream's `triton.language.math` names."""

from tritium.frontend.builtins import (  # noqa: F401
    abs,
    ceil,
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
    rsqrt,
    sin,
    sqrt,
    sqrt_rn,
    tanh,
    umulhi,
)
from tritium.frontend.standard import sigmoid  # noqa: F401
