"""A/B timing of two tritium source trees against upstream Triton in one device call: the
fp16 / bf16 grouped GEMM 4096^3 and the attention forward (D = 64, 128, causal or not,
S = 4096, 32 heads) at a few configurations, the same kernel source for every side
(this tree's examples/). Two tritium trees cannot share a process, so each side runs in
its own; run the rounds interleaved and take medians:

    # on the device, per round, for each side (TREE: a copy of the tritium tree to time)
    PYTHONPATH=TREE python3 benchmarks/ab_trees.py run base OUT.jsonl
    PYTHONPATH=.    python3 benchmarks/ab_trees.py run new OUT.jsonl
    python3 benchmarks/ab_trees.py run upstream OUT.jsonl                  (+ cuBLAS / SDPA)

`AB_ONLY="gemm fp16,attn D=64"` (case-name prefixes, comma-separated) times only those
cases; DISABLE_MMA_V3=1 in the environment pins both compilers to mma.sync.

Each row records the tritium package it imported: PYTHONPATH decides it (this script puts
nothing of its own tree before it; a first version did, and timed the new tree twice).
    python3 benchmarks/ab_trees.py table OUT.jsonl      # medians per cell, min-max per side

Each result is checked first (relative error against torch's fp32 product / SDPA on four
heads, printed in the table); the output is poisoned with NaN before the first run.
"""

from __future__ import annotations

import collections
import functools
import json
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
S, HEADS = 4096, 32
GEMM_CONFIGS = ((128, 256, 32, 8, 4), (128, 256, 64, 8, 3))  # BLOCK_M, N, K, warps, stages
ATTN_CONFIGS = ((128, 64, 8, 3), (64, 64, 4, 3), (128, 128, 8, 2))  # BLOCK_M, N, warps, stages


def _kernel(impl: str, name: str, example: str):
    if impl == "upstream":
        import upstream_kernels

        return upstream_kernels.fresh(name)
    import importlib.util  # the example's text, under whichever tritium is on the path

    spec = importlib.util.spec_from_file_location(f"ab_{name}", HERE.parent / example)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def run(impl: str, out: str) -> None:
    import torch
    from triton.testing import do_bench

    rows = []
    where = "-"
    if impl != "upstream":
        import tritium

        where = str(Path(tritium.__file__).parent)

    def record(case, cfg, fn, check, flops):
        try:
            fn()
            torch.cuda.synchronize()
            err = check()
            ms = do_bench(fn, warmup=50, rep=300, return_mode="median")
            rows.append(dict(impl=impl, case=case, cfg=cfg, tflops=flops / ms * 1e-9, err=err,
                             tritium=where))  # fmt: skip
        except Exception as e:  # noqa: BLE001  (a config that does not fit: say so)
            rows.append(dict(impl=impl, case=case, cfg=cfg, tflops=0.0, tritium=where,
                             err=f"{type(e).__name__}: {e}"[:200]))  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)

    only = [p for p in os.environ.get("AB_ONLY", "").split(",") if p]
    for case, cfg, fn, check, flops in _cases(impl, torch, only):
        record(case, cfg, fn, check, flops)
    with open(out, "a") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


