"""`tritium.compile`: the pipeline as a composition of stages.

    source --frontend--> TTIR --ttir passes--> TTIR --ttgir passes--> TTGIR
           --codegen--> LLVM IR --llvmlite NVPTX--> PTX --ptxas--> cubin --nvdisasm--> SASS

Each arrow is a function with a typed input and output. `dump_dir` receives the source
and the IR after every stage and pass, numbered in order (`03-ttir-cse.mlir`, ...), so
neighbours can be diffed; `timings` collects seconds per stage and pass.

One sequence, `compile_kernel(source, spec, options)`, serves both callers: `tritium.compile`
(ahead of time: a signature string, or a .ttir file; never cached) and `compile_jit` (a
launch's specialisation: through the compiled-kernel cache, or up to TTIR only for the
interpreter). The result is a `CompiledKernel` (compiled_kernel.py): every stage's text in
`asm` and a typed `KernelMetadata` (tritium/runtime/metadata.py) that the Launcher reads.
"""

from __future__ import annotations

import gc
import os
import pathlib
import time
from dataclasses import asdict

from tritium import config
from tritium.background import Background, prompt_handoff
from tritium.compiled_kernel import CompiledKernel, user_error
from tritium.dataclass_bytecode import dataclass_bytecode
from tritium.errors import ArgumentError, CompilationError, TritiumError
from tritium.frontend.kernel_source import KernelSource, stable_value
from tritium.gc_pause import gc_paused as _gc_paused
from tritium.ir.printer import print_ir
from tritium.options import Options
from tritium.runtime.metadata import KernelMetadata

ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a")
STAGES = ("ttir", "ttgir", "llir", "ptx", "cubin", "sass")


class RegisterSpillWarning(UserWarning):
    """ptxas had to spill registers to local memory: the kernel will run slowly."""


def target_arch(device_arch: str | None) -> str | None:
    """The newest arch tritium targets that a device of `device_arch` runs (sm_100 -> sm_90).
    A Hopper GPU (sm_90) gets sm_90a, whose wgmma `tl.dot` uses, unless DISABLE_MMA_V3
    (config.mma_v3_disabled) asks for mma.sync."""
    if device_arch == "sm_90" and not config.mma_v3_disabled():
        return "sm_90a"
    if device_arch is None or device_arch in ARCHS:
        return device_arch
    cc = int(device_arch.removeprefix("sm_").rstrip("a"))
    fits = [a for a in ARCHS if not a.endswith("a") and int(a.removeprefix("sm_")) <= cc]
    return fits[-1] if fits else device_arch


class Dumper:
    """Writes numbered IR snapshots into a directory (or does nothing)."""

    def __init__(self, directory: str | os.PathLike | None):
        self.dir = pathlib.Path(directory) if directory else None
        self.n = 0
        if self.dir:
            self.dir.mkdir(parents=True, exist_ok=True)

    def write(self, name: str, text: str, ext: str = "mlir") -> None:
        if not self.dir:
            return
        (self.dir / f"{self.n:02d}-{name}.{ext}").write_text(text)
        self.n += 1

    def module(self, name: str, module) -> None:
        if self.dir:
            self.write(name, print_ir(module, locations=False))


def _timed(timings: dict | None, name: str):
    class _T:
        def __enter__(self):
            self.t = time.perf_counter()

        def __exit__(self, *exc):
            if timings is not None:
                timings[name] = timings.get(name, 0.0) + time.perf_counter() - self.t

    return _T()


def verify_mode():
    """How the pass pipelines verify the IR: after every pass with TRITIUM_DEBUG (a failure
    names the pass that broke it), else once after the last pass (pipeline.py)."""
    return True if config.debug() else "end"


