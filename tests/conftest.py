"""Shared test fixtures: the `gpu` marker skips cleanly where no CUDA device is usable."""

from __future__ import annotations

import shutil

import pytest


def _gpu_available() -> bool:
    try:
        from tritium.runtime import driver
    except Exception:
        return False
    try:
        return driver.gpu_available()
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if not any("gpu" in item.keywords for item in items):
        return
    if _gpu_available():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU available")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def ptxas():
    path = shutil.which("ptxas")
    if path is None:
        pytest.skip("ptxas is not installed")
    return path
