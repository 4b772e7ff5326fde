"""int8 and fp8 GEMM 4096^3 (group `lowp_matmul`, with --only): tritium, upstream Triton
pinned to mma.sync (DISABLE_MMA_V3=1, what an sm_80-sm_89 GPU runs), upstream's default
(wgmma on Hopper), and torch (torch._int_mm / torch._scaled_mm, cuBLASLt).

Both Triton sides run benchmarks/tritium_kernels.py:matmul_lowp_kernel (upstream: its twin
from the same text) with A row-major and B stored N x K (K-major, as torch's int8 / fp8
GEMMs take it), each at its best of the same configs. Upstream on mma.sync runs in a
subprocess that sets DISABLE_MMA_V3=1 before importing triton, with its own empty cache:

    python3 benchmarks/bench_lowp.py --upstream-mma-sync [--quick]   # prints one JSON line

Rows: "int8 GEMM (vs upstream mma.sync)" (the target: tritium / upstream >= 0.9; tritium
pinned to mma.sync too, as on an sm_80-sm_89 GPU) and "int8 GEMM (vs upstream default)"
(both at their defaults: wgmma on Hopper), likewise for fp8 (e4m3 x e4m3, fp32 accumulation, fp16
out). int8 results are checked exactly (float64 reference), fp8 ones to 1e-2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import bench_utils as bu  # noqa: E402
from bench_core import DEVICE, Bench, kernel  # noqa: E402

SIZE = 4096
# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages); BLOCK_K = 128 bytes of K
CONFIGS = (
    (128, 256, 128, 8, 8, 3),
    (256, 128, 128, 8, 8, 3),
    (128, 128, 128, 8, 4, 3),
    (128, 128, 64, 8, 4, 4),
    (128, 256, 64, 8, 8, 4),
    (64, 128, 128, 8, 4, 4),
)
# --quick: upstream's best on mma.sync for fp8 (128x128x128/4w/3s) and the 64-row tile
QUICK_CONFIGS = ((128, 128, 128, 8, 4, 3), (64, 128, 128, 8, 4, 4))
KINDS = ("int8", "fp8")


def _inputs(b: Bench, kind: str):
    torch = b.torch
    g = torch.Generator(device=DEVICE).manual_seed(0)
    if kind == "int8":
        a = torch.randint(-128, 128, (SIZE, SIZE), dtype=torch.int8, device=DEVICE, generator=g)
        bt = torch.randint(-128, 128, (SIZE, SIZE), dtype=torch.int8, device=DEVICE, generator=g)
    else:
        a = torch.randn(SIZE, SIZE, device=DEVICE, generator=g).to(torch.float8_e4m3fn)
        bt = torch.randn(SIZE, SIZE, device=DEVICE, generator=g).to(torch.float8_e4m3fn)
    ref = a.double() @ bt.double().t()
    if kind == "int8":
        check = b.allclose(ref, 0.0, 0.0)
    else:
        check = b.relnorm(ref, 1e-2)
    return a, bt, ref, check


def _triton_cells(b: Bench, impl: str, kind: str, a, bt, check, configs) -> list:
    """One cell per config for `impl` ("tritium" / "upstream", or "tritium-mma2": a fresh
    tritium JITFunction compiled with DISABLE_MMA_V3=1, mma.sync on Hopper too)."""
    if impl == "tritium-mma2":
        from bench_attention import kernel_for, mma_sync_only

        k = kernel_for(impl, "matmul_lowp_kernel")
        with mma_sync_only():
            return _cells(b, k, "tritium", kind, a, bt, check, configs)
    return _cells(b, kernel(impl, "matmul_lowp_kernel"), impl, kind, a, bt, check, configs)


def _cells(b: Bench, k, impl: str, kind: str, a, bt, check, configs) -> list:
    torch = b.torch
    lang = __import__(
        "tritium.language" if impl == "tritium" else "triton.language", fromlist=["x"]
    )
    acc, out_t = (lang.int32, lang.int32) if kind == "int8" else (lang.float32, lang.float16)
    out_dtype = torch.int32 if kind == "int8" else torch.float16
    flops = bu.matmul_flops(SIZE, SIZE, SIZE)
    unit = "TOPS" if kind == "int8" else "TFLOP/s"

    def setup(cfg):
        bm, bn, bk, group, warps, stages = cfg
        out = torch.full((SIZE, SIZE), -7, dtype=out_dtype, device=DEVICE)
        grid = (((SIZE + bm - 1) // bm) * ((SIZE + bn - 1) // bn),)

        def run():  # B is bt (N x K, K-major) read through strides as K x N
            k[grid](a, bt, out, SIZE, SIZE, SIZE, SIZE, 1, 1, SIZE, SIZE, 1,
                    BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, ACC=acc, OUT=out_t,
                    num_warps=warps, num_stages=stages)  # fmt: skip
            return out

        return run

    return [b.cell(check, flops, unit, setup, cfg) for cfg in configs]


def _best(cells: list, configs) -> tuple:
    value = bu.best(cells)
    if not bu.is_number(value):
        return value, "-"
    bm, bn, bk, _, warps, stages = configs[cells.index(value)]
    return value, f"{bm}x{bn}x{bk}/{warps}w/{stages}s"


def _torch_cell(b: Bench, kind: str, a, bt, check):
    torch = b.torch
    flops = bu.matmul_flops(SIZE, SIZE, SIZE)
    if kind == "int8":
        return b.cell(check, flops, "TOPS", lambda: lambda: torch._int_mm(a, bt.t()))
    one = torch.ones((), device=DEVICE)
    return b.cell(
        check, flops, "TFLOP/s",
        lambda: lambda: torch._scaled_mm(a, bt.t(), one, one, out_dtype=torch.float16),
    )  # fmt: skip


def upstream_mma_sync(quick: bool) -> dict:
    """{kind: [value or error, config]} from a subprocess running upstream on mma.sync."""
    env = dict(os.environ, DISABLE_MMA_V3="1", TRITON_CACHE_DIR=tempfile.mkdtemp())
    cmd = [sys.executable, str(Path(__file__)), "--upstream-mma-sync"] + (
        ["--quick"] if quick else []
    )
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return {kind: [f"error: subprocess: {tail[0][:120]}", "-"] for kind in KINDS}
    return json.loads(lines[-1])


def bench_fp8_matmul(b: Bench):
    """The fp8 rows alone (group `fp8_matmul`)."""
    yield from bench_lowp_matmul(b, ("fp8",))


def bench_lowp_matmul(b: Bench, kinds=KINDS):
    configs = QUICK_CONFIGS if b.quick else CONFIGS
    pinned = upstream_mma_sync(b.quick)
    for kind in kinds:
        unit = "TOPS" if kind == "int8" else "TFLOP/s"
        try:
            a, bt, ref, check = _inputs(b, kind)
        except Exception as e:
            yield bu.error_row(f"{kind} GEMM", f"{SIZE}^3", unit, e)
            continue
        ours, ours_cfg = _best(_triton_cells(b, "tritium", kind, a, bt, check, configs), configs)
        pinned_ours = _best(_triton_cells(b, "tritium-mma2", kind, a, bt, check, configs), configs)
        default, default_cfg = _best(
            _triton_cells(b, "upstream", kind, a, bt, check, configs), configs
        )
        torch_cell = _torch_cell(b, kind, a, bt, check)
        torch_name = "torch._int_mm" if kind == "int8" else "torch._scaled_mm"
        mma, mma_cfg = pinned.get(kind, ["error: missing", "-"])
        for label, (mine, mine_cfg), theirs, cfg in (
            ("mma.sync", pinned_ours, mma, mma_cfg),
            ("default", (ours, ours_cfg), default, default_cfg),
        ):
            row = bu.make_row(f"{kind} GEMM (vs upstream {label})", f"{SIZE}^3", unit)
            row.update(tritium=mine, upstream=theirs, torch=torch_cell)
            row["note"] = (
                f"A row-major, B K-major; best BLOCK_MxNxK/warps/stages: tritium {mine_cfg}, "
                f"upstream {cfg}"
                + (" (both DISABLE_MMA_V3=1)" if label == "mma.sync" else "")
                + f"; torch: {torch_name}"
            )
            yield row
        del a, bt, ref


def _main() -> None:
    quick = "--quick" in sys.argv
    b = Bench(quick)
    configs = QUICK_CONFIGS if quick else CONFIGS
    out = {}
    for kind in KINDS:
        a, bt, _, check = _inputs(b, kind)
        out[kind] = list(_best(_triton_cells(b, "upstream", kind, a, bt, check, configs), configs))
    print(json.dumps(out))


if __name__ == "__main__" and "--upstream-mma-sync" in sys.argv:
    _main()
