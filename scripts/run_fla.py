"""Run flash-linear-attention's ops, unchanged, on tritium (`tritium.install_as_triton()`),
forward and backward against fla's own naive references, and print a table.

    python3 -m pip install --no-deps --target /scratch/fla flash-linear-attention  # + torch,
                                                          # einops, packaging installed
    python3 scripts/run_fla.py --path /scratch/fla [--only chunk_gla]
        [--dtype float32|bfloat16|float16] [--interpret]

Needs torch and a GPU (or `--interpret`: tritium's interpreter on CPU tensors, very slow
for the chunked kernels). Layout (batch, time, heads, dim) as fla's current API; the gates
are `logsigmoid(randn) / 16` as fla's tests make them. The GLA kernels (chunked, fused
recurrent, fused chunk) are checked against `fla.ops.gla.naive.naive_recurrent_gla`; simple
GLA (one gate per head) against the same recurrence with the gate broadcast over the key
dimension; the fused RMSNorm module and l2norm against their formulas. The library is
imported only after --help is handled.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import lib_check  # noqa: E402
from lib_check import Case  # noqa: E402

B, T, H, K, V = 2, 64, 2, 32, 32


def _qkvg(torch, device, dtype, per_head_gate=False):
    q, k, v = (
        torch.randn(B, T, H, n, device=device, dtype=dtype, requires_grad=True) for n in (K, K, V)
    )
    shape = (B, T, H) if per_head_gate else (B, T, H, K)
    g = (torch.nn.functional.logsigmoid(torch.randn(shape, device=device)) / 16).to(dtype)
    return q, k, v, g.requires_grad_()


def _naive(q, k, v, gk):
    from fla.ops.gla.naive import naive_recurrent_gla

    return naive_recurrent_gla(q, k, v, gk, output_final_state=True)


def _gla(name):
    def call(q, k, v, g):
        import fla.ops.gla as gla

        fn = getattr(gla, name)
        if name == "fused_recurrent_gla":
            return fn(q=q, k=k, v=v, gk=g, output_final_state=True)
        return fn(q=q, k=k, v=v, g=g, output_final_state=True)

    return call


def cases(torch) -> list[Case]:
    def simple_gla(q, k, v, g):
        from fla.ops.simple_gla import chunk_simple_gla

        return chunk_simple_gla(q=q, k=k, v=v, g=g, output_final_state=True)

    def simple_gla_ref(q, k, v, g):
        return _naive(q, k, v, g[..., None].expand(*g.shape, K))

    def rms_norm(x, w):
        from fla.modules import RMSNorm

        m = RMSNorm(x.shape[-1], eps=1e-5).to(x.device, x.dtype)
        m.weight = torch.nn.Parameter(w)
        return m(x)

    def rms_norm_ref(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * w

    def l2norm(x):
        from fla.modules.l2norm import l2norm as fn

        return fn(x)

    def l2norm_ref(x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).sum(-1, keepdim=True) + 1e-6)).to(x.dtype)

    gla_make = _qkvg
    return [
        Case("chunk_gla", gla_make, _gla("chunk_gla"), _naive),
        Case("fused_recurrent_gla", gla_make, _gla("fused_recurrent_gla"), _naive),
        Case("fused_chunk_gla", gla_make, _gla("fused_chunk_gla"), _naive),
        Case(
            "chunk_simple_gla",
            lambda t, d, dt: _qkvg(t, d, dt, per_head_gate=True),
            simple_gla,
            simple_gla_ref,
        ),
        Case(
            "rms_norm",
            lambda t, d, dt: (
                t.randn(16, 256, device=d, dtype=dt, requires_grad=True),
                t.randn(256, device=d, dtype=dt, requires_grad=True),
            ),
            rms_norm,
            rms_norm_ref,
        ),
        Case(
            "l2norm",
            lambda t, d, dt: (t.randn(16, 128, device=d, dtype=dt, requires_grad=True),),
            l2norm,
            l2norm_ref,
        ),
    ]


def main() -> int:
    args = lib_check.parser(
        __doc__.splitlines()[0], "the folder flash-linear-attention is installed in"
    ).parse_args()
    torch, device = lib_check.setup(args)
    return lib_check.main(cases(torch), args, torch, device)


if __name__ == "__main__":
    sys.exit(main())
