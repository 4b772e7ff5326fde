"""Run flash-linear-attention's ops, unchanged, on tritium (`tritium.install_as_triton()`),
forward and backward against fla's own naive references, and print a table.

    python3 -m pip install --no-deps --target /scratch/fla flash-linear-attention  # + torch,
                                                          # einops, packaging installed
    python3 scripts/run_fla.py --path /scratch/fla [--only chunk_gla]
        [--dtype float32|bfloat16|float16] [--interpret] [--llm] [--bench]
        [--backend tritium|triton] [--json rows.json]

Needs torch and a GPU (or `--interpret`: tritium's interpreter on CPU tensors, slow for
the chunked kernels). Layout (batch, time, heads, dim) as fla's current API; gates are
log-space (`logsigmoid(randn)`, / 16 for GLA) as fla's tests make them. Each op is checked
against fla's own naive reference (`fla.ops.*.naive`: the recurrent forms, in float32),
the norms against their formulas; outputs and final states both (HGRN: the output only,
as fla's chunked HGRN backward takes no final-state gradient). The library is imported
only after --help is handled.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import lib_check  # noqa: E402
from lib_check import Case  # noqa: E402


def _dims():
    """(B, T, H, K, V): a training-sized sequence with --llm, a small one otherwise."""
    return (2, 1024, 4, 64, 64) if lib_check.LLM else (1, 64, 2, 32, 32)


def _t(x):
    """[B, T, H, ...] <-> [B, H, T, ...] (the layout some naive references take)."""
    return x.transpose(1, 2)


def _qkv(torch, device, dtype, k_dim=None, normalize_k=False):
    b, t, h, k, v = _dims()
    k = k_dim or k
    q = torch.randn(b, t, h, k, device=device, dtype=torch.float32)
    kk = torch.randn(b, t, h, k, device=device, dtype=torch.float32)
    if normalize_k:
        kk = torch.nn.functional.normalize(kk, p=2, dim=-1)
    vv = torch.randn(b, t, h, v, device=device, dtype=torch.float32)
    return tuple(x.to(dtype).requires_grad_() for x in (q, kk, vv))


def _gate(torch, device, dtype, shape):
    """A log-space forget gate as fla's tests make it."""
    g = torch.nn.functional.logsigmoid(torch.randn(shape, device=device)) / 16
    return g.to(dtype).requires_grad_()


def _call(module, name, **kw):
    def call(*args, **more):
        import importlib

        return getattr(importlib.import_module(module), name)(*args, **kw, **more)

    return call


