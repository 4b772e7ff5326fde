"""Float literals too large for their type become +-inf (upstream builds an fp32 constant
and casts it), instead of an internal error from packing the constant."""

from __future__ import annotations

import numpy as np

import tritium
import tritium.language as tl


@tritium.jit
def overflow_kernel(p, q, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    tl.store(p + r, tl.full((BLOCK,), -1e6, tl.float16))
    tl.atomic_add(q + r, 1e6)


def test_fp16_constants_past_the_range_are_infinite(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    a, b = np.zeros(4, np.float16), np.zeros(4, np.float16)
    overflow_kernel[(1,)](a, b, BLOCK=4)
    assert (a == -np.inf).all() and (b == np.inf).all()
    ptx = tritium.compile(overflow_kernel, "*fp16,*fp16", {"BLOCK": 4}, stop="ptx").asm["ptx"]
    assert "atom." in ptx
