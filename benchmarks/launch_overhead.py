"""Host overhead per kernel launch: tritium's Launcher vs a bare cuLaunchKernel vs torch vs
upstream Triton, on an empty kernel with add_kernel's signature (3 pointers and an i32).

    python benchmarks/launch_overhead.py [--n 20000] [--repeat 5]

Each row launches the kernel N times back to back and synchronizes once; the best of
`--repeat` runs is divided by N. The kernel does nothing, so this is the host's cost per
launch (the GPU keeps up: an empty kernel takes ~2 us there). Without a GPU, only the first
two rows are measured: tritium's Python-side cost (the Launcher, and `kernel[grid](...)`)
with the driver call replaced by a no-op.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # upstream_kernels

try:
    from tritium.runtime import arrays, driver
    from tritium.runtime.launcher import Launcher
except Exception as e:  # keep per_launch_us usable (bench.py times torch and Triton with it)
    print(f"launch_overhead: tritium not importable: {type(e).__name__}: {e}", file=sys.stderr)
    arrays = driver = Launcher = None

EMPTY_PTX = """.version 7.0
.target sm_80
.address_size 64
.visible .entry empty_kernel(.param .u64 x_ptr, .param .u64 y_ptr, .param .u64 out_ptr, .param .s32 n)
{
    ret;
}
"""
METADATA = {
    "name": "empty_kernel",
    "num_warps": 4,
    "threads_per_warp": 32,
    "shared": 0,
    "params": [
        {"name": "x_ptr", "type": "*fp32"},
        {"name": "y_ptr", "type": "*fp32"},
        {"name": "out_ptr", "type": "*fp32"},
        {"name": "n", "type": "i32"},
    ],
}


def per_launch_us(launch_n, n: int, repeat: int, sync=None) -> float:
    """Best over `repeat` runs of (time of `launch_n(n)` + sync) / n, in microseconds."""
    launch_n(min(n, 1000))  # warm up
    if sync:
        sync()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        launch_n(n)
        if sync:
            sync()
        best = min(best, time.perf_counter() - t0)
    return best / n * 1e6


def bare_launches(lau: Launcher, grid=(1, 1, 1)):
    """`run(k)`: k raw cuLaunchKernel calls of `lau`'s function with the parameters it last
    packed (call `lau` once first): the floor of any launch from Python."""
    fn, launch, s0, argv = lau._function, lau._launch, lau._stream0, lau._argv_addr
    gx, gy, gz = tuple(grid) + (1,) * (3 - len(tuple(grid)))
    bx, shared = lau.block[0], lau.shared

    def run(k):
        for _ in range(k):
            launch(fn, gx, gy, gz, bx, 1, 1, shared, s0, argv, 0)

    return run


def python_side_only(n: int, repeat: int) -> float:
    """tritium's per-launch cost with cuLaunchKernel replaced by a no-op (runs anywhere)."""
    from cuda.bindings import driver as cu

    lau = Launcher({"ptx": EMPTY_PTX}, METADATA)
    ok = (cu.CUresult.CUDA_SUCCESS,)
    lau._function, lau._stream0, lau._ready = object(), None, True
    lau._launch = lambda *a: ok
    x = arrays.DeviceArray.__new__(arrays.DeviceArray)
    x.ptr, x.device = 0x7F0000000000, 0
    args, grid = [x, x, x, 4], (1, 1, 1)

    def run(k):
        for _ in range(k):
            lau(grid, args)

    return per_launch_us(run, n, repeat)


def jit_python_side_only(n: int, repeat: int, torch_like: bool = False) -> float:
    """`kernel[grid](...)` with DeviceArray arguments (or, `torch_like`, torch-like tensors
    whose reads are C calls as torch's are, and a torch whose current stream is read as
    upstream reads it) and a no-op cuLaunchKernel: the generated launch function's own cost
    (runs anywhere; compiles vector add to PTX)."""
    from cuda.bindings import driver as cu

    import tritium
    from examples.vector_add import add_kernel

    ok = (cu.CUresult.CUDA_SUCCESS,)

    def load(lau):  # instead of loading the module on a GPU
        lau._function, lau._stream0, lau._launch = object(), None, lambda *a: ok

    k = tritium.jit(add_kernel.fn)  # a fresh kernel: its own launch state
    if torch_like:
        x, restore_torch = _torch_like_tensor(0x7F0000000000)
    else:
        x = arrays.DeviceArray.__new__(arrays.DeviceArray)
        x.ptr, x.dtype, x.shape, x.strides, x.nbytes = (
            0x7F0000000000,
            np.dtype("float32"),
            (4096,),
            (4,),
            4 * 4096,
        )
        x.device = 0
        restore_torch = None
    saved, gpu = Launcher._load, driver.gpu_available
    Launcher._load, driver.gpu_available = load, lambda: False
    try:
        for _ in range(3):  # compile, make the fast entry, check it inline
            k[(4,)](x, x, x, 4096, BLOCK_SIZE=1024)

        def run(m):
            for _ in range(m):
                k[(4,)](x, x, x, 4096, BLOCK_SIZE=1024)

        return per_launch_us(run, n, repeat)
    finally:
        Launcher._load, driver.gpu_available = saved, gpu
        if restore_torch is not None:
            restore_torch()


