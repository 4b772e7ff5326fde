"""Upstream Triton's own TTGIR for the reduction kernels (tests/data/upstream), lowered by
tritium's backend: fused softmax, causal softmax with an early return (`cf.cond_br`),
RMSNorm (8 warps) and online softmax (reductions inside an `scf.for` with loop-carried
scalars). The GPU checks compare with numpy in float64."""

from __future__ import annotations

import numpy as np

from tests.codegen.kernels import UPSTREAM, case, close, rng

RED_PTX = ("shfl.sync.bfly.b32", "bar.sync", "st.shared", "ld.shared")


def _softmax_ref(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@case(
    "upstream_softmax",
    (UPSTREAM / "softmax_kernel.ttgir").read_text(),
    ptx_has=(*RED_PTX, "ex2.approx.f32", "div.full.f32"),
    ptx_lacks=(".local",),
)
def _(gpu):
    rows, cols = 37, 781  # BLOCK = 1024: a masked tail
    x = rng(31).standard_normal((rows, cols)).astype(np.float32)
    out = np.full((rows, cols), np.nan, np.float32)
    gpu.run((UPSTREAM / "softmax_kernel.ttgir").read_text(), (rows,), [x, out, rows, cols])
    close(out, _softmax_ref(x), rtol=1e-5, atol=1e-7)


CAUSAL = (UPSTREAM / "softmax_causal_simple_kernel.ttgir").read_text()


@case("upstream_causal_softmax", CAUSAL, ptx_has=(*RED_PTX, "ret;"), ptx_lacks=(".local",))
def _(gpu):
    seq, batch = 40, 3
    rows = seq * batch
    x = rng(32).standard_normal((rows, seq)).astype(np.float32)
    out = np.full((rows + 4, seq), 5.0, np.float32)  # 4 rows past n_rows: early return
    gpu.run(CAUSAL, (rows + 4,), [x, out, rows, seq, seq, seq, seq])
    pos = np.arange(rows) % seq
    masked = np.where(np.arange(seq)[None, :] > pos[:, None], -np.inf, x.astype(np.float64))
    close(out[:rows], _softmax_ref(masked), rtol=1e-5, atol=1e-7)
    assert (out[rows:] == 5.0).all()


RMS = (UPSTREAM / "rms_norm_simple_kernel.ttgir").read_text()


@case("upstream_rms_norm", RMS, ptx_has=(*RED_PTX, "sqrt.approx.ftz.f32"), ptx_lacks=(".local",))
def _(gpu):
    rows, cols, eps = 21, 1536, np.float32(1e-6)
    x = rng(33).standard_normal((rows, cols)).astype(np.float32)
    w = rng(34).standard_normal(cols).astype(np.float32)
    y = np.full((rows, cols), np.nan, np.float32)
    gpu.run(RMS, (rows,), [x, w, y, cols, cols, cols, eps])
    xd = x.astype(np.float64)
    want = xd / np.sqrt((xd * xd).mean(axis=1, keepdims=True) + 1e-6) * w
    close(y, want, rtol=1e-5, atol=1e-6)


ONLINE = (UPSTREAM / "online_softmax_kernel.ttgir").read_text()


@case("upstream_online_softmax", ONLINE, ptx_has=RED_PTX, ptx_lacks=(".local",))
def _(gpu):
    rows, cols = 9, 3000  # three blocks of 1024, the last one masked
    x = rng(35).standard_normal((rows, cols)).astype(np.float32)
    out = np.full((rows, cols), np.nan, np.float32)
    gpu.run(ONLINE, (rows,), [x, out, cols, cols, cols])
    close(out, _softmax_ref(x), rtol=1e-5, atol=1e-8)