def load_stages() -> None:
    """Import every stage a compile runs (they load on first use: `import tritium` and
    launching saved kernels need none of them)."""
    import tritium.analysis.pointer_writes  # noqa: F401
    import tritium.codegen  # noqa: F401
    import tritium.codegen.ptx  # noqa: F401
    import tritium.codegen.tools  # noqa: F401
    import tritium.frontend.ttir  # noqa: F401
    import tritium.passes.pipeline  # noqa: F401
    import tritium.runtime.cache  # noqa: F401


def frontend_ttir(
    source: KernelSource, spec, options: Options, dumper: Dumper, timings: dict | None
):  # fmt: skip
    """The frontend's TTIR (before the TTIR passes) and the kernels it depends on."""
    from tritium.frontend.ttir import ast_to_ttir

    dumper.write("source", source.src, "py")
    with _timed(timings, "frontend"):
        module, deps = ast_to_ttir(source, spec, debug=options.debug)
    dumper.module("ttir-frontend", module)
    return module, deps


def make_ttir(
    source: KernelSource, spec, options: Options, dumper: Dumper, timings: dict | None,
    verify=None,
):  # fmt: skip
    """The frontend's TTIR, through the TTIR passes (verified as `verify`: the pipeline's
    `verify` argument; None: as verify_mode() says)."""
    from tritium.passes.pipeline import run_ttir_passes

    module, deps = frontend_ttir(source, spec, options, dumper, timings)
    verify = verify_mode() if verify is None else verify
    run_ttir_passes(module, options, dump=dumper.module, timings=timings, verify=verify)
    return module, deps


def lower(
    module,
    options: Options,
    dumper: Dumper,
    timings: dict | None,
    stop: str = "sass",
    libdevice: str | None = None,
    beside=None,
    young_gc: bool = False,
) -> tuple[dict, dict | None]:
    """TTIR module -> (asm with ttgir, llir, ptx (and cubin / sass when the tools exist),
    codegen's launch facts: name, params, num_warps, threads_per_warp, shared, and ptxas's
    register and spill counts; None when stopped before LLVM IR). `libdevice`: math calls
    NVIDIA's libdevice at that path (TRITIUM_LIBDEVICE; the llir declares the `__nv_*`
    functions, the ptx holds those called). `beside()`: the caller's work to do while LLVM
    runs (at once without it). `young_gc`: collect the youngest generation's garbage while
    ptxas runs (the caller's GC is on, but paused).

    From the LLVM IR to the PTX, LLVM (C++ through ctypes, which releases the GIL) runs in
    a thread while this one verifies and prints the TTGIR and runs `beside` (the lowering
    reads the module, never changes it; an invalid module's lowering error gives way to
    the verifier's): where a core is free, that Python work costs no time."""
    from tritium.passes.pipeline import run_ttgir_passes, verify_at_end

    asm: dict = {}

    def print_texts():
        if beside is not None:
            beside()
        asm["ttgir"] = print_ir(module, locations=True)

    to_ptx = stop not in ("ttgir", "llir")
    verify_beside = to_ptx and verify_mode() == "end"  # (TRITIUM_DEBUG: after each pass)
    run_ttgir_passes(module, options, dump=dumper.module, timings=timings,
                     verify=False if verify_beside else verify_mode())  # fmt: skip
    if stop == "ttgir":
        print_texts()
        return asm, None
    from tritium.codegen import lower_to_llvm  # (llvmlite: only a compile that lowers)
    from tritium.codegen.ptx import llir_to_ptx
    from tritium.codegen.register_budget import chains_mma_dots, widen
    from tritium.codegen.tools import assemble, disassemble, start_assemble

    with _timed(timings, "lower-to-llvm"):
        try:
            llir, facts = lower_to_llvm(module, libdevice)
        except Exception:
            if verify_beside:
                verify_at_end(module, "ttgir", timings)
            raise
    if not to_ptx:
        print_texts()
    else:

        def llvm_to_ptx():
            with _timed(timings, "llvm-to-ptx"):
                return llir_to_ptx(llir, options.arch, libdevice=libdevice)

        with prompt_handoff():
            llvm = Background(llvm_to_ptx)
            try:
                if beside is not None:
                    beside()
                if verify_beside:
                    verify_at_end(module, "ttgir", timings)
                asm["ttgir"] = print_ir(module, locations=True)
            except BaseException:
                llvm.join()  # (what it made is moot)
                raise
            ptx = llvm.result()
    asm["llir"] = llir
    dumper.write("llir", llir, "ll")
    if stop == "llir":
        return asm, facts
    asm["ptx"] = ptx
    dumper.write("ptx", asm["ptx"], "ptx")
    if stop == "ptx":
        return asm, facts
    with _timed(timings, "ptxas"):
        wait = start_assemble(ptx, options.arch)  # with -v: registers and spills
        try:
            if young_gc:
                # while ptxas (a process) runs, free the compile's garbage so far: the IR's
                # ops and llvmlite's instructions are cycles, which only the cyclic GC
                # frees, else all at once when the compile ends (_gc_paused)
                gc.collect(0)
        finally:
            res = wait()
        if res is not None and chains_mma_dots(module):  # attention: register_budget.py
            widened, res = widen(asm["ptx"], res, facts["num_warps"], options.arch, assemble)
            if widened != asm["ptx"]:  # the PTX ptxas assembled, in the dumps too
                asm["ptx"] = widened
                dumper.write("ptx-register-budget", widened, "ptx")
    cubin = None if res is None else res[0]
    if res is not None:
        facts = {**facts, **{k: res[1][k] for k in ("registers", "spill_stores", "spill_loads")}}
    if cubin is not None:
        asm["cubin"] = cubin
        if stop == "sass":
            with _timed(timings, "disassemble"):
                sass = disassemble(cubin)
            if sass is not None:
                asm["sass"] = sass
                dumper.write("sass", sass, "sass")
    return asm, facts