def cases(torch) -> list[Case]:
    F = torch.nn.functional

    def gla_make(t, d, dt):
        b, n, h, k, _ = _dims()
        return (*_qkv(t, d, dt), _gate(t, d, dt, (b, n, h, k)))

    def gla_ref(q, k, v, g):
        return _call("fla.ops.gla.naive", "naive_recurrent_gla", output_final_state=True)(
            q, k, v, g
        )

    def fused_recurrent_gla(q, k, v, g):
        from fla.ops.gla import fused_recurrent_gla as fn

        return fn(q, k, v, gk=g, output_final_state=True)

    def simple_gla_make(t, d, dt):
        b, n, h, _, _ = _dims()
        return (*_qkv(t, d, dt), _gate(t, d, dt, (b, n, h)))

    def simple_gla_ref(q, k, v, g):
        return _call("fla.ops.simple_gla.naive", "naive_recurrent_simple_gla")(q, k, v, g)

    def delta_make(t, d, dt):
        b, n, h, _, _ = _dims()
        beta = t.rand(b, n, h, device=d).sigmoid().to(dt).requires_grad_()
        return (*_qkv(t, d, dt, normalize_k=True), beta)

    def delta_ref(q, k, v, beta):
        from fla.ops.delta_rule.naive import delta_rule_recurrence

        o, s = delta_rule_recurrence(_t(q), _t(k), _t(v), _t(beta), output_final_state=True)
        return _t(o), s

    def gdn_make(t, d, dt):
        b, n, h, _, _ = _dims()
        q, k, v, beta = delta_make(t, d, dt)
        g = F.logsigmoid(t.randn(b, n, h, device=d)).to(dt).requires_grad_()
        return q, k, v, g, beta

    def gdn_ref(q, k, v, g, beta):
        from fla.ops.gated_delta_rule.naive import naive_recurrent_gated_delta_rule as fn

        return fn(q, k, v, beta, g, output_final_state=True)

    def retention_ref(q, k, v):
        from fla.ops.retention.naive import naive_retention

        return _t(naive_retention(_t(q), _t(k), _t(v)))

    def linear_attn_ref(q, k, v):
        from fla.ops.linear_attn.naive import naive_recurrent_linear_attn

        return naive_recurrent_linear_attn(q, k, v, output_final_state=True)

    def based_ref(q, k, v):
        from fla.ops.based.naive import naive_parallel_based

        qf, kf, vf = (_t(x).float() for x in (q, k, v))
        return _t(naive_parallel_based(qf, kf, vf, use_norm=True))

    def rwkv6_make(t, d, dt):
        b, n, h, k, _ = _dims()
        w = F.logsigmoid(t.randn(b, n, h, k, device=d)).to(dt).requires_grad_()
        u = t.randn(h, k, device=d, dtype=t.float32).to(dt).requires_grad_()
        return (*_qkv(t, d, dt), w, u)

    def rwkv6_ref(r, k, v, w, u):
        from fla.ops.rwkv6.recurrent_naive import naive_recurrent_rwkv6

        o, s = naive_recurrent_rwkv6(_t(r), _t(k), _t(v), _t(w), u, output_final_state=True)
        return _t(o), s

    def hgrn_make(t, d, dt):
        b, n, h, k, _ = _dims()
        x = t.randn(b, n, h * k, device=d, dtype=t.float32).to(dt).requires_grad_()
        g = F.logsigmoid(t.randn(b, n, h * k, device=d)).to(dt).requires_grad_()
        return x, g

    def hgrn_ref(x, g):
        from fla.ops.hgrn.naive import naive_recurrent_hgrn

        return naive_recurrent_hgrn(x, g)[0]

    def rows_make(t, d, dt):
        b, n, h, k, _ = _dims()
        return (t.randn(b * n, h * k, device=d, dtype=dt, requires_grad=True),)

    def rows_w_make(t, d, dt, n_vec=1):
        b, n, h, k, _ = _dims()
        x = t.randn(b * n, h * k, device=d, dtype=dt, requires_grad=True)
        return (x, *(t.randn(h * k, device=d, dtype=dt, requires_grad=True) for _ in range(n_vec)))

    def gated_make(t, d, dt):
        x, w = rows_w_make(t, d, dt)
        return x, t.randn_like(x).requires_grad_(), w

    def rms(x, w, eps=1e-5):
        xf = x.float()
        return xf * t_rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()

    t_rsqrt = torch.rsqrt

    def cumsum_make(t, d, dt):
        b, n, h, _, _ = _dims()
        return (t.randn(b, n, h, device=d, dtype=t.float32),)

    def cumsum_ref(g):
        b, n, h = g.shape
        return g.float().view(b, n // 64, 64, h).cumsum(2).view(b, n, h)

    return [
        Case(
            "chunk_gla",
            gla_make,
            _call("fla.ops.gla", "chunk_gla", output_final_state=True),
            gla_ref,
        ),
        Case("fused_recurrent_gla", gla_make, fused_recurrent_gla, gla_ref),
        Case(
            "chunk_simple_gla",
            simple_gla_make,
            _call("fla.ops.simple_gla", "chunk_simple_gla", output_final_state=True),
            simple_gla_ref,
        ),
        Case(
            "chunk_delta_rule",
            delta_make,
            _call("fla.ops.delta_rule", "chunk_delta_rule", output_final_state=True),
            delta_ref,
        ),
        Case(
            "fused_recurrent_delta_rule",
            delta_make,
            _call("fla.ops.delta_rule", "fused_recurrent_delta_rule", output_final_state=True),
            delta_ref,
        ),
        Case(
            "chunk_gated_delta_rule",
            gdn_make,
            _call("fla.ops.gated_delta_rule", "chunk_gated_delta_rule", output_final_state=True),
            gdn_ref,
        ),
        Case(
            "chunk_retention",
            lambda t, d, dt: _qkv(t, d, dt),
            lambda q, k, v: _call("fla.ops.retention", "chunk_retention")(q, k, v)[0],
            retention_ref,
        ),
        Case(
            "chunk_linear_attn",
            lambda t, d, dt: _qkv(t, d, dt),
            _call(
                "fla.ops.linear_attn",
                "chunk_linear_attn",
                normalize=False,
                output_final_state=True,
            ),
            linear_attn_ref,
        ),
        Case(
            "parallel_based",
            lambda t, d, dt: _qkv(t, d, dt, k_dim=16),
            _call("fla.ops.based", "parallel_based", use_norm=True),
            based_ref,
        ),
        Case(
            "chunk_rwkv6",
            rwkv6_make,
            _call("fla.ops.rwkv6", "chunk_rwkv6", output_final_state=True),
            rwkv6_ref,
        ),
        Case(
            "chunk_hgrn",
            hgrn_make,
            lambda x, g: _call("fla.ops.hgrn", "chunk_hgrn")(x, g)[0],
            hgrn_ref,
        ),
        Case(
            "fused_recurrent_hgrn",
            hgrn_make,
            lambda x, g: _call("fla.ops.hgrn", "fused_recurrent_hgrn")(x, g)[0],
            hgrn_ref,
        ),
        Case(
            "l2norm",
            rows_make,
            _call("fla.modules.l2norm", "l2norm"),
            lambda x: F.normalize(x.float(), p=2, dim=-1, eps=1e-6),
        ),
        Case(
            "rms_norm",
            rows_w_make,
            lambda x, w: _call("fla.modules.norm.layernorm", "rms_norm")(x, w, None),
            rms,
        ),
        Case(
            "layer_norm",
            lambda t, d, dt: rows_w_make(t, d, dt, 2),
            lambda x, w, b: _call("fla.modules.norm.layernorm", "layer_norm")(x, w, b),
            lambda x, w, b: F.layer_norm(x.float(), (x.shape[-1],), w.float(), b.float(), 1e-5),
        ),
        Case(
            "rms_norm_gated",
            gated_make,
            lambda x, g, w: _call("fla.modules.norm.fused_norm_gate", "rms_norm_gated")(
                x, g, w, None, eps=1e-5
            ),
            lambda x, g, w: rms(x, w) * F.silu(g.float()),
        ),
        Case(
            "chunk_local_cumsum",
            cumsum_make,
            _call("fla.ops.utils.cumsum", "chunk_local_cumsum", chunk_size=64),
            cumsum_ref,
            backward=False,
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