def _torch_like_tensor(ptr: int):
    """A stand-in for a CUDA torch tensor on device 0 whose reads cost what torch's do (C
    callables: `data_ptr()`, `get_device()`; attributes `dtype`, `is_cuda`), with a `torch`
    module in sys.modules whose current-stream reader is a C call too; and the function
    that puts sys.modules back."""
    import itertools
    import types

    from cuda.bindings import driver as cu

    class dtype:  # an interned dtype object, as torch's (kind detection reads the module)
        def __str__(self):
            return "torch.float32"

    dtype.__module__ = "torch"
    f32 = dtype()
    Tensor = type("Tensor", (), {"__module__": "torch"})
    t = Tensor()
    t.data_ptr = itertools.repeat(ptr).__next__
    t.get_device = itertools.repeat(0).__next__
    t.dtype, t.is_cuda = f32, True
    fake = types.ModuleType("torch")
    fake.cuda = types.SimpleNamespace(is_initialized=lambda: True)
    fake._C = types.SimpleNamespace(_cuda_getDevice=lambda: 0, _cuda_getCurrentRawStream={0: 0}.get)
    old = sys.modules.get("torch")
    sys.modules["torch"] = fake
    driver._streams.setdefault(0, cu.CUstream(0))  # the legacy default stream, registered
    from tritium.runtime import array_kinds

    array_kinds.device_pointer(t)  # its type registered (a first sight would stage the call)

    def restore():
        if old is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = old

    return t, restore


def gpu_rows(n: int, repeat: int) -> list[tuple[str, float]]:
    rows = []
    sync = driver.synchronize
    x = arrays.zeros(4, np.float32)
    lau = Launcher({"ptx": EMPTY_PTX}, METADATA)
    grid, args = (1, 1, 1), [x, x, x, 4]
    lau(grid, args)
    bare = bare_launches(lau, grid)

    def tritium_device_array(k):
        for _ in range(k):
            lau(grid, args)

    rows.append(("bare cuLaunchKernel (cuda-python)", per_launch_us(bare, n, repeat, sync)))
    rows.append(
        ("tritium Launcher, DeviceArray args", per_launch_us(tritium_device_array, n, repeat, sync))
    )
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        t = torch.zeros(4, device="cuda")
        targs = [t, t, t, 4]

        def tritium_torch(k):
            for _ in range(k):
                lau(grid, targs)

        def torch_add(k):
            for _ in range(k):
                torch.add(t, t, out=t)

        rows.append(("tritium Launcher, torch args", per_launch_us(tritium_torch, n, repeat, sync)))
        rows.append(
            (
                "torch.add(x, y, out=z), 4 elements",
                per_launch_us(torch_add, n, repeat, torch.cuda.synchronize),
            )
        )
        try:
            triton_row = upstream_triton(t, n, repeat)
        except Exception as e:  # a broken Triton install must not hide the other rows
            print(f"upstream Triton row failed: {type(e).__name__}: {e}")
            triton_row = None
        if triton_row:
            rows.append(triton_row)
    return rows


def upstream_triton(t, n: int, repeat: int):
    try:
        import torch
        import triton

        # Triton resolves a kernel's globals (`tl`) in its module, so the kernel lives at
        # module level in upstream_kernels.py, not in this function.
        from upstream_kernels import empty_kernel
    except ImportError:
        return None

    def run(k):
        for _ in range(k):
            empty_kernel[(1,)](t, t, t, 4, BLOCK=128)

    version = getattr(triton, "__version__", "?")
    return (
        f"upstream Triton {version}, torch args",
        per_launch_us(run, n, repeat, torch.cuda.synchronize),
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20000, help="launches per timed run")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs (the best is kept)")
    opts = ap.parse_args(argv)
    rows = [
        (
            "tritium Launcher, Python side only (no-op driver)",
            python_side_only(opts.n, opts.repeat),
        ),
        (
            "kernel[grid](...), Python side only (no-op driver)",
            jit_python_side_only(opts.n, opts.repeat),
        ),
    ]
    if "torch" not in sys.modules or not driver.gpu_available():
        rows.append(
            (
                "kernel[grid](...), torch-like args, Python side only (no-op driver)",
                jit_python_side_only(opts.n, opts.repeat, torch_like=True),
            )
        )
    if driver.gpu_available():
        dev = driver.device()
        print(f"device: {dev.name} ({dev.arch}, {dev.sm_count} SMs)")
        rows += gpu_rows(opts.n, opts.repeat)
    else:
        print("no GPU here: only the Python-side row is measured")
    bare = dict(rows).get("bare cuLaunchKernel (cuda-python)")
    width = max(len(name) for name, _ in rows)
    print(f"{'launch path':<{width}}  us/launch  vs bare")
    for name, us in rows:
        ratio = f"{us / bare:6.2f}x" if bare else "      -"
        print(f"{name:<{width}}  {us:9.2f}  {ratio}")


if __name__ == "__main__":
    main()
