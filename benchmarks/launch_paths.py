"""How cheap can a launch from Python be? Time back-to-back launches of one compiled
vector add through (a) cuda-python's cuLaunchKernel, (b) libcuda's cuLaunchKernel via
ctypes with prototypes, (c) the same with pre-converted arguments (GPU machine)."""

import ctypes
import sys
import time

import torch

sys.path.insert(0, ".")
import tritium  # noqa: E402
from examples.vector_add import add_kernel  # noqa: E402
from tritium.compiler import target_arch  # noqa: E402
from tritium.runtime import driver  # noqa: E402
from tritium.runtime.launcher import Launcher  # noqa: E402

n = 4096
x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
out = torch.empty_like(x)
ck = tritium.compile(
    add_kernel,
    "*fp32:16,*fp32:16,*fp32:16,i32",
    {"BLOCK_SIZE": 1024},
    arch=target_arch(driver.current_arch()),
)
lau = Launcher(ck.asm, ck.metadata)
lau((4, 1, 1), [x, y, out, n])
torch.cuda.synchronize()
assert torch.equal(out, x + y)
fn, argv = lau._function, lau._argv_addr
launch = driver.cuda().cuLaunchKernel
s0 = lau._stream0


def timed(label, body, k=20000):
    body(1000)
    torch.cuda.synchronize()
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        body(k)
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / k * 1e6)
    print(f"{label:<45} {best:6.2f} us/launch")


def cuda_python(k):
    for _ in range(k):
        launch(fn, 4, 1, 1, 128, 1, 1, 0, s0, argv, 0)


libcuda = ctypes.CDLL("libcuda.so.1")
cl = libcuda.cuLaunchKernel
cl.restype = ctypes.c_int
cl.argtypes = (
    [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
)
fptr = int(fn)
sptr = int(s0) if s0 is not None else 0


def ctypes_proto(k):
    for _ in range(k):
        cl(fptr, 4, 1, 1, 128, 1, 1, 0, sptr, argv, None)


cl2 = ctypes.CFUNCTYPE(ctypes.c_int, *cl.argtypes)(ctypes.cast(cl, ctypes.c_void_p).value)
cargs = (
    ctypes.c_void_p(fptr),
    4,
    1,
    1,
    128,
    1,
    1,
    0,
    ctypes.c_void_p(sptr),
    ctypes.c_void_p(argv),
    None,
)


def ctypes_preconv(k):
    for _ in range(k):
        cl2(*cargs)


timed("cuda-python cuLaunchKernel", cuda_python)
timed("ctypes cuLaunchKernel (argtypes)", ctypes_proto)
timed("ctypes CFUNCTYPE, pre-converted args", ctypes_preconv)
timed("tritium Launcher", lambda k: [lau((4, 1, 1), [x, y, out, n]) for _ in range(k)])
timed(
    "tritium kernel[grid](...)",
    lambda k: [add_kernel[(4,)](x, y, out, n, BLOCK_SIZE=1024) for _ in range(k)],
)
out.zero_()
ctypes_proto(1)
torch.cuda.synchronize()
print("ctypes launch correct:", torch.equal(out, x + y))
