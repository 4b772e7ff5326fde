"""The `tritium` command line.

    tritium compile FILE.py[:KERNEL] --signature "*fp32:16,*fp32:16,*fp32:16,i32" \\
        --constexpr BLOCK_SIZE=1024 [--num-warps 4] [--arch sm_89] [--emit STAGE] [-o OUT] \\
        [--dump-dir DIR] [--time-passes] [--meta K.json] [--c-header K]
    tritium compile kernel.ttir --emit ptx -o kernel.ptx
    tritium run SCRIPT.py [ARGS...]          # run a program with `import triton` served by
    tritium run -m MODULE [ARGS...]          # tritium (docs/triton-compat.md)

Exit status: 0 on success, 1 when the kernel does not compile, 2 for usage mistakes.
No Python traceback is shown unless --traceback or TRITIUM_DEBUG=1.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import pathlib
import sys
import traceback

EXT_STAGE = {
    ".ttir": "ttir",
    ".ttgir": "ttgir",
    ".ll": "llir",
    ".llir": "llir",
    ".ptx": "ptx",
    ".cubin": "cubin",
    ".sass": "sass",
}


class UsageError(Exception):
    """A mistake on the command line (exit status 2)."""


class LoadError(Exception):
    """The kernel's .py file could not be imported (exit status 1)."""


def _import_error(path: pathlib.Path, e: BaseException) -> LoadError:
    """`FILE:LINE: error: ...` for an exception raised while importing `path`, naming the
    deepest line of the user's own files (not tritium's or importlib's)."""
    if isinstance(e, SyntaxError):
        where = f"{e.filename}:{e.lineno}:{e.offset or 1}" if e.lineno else str(path)
        return LoadError(f"{where}: error: {e.msg} (while importing {path})")
    here = pathlib.Path(__file__).resolve().parent
    where = str(path)
    for frame in traceback.extract_tb(e.__traceback__):
        f = pathlib.Path(frame.filename)
        if f.is_file() and here not in f.resolve().parents and "importlib" not in frame.filename:
            where = f"{frame.filename}:{frame.lineno}"
    what = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    return LoadError(f"{where}: error: importing {path} failed: {what}")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tritium", description="tritium: a pure-Python compiler for the Triton kernel language"
    )
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser(
        "compile", help="compile a kernel to TTIR, TTGIR, LLVM IR, PTX, cubin or SASS"
    )
    c.add_argument("source", help="FILE.py[:KERNEL] (a @tritium.jit function) or FILE.ttir")
    c.add_argument(
        "--signature",
        "-s",
        default=None,
        help='runtime parameter types in order, e.g. "*fp32:16,*fp32:16,i32" (:16 = divisible by 16, :1 = equal to 1)',
    )
    c.add_argument(
        "--constexpr",
        "-c",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="value of a tl.constexpr parameter (repeatable)",
    )
    c.add_argument("--num-warps", type=int, default=4)
    c.add_argument("--num-stages", type=int, default=3)
    c.add_argument(
        "--arch",
        "--target",
        dest="arch",
        default="sm_89",
        help="sm_80, sm_86, sm_89 (default), sm_90 or sm_90a (Hopper: wgmma for tl.dot)",
    )
    c.add_argument(
        "--emit",
        choices=["ttir", "ttgir", "llir", "ptx", "cubin", "sass"],
        default=None,
        help="the stage to output (default: from -o's extension, else ptx)",
    )
    c.add_argument("-o", "--output", default=None, help="write the output here instead of stdout")
    c.add_argument(
        "--meta",
        default=None,
        metavar="FILE.json",
        help="also write the kernel's launch metadata (name, parameters, block size, shared "
        "bytes, arch) as JSON, for tritium.load_ptx",
    )
    c.add_argument(
        "--c-header",
        default=None,
        metavar="NAME",
        help="also write NAME.h and NAME.c: the PTX embedded in C with load_<kernel>() and "
        "launch_<kernel>(stream, grid, args...) on the CUDA driver API",
    )
    c.add_argument(
        "--dump-dir",
        default=None,
        help="write the source and the IR after every pass here, numbered in order",
    )
    c.add_argument(
        "--time-passes", action="store_true", help="print the time of every stage and pass"
    )
    c.add_argument(
        "--debug",
        action="store_true",
        help="compile with debug checks (device asserts, i32 overflow checks)",
    )
    c.add_argument("--traceback", action="store_true", help="show Python tracebacks for errors")
    r = sub.add_parser(
        "run",
        help="run a Python program with `import triton` served by tritium",
        description="Run SCRIPT.py (or -m MODULE) as __main__ after "
        "tritium.install_as_triton(): the program and the libraries it imports get tritium "
        "for `import triton`. TRITON_INTERPRET=1 or TRITIUM_INTERPRET=1 runs the kernels "
        "in the interpreter.",
    )
    r.add_argument("-m", dest="module", metavar="MODULE", help="run a module, as python -m")
    r.add_argument(
        "program",
        nargs=argparse.REMAINDER,
        metavar="SCRIPT.py ARGS",
        help="the script (unless -m) and its arguments",
    )
    return p


