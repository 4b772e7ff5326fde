"""fp16 and bf16 GEMM 4096^3 on a Hopper GPU: tritium on wgmma (sm_90a, its default there:
one wgmma group in flight across the K loop) against tritium on wgmma waiting for each
group (TRITIUM_WGMMA_SYNC=1), tritium on mma.sync (DISABLE_MMA_V3=1), upstream Triton at
its defaults (wgmma) and cuBLAS (torch), the same kernel source
(examples/matmul_fp16_grouped.py, C in the inputs' dtype) for both Triton sides.

    python3 benchmarks/bench_wgmma.py [--size 4096] [--dtype fp16 --dtype bf16] [--quick]
                                      [--rounds N]

Each Triton side reports its best of the configurations below; every result is checked
against torch's fp32 product first. --quick leaves out the two tritium variants (pendings
0, mma.sync). --rounds N then times each side's best configuration N more times,
alternating upstream and tritium in this one process (the same tensors, the GPU as warm
for both), and reports the medians and their ratio: separate processes and one-shot
timings of these ~0.2 ms kernels moved by 3-5% on the H200. Prints a markdown table
(benchmarks/RESULTS.md), one row per dtype.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "examples")]

# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages)
CONFIGS = ((128, 128, 64, 8, 8, 3), (128, 256, 64, 8, 8, 3), (128, 128, 64, 8, 4, 3),
           (128, 128, 32, 8, 4, 4), (128, 256, 32, 8, 8, 4))  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--dtype", action="append", choices=("fp16", "bf16"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=0)
    args = ap.parse_args()
    rows = [row(args.size, dtype, args.quick, args.rounds) for dtype in args.dtype or ("fp16", "bf16")]
    print("| benchmark | size | tritium (wgmma) | tritium (wgmma, pendings 0) | tritium (mma.sync) "
          "| upstream (default) | cuBLAS | tritium/upstream | note |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


def row(size: int, dtype: str, quick: bool, rounds: int = 0) -> str:
    """The markdown row of one dtype."""
    import torch
    import upstream_kernels
    from matmul_fp16_grouped import matmul_fp16_grouped_kernel
    from triton.testing import do_bench

    torch_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    a = torch.randn(size, size, device="cuda", dtype=torch_dtype)
    b = torch.randn(size, size, device="cuda", dtype=torch_dtype)
    ref = a.float() @ b.float()
    flops = 2.0 * size**3

    def launcher(kern, cfg, out):
        bm, bn, bk, group, warps, stages = cfg
        grid = ((size // bm) * (size // bn),)
        return lambda: kern[grid](a, b, out, size, size, size, size, 1, size, 1, size, 1,
                                  BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group,
                                  num_warps=warps, num_stages=stages)  # fmt: skip

    def best(make_kernel, env: dict) -> tuple[float, str]:
        results = []
        for cfg in CONFIGS:
            old = {k: os.environ.get(k) for k in env}
            os.environ.update(env)
            try:
                out = torch.empty(size, size, device="cuda", dtype=torch_dtype)
                run = launcher(make_kernel(), cfg, out)
                run()
                torch.cuda.synchronize()
                err = ((out.float() - ref).norm() / ref.norm()).item()
                if err > 1e-2:
                    results.append((0.0, f"{cfg}: WRONG (rel. error {err:.3g})", None))
                    continue
                ms = do_bench(run)
                results.append((flops / ms * 1e-9, "x".join(map(str, cfg[:3])) + f"/{cfg[4]}w/{cfg[5]}s", run))
            except Exception as e:  # noqa: BLE001  (a config that does not fit: say so)
                results.append((0.0, f"{cfg}: {type(e).__name__}: {str(e)[:120]}", None))
            finally:
                for k, v in old.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
        for tf, what, _ in results:
            print(f"  {dtype} {tf:8.1f}  {what}", file=sys.stderr)
        return max(results, key=lambda r: r[0])

    import tritium

    def fresh_tritium():  # a new JITFunction: the variables are read when a kernel compiles
        return tritium.jit(matmul_fp16_grouped_kernel.fn)

    up = best(lambda: upstream_kernels.fresh("matmul_fp16_grouped_kernel"), {})
    wg = best(fresh_tritium, {})
    ms = do_bench(lambda: a @ b)
    cublas = flops / ms * 1e-9
    note = ""
    if rounds and up[2] and wg[2]:  # the best configurations again, alternating sides
        import statistics

        times = {"up": [], "wg": []}
        for _ in range(rounds):
            for side, (_, _, run) in (("up", up), ("wg", wg)):
                times[side].append(flops / do_bench(run) * 1e-9)
        med = {k: statistics.median(v) for k, v in times.items()}
        spread = {k: f"{min(v):.0f}-{max(v):.0f}" for k, v in times.items()}
        up, wg = (med["up"], *up[1:]), (med["wg"], *wg[1:])
        note = (f"medians of {rounds} alternating rounds in one process (tritium {spread['wg']}, "
                f"upstream {spread['up']}); ")  # fmt: skip
    skipped = (0.0, "not run (--quick)", None)
    v2 = skipped if quick else best(fresh_tritium, {"DISABLE_MMA_V3": "1"})
    sync = skipped if quick else best(fresh_tritium, {"TRITIUM_WGMMA_SYNC": "1"})
    cell = lambda r: "-" if r is skipped else f"{r[0]:.1f}"  # noqa: E731
    return (f"| grouped matmul {dtype} | {size}^3 | {wg[0]:.1f} | {cell(sync)} | {cell(v2)} | "
            f"{up[0]:.1f} | {cublas:.1f} | {wg[0] / up[0]:.3f}x | {note}best: tritium {wg[1]}, "
            f"pendings 0 {sync[1]}, mma.sync {v2[1]}, upstream {up[1]} |")  # fmt: skip


if __name__ == "__main__":
    main()
