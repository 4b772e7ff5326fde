"""torch.compile corners beyond the acceptance models, on CPU tensors with inductor's
cpu_backend = "triton" and `import triton` served by tritium (its interpreter runs the
generated kernels): a user's own @triton.jit kernel inside the compiled function, dynamic
shapes (sizes as kernel arguments), bf16. Prints one `name: max error` line each (bf16:
relative to the largest value)."""

import sys

import tritium

tritium.install_as_triton()

import torch  # noqa: E402
import torch._inductor.config  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

torch._inductor.config.cpu_backend = "triton"
torch.manual_seed(0)


@triton.jit
def add_kernel(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def user_kernel():
    def f(x, y):
        o = torch.empty_like(x)
        add_kernel[(triton.cdiv(x.numel(), 64),)](x, y, o, x.numel(), BLOCK=64)
        return o.relu() * 2

    x, y = torch.randn(100), torch.randn(100)  # (eager, the kernel would need a GPU)
    return (torch.compile(f)(x, y) - (x + y).relu() * 2).abs().max().item()


def dynamic_shapes():
    def f(x, y):
        return (x.sin() * y).sum(-1)

    cf = torch.compile(f, dynamic=True)
    return max((cf(x, y) - f(x, y)).abs().max().item()
               for n in (5, 17, 33) for x, y in [(torch.randn(n, 7), torch.randn(n, 7))])  # fmt: skip


def bf16():
    def f(x, y):
        return torch.nn.functional.silu(x.float()).to(torch.bfloat16) * y

    x, y = (torch.randn(64, 32, dtype=torch.bfloat16) for _ in range(2))
    ref = f(x, y).float()
    # relative to the largest value: inductor rounds to bf16 once, eager twice
    return ((torch.compile(f)(x, y).float() - ref).abs().max() / ref.abs().max()).item()


if __name__ == "__main__":
    for case in sys.argv[1:] or ["user_kernel", "dynamic_shapes", "bf16"]:
        print(f"{case}: {globals()[case]():.3g}", flush=True)
