"""torch.compile with `import triton` served by tritium: the issue's acceptance models
(an MLP block with GELU and LayerNorm, an attention block, RMSNorm + SwiGLU, a
cross-entropy loss with its backward, an AdamW step) compiled with `torch.compile` and
compared with eager torch, forward and backward, and a table printed.

    python3 scripts/run_torch_compile.py [--backend tritium|triton] [--only mlp,attention]
        [--compile-backend inductor|aot_eager] [--device cuda|cpu] [--small]

With `--backend tritium` the alias is installed before torch is imported; inductor's own
compile workers are kept in-process (TORCHINDUCTOR_COMPILE_THREADS=1), as a worker process
would not have the alias. `--device cpu` runs the models on CPU tensors with inductor's
`cpu_backend = "triton"`: its generated Triton kernels run in tritium's interpreter (no
GPU needed; tests/test_torch_compile.py runs it that way, with `--small` shapes). A model
that fails reports the last line of its error (the message tritium gives where inductor
asks for a piece it does not serve).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# model sizes: (d_model, heads, rows, sequence, vocabulary)
FULL = {"d": 1024, "h": 16, "rows": 8, "t": 256, "vocab": 32000, "ce_rows": 2048}
SMALL = {"d": 64, "h": 4, "rows": 2, "t": 16, "vocab": 300, "ce_rows": 64}


def models(torch, size=FULL):
    nn, F = torch.nn, torch.nn.functional
    d, h, rows, t, vocab = size["d"], size["h"], size["rows"], size["t"], size["vocab"]

    class MLP(nn.Module):
        def __init__(self, d=d):
            super().__init__()
            self.norm = nn.LayerNorm(d)
            self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            return x + self.down(F.gelu(self.up(self.norm(x))))

    class Attention(nn.Module):
        def __init__(self, d=d, h=h):
            super().__init__()
            self.h, self.qkv, self.out = h, nn.Linear(d, 3 * d), nn.Linear(d, d)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(x).view(b, t, 3, self.h, d // self.h).unbind(2)
            q, k, v = (y.transpose(1, 2) for y in (q, k, v))
            s = (q @ k.transpose(-1, -2)) / (d // self.h) ** 0.5
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            p = s.masked_fill(~mask, float("-inf")).softmax(-1)
            return self.out((p @ v).transpose(1, 2).reshape(b, t, d))

    class RMSNormSwiGLU(nn.Module):
        def __init__(self, d=d):
            super().__init__()
            self.w = nn.Parameter(torch.ones(d))
            self.gate, self.up = nn.Linear(d, 2 * d, bias=False), nn.Linear(d, 2 * d, bias=False)
            self.down = nn.Linear(2 * d, d, bias=False)

        def forward(self, x):
            n = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w
            return self.down(F.silu(self.gate(n)) * self.up(n))

    class CrossEntropy(nn.Module):
        def __init__(self, d=d, vocab=vocab):
            super().__init__()
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, x, y):
            return F.cross_entropy(self.head(x).float(), y)

    n = size["ce_rows"]
    return {
        "mlp_gelu_layernorm": (MLP, lambda dev: (torch.randn(rows, t, d, device=dev),)),
        "attention": (Attention, lambda dev: (torch.randn(rows, t, d, device=dev),)),
        "rmsnorm_swiglu": (RMSNormSwiGLU, lambda dev: (torch.randn(rows, t, d, device=dev),)),
        "cross_entropy": (
            CrossEntropy,
            lambda dev: (torch.randn(n, d, device=dev), torch.randint(0, vocab, (n,), device=dev)),
        ),
    }


COMPILED: list = []  # (ASTSource, options, seconds) of each triton.compile (count_compiles)


def count_compiles() -> None:
    """Record every `triton.compile` (inductor calls it once per kernel and config), so the
    table shows that the generated kernels went through the backend under test."""
    import triton

    compile_fn = triton.compile

    def counted(src, target=None, options=None, **kwargs):
        start = time.perf_counter()
        try:
            return compile_fn(src, target=target, options=options, **kwargs)
        finally:
            COMPILED.append((src, options, time.perf_counter() - start))

    triton.compile = counted


def assemble_for_gpu(arch: int) -> list[str]:
    """Compile every kernel inductor generated (for the CPU) for the GPU `arch` too, through
    ptxas where installed: the GPU path's compile, checked without a GPU. The failures."""
    import triton
    from triton.backends.compiler import GPUTarget

    failed, seen = [], set()
    for src, options, _ in COMPILED:
        key = (src.hash(), repr(sorted((options or {}).items())))
        if key in seen:
            continue
        seen.add(key)
        try:
            binary = triton.compile(src, target=GPUTarget("cuda", arch, 32), options=options)
            if "ptx" not in binary.asm:
                failed.append(f"{src.name}: no PTX")
        except Exception as e:  # noqa: BLE001 - reported
            failed.append(f"{src.name}: {type(e).__name__}: {str(e)[:300]}")
    print(f"\n{len(seen)} kernels compiled for sm_{arch}: {len(failed)} failed")
    return failed


def _rel(torch, a, b) -> float:
    a, b = a.detach().double(), b.detach().double()
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


