"""The `tl` builtins: functions the code generator calls with the compiler in hand.

A builtin is an ordinary Python function marked with `@builtin`; when a kernel calls it,
the code generator passes `_semantic` (the typing rules and op builder) and
`_generator` (to inline `@jit` helpers such as a reduction's combine function). Their
signatures and defaults follow upstream Triton's `triton.language`.
"""

from __future__ import annotations

from tritium.frontend import core
from tritium.frontend.core import constexpr, tensor, unwrap
from tritium.frontend.semantic import SemanticError

_CACHE_MODIFIERS = {
    "": "none",
    ".ca": "ca",
    ".cg": "cg",
    ".cv": "cv",
    ".wb": "wb",
    ".cs": "cs",
    ".wt": "wt",
}
_EVICTION = {
    "": "evict_normal",
    "evict_normal": "evict_normal",
    "evict_first": "evict_first",
    "evict_last": "evict_last",
}


def builtin(fn):
    fn.__tritium_builtin__ = True
    return fn


def is_builtin(fn) -> bool:
    return getattr(fn, "__tritium_builtin__", False)


def _int_arg(x, what: str) -> int:
    v = unwrap(x)
    if isinstance(v, tensor):
        raise SemanticError(f"{what} must be a tl.constexpr integer, not a runtime value")
    if not isinstance(v, int):
        raise SemanticError(f"{what} must be an integer, got {v!r}")
    return v


def _shape_arg(shape) -> tuple[int, ...]:
    shape = unwrap(shape)
    if isinstance(shape, int):
        return (shape,)
    if not isinstance(shape, (tuple, list)):
        raise SemanticError(f"a shape must be a tuple of tl.constexpr integers, got {shape!r}")
    return tuple(_int_arg(s, "every dimension of a shape") for s in shape)


def _dtype_arg(d) -> core.dtype:
    d = unwrap(d)
    if not isinstance(d, core.dtype):
        raise SemanticError(f"expected a dtype such as tl.float32, got {d!r}")
    return d


# ---------------------------------------------------------------------- programs, ranges
@builtin
def program_id(axis, _semantic=None, _generator=None):
    return _semantic.program_id(_int_arg(axis, "program_id's axis"))


@builtin
def num_programs(axis, _semantic=None, _generator=None):
    return _semantic.num_programs(_int_arg(axis, "num_programs's axis"))


@builtin
def arange(start, end, _semantic=None, _generator=None):
    return _semantic.arange(_int_arg(start, "tl.arange's start"), _int_arg(end, "tl.arange's end"))


@builtin
def full(shape, value, dtype, _semantic=None, _generator=None):
    shape = _shape_arg(shape)
    dtype = _dtype_arg(dtype)
    value = unwrap(value)
    if isinstance(value, tensor):
        v = _semantic.cast(value, dtype)
        return _semantic.broadcast_to(v, shape) if shape else v
    _semantic.check_shape(shape)
    return _semantic.full(shape, value, dtype)


@builtin
def zeros(shape, dtype, _semantic=None, _generator=None):
    return full(shape, 0, dtype, _semantic=_semantic)


@builtin
def zeros_like(input, _semantic=None, _generator=None):
    return _semantic.full(input.shape, 0, input.dtype)


@builtin
def full_like(input, value, _semantic=None, _generator=None):
    return full(input.shape, value, input.dtype, _semantic=_semantic)


# ---------------------------------------------------------------------- memory
@builtin
def load(
    pointer,
    mask=None,
    other=None,
    boundary_check=(),
    padding_option="",
    cache_modifier="",
    eviction_policy="",
    volatile=False,
    _semantic=None,
    _generator=None,
):
    cache = _CACHE_MODIFIERS.get(unwrap(cache_modifier))
    evict = _EVICTION.get(unwrap(eviction_policy))
    if cache is None:
        raise SemanticError(
            f"unknown cache_modifier {unwrap(cache_modifier)!r}; use one of {sorted(k for k in _CACHE_MODIFIERS if k)}"
        )
    if evict is None:
        raise SemanticError(f"unknown eviction_policy {unwrap(eviction_policy)!r}")
    padding = unwrap(padding_option)
    if padding not in ("", None, "zero", "nan"):
        raise SemanticError(f'unknown padding_option {padding!r}; use "zero" or "nan"')
    return _semantic.load(
        unwrap(pointer),
        unwrap(mask),
        unwrap(other),
        cache,
        evict,
        bool(unwrap(volatile)),
        unwrap(boundary_check),
        padding or "",
    )