def warn_spills(source, metadata: KernelMetadata) -> None:
    """A RegisterSpillWarning, located at the kernel's `def`, if ptxas spilled."""
    stores, loads = metadata.spill_stores, metadata.spill_loads
    if not (stores or loads):
        return
    import warnings

    registers = "?" if metadata.registers is None else metadata.registers
    msg = (
        f"kernel '{metadata.name}' spills registers to local memory ({stores} bytes spill "
        f"stores, {loads} bytes spill loads; {registers} registers per thread at "
        f"num_warps={metadata.num_warps}, {metadata.arch}): it will be "
        "slow; use smaller blocks or more warps"
    )
    file, line = getattr(source, "file", None), None
    try:
        line = source.def_line if file else None
    except Exception:  # source not readable: fall back to a plain warning
        file = None
    if file and line:
        warnings.warn_explicit(msg, RegisterSpillWarning, file, line)
    else:
        warnings.warn(msg, RegisterSpillWarning, stacklevel=3)


def param_divisibility(module) -> dict:
    """{parameter name: tt.divisibility} for the public kernel's arguments that have one."""
    from xdsl.dialects.builtin import IntegerAttr

    from tritium.ir import tt

    out = {}
    for op in module.walk():
        if isinstance(op, tt.FuncOp) and op.sym_visibility and op.sym_visibility.data == "public":
            for i, arg in enumerate(op.body.blocks.first.args):
                attr = op.arg_attr(i, "tt.divisibility")
                if isinstance(attr, IntegerAttr):
                    out[arg.name_hint or f"arg{i}"] = attr.value.data
    return out


def _snapshot(module):
    """A copy of `module`, every value named exactly as in `module` (xDSL's clone sets each
    name through the validating setter again, which strips another `_N` suffix from a name
    like `x_1_2` and refuses the empty hint that `_0` leaves)."""
    values: dict = {}
    copy = module.clone(values, clone_name_hints=False)
    for old, new in values.items():
        new._name = old._name  # (xDSL's IRWithName field behind `name_hint`)
    return copy


