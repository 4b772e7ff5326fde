"""A tiny, self-contained CUDA launcher for the codegen GPU tests (cuda-python driver API).

    gpu = Gpu()
    gpu.run(ttgir_text, grid=(4,), args=[x, y, out, n])   # numpy arrays are copied in,
                                                          # launched on, and copied back

It goes TTGIR -> allocate-shared-memory, membar -> lower_to_llvm -> llir_to_ptx (for the
device's arch) -> cuModuleLoadData -> cuLaunchKernel, so a failure points at the backend
rather than at the runtime package.
"""

from __future__ import annotations

import numpy as np

from tests.codegen.kernels import lower_ttgir
from tritium.codegen import llir_to_ptx
from tritium.codegen.ptx import ARCHS

SCALARS = {
    "i1": np.int8,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "fp16": np.float16,
    "fp32": np.float32,
    "fp64": np.float64,
}


class CudaError(RuntimeError):
    def __init__(self, name: str, what: str):
        super().__init__(f"{what} failed: {name}")
        self.name = name


class Gpu:
    def __init__(self, device: int = 0):
        from cuda.bindings import driver as cu

        self.cu = cu
        self.check(cu.cuInit(0), "cuInit")
        self.device = self.check(cu.cuDeviceGet(device), "cuDeviceGet")
        self.context = self.check(
            cu.cuDevicePrimaryCtxRetain(self.device), "cuDevicePrimaryCtxRetain"
        )
        self.check(cu.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
        attr = cu.CUdevice_attribute
        major = self.check(
            cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device),
            "cuDeviceGetAttribute",
        )
        minor = self.check(
            cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device),
            "cuDeviceGetAttribute",
        )
        # PTX for an older arch runs on newer GPUs (the driver JIT-compiles it).
        cc = 10 * major + minor
        # the plain targets only (sm_90a's wgmma is the JIT's choice, not these fixed TTGIR cases)
        plain = [a for a in ARCHS if a[3:].isdigit()]
        self.arch = max((a for a in plain if int(a[3:]) <= cc), key=lambda a: int(a[3:]))
        self._kernels: dict[str, tuple] = {}

    def check(self, result, what: str):
        """cuda-python returns (CUresult, values...): raise on an error, return the values."""
        err, *rest = result if isinstance(result, tuple) else (result,)
        if int(err) != 0:
            _, name = self.cu.cuGetErrorName(err)
            raise CudaError(name.decode() if isinstance(name, bytes) else str(name), what)
        if not rest:
            return None
        return rest[0] if len(rest) == 1 else tuple(rest)

    def compile(self, ttgir: str):
        if ttgir not in self._kernels:
            llir, meta = lower_ttgir(ttgir)
            ptx = llir_to_ptx(llir, self.arch)
            module = self.check(self.cu.cuModuleLoadData(ptx.encode() + b"\0"), "cuModuleLoadData")
            fn = self.check(
                self.cu.cuModuleGetFunction(module, meta["name"].encode()), "cuModuleGetFunction"
            )
            self._kernels[ttgir] = (module, fn, meta)
        return self._kernels[ttgir]

    def run(self, ttgir: str, grid, args) -> None:
        """Launch; numpy array arguments are copied to the device and back after the run."""
        cu = self.cu
        _, fn, meta = self.compile(ttgir)
        params = meta["params"]
        assert len(params) == len(args), f"{meta['name']} takes {len(params)} arguments"
        holders, buffers = [], []
        try:
            for p, a in zip(params, args):
                if p["type"].startswith("*"):
                    assert a.flags.c_contiguous, "pass C-contiguous arrays"
                    dptr = self.check(cu.cuMemAlloc(max(a.nbytes, 1)), "cuMemAlloc")
                    buffers.append((dptr, a))
                    self.check(cu.cuMemcpyHtoD(dptr, a.ctypes.data, a.nbytes), "cuMemcpyHtoD")
                    holders.append(np.array([int(dptr)], np.uint64))
                else:
                    holders.append(np.array([a], SCALARS[p["type"]]))
            argv = np.array([h.ctypes.data for h in holders], np.uint64)
            g = tuple(grid) + (1,) * (3 - len(grid))
            block = meta["threads_per_warp"] * meta["num_warps"]
            self.check(
                cu.cuLaunchKernel(fn, *g, block, 1, 1, meta["shared"], 0, argv.ctypes.data, 0),
                "cuLaunchKernel",
            )
            self.check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
            for dptr, a in buffers:
                self.check(cu.cuMemcpyDtoH(a.ctypes.data, dptr, a.nbytes), "cuMemcpyDtoH")
        finally:
            for dptr, _ in buffers:
                cu.cuMemFree(dptr)
