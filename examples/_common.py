"""Shared driver for the examples: GPU when there is one, the interpreter otherwise."""

from __future__ import annotations

import os
import time

import numpy as np


def use_gpu() -> bool:
    from tritium import config

    if config.interpret():
        return False
    try:
        from tritium.runtime.driver import gpu_available

        return gpu_available()
    except Exception:
        return False


def run_example(name: str, check) -> None:
    """Run `check(rng)` (which launches the kernel, compares with numpy and returns the
    bytes it moved) once to compile, then time a second run."""
    gpu = use_gpu()
    if not gpu:
        os.environ["TRITIUM_INTERPRET"] = "1"
    mode = "GPU" if gpu else "interpreter"
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    check(rng)
    t1 = time.perf_counter()
    nbytes = check(rng)
    t2 = time.perf_counter()
    print(
        f"{name}: OK on the {mode} (first run incl. compile {t1 - t0:.3f} s, second run {t2 - t1:.4f} s, {nbytes / 1e6:.1f} MB touched)"
    )