def make_metadata(
    name: str, options: Options, facts: dict | None, spec, module, writes: dict | None = None
) -> KernelMetadata:
    """The KernelMetadata of a kernel compiled with `options`: codegen's `facts` (None when
    stopped before LLVM IR: then the parameters come from the KernelSpec), parameter types
    as the KernelSpec names them (the IR is signless: u16 and i16 are both i16), each
    pointer's `tt.divisibility`, which the Launcher checks arguments against, and whether
    the kernel may write through it (`writes`: analysis/pointer_writes.py's result), which
    the launch paths check read-only arrays against."""
    from tritium import __version__

    facts = dict(facts or {})
    types = spec.types if spec is not None else {}
    params = facts.pop("params", None)
    if params is None:
        params = [{"name": n, "type": t.signature} for n, t in types.items()]
    divisibility = param_divisibility(module)
    writes = writes or {}
    params = [
        {
            **p,
            **({"type": types[p["name"]].signature} if p["name"] in types else {}),
            **({"divisibility": divisibility[p["name"]]} if p["name"] in divisibility else {}),
            **({"writes": writes[p["name"]]} if p["name"] in writes else {}),
        }
        for p in params
    ]
    facts.setdefault("name", name)
    facts.setdefault("num_warps", options.num_warps)
    facts.setdefault("threads_per_warp", options.threads_per_warp)
    return KernelMetadata(
        params=params,
        arch=options.arch,
        num_stages=options.num_stages,
        debug=options.debug,
        tritium_version=__version__,
        **facts,
    )


def cache_key(
    source: KernelSource, spec, options: Options, libdevice: str | None = None
) -> str | None:
    """The compiled-kernel cache key of `source` specialised by `spec` under `options`:
    its code's fingerprint (KernelSource.fingerprint), the KernelSpec, the options,
    tritium's own source, in libdevice mode the libdevice file's digest and, when set,
    TRITIUM_WGMMA_SYNC (the wgmma-pipeline pass reads it). None when something has no
    stable form (then it is not cached)."""
    from tritium.codegen.libdevice_link import identity
    from tritium.runtime import cache

    fingerprint = source.fingerprint()
    if fingerprint is None:
        return None
    try:
        return cache.key(
            kernel=fingerprint,
            types={n: str(t) for n, t in spec.types.items()},
            constants={n: stable_value(v) for n, v in spec.constants.items()},
            divisible_by_16=sorted(spec.divisible_by_16),
            options=asdict(options),
            **({"wgmma_sync": True} if config.wgmma_sync() else {}),  # wgmma-pipeline's
            tritium=cache.tritium_source_hash(),
            **({} if libdevice is None else {"libdevice": identity(libdevice)}),
        )
    except TypeError:
        return None


def compile_kernel(
    source: KernelSource | pathlib.Path,
    spec,
    options: Options,
    *,
    interpret: bool = False,
    cache: bool = False,
    dump_dir: str | os.PathLike | None = None,
    timings: dict | None = None,
    stop: str = "sass",
    back_end=None,
) -> CompiledKernel:
    """Compile `source` (a KernelSource with its KernelSpec, or a .ttir file's path with
    spec None) through stage `stop`. `interpret`: stop at TTIR and keep the module for the
    interpreter. `cache`: look the kernel up in the compiled-kernel cache first (not while
    dumping) and store it there. `back_end`: a back_end_worker.BackEnd, a process that
    compiles the frontend's TTIR on from there (`tritium compile`; where it fails, the rest
    is compiled here, as without it). Python's cyclic garbage collector is paused meanwhile
    (`_gc_paused`)."""
    with _gc_paused() as gc_on, dataclass_bytecode():
        return _compile_kernel(
            source, spec, options, interpret, cache, dump_dir, timings, stop, gc_on, back_end
        )


