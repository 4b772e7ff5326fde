"""`tritium.compile`: the pipeline as a composition of stages.

    source --frontend--> TTIR --ttir passes--> TTIR --ttgir passes--> TTGIR
           --codegen--> LLVM IR --llvmlite NVPTX--> PTX --ptxas--> cubin --nvdisasm--> SASS

Each arrow is a function with a typed input and output. `dump_dir` receives the source
and the IR after every stage and pass, numbered in order (`03-ttir-cse.mlir`, ...), so
neighbours can be diffed; `timings` collects seconds per stage and pass.
"""

from __future__ import annotations

import os
import pathlib
import time
from dataclasses import dataclass, field

from tritium.errors import ArgumentError, CompilationError, TritiumError
from tritium.ir.printer import print_ir

ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90")
STAGES = ("ttir", "ttgir", "llir", "ptx", "cubin", "sass")


class RegisterSpillWarning(UserWarning):
    """ptxas had to spill registers to local memory: the kernel will run slowly."""


def target_arch(device_arch: str | None) -> str | None:
    """The newest arch tritium targets that a device of `device_arch` runs (sm_100 -> sm_90)."""
    if device_arch is None or device_arch in ARCHS:
        return device_arch
    cc = int(device_arch.removeprefix("sm_").rstrip("a"))
    fits = [a for a in ARCHS if int(a.removeprefix("sm_")) <= cc]
    return fits[-1] if fits else device_arch


@dataclass
class Options:
    num_warps: int = 4
    num_stages: int = 3
    num_ctas: int = 1
    threads_per_warp: int = 32
    debug: bool = False
    arch: str = "sm_89"

    def __post_init__(self):
        if self.arch not in ARCHS:
            raise ArgumentError(f"unknown arch '{self.arch}'; choose one of {', '.join(ARCHS)}")
        nw = self.num_warps
        if not isinstance(nw, int) or nw < 1 or nw > 32 or nw & (nw - 1):
            raise ArgumentError(f"num_warps must be a power of two between 1 and 32, got {nw!r}")

    @property
    def target(self) -> str:
        return "cuda:" + self.arch.removeprefix("sm_")


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


@dataclass
class CompiledKernel:
    """The result of compiling one specialisation: every stage's text in `asm`,
    launch facts in `metadata`, and the runtime parameters in order."""

    name: str
    asm: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)
    runtime_params: list = field(default_factory=list)
    module: object = None  # the TTIR module (kept for the interpreter)
    interpret: bool = False

    def make_runner(self, indices: list[int]):
        """A `run(grid, values, stream)` callable taking all parameter values in order."""
        if self.interpret:
            from tritium.runtime.host_arrays import as_host_array
            from tritium.runtime.interpreter import interpret
            from tritium.runtime.launcher import check_grid

            module, name = self.module, self.name

            def run_interpreted(grid, vals, stream):
                try:
                    check_grid(grid, name)  # the GPU's limits, before looping over programs
                    interpret(module, grid, [as_host_array(vals[i]) for i in indices])
                except TritiumError as e:
                    raise _user_error(e) from None

            return run_interpreted
        from tritium.runtime.launcher import Launcher

        launcher = Launcher(self.asm, self.metadata)
        if indices == list(range(len(indices))):
            n = len(indices)

            def run_direct(grid, vals, stream):
                try:
                    launcher(grid, vals[:n] if len(vals) != n else vals, stream)
                except TritiumError as e:
                    raise _user_error(e) from None

            run_direct.launcher = launcher  # type: ignore[attr-defined]  (launch_fast.py)
            return run_direct

        def run_gpu(grid, vals, stream):
            try:
                launcher(grid, [vals[i] for i in indices], stream)
            except TritiumError as e:
                raise _user_error(e) from None

        run_gpu.launcher = launcher  # type: ignore[attr-defined]  (launch_fast.py)
        return run_gpu

    def __getitem__(self, grid):
        """Launch an already-compiled kernel: `ck[grid](*runtime_args)`."""
        runner = self.make_runner(list(range(len(self.runtime_params))))
        grid = tuple(grid) + (1,) * (3 - len(tuple(grid)))
        return lambda *args, stream=None: runner(grid, list(args), stream)


def _user_error(e: TritiumError) -> TritiumError:
    """`e` without the frames inside tritium (all of them with TRITIUM_DEBUG=1): a user
    sees their own call and the message, which names their kernel's FILE:LINE."""
    if os.environ.get("TRITIUM_DEBUG", "0") not in ("", "0"):
        return e
    return e.with_traceback(None)