def _gemm_case(kernel, a, b, ref, cfg):
    """(launch, check) of one GEMM configuration, C poisoned with NaN."""
    import torch

    bm, bn, bk, warps, stages = cfg
    c = torch.full((S, S), float("nan"), device="cuda", dtype=a.dtype)
    grid = ((S // bm) * (S // bn),)

    def launch():
        return kernel[grid](a, b, c, S, S, S, S, 1, S, 1, S, 1, BLOCK_M=bm, BLOCK_N=bn,
                            BLOCK_K=bk, GROUP_M=8, num_warps=warps, num_stages=stages)  # fmt: skip

    return launch, lambda: ((c.float() - ref).norm() / ref.norm()).item()


def _attn_case(kernel, q, k, v, ref, causal: bool, cfg):
    """(launch, check) of one attention configuration (check on the first four heads)."""
    import torch

    bm, bn, warps, stages = cfg
    o = torch.full_like(q, float("nan"))
    lse = torch.empty(HEADS, S, device="cuda", dtype=torch.float32)
    strides = [*q.stride()[:2], *k.stride()[:2], *v.stride()[:2], *o.stride()[:2]]

    def launch():
        return kernel[(S // bm, HEADS)](q, k, v, o, lse, q.shape[-1] ** -0.5, S, *strides,
                                        HEAD_DIM=q.shape[-1], BLOCK_M=bm, BLOCK_N=bn,
                                        CAUSAL=causal, BF16=False, num_warps=warps,
                                        num_stages=stages)  # fmt: skip

    return launch, lambda: ((o[:4].float() - ref).norm() / ref.norm()).item()


def _no_check() -> float:
    return 0.0  # the library rows (cuBLAS, SDPA) are the references themselves


def _cases(impl: str, torch, only: list[str]):
    """(case, config, launch, check, flops) of every cell (of the cases `only` names, when
    it names any); cuBLAS and SDPA with upstream."""
    for cell in _all_cases(impl, torch):
        if not only or cell[0].startswith(tuple(only)):
            yield cell


def _all_cases(impl: str, torch):
    gemm = _kernel(impl, "matmul_fp16_grouped_kernel", "examples/matmul_fp16_grouped.py")
    for dt, tdt in (("fp16", torch.float16), ("bf16", torch.bfloat16)):
        torch.manual_seed(1)
        a, b = (torch.randn(S, S, device="cuda", dtype=tdt) for _ in range(2))
        ref = a.float() @ b.float()
        for cfg in GEMM_CONFIGS:
            name = "x".join(map(str, cfg[:3])) + f"/{cfg[3]}w/{cfg[4]}s"
            yield (f"gemm {dt}", name, *_gemm_case(gemm, a, b, ref, cfg), 2.0 * S**3)
        if impl == "upstream":
            yield f"gemm {dt}", "cublas", functools.partial(torch.matmul, a, b), _no_check, 2.0 * S**3
    attn = _kernel(impl, "attn_fwd_kernel", "examples/flash_attention.py")
    sdpa = torch.nn.functional.scaled_dot_product_attention
    for d in (64, 128):
        torch.manual_seed(d)
        q, k, v = (torch.randn(HEADS, S, d, device="cuda", dtype=torch.float16) for _ in range(3))
        for causal in (False, True):
            case = f"attn D={d}" + (" causal" if causal else "")
            with torch.no_grad():
                four = [x[:4].float()[None] for x in (q, k, v)]
                ref = sdpa(*four, is_causal=causal, scale=d**-0.5)[0]
            flops = 4 * HEADS * S * S * d * (0.5 if causal else 1.0)
            for cfg in ATTN_CONFIGS:
                name = f"{cfg[0]}x{cfg[1]}/{cfg[2]}w/{cfg[3]}s"
                yield (case, name, *_attn_case(attn, q, k, v, ref, causal, cfg), flops)
            if impl == "upstream":
                full = functools.partial(sdpa, q[None], k[None], v[None], is_causal=causal,
                                         scale=d**-0.5)  # fmt: skip
                yield case, "sdpa", full, _no_check, flops


def table(paths: list[str]) -> None:
    cells, errs = collections.defaultdict(list), {}
    for path in paths:
        for line in open(path):
            r = json.loads(line)
            key = (r["case"], r["cfg"], r["impl"])
            cells[key].append(r["tflops"])
            errs[key] = r["err"]
    sides = ("base", "new", "upstream")
    print("| case | config | base | new | upstream | new/upstream | new/base | rel. error (new) | min-max |")
    print("|---|---|---|---|---|---|---|---|---|")
    for case, cfg in sorted({(c, g) for c, g, _ in cells}):
        med = {s: statistics.median(cells[(case, cfg, s)]) if (case, cfg, s) in cells else 0.0
               for s in sides}  # fmt: skip
        ratio = lambda x, y: f"{x / y:.3f}" if x and y else "-"  # noqa: E731
        err = errs.get((case, cfg, "new"), "")
        err = f"{err:.1e}" if isinstance(err, float) else str(err)[:60]
        spread = " ".join(f"{s} {min(cells[(case, cfg, s)]):.0f}-{max(cells[(case, cfg, s)]):.0f}"
                          for s in sides if (case, cfg, s) in cells)  # fmt: skip
        print(f"| {case} | {cfg} | {med['base']:.1f} | {med['new']:.1f} | {med['upstream']:.1f} | "
              f"{ratio(med['new'], med['upstream'])} | {ratio(med['new'], med['base'])} | {err} | {spread} |")  # fmt: skip


if __name__ == "__main__":
    # benchmarks/ (upstream_kernels) goes last: tritium must come from PYTHONPATH, the
    # tree being timed (a tree put first here would shadow it: each row names its tritium)
    sys.path.append(str(HERE))
    if sys.argv[1:2] == ["run"] and len(sys.argv) == 4:
        run(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["table"]:
        table(sys.argv[2:])
    else:
        sys.exit(__doc__)
