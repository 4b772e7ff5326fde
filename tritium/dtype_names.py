"""Array element types by name (numpy's, torch's without "torch.", ml_dtypes'), as Triton
signature names: shared by specialisation (frontend) and argument checks (runtime)."""

from __future__ import annotations

from typing import Any

DTYPE_TO_TRITON = {
    "bool": "i1",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
    "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5",
    "float8_e4m3fnuz": "fp8e4b8",
    "float8_e5m2fnuz": "fp8e5b16",
}


def dtype_to_triton(dtype: Any) -> str | None:
    """'fp32' for np.float32 / torch.float32 / '<f4'; None for a dtype Triton has no name for
    (also a numpy dtype in the other byte order, '>f4' here: the GPU would misread it)."""
    import numpy as np

    if isinstance(dtype, np.dtype):
        return DTYPE_TO_TRITON.get(dtype.name) if dtype.isnative else None
    return DTYPE_TO_TRITON.get(str(dtype).rsplit(".", 1)[-1])


def unsupported_dtype(dtype: Any) -> str:
    """Why arrays of `dtype` (one `dtype_to_triton` has no name for) cannot be passed to a
    kernel, as the end of an error message."""
    import numpy as np

    msg = f"arrays of dtype {dtype} cannot be passed to a kernel"
    if not isinstance(dtype, np.dtype):
        return msg
    if dtype.fields is not None:
        return msg + ": a structured dtype; pass one field (a['name']), a strided view"
    if dtype.hasobject:
        return msg + ": they hold references to Python objects, not numbers"
    if not dtype.isnative:
        return (
            msg + ": it is not in this machine's byte order; convert with "
            "a.astype(a.dtype.newbyteorder('='))"
        )
    return msg
