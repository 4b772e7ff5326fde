"""Run Liger-Kernel's ops, unchanged, on tritium (`tritium.install_as_triton()`), forward
and backward against torch references, and print a table.

    python3 -m pip install --no-deps --target /scratch/liger liger-kernel   # torch installed
    python3 scripts/run_liger.py --path /scratch/liger [--only rms_norm,swiglu]
        [--dtype float32|bfloat16|float16] [--interpret]

Needs torch and a GPU (or `--interpret`: tritium's interpreter on CPU tensors). The cases
call Liger's public functional API (`liger_kernel.transformers.functional`) and its
fused-add RMSNorm module; a case whose function this Liger release lacks reports the
ImportError in the table. The library is imported only after --help is handled.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import lib_check  # noqa: E402
from lib_check import Case  # noqa: E402

EPS = 1e-6


def _rows(torch, device, dtype, n=8, d=256, grad=True):
    return torch.randn(n, d, device=device, dtype=dtype, requires_grad=grad)


def _rms(torch, x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)).to(x.dtype) * w


def _fn(name):
    def call(*args):
        from liger_kernel.transformers import functional

        return getattr(functional, name)(*args)

    return call


def _rotate_half(torch, x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def cases(torch) -> list[Case]:
    F = torch.nn.functional

    def fused_add_rms_norm(x, r, w):
        from liger_kernel.transformers.fused_add_rms_norm import LigerFusedAddRMSNorm

        m = LigerFusedAddRMSNorm(x.shape[-1], eps=EPS).to(x.device, x.dtype)
        m.weight = torch.nn.Parameter(w)
        return m(x, r)

    def fused_add_rms_norm_ref(x, r, w):
        s = x + r
        return _rms(torch, s, w), s

    def rope_make(torch, device, dtype):
        q = torch.randn(2, 4, 16, 64, device=device, dtype=dtype, requires_grad=True)
        k = torch.randn(2, 2, 16, 64, device=device, dtype=dtype, requires_grad=True)
        angle = torch.randn(1, 16, 32, device=device).repeat(1, 1, 2)
        return q, k, angle.cos().to(dtype), angle.sin().to(dtype)

    def rope_ref(q, k, cos, sin):
        c, s = cos.unsqueeze(1), sin.unsqueeze(1)
        return q * c + _rotate_half(torch, q) * s, k * c + _rotate_half(torch, k) * s

    def ce_make(torch, device, dtype):
        logits = torch.randn(16, 1000, device=device, dtype=dtype, requires_grad=True)
        return logits, torch.randint(0, 1000, (16,), device=device)

    def kl_make(torch, device, dtype):
        x = torch.randn(8, 512, device=device, dtype=dtype).log_softmax(-1).requires_grad_()
        return x, torch.randn(8, 512, device=device, dtype=dtype).softmax(-1)

    return [
        Case(
            "rms_norm",
            lambda t, d, dt: (
                _rows(t, d, dt),
                t.randn(256, device=d, dtype=dt, requires_grad=True),
            ),
            lambda x, w: _fn("liger_rms_norm")(x, w, EPS),
            lambda x, w: _rms(torch, x, w),
        ),
        Case(
            "layer_norm",
            lambda t, d, dt: (
                _rows(t, d, dt),
                t.randn(256, device=d, dtype=dt, requires_grad=True),
                t.randn(256, device=d, dtype=dt, requires_grad=True),
            ),
            lambda x, w, b: _fn("liger_layer_norm")(x, w, b, EPS),
            lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, EPS),
        ),
        Case(
            "fused_add_rms_norm",
            lambda t, d, dt: (
                _rows(t, d, dt),
                _rows(t, d, dt),
                t.randn(256, device=d, dtype=dt, requires_grad=True),
            ),
            fused_add_rms_norm,
            fused_add_rms_norm_ref,
        ),
        Case(
            "swiglu",
            lambda t, d, dt: (_rows(t, d, dt), _rows(t, d, dt)),
            _fn("liger_swiglu"),
            lambda a, b: F.silu(a) * b,
        ),
        Case(
            "geglu",
            lambda t, d, dt: (_rows(t, d, dt), _rows(t, d, dt)),
            _fn("liger_geglu"),
            lambda a, b: F.gelu(a, approximate="tanh") * b,
        ),
        Case("rope", rope_make, _fn("liger_rope"), rope_ref),
        Case(
            "cross_entropy",
            ce_make,
            lambda x, y: _fn("liger_cross_entropy")(x, y),
            lambda x, y: F.cross_entropy(x.float(), y),
        ),
        Case(
            "kl_div",
            kl_make,
            lambda x, y: _fn("liger_kl_div")(x, y, reduction="batchmean"),
            lambda x, y: F.kl_div(x, y, reduction="batchmean"),
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
