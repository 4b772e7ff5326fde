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
        return v.detach().numpy()
    if hasattr(v, "__cuda_array_interface__"):
        raise ArgumentError(
            "the interpreter (TRITIUM_INTERPRET=1) needs host arrays; got a device array"
        )
    if hasattr(v, "__array__"):
        return np.asarray(v)
    return v