def cmd_run(args) -> int:
    """`tritium run`: the program runs as `python SCRIPT.py ARGS` / `python -m MODULE ARGS`
    would, its own errors and exit status untouched, with `import triton` served by tritium."""
    import runpy

    from tritium import triton_alias

    if args.module is None and not args.program:
        raise UsageError("tritium run: give a script (tritium run SCRIPT.py ARGS...) or -m MODULE")
    if args.module is None and not pathlib.Path(args.program[0]).is_file():
        raise UsageError(f"tritium run: no such script: {args.program[0]}")
    triton_alias.install()
    if args.module is not None:
        sys.argv = [args.module, *args.program]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(args.module, run_name="__main__", alter_sys=True)
        return 0
    script, *rest = args.program
    sys.argv = [script, *rest]
    sys.path.insert(0, str(pathlib.Path(script).resolve().parent))
    runpy.run_path(script, run_name="__main__")
    return 0


def _parse_constexpr(item: str):
    import tritium.language as tl

    name, sep, raw = item.partition("=")
    if not sep or not name.strip():
        raise UsageError(f"--constexpr expects NAME=VALUE, got '{item}'")
    raw = raw.strip()
    dtype = getattr(tl, raw.removeprefix("tl."), None)
    if isinstance(dtype, tl.dtype):
        return name.strip(), dtype
    try:
        return name.strip(), ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        raise UsageError(
            f"--constexpr {name}: '{raw}' is not a number, a bool or a dtype name"
        ) from None


