"""Combine functions of the scan builtins, written in the Triton language (`@jit`), as
upstream's `standard.py` (`cumsum` reuses `standard._sum_combine`)."""

from __future__ import annotations

from tritium.frontend.jit import jit


@jit
def _prod_combine(a, b):
    return a * b
