"""`tl.extra.cuda`: the CUDA backend's language extras (`libdevice`)."""

from tritium.language.extra.cuda import libdevice  # noqa: F401
