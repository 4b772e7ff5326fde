"""bench.py's kernel groups: each yields table rows (bench_utils.make_row dicts) for
tritium, upstream Triton and torch on fresh random fp32 inputs. Launch configs (BLOCK,
num_warps) are the same for tritium and upstream."""

from __future__ import annotations

import functools

import bench_utils as bu
from bench_core import DEVICE, Bench, guarded_rows, kernel


def softmax(x):
    return x.softmax(dim=1)


def bench_vector_add(b: Bench):
    def case(n):
        x, y = b.randn(n), b.randn(n)
        ref = (x.double() + y.double()).float()
        out_torch = b.torch.empty_like(x)
        grid = ((n + 1023) // 1024,)
        note = "BLOCK 1024, 4 warps"
        if bu.vector_add_bytes(n) < 60e6:
            note += "; fits the 60 MB L2 (flushed before each run)"
        row = bu.make_row("vector add", f"2^{n.bit_length() - 1}", "GB/s", note)
        row["n"] = n
        return b.fill(
            row,
            "add_kernel",
            lambda k, out: k[grid](x, y, out, n, BLOCK_SIZE=1024, num_warps=4),
            lambda: b.torch.add(x, y, out=out_torch),
            ref,
            b.allclose(ref, 1e-6, 1e-6),
            bu.vector_add_bytes(n),
        )

    exps = (12, 16, 20, 24, 26) if b.quick else range(12, 29, 2)
    cases = [(f"2^{e}", functools.partial(case, 2**e)) for e in exps]
    yield from guarded_rows("vector add", "GB/s", cases)


def softmax_row(b: Bench, benchmark, x, name, args, torch_fn, block, warps):
    """A row for a softmax-like kernel, one program per row of x: the kernel gets
    `args(x, out)` plus BLOCK_SIZE and num_warps; `torch_fn` is torch's version, also run
    in float64 for the reference."""
    rows, cols = x.shape
    ref = torch_fn(x.double()).float()
    row = bu.make_row(benchmark, f"{rows}x{cols}", "GB/s", f"BLOCK {block}, {warps} warps")
    return b.fill(
        row,
        name,
        lambda k, out: k[(rows,)](*args(x, out), BLOCK_SIZE=block, num_warps=warps),
        functools.partial(torch_fn, x),
        ref,
        b.allclose(ref, 1e-4, 1e-7),
        bu.softmax_bytes(rows, cols),
    )


def bench_softmax(b: Bench):
    def case(rows, cols):
        block = bu.next_power_of_2(cols)

        def args(x, out):
            return out, x, x.stride(0), out.stride(0), cols

        x = b.randn(rows, cols)
        return softmax_row(
            b, "fused softmax", x, "softmax_kernel", args, softmax, block, bu.num_warps_for(block)
        )

    sizes = (
        [(4096, 1024), (32768, 2048)] if b.quick else [(4096, 1024), (8192, 4096), (32768, 2048)]
    )
    cases = [(f"{r}x{c}", functools.partial(case, r, c)) for r, c in sizes]
    yield from guarded_rows("fused softmax", "GB/s", cases)


def bench_online_softmax(b: Bench):
    def case(rows, cols):
        def args(x, out):
            return x, out, cols, x.stride(0), out.stride(0)

        x = b.randn(rows, cols)
        return softmax_row(b, "online softmax", x, "online_softmax_kernel", args, softmax, 1024, 4)

    yield from guarded_rows("online softmax", "GB/s", [("8192x4096", lambda: case(8192, 4096))])


def bench_causal_softmax(b: Bench):
    """Causal softmax over 16 sequences: row r of each (seq, seq) block sees columns <= r."""

    def case(seq):
        rows, block = 16 * seq, bu.next_power_of_2(seq)
        future = b.torch.ones(seq, seq, dtype=b.torch.bool, device=DEVICE).triu(1)

        def torch_fn(x):
            return softmax(x.view(16, seq, seq).masked_fill(future, float("-inf")).view(rows, seq))

        def args(x, out):
            return x, out, rows, seq, seq, x.stride(0), out.stride(0)

        x = b.randn(rows, seq)
        row = softmax_row(
            b, "causal softmax", x, "softmax_causal_simple_kernel", args, torch_fn, block,
            bu.num_warps_for(block),
        )  # fmt: skip
        row["size"] = f"seq {seq} ({rows}x{seq})"
        row["note"] += "; torch: masked_fill + softmax"
        return row

    cases = [(f"seq {s}", functools.partial(case, s)) for s in (128, 2048)]
    yield from guarded_rows("causal softmax", "GB/s", cases)


def bench_rms_norm(b: Bench):
    def case(rows, cols, eps=1e-6):
        x, w = b.randn(rows, cols), b.randn(cols)
        xd = x.double()
        ref = (xd * (xd.square().mean(dim=1, keepdim=True) + eps).rsqrt() * w.double()).float()
        block = bu.next_power_of_2(cols)
        meta = dict(BLOCK_SIZE=block, num_warps=bu.num_warps_for(block))
        rms_norm = b.torch.nn.functional.rms_norm
        row = bu.make_row(
            "RMSNorm", f"{rows}x{cols}", "GB/s", f"BLOCK {block}, {meta['num_warps']} warps"
        )
        return b.fill(
            row,
            "rms_norm_simple_kernel",
            lambda k, out: k[(rows,)](x, w, out, x.stride(0), out.stride(0), cols, eps, **meta),
            lambda: rms_norm(x, (cols,), w, eps),
            ref,
            b.allclose(ref, 1e-4, 1e-5),
            bu.rms_norm_bytes(rows, cols),
        )

    sizes = (1536, 4096) if b.quick else (1536, 2048, 4096)
    cases = [(f"8192x{c}", functools.partial(case, 8192, c)) for c in sizes]
    yield from guarded_rows("RMSNorm", "GB/s", cases)


def bench_layer_norm(b: Bench):
    def case(rows, cols, eps=1e-5):
        x = b.randn(rows, cols, scale=3.0, shift=1.0)
        w, bias = b.randn(cols), b.randn(cols)
        layer_norm = b.torch.nn.functional.layer_norm
        ref = layer_norm(x.double(), (cols,), w.double(), bias.double(), eps).float()
        block, warps = bu.layer_norm_config(cols)
        row = bu.make_row(
            "layer norm",
            f"{rows}x{cols}",
            "GB/s",
            f"BLOCK {block}, {warps} warps (as upstream's tutorial)",
        )
        return b.fill(
            row,
            "layer_norm_kernel",
            lambda k, out: k[(rows,)](
                x, out, w, bias, x.stride(0), cols, eps, BLOCK_SIZE=block, num_warps=warps
            ),
            lambda: layer_norm(x, (cols,), w, bias, eps),
            ref,
            b.allclose(ref, 1e-4, 1e-5),
            bu.layer_norm_bytes(rows, cols),
        )

    yield from guarded_rows("layer norm", "GB/s", [("8192x4096", lambda: case(8192, 4096))])


MATMUL_CONFIGS = ((64, 64, 32, 4), (128, 64, 32, 4), (64, 128, 32, 4), (128, 128, 32, 8))


def matmul_launch(a, b_mat, precision, config):
    """`launch(kernel, c)` for C = A @ B (square) with config (BLOCK_M, BLOCK_N, BLOCK_K,
    num_warps). tf32 runs the seed kernel (examples/matmul.py: allow_tf32=True), ieee the
    same source with input_precision as a constexpr (tritium_kernels.py)."""
    size = a.shape[0]
    bm, bn, bk, warps = config
    meta = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps)
    if precision != "tf32":
        meta["INPUT_PRECISION"] = precision
    grid = ((size + bm - 1) // bm, (size + bn - 1) // bn)
    return lambda k, c: k[grid](a, b_mat, c, size, size, size, **meta)


def bench_matmul(b: Bench):
    """Square fp32 matmul: each Triton side reports its best block config; torch is cuBLAS."""
    torch = b.torch

    def case(size, precision):
        a, b_mat = b.randn(size, size), b.randn(size, size)
        ref = a.double() @ b_mat.double()
        check = b.relnorm(ref, 1e-2 if precision == "tf32" else 1e-4)
        flops = bu.matmul_flops(size, size, size)
        name = "matmul_tiled_kernel" if precision == "tf32" else "matmul_precision_kernel"
        configs = MATMUL_CONFIGS[:1] if b.quick else MATMUL_CONFIGS
        row, best = bu.make_row(f"tiled matmul {precision}", f"{size}^3", "TFLOP/s"), []
        for impl in ("tritium", "upstream"):
            cells = [
                b.cell(check, flops, "TFLOP/s", b.kernel_run, impl, name,
                       matmul_launch(a, b_mat, precision, cfg), ref)
                for cfg in configs
            ]  # fmt: skip
            row[impl] = bu.best(cells)
            if bu.is_number(row[impl]):
                bm, bn, bk, warps = configs[cells.index(row[impl])]
                best.append(f"{impl} {bm}x{bn}x{bk}/{warps}w")
        c = torch.empty(size, size, device=DEVICE)
        saved = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
        try:
            matmul = functools.partial(torch.matmul, a, b_mat, out=c)
            row["torch"] = b.cell(check, flops, "TFLOP/s", lambda: matmul)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = saved
        row["note"] = f"best BLOCK_MxNxK/warps: {', '.join(best) or '-'}; torch: cuBLAS"
        return row

    if b.quick:
        cases = [(2048, "ieee"), (4096, "tf32")]
    else:
        cases = [(2048, "tf32"), (2048, "ieee"), (4096, "tf32"), (4096, "ieee")]
    for size, precision in cases:
        make = functools.partial(case, size, precision)
        yield from guarded_rows(f"tiled matmul {precision}", "TFLOP/s", [(f"{size}^3", make)])
    sizes = [4096] if b.quick else [4096, 8192]
    for size in sizes:
        make = functools.partial(_matmul_fp16_case, b, size)
        yield from guarded_rows("grouped matmul fp16", "TFLOP/s", [(f"{size}^3", make)])


# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages), from upstream's tutorial for
# sm_80+ (the first is its usual winner and the --quick config). num_stages is the depth of
# the cp.async pipeline on both sides (tritium keeps num_stages tiles in shared memory,
# upstream 3.6 num_stages - 1: tritium/passes/software_pipeliner.py).
MATMUL_FP16_CONFIGS = (
    (128, 256, 64, 8, 8, 3),
    (128, 128, 32, 8, 4, 4),
    (128, 128, 64, 8, 8, 3),
    (128, 256, 32, 8, 8, 3),
    (64, 128, 32, 8, 4, 4),
    (128, 128, 32, 8, 4, 3),
)


def _matmul_fp16_case(b: Bench, size: int) -> dict:
    """examples/matmul_fp16_grouped.py: fp16 in, fp32 accumulation, fp16 out."""
    torch = b.torch
    a = torch.randn(size, size, device=DEVICE, dtype=torch.float16)
    b_mat = torch.randn(size, size, device=DEVICE, dtype=torch.float16)
    ref = a.double() @ b_mat.double()
    check = b.relnorm(ref, 1e-2)
    flops = bu.matmul_flops(size, size, size)
    configs = MATMUL_FP16_CONFIGS[:1] if b.quick else MATMUL_FP16_CONFIGS
    row, best = bu.make_row("grouped matmul fp16", f"{size}^3", "TFLOP/s"), []

    def setup(impl, cfg):
        bm, bn, bk, group, warps, stages = cfg
        k = kernel(impl, "matmul_fp16_grouped_kernel")
        out = torch.empty(size, size, device=DEVICE, dtype=torch.float16)
        grid = (((size + bm - 1) // bm) * ((size + bn - 1) // bn),)

        def run():
            k[grid](a, b_mat, out, size, size, size, size, 1, size, 1, size, 1,
                    BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group,
                    num_warps=warps, num_stages=stages)  # fmt: skip
            return out

        return run

    for impl in ("tritium", "upstream"):
        cells = [b.cell(check, flops, "TFLOP/s", setup, impl, cfg) for cfg in configs]
        row[impl] = bu.best(cells)
        if bu.is_number(row[impl]):
            bm, bn, bk, group, warps, stages = configs[cells.index(row[impl])]
            best.append(f"{impl} {bm}x{bn}x{bk}/{warps}w/{stages}s")
    row["torch"] = b.cell(check, flops, "TFLOP/s", lambda: lambda: a @ b_mat)
    row["note"] = f"best BLOCK_MxNxK/warps/stages: {', '.join(best) or '-'}; torch: cuBLAS"
    return row