def _compile_kernel(
    source, spec, options, interpret, cache, dump_dir, timings, stop, gc_on, back_end=None
):  # fmt: skip
    from tritium.runtime import cache as kernel_cache

    if stop not in STAGES:
        raise ArgumentError(f"unknown stage '{stop}'; choose one of {', '.join(STAGES)}")
    if options.arch not in ARCHS:
        raise ArgumentError(f"unknown arch '{options.arch}'; choose one of {', '.join(ARCHS)}")
    dumper = Dumper(dump_dir)
    libdevice = None
    if not interpret:  # importing codegen loads llvmlite, which the interpreter does without
        from tritium.codegen.libdevice_link import resolve as resolve_libdevice

        libdevice = resolve_libdevice()  # TRITIUM_LIBDEVICE
    key = cache_key(source, spec, options, libdevice) if cache and not interpret else None
    if isinstance(source, KernelSource):
        name, runtime = source.__name__, list(spec.types)
        hit = None if dumper.dir else kernel_cache.load_kernel(key)
        if hit is not None:
            metadata = KernelMetadata.from_dict(hit["metadata"])
            warn_spills(source, metadata)
            return CompiledKernel(name, hit["asm"], metadata, runtime)
        module, _ = frontend_ttir(source, spec, options, dumper, timings)
        kernel = None
        if back_end is not None and not interpret:
            kernel = back_end.compile(module, name, runtime, spec, options, dumper, timings, stop)
    else:
        module, name, runtime = _load_ttir_file(pathlib.Path(source), dumper)
        kernel = None
    if kernel is None:
        kernel = compile_ttir(module, name, runtime, spec, options, dumper, timings, stop,
                              libdevice, interpret, gc_on)  # fmt: skip
    if key is not None:
        kernel_cache.store_kernel(key, kernel.asm, kernel.metadata.to_dict())
    warn_spills(source, kernel.metadata)
    return kernel


def compile_ttir(
    module, name: str, runtime: list, spec, options: Options, dumper: Dumper,
    timings: dict | None, stop: str, libdevice: str | None, interpret: bool = False,
    gc_on: bool = False,
) -> CompiledKernel:  # fmt: skip
    """The frontend's TTIR `module` (or a .ttir file's) through the TTIR passes and on to
    stage `stop`: the CompiledKernel of the kernel `name` with `runtime` parameters."""
    from tritium.analysis.pointer_writes import written_params
    from tritium.passes.pipeline import run_ttir_passes, verify_at_end

    # Through the GPU passes, the TTIR's end-of-pipeline check, its text and its written
    # parameters are made from a copy while LLVM works (lower); any error on the way gives
    # way to the TTIR verifier's
    later = not interpret and stop != "ttir"
    verify = verify_mode()
    ttir_verify = False if stop in ("ptx", "cubin", "sass") and verify == "end" else verify
    run_ttir_passes(module, options, dump=dumper.module, timings=timings, verify=ttir_verify)
    facts = None
    if not later:
        asm = {"ttir": print_ir(module, locations=True)}
        writes = written_params(module)
        if interpret:
            metadata = make_metadata(name, options, None, spec, module, writes)
            return CompiledKernel(name, asm, metadata, runtime, module, interpret=True)
    else:
        made: dict = {}

        def beside():
            if ttir_verify is False:
                verify_at_end(ttir, "ttir", timings)
            made["ttir"] = print_ir(ttir, locations=True)
            made["writes"] = written_params(ttir)

        ttir = _snapshot(module)

        try:
            lowered, facts = lower(module, options, dumper, timings, stop, libdevice, beside, gc_on)
        except Exception:
            if ttir_verify is False:
                verify_at_end(ttir, "ttir", timings)
            raise
        asm, writes = {"ttir": made["ttir"], **lowered}, made["writes"]
    metadata = make_metadata(name, options, facts, spec, module, writes)
    return CompiledKernel(name, asm, metadata, runtime)