def run_model(torch, name, cls, make, backend, device="cuda") -> dict:
    torch.manual_seed(0)
    eager = cls().to(device)
    compiled_mod = cls().to(device)
    compiled_mod.load_state_dict(eager.state_dict())
    inputs = make(device)
    row = {"case": name, "fwd": None, "bwd": None, "status": "ok", "seconds": 0.0}
    start, first = time.perf_counter(), len(COMPILED)
    try:
        fn = torch.compile(compiled_mod, backend=backend)
        out_c = fn(*inputs)
        out_e = eager(*inputs)
        row["fwd"] = _rel(torch, out_c, out_e)
        out_c.float().sum().backward()
        out_e.float().sum().backward()
        row["bwd"] = max(
            _rel(torch, pc.grad, pe.grad)
            for pc, pe in zip(compiled_mod.parameters(), eager.parameters(), strict=True)
        )
        ok = row["fwd"] < 1e-3 and row["bwd"] < 1e-3
        row["status"] = "ok" if ok else "MISMATCH"
    except Exception as e:  # noqa: BLE001 - reported in the table
        row["status"] = "ERROR: " + traceback.format_exception_only(type(e), e)[-1].strip()[:400]
        if os.environ.get("LIB_CHECK_TRACEBACK"):
            traceback.print_exc()
    row["seconds"] = time.perf_counter() - start
    row["kernels"] = len(COMPILED) - first
    return row


def run_adamw(torch, backend, device="cuda", d=1024) -> dict:
    row = {"case": "adamw_step", "fwd": None, "bwd": None, "status": "ok", "seconds": 0.0}
    start, first = time.perf_counter(), len(COMPILED)
    try:
        torch.manual_seed(0)
        params = [torch.randn(d, d, device=device) for _ in range(4)]
        grads = [torch.randn_like(p) for p in params]
        a = [p.clone().requires_grad_() for p in params]
        b = [p.clone().requires_grad_() for p in params]
        for x, y, g in zip(a, b, grads):
            x.grad, y.grad = g.clone(), g.clone()
        opt_c, opt_e = torch.optim.AdamW(a, lr=1e-2), torch.optim.AdamW(b, lr=1e-2)
        step = torch.compile(opt_c.step, backend=backend)
        for _ in range(3):
            step()
            opt_e.step()
        row["fwd"] = max(_rel(torch, x, y) for x, y in zip(a, b))
        row["status"] = "ok" if row["fwd"] < 1e-5 else "MISMATCH"
    except Exception as e:  # noqa: BLE001
        row["status"] = "ERROR: " + traceback.format_exception_only(type(e), e)[-1].strip()[:400]
        if os.environ.get("LIB_CHECK_TRACEBACK"):
            traceback.print_exc()
    row["seconds"] = time.perf_counter() - start
    row["kernels"] = len(COMPILED) - first
    return row


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="tritium", choices=["tritium", "triton"])
    p.add_argument("--compile-backend", default="inductor")
    p.add_argument("--only", default=None)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--small", action="store_true", help="small shapes (the CPU tests')")
    p.add_argument(
        "--assemble-for", type=int, default=None, metavar="ARCH",
        help="then compile every generated kernel for this GPU arch too (90: sm_90a)",
    )  # fmt: skip
    args = p.parse_args()
    if args.backend == "tritium":
        os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
        sys.path.insert(0, str(ROOT))
        import tritium

        tritium.install_as_triton()
    import torch

    if args.compile_backend == "inductor":
        count_compiles()
    if args.device == "cpu":
        import torch._inductor.config

        torch._inductor.config.cpu_backend = "triton"  # generated Triton, on CPU tensors
    size = SMALL if args.small else FULL
    only = set(args.only.split(",")) if args.only else None
    rows = [
        run_model(torch, name, cls, make, args.compile_backend, args.device)
        for name, (cls, make) in models(torch, size).items()
        if only is None or name in only
    ]
    if only is None or "adamw_step" in only:
        rows.append(run_adamw(torch, args.compile_backend, args.device, size["d"]))
    # inductor that generated no kernel would compare eager with eager (upstream's compiles
    # may run in inductor's worker processes, which this process does not count)
    for r in rows:
        if (
            args.backend == "tritium"
            and args.compile_backend == "inductor"
            and r["kernels"] == 0
            and r["status"] == "ok"
        ):
            r["status"] = "NO GENERATED KERNEL"
    print(
        f"\n| model | fwd rel err | bwd rel err | kernels | seconds | status |  ({args.backend}, {args.device})"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        f = "" if r["fwd"] is None else f"{r['fwd']:.1e}"
        b = "" if r["bwd"] is None else f"{r['bwd']:.1e}"
        print(f"| {r['case']} | {f} | {b} | {r['kernels']} | {r['seconds']:.1f} | {r['status']} |")
    failed = [r for r in rows if r["status"] != "ok"]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} passed")
    if COMPILED:
        total = sum(s for *_, s in COMPILED)
        slow = sorted(COMPILED, key=lambda c: -c[2])[:3]
        print(f"triton.compile: {len(COMPILED)} calls, {total:.1f} s; slowest: "
              + ", ".join(f"{src.name} (num_warps={(o or {}).get('num_warps')}) {s:.1f} s"
                          for src, o, s in slow))  # fmt: skip
    if args.assemble_for is not None:
        bad = assemble_for_gpu(args.assemble_for)
        for line in bad:
            print("  " + line)
        failed += bad
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
