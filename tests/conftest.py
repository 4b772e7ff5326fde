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


@pytest.fixture
def fake_gpus(monkeypatch):
    """Two fake GPUs behind tritium's driver (tests/runtime/fake_gpus.py)."""
    from tests.runtime.fake_gpus import install_gpus

    yield from install_gpus(monkeypatch)


@pytest.fixture
def fake_torch(fake_gpus, monkeypatch):
    """A fake torch over the fake GPUs (tests/runtime/fake_gpus.py), as sys.modules["torch"]."""
    from tests.runtime.fake_gpus import install_torch

    return install_torch(fake_gpus, monkeypatch)
