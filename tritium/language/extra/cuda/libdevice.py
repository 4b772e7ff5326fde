"""`triton.language.extra.cuda.libdevice`: upstream's libdevice functions by name
(implemented in tritium/frontend/libdevice.py, without NVIDIA's bitcode)."""

from tritium.frontend.libdevice import FUNCTIONS

globals().update(FUNCTIONS)
__all__ = sorted(FUNCTIONS)
