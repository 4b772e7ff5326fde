"""Upstream's backend registry, served by tritium: `triton.backends.backends`,
`triton.compiler.compiler.make_backend(target)` and `triton.runtime.driver.set_active`.

torch's inductor reads these before it compiles a kernel:

    "nvidia" in triton.backends.backends                  # CUDA devices are Triton-capable
    "cpu" in triton.backends.backends                     # cpu_backend="triton" is runnable
    driver.set_active(triton.backends.backends["cpu"].driver())   # triton_helpers.set_driver_to_cpu
    make_backend(driver.active.get_current_target()).hash()       # its cache keys
    make_backend(target).parse_options({}).supported_fp8_dtypes   # which fp8 it may emit

Two backends, each a `Backend(compiler, driver)` as upstream's:

* "nvidia": the GPU. Its driver is tritium's `runtime.driver.ActiveDriver` (the object
  served as `triton.runtime.driver.active`); `is_active()` is "a CUDA GPU is there".
* "cpu": tritium's interpreter. A kernel compiled for `GPUTarget("cpu", ...)` stops at
  TTIR and runs in the interpreter on CPU tensors (tritium/triton_compile.py), which is
  what inductor's `cpu_backend = "triton"` launches. Its driver is always active.

`make_backend(target)` is a `TritiumBackend`: `hash()` (tritium's source hash and the
target, so inductor's caches do not mix tritium's kernels with upstream's),
`parse_options(dict)` -> `TritiumOptions` (upstream's option names, tritium's values),
`get_codegen_implementation()` (no backend hooks: {}).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from tritium.errors import ArgumentError
from tritium.runtime.driver import ActiveDriver, GPUTarget


class CPUDriver:
    """The driver of the "cpu" backend: the interpreter, on torch's CPU device."""

    @staticmethod
    def is_active() -> bool:
        return True

    @staticmethod
    def get_current_device() -> int:
        return 0

    @staticmethod
    def set_current_device(ordinal: int) -> None:
        pass

    def get_current_target(self) -> GPUTarget:
        return GPUTarget("cpu", 0, 1)

    def get_active_torch_device(self):
        import torch

        return torch.device("cpu")


# fp8 types tritium's frontend and codegen take (tl.float8e4nv needs sm_89 or newer)
_FP8_ALL = ("fp8e4b15", "fp8e4nv", "fp8e5")
_FP8_PRE_ADA = ("fp8e4b15", "fp8e5")


@dataclass(frozen=True)
class TritiumOptions:
    """`make_backend(target).parse_options(opts)`: upstream's CUDAOptions names, with the
    values tritium compiles with (what tritium ignores is kept as given, and said so in
    docs/triton-compat.md)."""

    num_warps: int = 4
    num_ctas: int = 1
    num_stages: int = 3
    maxnreg: int | None = None
    cluster_dims: tuple = (1, 1, 1)
    enable_fp_fusion: bool = True
    launch_cooperative_grid: bool = False
    launch_pdl: bool = False
    supported_fp8_dtypes: tuple = _FP8_ALL
    default_dot_input_precision: str = "tf32"
    allowed_dot_input_precisions: tuple = ("tf32", "tf32x3", "ieee")
    extern_libs: tuple | None = None
    debug: bool = False
    backend_name: str = "cuda"
    sanitize_overflow: bool = False
    arch: str | None = None
    extra: dict = field(default_factory=dict, compare=False)

    def hash(self) -> str:
        import hashlib

        text = "-".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))
        return hashlib.sha256(text.encode()).hexdigest()


_OPTION_NAMES = frozenset(f.name for f in fields(TritiumOptions)) - {"extra"}


