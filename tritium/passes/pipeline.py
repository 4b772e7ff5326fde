"""The TTIR and TTGIR pass pipelines, in order, with per-pass hooks.

    module = run_ttir_passes(module, options)            # TTIR -> simplified TTIR
    module = run_ttgir_passes(module, options)           # TTIR -> TTGIR (layouts chosen)

`options` is a `tritium.options.Options` (or a dict of its fields, or None for the
defaults): `num_warps`, `threads_per_warp`, `num_ctas`, `arch` (giving `ttg.target`) and
`num_stages` reach the passes that need them. Hooks, all optional:

* `dump(pass_name, module)` is called after every pass (the CLI's `--dump-dir` numbers
  the files it writes);
* `timings` (a dict) receives the seconds each pass took, summed per pass name
  (`--time-passes`), and the verification's as `verify`;
* `verify=True` verifies the IR after every pass (xDSL's verifiers, plus the layout rules
  of `verify.py` on TTGIR) and raises `PassPipelineError` naming the pass; `verify="end"`
  verifies once, after the last pass (what `tritium.compile` does unless TRITIUM_DEBUG is
  set: verifying costs about as much as all the passes together, so checking after each of
  twenty passes doubled a compile); `verify=False` skips it.

`TTIR_PASSES` and `TTGIR_PASSES` list the pass names in the order they run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tritium import config
from tritium.errors import CompilationError
from tritium.ir.context import make_context
from tritium.options import Options
from tritium.passes.accelerate_matmul import AccelerateMatmulPass
from tritium.passes.allocate_shared_memory import AllocateSharedMemoryPass
from tritium.passes.canonicalize import CanonicalizePass
from tritium.passes.coalesce import CoalescePass
from tritium.passes.combine import CombinePass
from tritium.passes.convert_triton_to_tritongpu import ConvertTritonToTritonGPUPass
from tritium.passes.cse import CommonSubexpressionEliminationPass
from tritium.passes.dce import DeadCodeEliminationPass
from tritium.passes.loop_invariant_code_motion import LoopInvariantCodeMotionPass
from tritium.passes.membar import MembarPass
from tritium.passes.optimize_dot_operands import OptimizeDotOperandsPass
from tritium.passes.remove_layout_conversions import RemoveLayoutConversionsPass
from tritium.passes.reorder_broadcast import ReorderBroadcastPass
from tritium.passes.rewrite_tensor_pointer import RewriteTensorPointerPass
from tritium.passes.software_pipeliner import SoftwarePipelinePass
from tritium.passes.verify import verify_ttgir_layouts
from tritium.passes.wgmma_pipeline import WgmmaPipelinePass

TTIR_PASSES: tuple[str, ...] = (
    "rewrite-tensor-pointer",
    "canonicalize",
    "combine",
    "reorder-broadcast",
    "canonicalize",
    "cse",
    "dce",
)
TTGIR_PASSES: tuple[str, ...] = (
    "convert-triton-to-tritongpu",
    "coalesce",
    "remove-layout-conversions",
    "accelerate-matmul",
    "remove-layout-conversions",
    "loop-invariant-code-motion",
    "canonicalize",
    "cse",
    "dce",
    "pipeline",
    "optimize-dot-operands",
    "wgmma-pipeline",
    "allocate-shared-memory",
    "membar",
)


class PassPipelineError(CompilationError):
    """A pass failed, or left invalid IR behind (the message names the pass)."""

    def __init__(self, pass_name: str, message: str):
        self.pass_name = pass_name
        super().__init__(f"after pass '{pass_name}': {message}")


def make_pass(name: str, options: Options) -> ModulePass:
    """The pass object registered under `name`."""
    simple: dict[str, type[ModulePass]] = {
        "rewrite-tensor-pointer": RewriteTensorPointerPass,
        "canonicalize": CanonicalizePass,
        "combine": CombinePass,
        "reorder-broadcast": ReorderBroadcastPass,
        "cse": CommonSubexpressionEliminationPass,
        "dce": DeadCodeEliminationPass,
        "loop-invariant-code-motion": LoopInvariantCodeMotionPass,
        "coalesce": CoalescePass,
        "remove-layout-conversions": RemoveLayoutConversionsPass,
        "allocate-shared-memory": AllocateSharedMemoryPass,
        "optimize-dot-operands": OptimizeDotOperandsPass,
        "membar": MembarPass,
    }
    if name in simple:
        return simple[name]()
    if name == "convert-triton-to-tritongpu":
        return ConvertTritonToTritonGPUPass(
            num_warps=options.num_warps,
            threads_per_warp=options.threads_per_warp,
            num_ctas=options.num_ctas,
            target=options.target,
        )
    if name == "pipeline":
        return SoftwarePipelinePass(num_stages=options.num_stages)
    if name == "accelerate-matmul":
        return AccelerateMatmulPass(mma_v3=options.mma_v3)
    if name == "wgmma-pipeline":
        return WgmmaPipelinePass(in_flight=not config.wgmma_sync())
    raise KeyError(f"no pass named {name!r}")


DumpHook = Callable[[str, ModuleOp], None]
Verify = Literal[True, False, "end"]


def run_passes(
    module: ModuleOp,
    names: tuple[str, ...] | list[str],
    options: Options | dict | None = None,
    *,
    dump: DumpHook | None = None,
    timings: dict | None = None,
    verify: Verify = True,
    ttgir: bool = False,
) -> ModuleOp:
    """Run the named passes in order (see the module docstring for the hooks).
    `ttgir=True` adds the TTGIR layout checks to verification, from the first pass whose
    output is TTGIR on."""
    opts = Options.of(options)
    ctx = make_context()
    names = list(names)
    for i, name in enumerate(names):
        pass_ = make_pass(name, opts)
        start = time.perf_counter()
        try:
            pass_.apply(ctx, module)
        except CompilationError:
            raise
        except Exception as e:
            raise PassPipelineError(name, f"{type(e).__name__}: {e}") from e
        elapsed = time.perf_counter() - start
        if timings is not None:
            timings[name] = timings.get(name, 0.0) + elapsed
        if verify is True or (verify == "end" and i == len(names) - 1):
            start = time.perf_counter()
            _verify(module, name, ttgir, each=verify is True)
            if timings is not None:
                timings["verify"] = timings.get("verify", 0.0) + time.perf_counter() - start
        if dump is not None:
            dump(name, module)
    return module


def verify_at_end(module: ModuleOp, pipeline: str, timings: dict | None = None) -> None:
    """The check `run_ttir_passes` / `run_ttgir_passes(verify="end")` (`pipeline` "ttir" /
    "ttgir") makes after its last pass, made apart: a caller that ran the pipeline with
    `verify=False` verifies while other work runs (tritium.compile: while LLVM compiles the
    lowered module; the TTIR's on a copy made after its pipeline)."""
    start = time.perf_counter()
    try:
        last = (TTGIR_PASSES if pipeline == "ttgir" else TTIR_PASSES)[-1]
        _verify(module, last, pipeline == "ttgir", each=False)
    finally:
        if timings is not None:
            timings["verify"] = timings.get("verify", 0.0) + time.perf_counter() - start


def _verify(module: ModuleOp, name: str, ttgir: bool, each: bool) -> None:
    try:
        module.verify()
        if ttgir:
            verify_ttgir_layouts(module)
    except Exception as e:
        where = "" if each else " (verified after the last pass only: TRITIUM_DEBUG=1 verifies after each)"
        raise PassPipelineError(name, f"invalid IR{where}: {e}") from e


def run_ttir_passes(
    module: ModuleOp,
    options: Options | dict | None = None,
    *,
    dump: DumpHook | None = None,
    timings: dict | None = None,
    verify: Verify = True,
) -> ModuleOp:
    """Simplify TTIR in place (rewrite-tensor-pointer, canonicalize, combine,
    reorder-broadcast, cse, dce)."""
    return run_passes(module, TTIR_PASSES, options, dump=dump, timings=timings, verify=verify)


def run_ttgir_passes(
    module: ModuleOp,
    options: Options | dict | None = None,
    *,
    dump: DumpHook | None = None,
    timings: dict | None = None,
    verify: Verify = True,
) -> ModuleOp:
    """Turn TTIR into TTGIR in place and optimize its layouts."""
    return run_passes(
        module, TTGIR_PASSES, options, dump=dump, timings=timings, verify=verify, ttgir=True
    )
