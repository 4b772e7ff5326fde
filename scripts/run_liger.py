"""Run Liger-Kernel's ops, unchanged, on tritium (`tritium.install_as_triton()`), forward
and backward against torch references, and print a table.

    python3 -m pip install --no-deps --target /scratch/liger liger-kernel   # torch installed
    python3 scripts/run_liger.py --path /scratch/liger [--only rms_norm,swiglu]
        [--dtype float32|bfloat16|float16] [--interpret] [--llm] [--bench]
        [--backend tritium|triton] [--json rows.json]

Needs torch and a GPU (or `--interpret`: tritium's interpreter on CPU tensors). The cases
call Liger's public functional API (`liger_kernel.transformers.functional`); the
references are torch's (or the formula's) in float32 on upcast inputs; a case whose
function this Liger release lacks reports the error in the table. The library is imported only after --help is handled.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import lib_check  # noqa: E402
from lib_check import Case  # noqa: E402

EPS = 1e-6


def _dims():
    """(rows, hidden, vocab): LLM shapes with --llm, small ones otherwise (the interpreter)."""
    return (4096, 4096, 32000) if lib_check.LLM else (8, 256, 1000)


def _rows(torch, device, dtype, n=None, d=None, grad=True):
    n0, d0, _ = _dims()
    return torch.randn(n or n0, d or d0, device=device, dtype=dtype, requires_grad=grad)


def _vec(torch, device, dtype, d=None, grad=True):
    return torch.randn(d or _dims()[1], device=device, dtype=dtype, requires_grad=grad)


def _rms(torch, x, w, eps=EPS):
    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()


def _fn(name, **kw):
    def call(*args):
        from liger_kernel.transformers import functional

        return getattr(functional, name)(*args, **kw)

    return call


def _rotate_half(torch, x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def _sparsemax(torch, x):
    """Sparsemax along the last dimension (Martins & Astudillo 2016), by sorting."""
    z = x.float()
    zs, _ = torch.sort(z, dim=-1, descending=True)
    k = torch.arange(1, z.shape[-1] + 1, device=z.device, dtype=z.dtype)
    cs = zs.cumsum(-1)
    support = 1 + k * zs > cs
    kz = support.sum(-1, keepdim=True)
    tau = (cs.gather(-1, kz - 1) - 1) / kz.to(z.dtype)
    return torch.clamp(z - tau, min=0)


def cases(torch) -> list[Case]:
    F = torch.nn.functional

    def fused_add_rms_norm(x, r, w):
        return _fn("liger_fused_add_rms_norm")(x, r, w, EPS)

    def fused_add_rms_norm_ref(x, r, w):
        s = x.float() + r.float()
        return _rms(torch, s, w), s

    def poly_norm_make(t, d, dt):
        w = t.tensor([0.3, 0.5, 0.2], device=d, dtype=dt, requires_grad=True)
        return _rows(t, d, dt), w, t.tensor(0.1, device=d, dtype=dt, requires_grad=True)

    def poly_norm_ref(x, w, b):
        xf = x.float()

        def norm(u):
            return u * torch.rsqrt(u.pow(2).mean(-1, keepdim=True) + EPS)

        wf = w.float()
        return wf[0] * norm(xf**3) + wf[1] * norm(xf**2) + wf[2] * norm(xf) + b.float()

    def dyt_make(t, d, dt):
        alpha = t.tensor([0.5], device=d, dtype=dt, requires_grad=True)
        return _rows(t, d, dt), alpha, _vec(t, d, dt), _vec(t, d, dt)

    def dyt_ref(x, alpha, gamma, beta):
        return gamma.float() * torch.tanh(alpha.float() * x.float()) + beta.float()

    def group_norm_make(t, d, dt):
        n, h, _ = _dims()
        c = 64 if lib_check.LLM else 8
        x = t.randn(n // 64 if lib_check.LLM else 2, c, h, device=d, dtype=dt, requires_grad=True)
        return x, _vec(t, d, dt, c), _vec(t, d, dt, c)

    def group_norm_ref(x, w, b):
        return F.group_norm(x.float(), 8 if x.shape[1] >= 8 else 1, w.float(), b.float(), EPS)

    def group_norm(x, w, b):
        return _fn("liger_group_norm")(x, w, b, x.shape[1], 8 if x.shape[1] >= 8 else 1, EPS)

    def rope_make(t, d, dt):
        n, _, _ = _dims()
        bsz, seq = (4, n // 4) if lib_check.LLM else (2, 16)
        q = t.randn(bsz, 32, seq, 128, device=d, dtype=dt, requires_grad=True)
        k = t.randn(bsz, 8, seq, 128, device=d, dtype=dt, requires_grad=True)
        angle = t.randn(1, seq, 64, device=d).repeat(1, 1, 2)
        return q, k, angle.cos().to(dt), angle.sin().to(dt)

    def rope_ref(q, k, cos, sin):
        c, s = cos.unsqueeze(1).float(), sin.unsqueeze(1).float()
        qf, kf = q.float(), k.float()
        return qf * c + _rotate_half(torch, qf) * s, kf * c + _rotate_half(torch, kf) * s

    def logits_make(t, d, dt):
        n, _, v = _dims()
        x = t.randn(n, v, device=d, dtype=dt, requires_grad=True)
        return x, t.randint(0, v, (n,), device=d)

    def logits_128k_make(t, d, dt):
        n, _, v = _dims()
        n, v = (n, 128256) if lib_check.LLM else (n, v)
        x = t.randn(n, v, device=d, dtype=dt, requires_grad=True)
        return x, t.randint(0, v, (n,), device=d)

    def flce_make(t, d, dt):
        n, h, v = _dims()
        x = (t.randn(n, h, device=d, dtype=dt) / h**0.5).requires_grad_()
        w = t.randn(v, h, device=d, dtype=dt, requires_grad=True)
        return x, w, t.randint(0, v, (n,), device=d)

    def two_dists(input_log, target_log):
        """(input, target) distributions over the vocabulary, each as log-probabilities or
        probabilities."""

        def make(t, d, dt):
            n, _, v = _dims()
            a = t.randn(n, v, device=d, dtype=t.float32)
            b = t.randn(n, v, device=d, dtype=t.float32)
            a = a.log_softmax(-1) if input_log else a.softmax(-1)
            b = b.log_softmax(-1) if target_log else b.softmax(-1)
            return a.to(dt).requires_grad_(), b.to(dt)

        return make

    def kl_ref(x, y):
        return F.kl_div(x.float(), y.float(), reduction="batchmean")

    def jsd_ref(x, y):  # liger's generalised JSD, beta 0.5: input log Q, target log P
        xf, yf = x.float(), y.float()
        m = torch.log(0.5 * yf.exp() + 0.5 * xf.exp())
        loss = 0.5 * yf.exp() * (yf - m) + 0.5 * xf.exp() * (xf - m)
        return loss.sum() / x.shape[0]

    def tvd_ref(p, q):
        return 0.5 * (p.float() - q.float()).abs().sum() / p.shape[0]

    def rows_make(t, d, dt):
        return (_rows(t, d, dt),)

    def gated_make(t, d, dt):
        n, h, _ = _dims()
        f = 11008 if lib_check.LLM else h
        return _rows(t, d, dt, n, f), _rows(t, d, dt, n, f)

    return [
        Case(
            "rms_norm",
            lambda t, d, dt: (_rows(t, d, dt), _vec(t, d, dt)),
            _fn("liger_rms_norm", eps=EPS),
            lambda x, w: _rms(torch, x, w),
        ),
        Case(
            "layer_norm",
            lambda t, d, dt: (_rows(t, d, dt), _vec(t, d, dt), _vec(t, d, dt)),
            lambda x, w, b: _fn("liger_layer_norm")(x, w, b, EPS),
            lambda x, w, b: F.layer_norm(x.float(), (x.shape[-1],), w.float(), b.float(), EPS),
        ),
        Case(
            "fused_add_rms_norm",
            lambda t, d, dt: (_rows(t, d, dt), _rows(t, d, dt), _vec(t, d, dt)),
            fused_add_rms_norm,
            fused_add_rms_norm_ref,
        ),
        Case("poly_norm", poly_norm_make, _fn("liger_poly_norm", eps=EPS), poly_norm_ref),
        Case(
            "swiglu",
            gated_make,
            _fn("liger_swiglu"),
            lambda a, b: F.silu(a.float()) * b.float(),
        ),
        Case(
            "geglu",
            gated_make,
            _fn("liger_geglu"),
            lambda a, b: F.gelu(a.float(), approximate="tanh") * b.float(),
        ),
        Case(
            "relu_squared",
            rows_make,
            _fn("liger_relu_squared"),
            lambda x: F.relu(x.float()) ** 2,
        ),
        Case("dyt", dyt_make, _fn("liger_dyt"), dyt_ref),
        Case("group_norm", group_norm_make, group_norm, group_norm_ref),
        Case("rope", rope_make, _fn("liger_rope"), rope_ref),
        Case(
            "cross_entropy",
            logits_make,
            _fn("liger_cross_entropy"),
            lambda x, y: F.cross_entropy(x.float(), y),
        ),
        Case(
            "cross_entropy_128k",
            logits_128k_make,
            _fn("liger_cross_entropy"),
            lambda x, y: F.cross_entropy(x.float(), y),
        ),
        Case(
            "fused_linear_cross_entropy",
            flce_make,
            _fn("liger_fused_linear_cross_entropy"),
            lambda x, w, y: F.cross_entropy(x.float() @ w.float().T, y),
        ),
        Case("kl_div", two_dists(True, False), _fn("liger_kl_div", reduction="batchmean"), kl_ref),
        Case("jsd", two_dists(True, True), _fn("liger_jsd"), jsd_ref),
        Case("tvd", two_dists(False, False), _fn("liger_tvd", reduction="batchmean"), tvd_ref),
        Case(
            "softmax",
            rows_make,
            _fn("liger_softmax"),
            lambda x: torch.softmax(x.float(), -1),
        ),
        Case(
            "sparsemax",
            rows_make,
            _fn("liger_sparsemax"),
            lambda x: _sparsemax(torch, x),
        ),
    ]


def main() -> int:
    args = lib_check.parser(
        __doc__.splitlines()[0], "the folder Liger-Kernel is installed in (pip --target)"
    ).parse_args()
    torch, device = lib_check.setup(args)
    return lib_check.main(cases(torch), args, torch, device)


if __name__ == "__main__":
    sys.exit(main())
