"""The hypothesis strategy of `check_kernel`: one `Case` per example (imported lazily).

    dims={"n": (1, 5000)}   ->  n drawn among awkward sizes in range (1, 2, 3, 7, 17, 31,
                                127, 1000, 1023, 1025, 4097, the bounds, ...) or any int
    array("n")              ->  Drawn(shape=(n,), layout exact | embedded in a poisoned
                                buffer | padded rows | stepped | transposed, values from a
                                drawn seed, kind and range, a few drawn special values)

Everything shrinks towards the simple end: the smallest sizes, the first dtype, exact
buffers, small integer values, no special values, seed 0.
"""

from __future__ import annotations

import math

from hypothesis import strategies as st

from tritium.errors import ArgumentError
from tritium.testing.check.spec import Case, Drawn, np_dtype, special_values

AWKWARD_SIZES = (
    1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 33, 63, 65, 100, 127, 129, 255, 257, 511, 513,
    1000, 1023, 1025, 2047, 2049, 4095, 4097, 8191, 8193,
)  # fmt: skip
SCALES = (1.0, 100.0, 1e4, 1e-3)


def value_strategy(what: str, bounds):
    """An int for a fixed value, (low, high) for a range (ints when both bounds are),
    a list for a choice. Ranges try their bounds and awkward sizes first."""
    if isinstance(bounds, list):
        if not bounds:
            raise ArgumentError(f"check_kernel: {what} has an empty list of values")
        return st.sampled_from(bounds)
    if isinstance(bounds, tuple) and len(bounds) == 2:
        lo, hi = bounds
        if lo > hi:
            raise ArgumentError(f"check_kernel: {what}'s range {bounds} is empty")
        if isinstance(lo, int) and isinstance(hi, int):
            edges = sorted({lo, hi, lo + 1, hi - 1} | set(AWKWARD_SIZES))
            edges = [e for e in edges if lo <= e <= hi]
            return st.one_of(st.sampled_from(edges), st.integers(lo, hi))
        return st.one_of(
            st.sampled_from([float(lo), float(hi)]),
            st.floats(float(lo), float(hi), allow_nan=False, allow_infinity=False),
        )
    if isinstance(bounds, (int, float)) and not isinstance(bounds, bool):
        return st.just(bounds)
    raise ArgumentError(
        f"check_kernel: {what} must be a value, a (low, high) range or a list, got {bounds!r}"
    )


def _layouts(spec, shape) -> list[str]:
    out = ["exact", "embedded"]
    if spec.layout in ("rows", "any") and len(shape) >= 2:
        out.append("rows")
    if spec.layout == "any":
        out.append("step")
        if len(shape) == 2:
            out.append("transposed")
    return out


def _array(draw, name, spec, shape, dt, is_input) -> Drawn:
    n = math.prod(shape)
    layout = draw(st.sampled_from(_layouts(spec, shape)))
    full = tuple(slice(0, s) for s in shape)
    d = Drawn(name, shape, dt, shape, full, is_input=is_input)
    if layout == "embedded":  # C-contiguous, with poison before and after
        a, b = draw(st.integers(1, 4)), draw(st.integers(0, 4))
        d.buffer_shape, d.index, d.reshape = (n + a + b,), (slice(a, a + n),), True
    elif layout == "rows":  # each row followed by poison: row stride > row length
        pad = draw(st.integers(1, 8))
        d.buffer_shape = shape[:-1] + (shape[-1] + pad,)
    elif layout == "step":  # every k-th element of the last dimension
        k = draw(st.integers(2, 3))
        d.buffer_shape = shape[:-1] + (shape[-1] * k,)
        d.index = full[:-1] + (slice(0, shape[-1] * k, k),)
    elif layout == "transposed":  # column-major, columns padded
        pad = draw(st.integers(0, 3))
        d.buffer_shape, d.transposed = (shape[1], shape[0] + pad), True
    if not is_input:
        return d
    d.seed = draw(st.integers(0, 2**32 - 1))
    if dt.kind == "f":
        d.kind = draw(st.sampled_from(["integers", "uniform"]))
        if spec.elements is not None:
            d.low, d.high = spec.elements
        elif d.kind == "uniform":
            scale = draw(st.sampled_from(SCALES))
            d.low, d.high = -scale, scale
    elif dt.kind in "iu":
        d.low, d.high = spec.elements if spec.elements is not None else (-100, 100)
    specials = spec.specials if spec.specials is not None else spec.elements is None
    if specials and n:
        pos = st.tuples(st.integers(0, n - 1), st.sampled_from(special_values(dt)))
        d.specials = draw(st.lists(pos, max_size=3))
    return d


def _dtype_of(draw, spec, shared):
    if spec.dtype is None:
        return shared
    if isinstance(spec.dtype, (list, tuple)):
        return np_dtype(draw(st.sampled_from(list(spec.dtype))))
    return np_dtype(spec.dtype)


def _shape(spec, dims, name) -> tuple[int, ...]:
    out = []
    for s in spec.shape:
        if isinstance(s, str):
            if s not in dims:
                raise ArgumentError(
                    f"check_kernel: array `{name}` names dimension `{s}`, not in dims="
                )
            out.append(int(dims[s]))
        else:
            out.append(s)
    return tuple(out)


@st.composite
def cases(draw, inputs: dict, outputs: dict, dims: dict, dtypes: list, scalars: dict) -> Case:
    dt = np_dtype(draw(st.sampled_from(dtypes)))
    dvals = {k: draw(value_strategy(f"dims[{k!r}]", v)) for k, v in dims.items()}
    svals = {k: draw(value_strategy(f"scalars[{k!r}]", v)) for k, v in scalars.items()}
    arrays = {}
    for name, spec in inputs.items():
        arrays[name] = _array(
            draw, name, spec, _shape(spec, dvals, name), _dtype_of(draw, spec, dt), True
        )
    for name, spec in outputs.items():
        if name not in arrays:
            shape = _shape(spec, dvals, name)
            arrays[name] = _array(draw, name, spec, shape, _dtype_of(draw, spec, dt), False)
    return Case(dvals, dt, svals, arrays)
