"""Dialects, types and text of TTIR / TTGIR (see ARCHITECTURE.md).

Op classes defined from here on parse their assembly format when first printed or parsed
(lazy_formats.py), not when defined. xDSL's modules that decorate with
`typing_extensions.deprecated` load here without importing asyncio (light_deprecated.py).
"""

from tritium.ir.light_deprecated import light_deprecated as _light_deprecated

with _light_deprecated():
    import xdsl.pattern_rewriter  # noqa: F401  (xDSL's arith and the passes import it)

    from tritium.ir import lazy_formats as _lazy_formats  # (xDSL's builtin and parser)

_lazy_formats.install()
