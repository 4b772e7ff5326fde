"""Kernels calling libdevice functions, generated from source (one kernel computes several
functions of the same arguments: out[k * BLOCK + i] = libdevice.<names[k]>(x0[i], ...)),
shared by the PTX, interpreter and GPU tests of the libdevice namespace."""

from __future__ import annotations

import importlib.util
import pathlib
import tempfile

import numpy as np

import tritium

_DIR = pathlib.Path(tempfile.mkdtemp(prefix="tritium-libdevice-"))
_CACHE: dict = {}
NP = {"fp32": np.float32, "fp64": np.float64, "fp16": np.float16, "int32": np.int32,
      "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64}  # fmt: skip
SIG = {"fp32": "*fp32", "fp64": "*fp64", "fp16": "*fp16", "int32": "*i32", "uint32": "*u32",
       "int64": "*i64", "uint64": "*u64"}  # fmt: skip


def kernel(names: tuple[str, ...], arity: int, module: str = "libdevice"):
    """A @jit kernel (x0_ptr, ..., out_ptr, N, BLOCK): program p computes elements
    p * BLOCK ... of N and stores function k's result at k * N + i."""
    key = (names, arity, module)
    if key in _CACHE:
        return _CACHE[key]
    args = ", ".join(f"x{k}_ptr" for k in range(arity))
    loads = "\n".join(f"    x{k} = tl.load(x{k}_ptr + offs)" for k in range(arity))
    xs = ", ".join(f"x{k}" for k in range(arity))
    stores = "\n".join(
        f"    tl.store(out_ptr + {k} * N + offs, {module}.{n}({xs}))" for k, n in enumerate(names)
    )
    src = (
        "import tritium\nimport tritium.language as tl\n"
        "from tritium.language.extra import libdevice\n"
        "from tritium.language.extra.cuda import libdevice as cuda_libdevice\n\n\n"
        "@tritium.jit\n"
        f"def libdevice_kernel({args}, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        f"{loads}\n{stores}\n"
    )
    path = _DIR / f"k{len(_CACHE)}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    _CACHE[key] = mod.libdevice_kernel
    return mod.libdevice_kernel


def signature(arg_types: tuple[str, ...], ret: str) -> str:
    return ",".join([SIG[t] for t in arg_types] + [SIG[ret]])


def run(names, xs: list[np.ndarray], ret: str, module: str = "libdevice") -> np.ndarray:
    """Launch (interpreter or GPU, as TRITIUM_INTERPRET says) on len(xs[0]) elements
    (a power of two), 256 per program; returns out reshaped to (len(names), n)."""
    n = len(xs[0])
    block = min(n, 256)
    k = kernel(tuple(names), len(xs), module)
    out = np.zeros(len(names) * n, NP[ret])
    k[(n // block,)](*xs, out, N=n, BLOCK=block)
    return out.reshape(len(names), n)


def compile_ptx(names, arg_types: tuple[str, ...], ret: str, block: int = 128) -> str:
    k = kernel(tuple(names), len(arg_types))
    consts = {"N": block, "BLOCK": block}
    return tritium.compile(k, signature(arg_types, ret), consts, stop="ptx").asm["ptx"]
