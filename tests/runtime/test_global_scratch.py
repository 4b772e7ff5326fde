"""`tritium.set_allocator` (upstream's `triton.set_allocator`): accepted and validated as
upstream's, kept per context, and not needed by tritium's kernels: a tensor-descriptor
kernel (which needs global scratch for its TMA descriptor upstream, on Hopper) runs in
the interpreter and (marker `gpu`) on the GPU without the allocator being called."""

from __future__ import annotations

import contextvars

import numpy as np
import pytest

import tritium
from tests.frontend.test_tensor_descriptor import copy2d_kernel, mode  # noqa: F401
from tritium.runtime import global_scratch


@pytest.fixture(autouse=True)
def _no_allocator():
    yield
    tritium.set_allocator(None)


def test_set_allocator_keeps_a_callable_per_context():
    def alloc(size, alignment, stream):
        raise AssertionError("not called")

    tritium.set_allocator(alloc)
    assert global_scratch.current() is alloc
    # a fresh context does not see it (a ContextVar, as upstream's)
    assert contextvars.Context().run(global_scratch.current) is None
    tritium.set_allocator(None)
    assert global_scratch.current() is None


def test_set_allocator_refuses_what_cannot_be_called():
    with pytest.raises(TypeError, match="takes a callable"):
        tritium.set_allocator(1024)


def test_a_descriptor_kernel_needs_no_scratch(mode):  # noqa: F811
    calls = []
    tritium.set_allocator(lambda size, alignment, stream: calls.append(size))
    m, n = 37, 50
    x = np.arange(m * n, dtype=np.float32).reshape(m, n)
    y = np.full((m, n), -7, np.float32)
    copy2d_kernel[(tritium.cdiv(m, 16),)](x, y, m, n, n, n, 0, 0, BM=16, BN=16, PAD="zero",
                                          FUNCS=False)  # fmt: skip
    np.testing.assert_array_equal(y, x * 2 + 1)
    assert calls == []
