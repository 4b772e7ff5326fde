"""NVIDIA's libdevice, linked into a kernel when `TRITIUM_LIBDEVICE` asks for upstream's
numbers bit for bit (off by default: tritium's own math, lower/libm/, needs no file).

    declare float @__nv_logf(float)              (the lowering's calls, in libdevice mode:
    %y = call float @__nv_logf(float %x)          lower/libdevice_calls.py)
    ->  link(module, "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc")
    define internal float @__nv_logf(float %a) { ... __nvvm_reflect("__CUDA_FTZ") ... }
        (only the functions called, and theirs; O3 folds the reflect calls and inlines them)

As upstream's `make_llir`: the module flag `nvvm-reflect-ftz` = 1 (upstream's
`enable_reflect_ftz` default: libdevice takes its flush-to-zero paths, `ex2.approx.ftz.f32`),
which LLVM's NVVMReflect pass, run at the start of the NVPTX target's O3 pipeline, folds
into every `__nvvm_reflect("__CUDA_FTZ")`; only the functions the kernel calls are linked
(and those they call: the library cut down by global DCE, kept per set of functions), made
internal, so O3 inlines them and drops what is left. The libdevice bitcode is compiled by NVVM
without fast-math flags; upstream's codegen contracts every `a*b+c` in it (its target
machine allows FP fusion globally), tritium's contracts what carries `contract`, so the
parsed library gets `contract` on its `fadd` / `fsub` / `fmul` once (`_library`).

Finding the file (`find`): a path given in TRITIUM_LIBDEVICE, else (`1` / `auto`) the copy
inside an installed upstream `triton` package (`triton/backends/nvidia/lib/`, found with
`importlib.machinery.PathFinder`, not imported: the very file upstream links, which may differ
from CUDA's), then `$CUDA_HOME`, `$CUDA_PATH`, `/usr/local/cuda`, `/usr/local/cuda-*`
(newest first), each `nvvm/libdevice/libdevice.10.bc`. Not found: `LibdeviceNotFoundError`.
"""

from __future__ import annotations

import glob
import hashlib
import importlib.machinery
import os
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from tritium import config
from tritium.errors import TritiumError

if TYPE_CHECKING:  # llvmlite is imported when a kernel is linked (compile_kernel imports
    import llvmlite.binding as llvm  # this module for every compile, cache hits too)

__all__ = ["LibdeviceNotFoundError", "defines", "find", "identity", "link", "resolve"]

FILE = "libdevice.10.bc"
_CUDA_SUBDIR = Path("nvvm") / "libdevice" / FILE
_REFLECT_FTZ = """
!llvm.module.flags = !{!0}
!0 = !{i32 4, !"nvvm-reflect-ftz", i32 1}
"""


class LibdeviceNotFoundError(TritiumError, FileNotFoundError):
    """TRITIUM_LIBDEVICE asks for NVIDIA's libdevice and no libdevice.10.bc is where it says
    (or, for `auto`, anywhere tritium looks)."""


def _triton_copy() -> Path | None:
    # PathFinder looks on sys.path only: not at sys.modules or meta-path finders, where
    # `tritium.install_as_triton()` serves `import triton` with tritium itself
    try:
        spec = importlib.machinery.PathFinder.find_spec("triton")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for d in spec.submodule_search_locations:
        p = Path(d) / "backends" / "nvidia" / "lib" / FILE
        if p.is_file():
            return p
    return None


def _version_key(d: str) -> tuple:
    return tuple(int(n) for n in re.findall(r"\d+", d))


def candidates() -> list[Path]:
    """Where `auto` looks, in order (see the module docstring)."""
    found = [p for p in (_triton_copy(),) if p is not None]
    homes = config.cuda_homes() + ["/usr/local/cuda"]
    homes += sorted(glob.glob("/usr/local/cuda-*"), key=_version_key, reverse=True)
    return found + [Path(h) / _CUDA_SUBDIR for h in homes]


def find(setting: str) -> Path:
    """The libdevice file TRITIUM_LIBDEVICE=`setting` names: `1` / `auto` search, any other
    value is a path (a file, or a folder holding libdevice.10.bc)."""
    if setting.lower() in ("1", "auto"):
        for p in candidates():
            if p.is_file():
                return p
        where = ", ".join(str(p) for p in candidates())
        raise LibdeviceNotFoundError(
            f"TRITIUM_LIBDEVICE={setting}: no {FILE} found (looked in an installed triton "
            f"package and at {where}); set TRITIUM_LIBDEVICE to the file's path, or unset "
            "it to use tritium's own math"
        )
    p = Path(setting).expanduser()
    if p.is_dir():
        p = p / FILE
    if not p.is_file():
        raise LibdeviceNotFoundError(
            f"TRITIUM_LIBDEVICE={setting}: {p} is not a file; give the path of {FILE} "
            "(CUDA's nvvm/libdevice/ holds one), `auto` to search, or unset it"
        )
    return p


def resolve() -> str | None:
    """The libdevice file to link (an absolute path) when TRITIUM_LIBDEVICE is on, else None."""
    setting = config.libdevice()
    return None if setting is None else str(find(setting).resolve())


def identity(path: str) -> str:
    """A digest of the file's bytes (for the kernel cache key: another libdevice, other code)."""
    st = os.stat(path)
    return _digest(path, st.st_size, st.st_mtime_ns)


@cache
def _digest(path: str, size: int, mtime_ns: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


_FLOAT_OP = re.compile(r"= (fadd|fsub|fmul) (?=float|double)")


@cache
def _library(path: str) -> llvm.ModuleRef:
    """The parsed library, `contract` added to its float add / sub / mul (once per process;
    `link` clones it)."""
    import llvmlite.binding as llvm

    text = str(llvm.parse_bitcode(Path(path).read_bytes()))
    return llvm.parse_assembly(_FLOAT_OP.sub(r"= \1 contract ", text))


def defines(path: str, symbol: str) -> bool:
    """The library at `path` defines function `symbol`."""
    return symbol in _defined(path)


@cache
def _defined(path: str) -> frozenset[str]:
    return frozenset(f.name for f in _library(path).functions if not f.is_declaration)


def link(module: llvm.ModuleRef, path: str) -> None:
    """Link libdevice into `module` (a kernel that calls `__nv_*` functions): the functions
    it calls and theirs, internal, and `nvvm-reflect-ftz` set. Nothing when it calls none."""
    import llvmlite.binding as llvm

    called = frozenset(
        f.name for f in module.functions if f.is_declaration and f.name in _defined(path)
    )
    if not called:
        return
    own = {g.name for g in [*module.functions, *module.global_variables] if not g.is_declaration}
    for part in (llvm.parse_bitcode(_subset(path, called)), llvm.parse_assembly(_REFLECT_FTZ)):
        part.triple, part.data_layout = module.triple, module.data_layout
        module.link_in(part)
    for g in [*module.functions, *module.global_variables]:
        if not g.is_declaration and g.name not in own:
            g.linkage = "internal"


@cache
def _subset(path: str, names: frozenset[str]) -> bytes:
    """The library cut down to the functions `names` and what they use, as bitcode (once
    per process and set of functions: cloning the whole library costs ~0.2 s, parsing this
    ~1 ms)."""
    import llvmlite.binding as llvm

    lib = _library(path).clone()
    for g in [*lib.functions, *lib.global_variables]:
        if not g.is_declaration and g.name not in names:
            g.linkage = "internal"
    pb = llvm.create_pass_builder(None, llvm.create_pipeline_tuning_options())
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_global_dead_code_eliminate_pass()
    mpm.run(lib, pb)
    return lib.as_bitcode()
