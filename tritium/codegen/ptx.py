"""LLVM IR -> PTX with llvmlite's NVPTX target (LLVM 22).

    llir_to_ptx(text, "sm_89")  ->  ".version 8.7\\n.target sm_89\\n.address_size 64\\n..."

The module is first optimized with LLVM's O3 pipeline (the IR lowering emits simple,
redundant per-register code and leaves CSE, constant folding and address-offset folding
to LLVM), then compiled by the NVPTX backend.

One bound on the backend: its codegen IR passes include straight-line strength reduction,
which LLVM 22 rewrote to look, for every add / mul / GEP, through all earlier candidates
of the same base or stride: quadratic in the address arithmetic of one block. For a
looped reduction with ~160 loads and stores it is 1.7 s of 1.9 s of codegen, and grows 4x
per doubling (docs/performance.md): the torch.compile kernel that took 114 s. Above
`SLSR_LIMIT` candidate instructions the backend runs at codegen level None, which skips
those passes (ptxas optimizes the PTX either way; the PTX is longer, ~15%); every kernel
below the limit, which is all of the test suite's, compiles exactly as before.

`sm_90a` (Hopper with its arch-specific instructions: wgmma) is LLVM's `sm_90a` CPU:
`.target sm_90a`, PTX 8.0 or newer (8.7 here), run only by compute capability 9.0.

PTX ISA version: LLVM 22 writes the lowest version an arch needs (7.8 for sm_89 / sm_90)
unless a `+ptxNN` feature asks for more. tritium asks for 8.7, what upstream Triton 3.6
emits: CUDA 13's ptxas accepts up to 9.0 (LLVM 22 knows up to 9.0 as well), and drivers
from CUDA 12.8 on can JIT it. `ptx_version=` overrides it.
"""

from __future__ import annotations

import re
from functools import cache

import llvmlite.binding as llvm

from tritium.codegen import libdevice_link

ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a")
DEFAULT_ARCH = "sm_89"
DEFAULT_PTX_VERSION = 87


@cache
def _init() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    # 32-bit pointers for shared memory (as upstream): `mov.b32 %r, global_smem`, no
    # 64-bit address arithmetic. Read when the target machine is made; module.py's data
    # layout matches.
    llvm.set_option("", "--nvptx-short-ptr")


# add / mul / shl / or / GEP instructions in the optimized module above which codegen skips
# its straight-line scalar passes (the module docstring): there they would take > ~10 s
SLSR_LIMIT = 4000
_SLSR_CANDIDATE = re.compile(r"= (?:add|mul|shl|or|getelementptr)\b")


@cache
def target_machine(
    arch: str = DEFAULT_ARCH, ptx_version: int = DEFAULT_PTX_VERSION, codegen_opt: int = 3
):
    if arch not in ARCHS:
        raise ValueError(f"unsupported arch {arch!r}: expected one of {', '.join(ARCHS)}")
    _init()
    target = llvm.Target.from_triple("nvptx64-nvidia-cuda")
    return target.create_target_machine(
        cpu=arch, features=f"+ptx{ptx_version}", opt=codegen_opt
    )


def optimize(
    llvm_ir: str,
    arch: str = DEFAULT_ARCH,
    ptx_version: int = DEFAULT_PTX_VERSION,
    libdevice: str | None = None,
) -> str:
    """Run LLVM's O3 module pipeline (as upstream does before codegen), after linking the
    libdevice file `libdevice` into the module when given (libdevice_link.py)."""
    tm = target_machine(arch, ptx_version)
    mod = llvm.parse_assembly(llvm_ir)
    mod.verify()
    if libdevice is not None:
        libdevice_link.link(mod, libdevice)
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    return str(mod)


def llir_to_ptx(
    llvm_ir: str,
    arch: str = DEFAULT_ARCH,
    ptx_version: int = DEFAULT_PTX_VERSION,
    opt: bool = True,
    libdevice: str | None = None,
) -> str:
    """Compile LLVM IR text to PTX text for `arch` (sm_80 / sm_86 / sm_89 / sm_90 / sm_90a);
    `libdevice`: the libdevice.10.bc the IR's `__nv_*` calls are linked from."""
    text = optimize(llvm_ir, arch, ptx_version, libdevice) if opt else llvm_ir
    codegen_opt = 3 if len(_SLSR_CANDIDATE.findall(text)) <= SLSR_LIMIT else 0
    tm = target_machine(arch, ptx_version, codegen_opt)
    mod = llvm.parse_assembly(text)
    mod.verify()
    return tm.emit_assembly(mod)
