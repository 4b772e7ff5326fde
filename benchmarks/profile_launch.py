"""Where the host time of a launch goes: cProfile over many back-to-back launches of the
4096-element vector add with torch arguments (GPU machine)."""

import cProfile
import pstats
import sys
import time

import torch

sys.path.insert(0, ".")
from examples.vector_add import add_kernel  # noqa: E402

n = 4096
x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
out = torch.empty_like(x)
add_kernel[(4,)](x, y, out, n, BLOCK_SIZE=1024)
torch.cuda.synchronize()
assert torch.equal(out, x + y)


def loop(k, **kw):
    for _ in range(k):
        add_kernel[(4,)](x, y, out, n, BLOCK_SIZE=1024, **kw)


for kw in ({}, {"num_warps": 4}):
    loop(1000, **kw)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    loop(20000, **kw)
    torch.cuda.synchronize()
    print(f"kernel[grid](...) {kw}: {(time.perf_counter() - t0) / 20000 * 1e6:.2f} us/launch")
prof = cProfile.Profile()
prof.enable()
loop(20000)
torch.cuda.synchronize()
prof.disable()
pstats.Stats(prof).sort_stats("tottime").print_stats(15)