def compile_jit(
    source: KernelSource, spec, options: Options | dict, interpret: bool = False
) -> CompiledKernel:
    """Compile a launch's specialisation `spec` of `source` (the JIT's entry: cached, dumped
    to $TRITIUM_DUMP_DIR when set; errors without tritium's frames). Through the cubin: the
    SASS is disassembled when `asm["sass"]` is first read (AsmDict), not for every launch's
    compile (nvdisasm, where installed, is one more subprocess per compile)."""
    dump_dir = config.dump_dir()
    try:
        kernel = compile_kernel(
            source,
            spec,
            Options.of(options),
            interpret=interpret,
            cache=True,
            dump_dir=dump_dir,
            stop="sass" if dump_dir else "cubin",  # (a dump holds every stage)
        )
    except TritiumError as e:
        raise user_error(e) from None
    kernel.arg_names = list(source.arg_names)
    return kernel


def compile(
    fn,
    signature=None,
    constexprs=None,
    *,
    options: Options | None = None,
    dump_dir=None,
    timings: dict | None = None,
    stop: str = "sass",
    **option_fields,
) -> CompiledKernel:
    """Compile `fn` (a `@jit` function, or a path to a `.ttir` file) ahead of time.

    `signature` maps runtime parameter names to types (`"*fp32:16"`: pointer to fp32,
    16-byte aligned; `"i32"`, `"i32:16"`: divisible by 16, `"i32:1"`: equal to 1), or is a
    comma-separated string / list in parameter order. The options are an `Options`, or
    its fields as keywords (`num_warps=8, arch="sm_90"`). Never needs a GPU.
    """
    from tritium.frontend.signature import parse_signature

    if options is None:
        options = Options.of(option_fields)
    elif option_fields:
        raise ArgumentError(f"give either options= or {', '.join(option_fields)}, not both")
    if isinstance(fn, (str, os.PathLike)) and str(fn).endswith((".ttir", ".mlir")):
        source, spec = pathlib.Path(fn), None
    elif isinstance(fn, KernelSource):
        source, spec = fn, parse_signature(fn, signature, constexprs)
    else:
        raise ArgumentError(
            f"tritium.compile needs a @tritium.jit function or a .ttir file, got {fn!r}"
        )
    return compile_kernel(source, spec, options, dump_dir=dump_dir, timings=timings, stop=stop)


def _ir_parse_error(text: str) -> CompilationError:
    """xDSL's "FILE:LINE:COL / source / carets / message" as `FILE:LINE:COL: error: message`."""
    import re

    from tritium.errors import SourceLoc

    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    m = re.fullmatch(r"(.+):(\d+):(\d+)", lines[0].strip()) if lines else None
    if m is None or len(lines) < 2:
        return CompilationError(text.strip())
    message = " ".join(ln.strip() for ln in lines[1:] if not set(ln.strip()) <= {"^"})
    message = message.removeprefix(lines[1].strip()).strip() if len(lines) > 2 else message
    return CompilationError(message, SourceLoc(m.group(1), int(m.group(2)), int(m.group(3))))


def _load_ttir_file(path: pathlib.Path, dumper: Dumper):
    from tritium.ir import tt
    from tritium.ir.parser import IRParseError, parse_module

    try:
        text = path.read_text()
    except OSError as e:
        raise ArgumentError(f"cannot read {path}: {e.strerror}") from None
    dumper.write("source", text, "mlir")
    try:
        module = parse_module(text, str(path))
    except IRParseError as e:
        raise _ir_parse_error(str(e)) from None
    funcs = [
        op
        for op in module.walk()
        if isinstance(op, tt.FuncOp) and op.sym_visibility and op.sym_visibility.data == "public"
    ]
    if len(funcs) != 1:
        raise CompilationError(f"{path}: expected exactly one public tt.func, found {len(funcs)}")
    f = funcs[0]
    names = [a.name_hint or f"arg{i}" for i, a in enumerate(f.body.blocks.first.args)]
    return module, f.sym_name.data, names