def _load_kernel(source: str):
    from tritium.jit.jit import JITFunction

    path_str, _, kernel = source.partition(":") if not source.startswith(":") else (source, "", "")
    if len(path_str) == 1 and kernel and kernel[0] in "/\\":  # Windows drive letter
        path_str, _, kernel = source[2:].partition(":")
        path_str = source[:2] + path_str
    path = pathlib.Path(path_str)
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    if path.suffix in (".ttir", ".mlir"):
        if kernel:
            raise UsageError("a .ttir file holds one kernel; drop the :KERNEL suffix")
        return str(path)
    if path.suffix != ".py":
        raise UsageError(f"{path}: expected a .py file with @tritium.jit kernels or a .ttir file")
    sys.path.insert(0, str(path.resolve().parent))
    sys.path.insert(0, str(path.resolve().parent.parent))
    spec = importlib.util.spec_from_file_location(f"_tritium_user_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:
        raise _import_error(path, e) from e
    kernels = {
        k: v
        for k, v in vars(module).items()
        if isinstance(v, JITFunction) and v.fn.__module__ == module.__name__
    }
    if kernel:
        if kernel not in kernels:
            raise UsageError(
                f"{path} has no @tritium.jit function named '{kernel}'; it has: {', '.join(sorted(kernels)) or 'none'}"
            )
        return kernels[kernel]
    if not kernels:
        raise UsageError(f"{path} defines no @tritium.jit function")
    if len(kernels) != 1:
        raise UsageError(
            f"{path} defines {len(kernels)} @tritium.jit functions ({', '.join(sorted(kernels))}); name one with {path}:KERNEL"
        )
    return next(iter(kernels.values()))


def _emit(args) -> str:
    """The stage to output: --emit, else -o's extension, else ptx."""
    if args.emit is not None:
        return args.emit
    return EXT_STAGE.get(pathlib.Path(args.output).suffix, "ptx") if args.output else "ptx"


def _stage(args) -> str:
    """The stage to compile to: the one output, the PTX for --meta / --c-header (the
    artifacts describe the PTX)."""
    emit = _emit(args)
    if (args.meta or args.c_header) and emit in ("ttir", "ttgir", "llir"):
        return "ptx"
    return emit


def cmd_compile(args) -> int:
    back_end = None
    if args.source.partition(":")[0].endswith(".py"):
        from tritium.back_end_worker import BackEnd

        # the back half of the compiler loads in a forked worker meanwhile: importing the
        # kernel's file and the frontend is this process's (back_end_worker.py)
        back_end = BackEnd.start(args.arch, _stage(args))
    try:
        return _compile(args, back_end)
    finally:
        if back_end is not None:
            back_end.close()


def _compile(args, back_end) -> int:
    from tritium import compiler
    from tritium.options import Options

    fn = _load_kernel(args.source)
    constexprs = dict(_parse_constexpr(c) for c in args.constexpr)
    emit = _emit(args)
    timings: dict | None = {} if args.time_passes else None
    if isinstance(fn, str):
        if args.signature or constexprs:
            raise UsageError(
                "--signature and --constexpr apply to Python kernels, not to .ttir input"
            )
    stop = _stage(args)
    options = Options(
        num_warps=args.num_warps, num_stages=args.num_stages, arch=args.arch, debug=args.debug
    )
    if isinstance(fn, str):  # a .ttir file
        kernel = compiler.compile(
            fn, options=options, dump_dir=args.dump_dir, timings=timings, stop=stop
        )
    else:
        from tritium.frontend.signature import parse_signature

        spec = parse_signature(fn, args.signature, constexprs)
        kernel = compiler.compile_kernel(
            fn, spec, options, dump_dir=args.dump_dir, timings=timings, stop=stop,
            back_end=back_end,
        )  # fmt: skip
    if emit not in kernel.asm:
        print(
            f"tritium: error: cannot produce {emit}: {'ptxas' if emit == 'cubin' else 'nvdisasm or cuobjdump'} is not installed",
            file=sys.stderr,
        )
        return 1
    out = kernel.asm[emit]
    if args.output:
        mode = "wb" if isinstance(out, bytes) else "w"
        with open(args.output, mode) as f:
            f.write(out)
    elif isinstance(out, bytes):
        raise UsageError(f"{emit} is binary; write it to a file with -o")
    else:
        sys.stdout.write(out if out.endswith("\n") else out + "\n")
    if args.meta or args.c_header:
        _write_aot(args, kernel, constexprs)
    if timings is not None:
        total = sum(timings.values())
        print(f"{'stage / pass':<40} {'ms':>9}", file=sys.stderr)
        for name, secs in timings.items():
            print(f"{name:<40} {secs * 1e3:>9.2f}", file=sys.stderr)
        print(f"{'total':<40} {total * 1e3:>9.2f}", file=sys.stderr)
    return 0


def _write_aot(args, kernel, constexprs: dict) -> None:
    """--meta and --c-header: the JSON metadata and the C wrapper of the kernel's PTX."""
    from tritium.aot.c_wrapper import write_c_wrapper
    from tritium.runtime.metadata import kernel_metadata, write_metadata

    meta = kernel_metadata(kernel, signature=args.signature, constexprs=constexprs)
    if args.meta:
        write_metadata(meta, args.meta)
    if args.c_header:
        write_c_wrapper(meta, kernel.asm["ptx"], args.c_header)


def main(argv=None) -> int:
    from tritium import config
    from tritium.dataclass_bytecode import dataclass_bytecode
    from tritium.errors import ArgumentError, CompilationError, TritiumError
    from tritium.gc_pause import gc_paused

    parser = _parser()
    args = parser.parse_args(argv)
    show_tb = getattr(args, "traceback", False) or config.debug()
    if args.command == "run":
        try:
            return cmd_run(args)  # the program's own exceptions propagate as Python's would
        except UsageError as e:
            print(f"tritium: error: {e}", file=sys.stderr)
            return 2
    try:
        # importing the kernel's file, the compiler and compiling
        with gc_paused(), dataclass_bytecode():
            return cmd_compile(args)
    except (UsageError, ArgumentError) as e:
        if show_tb:
            raise
        print(f"tritium: error: {e}", file=sys.stderr)
        return 2
    except (CompilationError, LoadError) as e:
        if show_tb:
            raise
        print(str(e), file=sys.stderr)
        return 1
    except TritiumError as e:
        if show_tb:
            raise
        print(f"tritium: error: {e}", file=sys.stderr)
        return 1
    except NotImplementedError as e:
        if show_tb:
            raise
        print(f"tritium: error: not supported yet: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a bug in tritium: say so, without a traceback
        if show_tb:
            raise
        print(
            f"tritium: internal error: {type(e).__name__}: {e}\n"
            "This is a bug in tritium; rerun with --traceback to see where it happened.",
            file=sys.stderr,
        )
        return 1


def entry() -> None:
    """The `tritium` command (`python -m tritium`, the console script): `main()`, then exit.

    After `tritium compile` the process ends at once (`os._exit`, the output streams
    flushed first) instead of through Python's finalization, which tears down every module
    and object one by one: with xDSL's and tritium's classes and the compiled IR loaded
    that was ~0.1 CPU s, a fifth of the command (docs/performance.md). The compile has
    written and closed its files by then and starts no thread or child that outlives it.
    `tritium run` exits as Python does: the program's atexit handlers and finalizers run.

    For `tritium compile`, numpy's OpenBLAS gets one thread (unless OPENBLAS_NUM_THREADS
    is set): a kernel's file that imports numpy would otherwise start a BLAS thread per
    core, each spinning a while, for math this process never does
    (~0.05 CPU s of `import numpy` on the 2-core machine, more with more cores).

    And `tritium compile` runs with the cyclic garbage collector off throughout: the
    compile pauses it anyway (gc_pause.py), and turning it back on before `os._exit` made
    the next allocation collect everything the process had allocated, which was all still
    in the young generation (13-22 ms on the 2-core machine), to free memory about to be
    returned whole."""
    argv = sys.argv[1:]
    compiling = argv[:1] == ["compile"]
    if compiling:
        import gc

        from tritium import config

        gc.disable()
        config.set_default("OPENBLAS_NUM_THREADS", "1")
    code = main(argv)
    if compiling:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe: nothing more can reach it
                code = code or 1
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    entry()
