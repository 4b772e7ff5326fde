"""Atomics across the upstream boundary, both ways (where upstream Triton is installed):
upstream Triton 3.6 compiles tritium's TTIR of an atomic kernel, and tritium compiles,
runs and matches numpy on the TTIR upstream prints for the same kernel source."""

from __future__ import annotations

import linecache

import numpy as np
import pytest

import tritium
from tests.codegen.test_gpu_atomics import histogram_kernel, ticket_kernel

SIG = {"histogram_kernel": "*i32,*i32,i32", "ticket_kernel": "*i32,*i32,i32"}
CONSTS = {"histogram_kernel": {"BLOCK": 256}, "ticket_kernel": {"K": 7, "BLOCK": 32}}


def _tritium_ttir(fn) -> str:
    return tritium.compile(fn, SIG[fn.__name__], CONSTS[fn.__name__], stop="ttir").asm["ttir"]


def _upstream_twin(fn):
    """The same kernel text under `@triton.jit`."""
    triton = pytest.importorskip("triton", reason="upstream triton is not installed here")
    import inspect
    import textwrap

    src = textwrap.dedent(inspect.getsource(fn.fn))
    src = "@triton.jit\n" + src[src.index("def ") :]
    filename = f"<upstream twin of {fn.__name__}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"triton": triton, "tl": triton.language}
    exec(compile(src, filename, "exec"), ns)
    return ns[fn.__name__]


@pytest.mark.parametrize("fn", [histogram_kernel, ticket_kernel], ids=lambda f: f.__name__)
def test_upstream_compiles_tritium_atomics(fn, tmp_path):
    triton = pytest.importorskip("triton", reason="upstream triton is not installed here")
    from triton.backends.compiler import GPUTarget

    path = tmp_path / f"{fn.__name__}.ttir"
    path.write_text(_tritium_ttir(fn))
    k = triton.compile(str(path), target=GPUTarget("cuda", 89, 32), options={"num_warps": 4})
    assert "atom.global" in k.asm["ptx"] and len(k.asm["cubin"]) > 0


@pytest.mark.gpu
def test_tritium_runs_upstream_atomics_ttir(tmp_path):
    torch = pytest.importorskip("torch", reason="torch is not installed here")
    triton = pytest.importorskip("triton", reason="upstream triton is not installed here")

    twin = _upstream_twin(histogram_kernel)
    xs = torch.zeros(256, dtype=torch.int32, device="cuda")
    hs = torch.zeros(19, dtype=torch.int32, device="cuda")
    compiled = twin[(1,)](xs, hs, 256, BLOCK=256)  # upstream's launch returns its kernel
    ttir = compiled.asm["ttir"]
    target = triton.runtime.driver.active.get_current_target()
    assert "tt.atomic_rmw add, acq_rel, gpu" in ttir
    path = tmp_path / "upstream_histogram.ttir"
    path.write_text(ttir)
    ck = tritium.compile(str(path), arch=f"sm_{target.arch}")
    rng = np.random.default_rng(3)
    n = 4_099
    x = rng.integers(0, 19, n).astype(np.int32)
    hist = np.zeros(19, np.int32)
    ck[(tritium.cdiv(n, 256),)](x, hist, n)
    np.testing.assert_array_equal(hist, np.bincount(x, minlength=19))
