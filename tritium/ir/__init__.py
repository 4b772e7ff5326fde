"""Dialects, types and text of TTIR / TTGIR (see ARCHITECTURE.md).

Op classes defined from here on parse their assembly format when first printed or parsed
(lazy_formats.py), not when defined.
"""

from tritium.ir import lazy_formats as _lazy_formats

_lazy_formats.install()
