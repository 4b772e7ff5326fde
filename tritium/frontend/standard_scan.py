"""Combine functions of the scan builtins, written in the Triton language (`KernelSource`s), as
upstream's `standard.py` (`cumsum` reuses `standard._sum_combine`)."""

from __future__ import annotations

from tritium.frontend.kernel_source import KernelSource


@KernelSource
def _prod_combine(a, b):
    return a * b
