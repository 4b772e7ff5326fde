"""Host helpers as Triton libraries write them."""

import inspect

import triton


def _version(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split(".")[:3])


# as flash-linear-attention gates code on the release
TRITON_3_4_OR_LATER = _version(triton.__version__) >= (3, 4, 0)
# as flash-linear-attention probes for the autotuner's on-disk cache
SUPPORTS_AUTOTUNE_CACHE = "cache_results" in inspect.signature(triton.autotune).parameters


def calculate_settings(n: int) -> tuple[int, int]:
    """Liger-Kernel's block size and warps for a row of n elements."""
    block = triton.next_power_of_2(n)
    if block > 65536:
        raise RuntimeError(f"n = {n} exceeds the recommended Triton blocksize")
    num_warps = 8 if block >= 2048 else 4
    return block, num_warps


def torch_device():
    """The torch device kernels run on, as libraries ask upstream's driver (None without
    torch)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return None
    return triton.runtime.driver.active.get_active_torch_device()