class TritiumBackend:
    """Upstream's backend object for one target (`make_backend(target)`)."""

    def __init__(self, target: GPUTarget):
        self.target = target
        self.binary_ext = "ttir" if target.backend == "cpu" else "cubin"

    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        return target.backend in ("cuda", "cpu")

    def hash(self) -> str:
        from tritium.runtime.cache import triton_key

        return f"{triton_key()}-{self.target.backend}-{self.target.arch}"

    def parse_options(self, opts: dict) -> TritiumOptions:
        values = {k: v for k, v in dict(opts).items() if k in _OPTION_NAMES}
        extra = {k: v for k, v in dict(opts).items() if k not in _OPTION_NAMES}
        if self.target.backend == "cpu":
            values.setdefault("backend_name", "cpu")
        else:
            values.setdefault("arch", f"sm_{self.target.arch}")
            if isinstance(self.target.arch, int) and self.target.arch < 89:
                values.setdefault("supported_fp8_dtypes", _FP8_PRE_ADA)
        for k in ("supported_fp8_dtypes", "allowed_dot_input_precisions", "cluster_dims"):
            if k in values and values[k] is not None:
                values[k] = tuple(values[k])
        return TritiumOptions(**values, extra=extra)

    def get_codegen_implementation(self, options=None) -> dict:
        return {}

    def get_module_map(self) -> dict:
        return {}

    def __repr__(self) -> str:
        return f"<tritium backend for {self.target}>"


def make_backend(target) -> TritiumBackend:
    """Upstream's `make_backend(target)`: the backend object for `target` (a GPUTarget, or
    upstream's tuple form)."""
    target = as_target(target)
    if not TritiumBackend.supports_target(target):
        raise ArgumentError(
            f"make_backend({target!r}): tritium compiles for backend 'cuda' (NVIDIA GPUs) and "
            f"'cpu' (its interpreter), not '{target.backend}'"
        )
    return TritiumBackend(target)


def as_target(target) -> GPUTarget:
    """A GPUTarget from upstream's forms (a GPUTarget, or (backend, arch[, warp_size]))."""
    if isinstance(target, GPUTarget):
        return target
    if isinstance(target, (tuple, list)) and len(target) in (2, 3):
        backend, arch, *warp = target
        return GPUTarget(backend, arch, warp[0] if warp else 32)
    raise ArgumentError(f"not a compile target: {target!r} (give a GPUTarget)")


class DefaultDriver:
    """`triton.runtime.driver.active` as served: upstream's lazy proxy over the first
    active backend's driver, chosen at the first use: tritium's GPU driver
    (`runtime.driver.active`) where a CUDA GPU is, else the interpreter's CPUDriver.
    `_obj` is that driver (inductor's `set_driver_to_gpu` looks for upstream's `_obj`)."""

    _chosen = None

    @property
    def _obj(self):
        if self._chosen is None:
            from tritium.runtime import driver

            self._chosen = driver.active if driver.gpu_available() else CPUDriver()
        return self._chosen

    def __getattr__(self, name):
        return getattr(self._obj, name)

    def __repr__(self) -> str:
        return f"<tritium's default driver: {self._obj!r}>"


active = DefaultDriver()


@dataclass(frozen=True)
class Backend:
    """Upstream's `triton.backends.Backend`: a compiler class and a driver class."""

    compiler: type
    driver: type


backends: dict[str, Backend] = {
    "nvidia": Backend(TritiumBackend, ActiveDriver),
    "cpu": Backend(TritiumBackend, CPUDriver),
}


def set_active_of(module):
    """`triton.runtime.driver.set_active(driver)` for alias module `module` (which plays
    upstream's driver object): the driver `module.active` answers with from now on."""

    def set_active(driver) -> None:
        module.active = driver

    return set_active


def reset_active_of(module):
    """`triton.runtime.driver.reset_active()`: back to the default driver."""

    def reset_active() -> None:
        module.active = active

    return reset_active


__all__ = [
    "Backend",
    "CPUDriver",
    "DefaultDriver",
    "active",
    "TritiumBackend",
    "TritiumOptions",
    "as_target",
    "backends",
    "make_backend",
    "reset_active_of",
    "set_active_of",
]
