"""A small Triton library, written for upstream Triton the way Liger-Kernel and
flash-linear-attention are (`import triton`, `import triton.language as tl`, version gates,
libdevice imports with a fallback, `@triton.heuristics`, `@triton.autotune` and a library's
own Autotuner subclass): tests/test_triton_alias.py runs it on tritium through
`tritium.install_as_triton()` and `python -m tritium run`, unchanged."""

from tritonlib.act import geglu, geglu_tuner
from tritonlib.norm import block_sums, rms_norm
from tritonlib.utils import TRITON_3_4_OR_LATER, calculate_settings, torch_device

__all__ = [
    "TRITON_3_4_OR_LATER",
    "block_sums",
    "calculate_settings",
    "geglu",
    "geglu_tuner",
    "rms_norm",
    "torch_device",
]