def _timed(timings: dict | None, name: str):
    class _T:
        def __enter__(self):
            self.t = time.perf_counter()

        def __exit__(self, *exc):
            if timings is not None:
                timings[name] = timings.get(name, 0.0) + time.perf_counter() - self.t

    return _T()


def make_ttir(fn, spec, options: Options, dumper: Dumper, timings: dict | None):
    from tritium.frontend.ttir import ast_to_ttir
    from tritium.passes.pipeline import run_ttir_passes

    dumper.write("source", fn.src, "py")
    with _timed(timings, "frontend"):
        module, deps = ast_to_ttir(fn, spec, debug=options.debug)
    dumper.module("ttir-frontend", module)
    run_ttir_passes(module, options, dump=dumper.module, timings=timings)
    return module, deps


def lower(
    module, options: Options, dumper: Dumper, timings: dict | None, stop: str = "sass"
) -> dict:
    """TTIR module -> asm dict with ttgir, llir, ptx (and cubin / sass when the tools exist)."""
    from tritium.codegen import lower_to_llvm
    from tritium.codegen.ptx import llir_to_ptx
    from tritium.codegen.tools import assemble, disassemble
    from tritium.passes.pipeline import run_ttgir_passes

    asm: dict = {}
    run_ttgir_passes(module, options, dump=dumper.module, timings=timings)
    asm["ttgir"] = print_ir(module, locations=True)
    if stop == "ttgir":
        return asm
    with _timed(timings, "lower-to-llvm"):
        llir, meta = lower_to_llvm(module)
    asm["llir"] = llir
    asm["_meta"] = meta
    dumper.write("llir", llir, "ll")
    if stop == "llir":
        return asm
    with _timed(timings, "llvm-to-ptx"):
        asm["ptx"] = llir_to_ptx(llir, options.arch)
    dumper.write("ptx", asm["ptx"], "ptx")
    if stop == "ptx":
        return asm
    with _timed(timings, "ptxas"):
        res = assemble(asm["ptx"], options.arch)  # with -v: registers and spills
    cubin = None if res is None else res[0]
    if res is not None and "_meta" in asm:
        usage = {k: res[1][k] for k in ("registers", "spill_stores", "spill_loads")}
        asm["_meta"] = {**asm["_meta"], **usage}
    if cubin is not None:
        asm["cubin"] = cubin
        if stop == "sass":
            with _timed(timings, "disassemble"):
                sass = disassemble(cubin)
            if sass is not None:
                asm["sass"] = sass
                dumper.write("sass", sass, "sass")
    return asm


def warn_spills(fn, metadata: dict) -> None:
    """A RegisterSpillWarning, located at the kernel's `def`, if ptxas spilled."""
    stores, loads = metadata.get("spill_stores", 0), metadata.get("spill_loads", 0)
    if not (stores or loads):
        return
    import warnings

    name = metadata.get("name", "?")
    msg = (
        f"kernel '{name}' spills registers to local memory ({stores} bytes spill stores, "
        f"{loads} bytes spill loads; {metadata.get('registers', '?')} registers per thread at "
        f"num_warps={metadata.get('num_warps', '?')}, {metadata.get('arch', '?')}): it will be "
        "slow; use smaller blocks or more warps"
    )
    file, line = getattr(fn, "file", None), None
    try:
        line = fn.def_line if file else None
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


def _finish(
    name, asm, module, runtime, options, interpret, divisibility=None, spec=None
) -> CompiledKernel:
    meta = dict(asm.pop("_meta", {}))
    if spec is not None and "params" in meta:  # the IR is signless: u16 and i16 are both i16
        meta["params"] = [
            {**p, "type": spec.types[p["name"]].signature} if p["name"] in spec.types else p
            for p in meta["params"]
        ]
    if divisibility and "params" in meta:  # the launcher checks pointers against these
        meta["params"] = [
            {**p, "divisibility": divisibility[p["name"]]} if p["name"] in divisibility else p
            for p in meta["params"]
        ]
    meta.setdefault("name", name)
    meta.setdefault("num_warps", options.num_warps)
    meta.setdefault("threads_per_warp", options.threads_per_warp)
    meta.setdefault("shared", 0)
    meta["arch"] = options.arch
    meta["num_stages"] = options.num_stages
    meta["debug"] = options.debug
    from tritium import __version__

    meta["tritium_version"] = __version__
    return CompiledKernel(
        name=name,
        asm=asm,
        metadata=meta,
        runtime_params=runtime,
        module=module,
        interpret=interpret,
    )


