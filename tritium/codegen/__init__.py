"""The GPU backend: TTGIR -> LLVM IR (`lower_to_llvm`) -> PTX (`ptx.llir_to_ptx`) -> cubin
(`tools.ptxas`). See ARCHITECTURE.md in this folder.

`lower_to_llvm` and `llir_to_ptx` load (with llvmlite and the lowerings) on first access:
a compile asks `libdevice_link` before its first stage, and one that stops at TTIR or
TTGIR (`--emit ttgir`) never lowers."""

__all__ = ["llir_to_ptx", "lower_to_llvm"]


def __getattr__(name):
    if name == "lower_to_llvm":
        from tritium.codegen.module import lower_to_llvm

        return lower_to_llvm
    if name == "llir_to_ptx":
        from tritium.codegen.ptx import llir_to_ptx

        return llir_to_ptx
    raise AttributeError(f"module 'tritium.codegen' has no attribute {name!r}")