@builtin
def store(
    pointer,
    value,
    mask=None,
    boundary_check=(),
    cache_modifier="",
    eviction_policy="",
    _semantic=None,
    _generator=None,
):
    cache = _CACHE_MODIFIERS.get(unwrap(cache_modifier))
    evict = _EVICTION.get(unwrap(eviction_policy))
    if cache is None or evict is None:
        raise SemanticError("unknown cache_modifier or eviction_policy")
    _semantic.store(
        unwrap(pointer), unwrap(value), unwrap(mask), cache, evict, unwrap(boundary_check)
    )


# ---------------------------------------------------------------------- elementwise
@builtin
def where(condition, x, y, _semantic=None, _generator=None):
    return _semantic.where(unwrap(condition), unwrap(x), unwrap(y))


@builtin
def maximum(x, y, propagate_nan=None, _semantic=None, _generator=None):
    return _semantic.maximum(unwrap(x), unwrap(y), _propagate(propagate_nan))


@builtin
def minimum(x, y, propagate_nan=None, _semantic=None, _generator=None):
    return _semantic.minimum(unwrap(x), unwrap(y), _propagate(propagate_nan))


def _propagate(p) -> bool:
    p = unwrap(p)
    return p is not None and str(p).upper().endswith("ALL")


@builtin
def clamp(x, min, max, propagate_nan=None, _semantic=None, _generator=None):  # noqa: F811
    return _semantic.minimum(
        _semantic.maximum(unwrap(x), unwrap(min), _propagate(propagate_nan)),
        unwrap(max),
        _propagate(propagate_nan),
    )


