"""`tl.extra`: upstream's extra namespaces; `tl.extra.libdevice` and
`tl.extra.cuda.libdevice` are the libdevice functions (tritium/frontend/libdevice.py)."""

from tritium.language.extra import cuda, libdevice  # noqa: F401