def compile_jit(fn, spec, opts: dict, interpret: bool = False) -> CompiledKernel:
    """Compile a JITFunction for the specialisation `spec` (used by launches)."""
    try:
        return _compile_jit(fn, spec, opts, interpret)
    except TritiumError as e:
        raise _user_error(e) from None


def _compile_jit(fn, spec, opts: dict, interpret: bool) -> CompiledKernel:
    debug = opts.get("debug", fn.debug)
    arch = opts.get("arch")
    if arch is None and not interpret:
        from tritium.runtime.driver import current_arch

        arch = target_arch(current_arch())
    options = Options(
        num_warps=opts.get("num_warps", 4),
        num_stages=opts.get("num_stages", 3),
        debug=bool(debug) if debug is not None else False,
        arch=arch or "sm_89",
    )
    dumper = Dumper(os.environ.get("TRITIUM_DUMP_DIR"))
    runtime = list(spec.types)
    if interpret:
        module, _ = make_ttir(fn, spec, options, dumper, None)
        return _finish(
            fn.__name__, {"ttir": print_ir(module, locations=True)}, module, runtime, options, True
        )
    from tritium.runtime import cache

    key = cache.kernel_key(fn, spec, options)
    hit = None if dumper.dir else cache.load_kernel(key)
    if hit is not None:
        warn_spills(fn, hit["metadata"])
        return CompiledKernel(
            name=fn.__name__, asm=hit["asm"], metadata=hit["metadata"], runtime_params=runtime
        )
    module, _ = make_ttir(fn, spec, options, dumper, None)
    asm = {"ttir": print_ir(module, locations=True)}
    divisibility = param_divisibility(module)
    asm.update(lower(module, options, dumper, None))
    kernel = _finish(fn.__name__, asm, None, runtime, options, False, divisibility, spec)
    cache.store_kernel(key, kernel.asm, kernel.metadata)
    warn_spills(fn, kernel.metadata)
    return kernel


def compile(
    fn,
    signature=None,
    constexprs=None,
    num_warps: int = 4,
    num_stages: int = 3,
    arch: str = "sm_89",
    debug: bool = False,
    dump_dir=None,
    timings: dict | None = None,
    stop: str = "sass",
) -> CompiledKernel:
    """Compile `fn` (a `@jit` function, or a path to a `.ttir` file) ahead of time.

    `signature` maps runtime parameter names to types (`"*fp32:16"`: pointer to fp32,
    16-byte aligned; `"i32"`, `"i32:16"`: divisible by 16, `"i32:1"`: equal to 1), or is a
    comma-separated string / list in parameter order. Never needs a GPU.
    """
    from tritium.frontend.jit import JITFunction
    from tritium.frontend.specialize import parse_signature

    if stop not in STAGES:
        raise ArgumentError(f"unknown stage '{stop}'; choose one of {', '.join(STAGES)}")
    options = Options(num_warps=num_warps, num_stages=num_stages, debug=debug, arch=arch)
    dumper = Dumper(dump_dir)
    spec = None
    if isinstance(fn, (str, os.PathLike)) and str(fn).endswith((".ttir", ".mlir")):
        module, name, runtime = _load_ttir_file(pathlib.Path(fn), dumper)
        from tritium.passes.pipeline import run_ttir_passes

        run_ttir_passes(module, options, dump=dumper.module, timings=timings)
    elif isinstance(fn, JITFunction):
        spec = parse_signature(fn, signature, constexprs)
        module, _ = make_ttir(fn, spec, options, dumper, timings)
        name, runtime = fn.__name__, list(spec.types)
    else:
        raise ArgumentError(
            f"tritium.compile needs a @tritium.jit function or a .ttir file, got {fn!r}"
        )
    asm = {"ttir": print_ir(module, locations=True)}
    divisibility = param_divisibility(module)
    if stop != "ttir":
        asm.update(lower(module, options, dumper, timings, stop))
    kernel = _finish(name, asm, None, runtime, options, False, divisibility, spec)
    warn_spills(fn, kernel.metadata)
    return kernel


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
