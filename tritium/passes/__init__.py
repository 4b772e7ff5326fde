"""TTIR and TTGIR passes (one per file) and the pipelines that run them in order.

See `ARCHITECTURE.md` in this folder for the order and what each pass does.
"""

from tritium.passes.pipeline import (
    TTGIR_PASSES,
    TTIR_PASSES,
    PassPipelineError,
    run_passes,
    run_ttgir_passes,
    run_ttir_passes,
)

__all__ = [
    "TTGIR_PASSES",
    "TTIR_PASSES",
    "PassPipelineError",
    "run_passes",
    "run_ttgir_passes",
    "run_ttir_passes",
]
