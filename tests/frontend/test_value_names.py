"""Values are named after the Python variables they are assigned to, as far as MLIR's
value names allow: `_1` (which xDSL would reduce to an empty name: it drops `_<digits>`)
and non-ASCII identifiers leave the value unnamed instead of breaking a later pass."""

from __future__ import annotations

import numpy as np

import tritium
import tritium.language as tl
from tests.frontend.helpers import ttir_text


@tritium.jit
def _odd_names(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs_1 = tl.arange(0, BLOCK)
    _1 = tl.load(x_ptr + offs_1)
    _0 = _1 * 2
    α = _0 + 1
    _2 = tl.zeros([BLOCK], dtype=tl.float32)
    for _3 in range(n):
        _2 += α
    tl.store(o_ptr + offs_1, _2)


SIG = "*fp32:16,*fp32:16,i32"


def test_names_mlir_cannot_keep_leave_values_unnamed():
    text = ttir_text(_odd_names, SIG, {"BLOCK": 64})
    assert "%offs = tt.make_range" in text  # `offs_1` named %offs, as xDSL spells it
    assert "%_" not in text and "%α" not in text


def test_odd_names_compile_to_ptx_through_every_pass():
    k = tritium.compile(_odd_names, signature=SIG, constexprs={"BLOCK": 64}, stop="ptx")
    assert ".entry" in k.asm["ptx"]


def test_odd_names_run_in_the_interpreter(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    x = np.arange(64, dtype=np.float32)
    out = np.full(64, np.nan, dtype=np.float32)
    _odd_names[(1,)](x, out, 3, BLOCK=64)
    np.testing.assert_array_equal(out, 3 * (2 * x + 1))
