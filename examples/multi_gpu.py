"""Training with several GPUs: a small model whose layer norm and softmax (forward and
backward) are tritium kernels, trained with torch's DistributedDataParallel, one process
per GPU.

    torchrun --nproc-per-node 8 examples/multi_gpu.py --steps 20 --out ddp.json
    python examples/multi_gpu.py --steps 20 --out single.json      # the same on one GPU

Each rank takes its share of every global batch; DDP all-reduces the gradients (NCCL), so
the losses match the single-GPU run's up to rounding. Each rank's kernels run on its own
GPU: a launch goes where its tensors live (here `cuda:LOCAL_RANK`), on torch's current
stream there, whether or not the rank made its device current (`--no-set-device` leaves
torch's current device at 0 on every rank). All ranks share one compiled-kernel cache
($TRITIUM_CACHE_DIR): entries are written atomically, so the first rank to finish a
compile publishes it and the others' identical copies are dropped.

torch is imported only by `main()`; `check(rng)` runs the four kernels on numpy arrays
(on the GPU, or in the interpreter) against numpy, as every example does.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

import tritium
import tritium.language as tl


@tritium.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(mask, x - mean, 0.0)
    rstd = 1 / tl.sqrt(tl.sum(xc * xc, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask)
    b = tl.load(B + cols, mask=mask)
    tl.store(Y + row * stride + cols, xc * rstd * w + b, mask=mask)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)


@tritium.jit
def layer_norm_bwd(X, DY, DX, DW_rows, W, Mean, Rstd, stride, N, BLOCK: tl.constexpr):
    """dx of a row, and the row's share of dw (dy * x_hat; db is the column sum of dy)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(DY + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    x_hat = tl.where(mask, (x - mean) * rstd, 0.0)
    wdy = w * dy
    c1 = tl.sum(x_hat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    tl.store(DX + row * stride + cols, (wdy - (x_hat * c1 + c2)) * rstd, mask=mask)
    tl.store(DW_rows + row * stride + cols, dy * x_hat, mask=mask)


@tritium.jit
def softmax_fwd(X, Y, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(Y + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


@tritium.jit
def softmax_bwd(Y, DY, DX, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    y = tl.load(Y + row * stride + cols, mask=mask, other=0.0)
    dy = tl.load(DY + row * stride + cols, mask=mask, other=0.0)
    tl.store(DX + row * stride + cols, y * (dy - tl.sum(y * dy, axis=0)), mask=mask)


def _block(n: int) -> int:
    return max(16, 1 << (n - 1).bit_length())


# --------------------------------------------------------------------------- numpy check


def check(rng):
    """The four kernels on numpy arrays against numpy (float64) references."""
    m, n, eps = 37, 200, 1e-5
    x = rng.standard_normal((m, n), dtype=np.float32) * 2 + 0.5
    w = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    dy = rng.standard_normal((m, n), dtype=np.float32)
    y, mean, rstd = np.empty_like(x), np.empty(m, np.float32), np.empty(m, np.float32)
    layer_norm_fwd[(m,)](x, y, w, b, mean, rstd, n, n, eps, BLOCK=_block(n))
    x64 = x.astype(np.float64)
    mu = x64.mean(1, keepdims=True)
    r = 1 / np.sqrt(((x64 - mu) ** 2).mean(1, keepdims=True) + eps)
    x_hat = (x64 - mu) * r
    np.testing.assert_allclose(y, x_hat * w + b, rtol=1e-4, atol=1e-4)
    dx, dw_rows = np.empty_like(x), np.empty_like(x)
    layer_norm_bwd[(m,)](x, dy, dx, dw_rows, w, mean, rstd, n, n, BLOCK=_block(n))
    wdy = w * dy.astype(np.float64)
    want = (wdy - x_hat * (x_hat * wdy).mean(1, keepdims=True) - wdy.mean(1, keepdims=True)) * r
    np.testing.assert_allclose(dx, want, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(dw_rows.sum(0), (dy * x_hat).sum(0), rtol=1e-3, atol=1e-3)

    p = np.empty_like(x)
    softmax_fwd[(m,)](x, p, n, n, BLOCK=_block(n))
    e = np.exp(x64 - x64.max(1, keepdims=True))
    p64 = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(p, p64, rtol=1e-4, atol=1e-6)
    dp = np.empty_like(x)
    softmax_bwd[(m,)](p, dy, dp, n, n, BLOCK=_block(n))
    want = p64 * (dy - (p64 * dy).sum(1, keepdims=True))
    np.testing.assert_allclose(dp, want, rtol=1e-3, atol=1e-5)
    return x.nbytes * 12


# --------------------------------------------------------------------------- torch


def torch_model(d_in: int, d_hidden: int, n_classes: int):
    """A torch module (imported here): linear, tritium layer norm, relu, linear, tritium
    softmax; the autograd functions launch the kernels above on the tensors' device."""
    import torch

    class LayerNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, b):
            m, n = x.shape
            y = torch.empty_like(x)
            mean = torch.empty(m, device=x.device, dtype=torch.float32)
            rstd = torch.empty_like(mean)
            layer_norm_fwd[(m,)](x, y, w, b, mean, rstd, x.stride(0), n, 1e-5, BLOCK=_block(n))
            ctx.save_for_backward(x, w, mean, rstd)
            return y

        @staticmethod
        def backward(ctx, dy):
            x, w, mean, rstd = ctx.saved_tensors
            dy = dy.contiguous()
            m, n = x.shape
            dx, dw_rows = torch.empty_like(x), torch.empty_like(x)
            layer_norm_bwd[(m,)](x, dy, dx, dw_rows, w, mean, rstd, x.stride(0), n, BLOCK=_block(n))  # fmt: skip
            return dx, dw_rows.sum(0), dy.sum(0)

    class Softmax(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            m, n = x.shape
            y = torch.empty_like(x)
            softmax_fwd[(m,)](x, y, x.stride(0), n, BLOCK=_block(n))
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, dy):
            (y,) = ctx.saved_tensors
            dy = dy.contiguous()
            dx = torch.empty_like(y)
            softmax_bwd[(y.shape[0],)](y, dy, dx, y.stride(0), y.shape[1], BLOCK=_block(y.shape[1]))  # fmt: skip
            return dx

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(d_in, d_hidden)
            self.ln_w = torch.nn.Parameter(torch.ones(d_hidden))
            self.ln_b = torch.nn.Parameter(torch.zeros(d_hidden))
            self.fc2 = torch.nn.Linear(d_hidden, n_classes)

        def forward(self, x):
            h = torch.relu(LayerNorm.apply(self.fc1(x).contiguous(), self.ln_w, self.ln_b))
            return Softmax.apply(self.fc2(h).contiguous())

    return Model()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=256, help="global batch (split over ranks)")
    ap.add_argument("--out", help="write the losses (rank 0) as JSON here")
    ap.add_argument(
        "--no-set-device",
        action="store_true",
        help="leave torch's current device alone: launches follow the tensors anyway",
    )
    args = ap.parse_args(argv)

    import torch
    import torch.distributed as dist

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank, local = int(os.environ.get("RANK", "0")), int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local)
    if not args.no_set_device:
        torch.cuda.set_device(device)
    if world > 1:
        try:  # bound to this rank's GPU (torch >= 2.3), so NCCL never guesses a device
            dist.init_process_group("nccl", device_id=device)
        except TypeError:
            dist.init_process_group("nccl")
    if args.batch % world:
        raise SystemExit(f"--batch {args.batch} is not a multiple of the {world} ranks")

    torch.manual_seed(0)  # the same weights and data on every rank
    d_in, d_hidden, n_classes = 64, 200, 10
    model = torch_model(d_in, d_hidden, n_classes).to(device)
    data = torch.randn(args.steps, args.batch, d_in)
    targets = torch.randint(0, n_classes, (args.steps, args.batch))
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    share = args.batch // world
    losses, t0 = [], time.perf_counter()
    first_step_s = None
    for step in range(args.steps):
        x = data[step, rank * share : (rank + 1) * share].to(device)
        t = targets[step, rank * share : (rank + 1) * share].to(device)
        p = model(x)
        loss = -torch.log(p.gather(1, t[:, None])).mean()
        opt.zero_grad()
        loss.backward()  # DDP: gradients all-reduced (averaged) over the ranks
        opt.step()
        total = loss.detach().clone()
        if world > 1:
            dist.all_reduce(total)
        losses.append(total.item() / world)
        if first_step_s is None:
            first_step_s = time.perf_counter() - t0
    ran_on = sorted(
        {r.device for k in (layer_norm_fwd, layer_norm_bwd, softmax_fwd, softmax_bwd)
         for r in k.runners.values()}
    )  # fmt: skip
    if ran_on != [local]:
        raise SystemExit(f"rank {rank}: tritium kernels ran on {ran_on}, not [{local}]")
    print(
        f"rank {rank}/{world} on {torch.cuda.get_device_name(device)} (cuda:{local}): "
        f"loss {losses[0]:.6f} -> {losses[-1]:.6f}, first step {first_step_s:.2f} s"
    )
    if rank == 0 and args.out:
        with open(args.out, "w") as f:
            json.dump({"world": world, "losses": losses, "first_step_s": first_step_s}, f)
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
