"""The GPU backend: TTGIR -> LLVM IR (`lower_to_llvm`) -> PTX (`ptx.llir_to_ptx`) -> cubin
(`tools.ptxas`). See ARCHITECTURE.md in this folder."""

from tritium.codegen.module import lower_to_llvm
from tritium.codegen.ptx import llir_to_ptx

__all__ = ["llir_to_ptx", "lower_to_llvm"]
