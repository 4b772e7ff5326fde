"""Libdevice mode on the GPU (`pytest -m gpu`): with TRITIUM_LIBDEVICE=auto, math results are
upstream Triton's bit for bit (the same kernel source under `@triton.jit`, upstream's own
libdevice), on random arguments over wide ranges and the special values. The default mode's
accuracy is checked by test_gpu_math.py / test_gpu_libdevice.py (about 1 ulp, not bits);
tl.randn's streams by test_gpu_random.py."""

from __future__ import annotations

import linecache

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.language.extra import libdevice

pytestmark = pytest.mark.gpu

NAMES = ["log", "cos", "sin", "erf", "tanh", "log2", "exp2", "sqrt", "rsqrt"]


@tritium.jit
def math_kernel(x_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + 0 * N + offs, tl.log(x))
    tl.store(out_ptr + 1 * N + offs, tl.cos(x))
    tl.store(out_ptr + 2 * N + offs, tl.sin(x))
    tl.store(out_ptr + 3 * N + offs, tl.erf(x))
    tl.store(out_ptr + 4 * N + offs, libdevice.tanh(x))
    tl.store(out_ptr + 5 * N + offs, tl.log2(x))
    tl.store(out_ptr + 6 * N + offs, tl.exp2(x))
    tl.store(out_ptr + 7 * N + offs, tl.sqrt(x))
    tl.store(out_ptr + 8 * N + offs, tl.rsqrt(x))


def _upstream(fn):
    """`fn`'s source under upstream's `@triton.jit` (libdevice: upstream's module)."""
    triton = pytest.importorskip("triton", reason="upstream triton is not installed here")
    import inspect
    import textwrap

    from triton.language.extra import libdevice as up_libdevice

    src = textwrap.dedent(inspect.getsource(fn.fn))
    src = "@triton.jit\n" + src[src.index("def ") :]
    filename = f"<upstream twin of {fn.__name__}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"triton": triton, "tl": triton.language, "libdevice": up_libdevice}
    exec(compile(src, filename, "exec"), ns)
    return ns[fn.__name__]


def _arguments(dtype, n: int) -> np.ndarray:
    rng = np.random.default_rng(13)
    tiny = np.finfo(dtype).tiny
    special = np.array(
        [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, tiny, tiny / 4, -tiny / 4, 0.5, 2.0,
         1e30, -1e30, 1e-30, 3.0e5, 1.0e7, -4.0e8, np.pi, np.pi / 2, 8.5, -9.25],
        dtype,
    )  # fmt: skip
    k = (n - special.size) // 4
    parts = [
        special,
        rng.uniform(-10, 10, k),
        rng.uniform(0, 2, k),
        np.exp(rng.uniform(-80, 80, k)),  # positive, every magnitude
        rng.uniform(-1e6, 1e6, n - special.size - 3 * k),  # large trig arguments
    ]
    return np.concatenate(parts).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["fp32", "fp64"])
def test_math_bit_identical_to_upstream(monkeypatch, tmp_path, dtype):
    torch = pytest.importorskip("torch", reason="torch is not installed here")
    twin = _upstream(math_kernel)
    n = 4096
    x = _arguments(dtype, n)
    up = torch.zeros(len(NAMES) * n, dtype=torch.from_numpy(x).dtype, device="cuda")
    twin[(n // 256,)](torch.from_numpy(x).cuda(), up, N=n, BLOCK=256)
    up = up.cpu().numpy().reshape(len(NAMES), n)

    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    monkeypatch.setenv("TRITIUM_LIBDEVICE", "auto")
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    out = np.zeros(len(NAMES) * n, dtype)
    tritium.jit(math_kernel.fn)[(n // 256,)](x, out, N=n, BLOCK=256)  # a fresh JIT: compiled now
    out = out.reshape(len(NAMES), n)
    bits = np.uint32 if dtype == np.float32 else np.uint64
    differ = {}
    for k, name in enumerate(NAMES):
        bad = np.flatnonzero(out[k].view(bits) != up[k].view(bits))
        if bad.size:
            i = bad[0]
            differ[name] = (bad.size, float(x[i]), float(out[k][i]), float(up[k][i]))
    assert not differ, differ  # name: (count, first x, tritium, upstream)


def test_default_mode_is_not_libdevice(monkeypatch):
    """The default mode keeps tritium's own math (no NVIDIA file involved)."""
    monkeypatch.delenv("TRITIUM_LIBDEVICE", raising=False)
    k = tritium.compile(math_kernel, "*fp32,*fp32", {"N": 256, "BLOCK": 256}, stop="llir")
    assert "__nv_" not in k.asm["llir"]
