"""`triton.language.extra.libdevice`: the libdevice functions (as upstream, the CUDA ones:
`tritium.language.extra.cuda.libdevice`, one implementation in tritium/frontend/libdevice.py)."""

from tritium.language.extra.cuda.libdevice import *  # noqa: F403
from tritium.language.extra.cuda.libdevice import __all__  # noqa: F401
