"""Arguments as the interpreter sees them: numpy arrays and Python scalars."""

from __future__ import annotations

import numpy as np

from tritium.errors import ArgumentError


def as_host_array(v):
    """numpy arrays and scalars pass through; CPU torch tensors become numpy views of
    the same memory (writes land in the tensor); device arrays are refused."""
    if isinstance(v, np.ndarray) or v is None or isinstance(v, (int, float, bool, np.generic)):
        return v
    if type(v).__module__.startswith("torch") and hasattr(v, "numpy"):
        if getattr(v, "is_cuda", False):
            raise ArgumentError(
                "the interpreter (TRITIUM_INTERPRET=1) needs host arrays; got a CUDA torch tensor"
            )
        if "float8" in str(v.dtype):  # numpy has no fp8: its bytes, read as the tensor's type
            import torch

            from tritium.dtype_names import dtype_to_triton
            from tritium.runtime.reinterpret import ReinterpretedArray

            view = v.detach().view(torch.uint8).numpy().view(ReinterpretedArray)
            view._tritium_elem_sig = dtype_to_triton(v.dtype)
            return view
        return v.detach().numpy()
    if hasattr(v, "__cuda_array_interface__"):
        raise ArgumentError(
            "the interpreter (TRITIUM_INTERPRET=1) needs host arrays; got a device array"
        )
    if hasattr(v, "__array__"):
        return np.asarray(v)
    return v