def _math1(name: str, allowed=("fp32", "fp64", "fp16", "bf16")):
    def fn(x, _semantic=None, _generator=None):
        return _semantic.unary_math(name, unwrap(x), allowed)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} (upstream's `tl.{name}`)."
    return builtin(fn)


exp = _math1("exp")
exp2 = _math1("exp2")
log = _math1("log")
log2 = _math1("log2")
sqrt = _math1("sqrt")
sqrt_rn = _math1("sqrt_rn", ("fp32", "fp64"))
rsqrt = _math1("rsqrt")
sin = _math1("sin")
cos = _math1("cos")
erf = _math1("erf")
floor = _math1("floor")
ceil = _math1("ceil")
tanh = _math1("tanh")


@builtin
def abs(x, _semantic=None, _generator=None):
    return _semantic.abs(unwrap(x))


@builtin
def fdiv(x, y, ieee_rounding=False, _semantic=None, _generator=None):
    return _semantic.fdiv(unwrap(x), unwrap(y), bool(unwrap(ieee_rounding)))


@builtin
def div_rn(x, y, _semantic=None, _generator=None):
    return _semantic.fdiv(unwrap(x), unwrap(y), True)


@builtin
def fma(x, y, z, _semantic=None, _generator=None):
    return _semantic.fma(unwrap(x), unwrap(y), unwrap(z))


@builtin
def umulhi(x, y, _semantic=None, _generator=None):
    return _semantic.umulhi(unwrap(x), unwrap(y))


# ---------------------------------------------------------------------- casts and shapes
@builtin
def cast(input, dtype, fp_downcast_rounding=None, bitcast=False, _semantic=None, _generator=None):
    x = _semantic.to_tensor(unwrap(input))
    dtype = _dtype_arg(dtype)
    if unwrap(bitcast):
        return _semantic.bitcast(x, dtype)
    return _semantic.cast(x, dtype, unwrap(fp_downcast_rounding))


@builtin
def to(input, dtype, fp_downcast_rounding=None, bitcast=False, _semantic=None, _generator=None):
    return cast(input, dtype, fp_downcast_rounding, bitcast, _semantic=_semantic)


@builtin
def broadcast_to(input, *shape, _semantic=None, _generator=None):
    shape = _shape_arg(
        shape[0] if len(shape) == 1 and isinstance(unwrap(shape[0]), (tuple, list)) else shape
    )
    return _semantic.broadcast_to(_semantic.to_tensor(unwrap(input)), shape)


@builtin
def broadcast(input, other, _semantic=None, _generator=None):
    return _semantic.broadcast_pair(
        _semantic.to_tensor(unwrap(input)), _semantic.to_tensor(unwrap(other))
    )


@builtin
def expand_dims(input, axis, _semantic=None, _generator=None):
    x = _semantic.to_tensor(unwrap(input))
    axes = unwrap(axis)
    axes = list(axes) if isinstance(axes, (tuple, list)) else [axes]
    axes = [_int_arg(a, "expand_dims's axis") for a in axes]
    rank = len(x.shape) + len(axes)
    axes = sorted(a + rank if a < 0 else a for a in axes)
    for a in axes:
        x = _semantic.expand_dims(x, a)
    return x


@builtin
def reshape(input, *shape, can_reorder=False, _semantic=None, _generator=None):
    shape = _shape_arg(
        shape[0] if len(shape) == 1 and isinstance(unwrap(shape[0]), (tuple, list)) else shape
    )
    return _semantic.reshape(_semantic.to_tensor(unwrap(input)), shape, bool(unwrap(can_reorder)))


@builtin
def view(input, *shape, _semantic=None, _generator=None):
    return reshape(input, *shape, can_reorder=True, _semantic=_semantic)


@builtin
def ravel(x, can_reorder=False, _semantic=None, _generator=None):
    x = _semantic.to_tensor(unwrap(x))
    return _semantic.reshape(x, (x.numel,), bool(unwrap(can_reorder)))


@builtin
def permute(input, *dims, _semantic=None, _generator=None):
    dims = _shape_arg(
        dims[0] if len(dims) == 1 and isinstance(unwrap(dims[0]), (tuple, list)) else dims
    )
    return _semantic.permute(_semantic.to_tensor(unwrap(input)), dims)


@builtin
def trans(input, *dims, _semantic=None, _generator=None):
    x = _semantic.to_tensor(unwrap(input))
    if not dims:
        if len(x.shape) != 2:
            raise SemanticError(
                f"tl.trans without dims needs a 2D block, got shape {list(x.shape)}"
            )
        dims = (1, 0)
    return permute(x, *dims, _semantic=_semantic)


# ---------------------------------------------------------------------- dot
@builtin
def dot(
    input,
    other,
    acc=None,
    input_precision=None,
    allow_tf32=None,
    max_num_imprecise_acc=None,
    out_dtype=core.float32,
    _semantic=None,
    _generator=None,
):
    a = _semantic.to_tensor(unwrap(input))
    b = _semantic.to_tensor(unwrap(other))
    precision = unwrap(input_precision)
    tf32 = unwrap(allow_tf32)
    if precision is not None and tf32 is not None:
        raise SemanticError("tl.dot: give input_precision or allow_tf32, not both")
    if precision is None:
        # Upstream's default for fp32 operands is tf32; allow_tf32=False asks for ieee.
        precision = "ieee" if tf32 is False else "tf32"
    acc = unwrap(acc)
    return _semantic.dot(
        a, b, acc, str(precision), unwrap(max_num_imprecise_acc), _dtype_arg(out_dtype)
    )


# ---------------------------------------------------------------------- compile-time helpers and debugging
@builtin
def static_assert(cond, msg="", _semantic=None, _generator=None):
    c = unwrap(cond)
    if isinstance(c, tensor):
        raise SemanticError("tl.static_assert needs a condition known at compile time")
    if not c:
        raise SemanticError(f"static_assert failed: {unwrap(msg)}")


@builtin
def static_print(*values, _semantic=None, _generator=None):
    print(*[unwrap(v) for v in values])


@builtin
def device_assert(cond, msg="", mask=None, _semantic=None, _generator=None):
    if not _semantic.debug:
        return
    c = unwrap(cond)
    if not isinstance(c, tensor):
        if not c:
            raise SemanticError(f"device_assert always fails: {unwrap(msg)}")
        return
    if mask is not None:
        c = _semantic.logical_or(c, _semantic.logical_not(unwrap(mask)))
    _semantic.device_assert(c, str(unwrap(msg)))


@builtin
def multiple_of(input, values, _semantic=None, _generator=None):
    return _hint(input, values, "tt.divisibility")


@builtin
def max_contiguous(input, values, _semantic=None, _generator=None):
    return _hint(input, values, "tt.contiguity")


@builtin
def max_constancy(input, values, _semantic=None, _generator=None):
    return _hint(input, values, "tt.constancy")


def _hint(x, values, key: str):
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
    from xdsl.ir import OpResult

    from tritium.ir import types as irt

    x = unwrap(x)
    vals = unwrap(values)
    vals = [unwrap(v) for v in (vals if isinstance(vals, (tuple, list)) else [vals])]
    if not isinstance(x, tensor) or not isinstance(x.handle, OpResult):
        return x
    rank = len(x.shape) or 1
    if len(vals) != rank:
        raise SemanticError(f"{key.split('.')[1]} needs {rank} value(s), one per dimension")
    attr = DenseIntOrFPElementsAttr.from_list(irt.tensor((rank,), irt.i32), vals)
    x.handle.op.attributes[key] = attr
    return x


class constexpr_function:
    """Marks a helper that runs in Python at compile time on constexpr arguments."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args, **kwargs):
        return constexpr(
            self.fn(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
        )


from tritium.frontend.builtins_reduce import (  # noqa: E402,F401  (re-exported as tl.*)
    argmax,
    argmin,
    max,
    min,
    reduce,
    sum,
    xor_sum,
)
