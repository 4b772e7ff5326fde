"""How cheap can a launch from Python be? (GPU machine)

Times one compiled 4096-element vector add launched through each layer, two ways:
* sustained: 20000 launches back to back, then one synchronize (what bench.py reports);
* burst: 200 launches into an idle queue, no synchronize inside the timing: the host's
  own cost per launch, even where the GPU would be the bottleneck when sustained.
Then the cost of the Python pieces a launch is made of (ns, timeit)."""

import ctypes
import gc
import statistics
import sys
import time
import timeit

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
sync = torch.cuda.synchronize


def sustained(body, k=20000):
    body(1000)
    sync()
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        body(k)
        sync()
        best = min(best, (time.perf_counter() - t0) / k * 1e6)
    return best


def burst(body, k=200):
    out = []
    for _ in range(30):
        sync()
        time.sleep(0.002)
        t0 = time.perf_counter()
        body(k)
        out.append((time.perf_counter() - t0) / k * 1e6)
    sync()
    return statistics.median(out)


def row(label, body):
    print(f"{label:<48} sustained {sustained(body):6.2f}  burst {burst(body):6.2f} us/launch")


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


cl_noargtypes = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
cl_noargtypes.restype = ctypes.c_int
cargs = (
    ctypes.c_void_p(fptr), 4, 1, 1, 128, 1, 1, 0,
    ctypes.c_void_p(sptr), ctypes.c_void_p(argv), None,
)  # fmt: skip


def ctypes_preconv(k):
    for _ in range(k):
        cl_noargtypes(*cargs)


grid_fn = lambda meta: (tritium.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)  # noqa: E731
rows = [
    ("cuda-python cuLaunchKernel", cuda_python),
    ("ctypes cuLaunchKernel (argtypes)", ctypes_proto),
    ("ctypes, pre-converted args", ctypes_preconv),
    ("tritium Launcher", lambda k: [lau((4, 1, 1), [x, y, out, n]) for _ in range(k)]),
    ("kernel[(4,)](...)", lambda k: [add_kernel[(4,)](x, y, out, n, BLOCK_SIZE=1024) for _ in range(k)]),
    ("kernel[(4,)](..., num_warps=4)", lambda k: [add_kernel[(4,)](x, y, out, n, BLOCK_SIZE=1024, num_warps=4) for _ in range(k)]),
    ("kernel[lambda meta: ...](...)", lambda k: [add_kernel[grid_fn](x, y, out, n, BLOCK_SIZE=1024) for _ in range(k)]),
    ("torch.add(x, y, out=out)", lambda k: [torch.add(x, y, out=out) for _ in range(k)]),
]  # fmt: skip
for label, body in rows:
    row(label, body)
out.zero_()
add_kernel[(4,)](x, y, out, n, BLOCK_SIZE=1024)
sync()
print("kernel[grid] launch correct:", torch.equal(out, x + y))
out.zero_()
ctypes_proto(1)
sync()
print("ctypes launch correct:", torch.equal(out, x + y))

print("\npieces (ns per call, best of 5 x 200000):")
scratch = (ctypes.c_uint64 * 4)()  # (never the Launcher's own buffer: bare rows launch it)
env = dict(globals())
for stmt in [
    "x.data_ptr()",
    "x.dtype",
    "x.is_cuda",
    "(x.dtype, y.dtype, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1024)",
    "lau._pack_into(scratch, 0, 1, 2, 3, 4)",
    "lau._lock.acquire(); lau._lock.release()",
    "add_kernel[(4,)]",
    "driver.launch_state.kernel = 'add_kernel'",
]:
    t = min(timeit.repeat(stmt, globals=env, number=200000, repeat=5)) / 200000 * 1e9
    print(f"  {t:7.1f}  {stmt}")

# Does the process around it matter? (bench.py imports upstream Triton first.) Alternate
# the rows so that a machine's drift shows as drift, not as a difference.
jit_row, bare_row = rows[4][1], rows[0][1]


def env_rows(when):
    for label, body in [("kernel[(4,)](...)", jit_row), ("cuda-python cuLaunchKernel", bare_row)]:
        row(f"{label}, {when}", body)


env_rows("before")
gc.disable()
row("kernel[(4,)](...), gc disabled", jit_row)
gc.enable()
try:
    import triton  # noqa: F401

    env_rows("after import triton")
    from triton.testing import do_bench  # noqa: F401

    env_rows("after import triton.testing")
    sys.path.insert(0, "benchmarks")
    from upstream_kernels import add_kernel as upstream_add

    upstream_add[(4,)](x, y, out, n, BLOCK_SIZE=1024)
    sync()
    env_rows("after an upstream launch")
    row(
        "upstream kernel[(4,)](...)",
        lambda k: [upstream_add[(4,)](x, y, out, n, BLOCK_SIZE=1024) for _ in range(k)],
    )
    env_rows("at the end")
except ImportError as e:
    print("upstream Triton not importable:", e)
