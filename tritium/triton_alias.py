"""`import triton` served by tritium, opt-in, as `pymysql.install_as_MySQLdb()` serves
`import MySQLdb`: a Triton library runs unchanged on tritium.

    import tritium
    tritium.install_as_triton()       # before anything imports triton
    import liger_kernel ...           # its `import triton` / `import triton.language as tl`
                                      # get tritium's jit, autotune, tl, ...

    python -m tritium run script.py ARGS...     # the same for a program one does not edit
    python -m tritium run -m package.module ARGS...

`install()` puts a finder first on `sys.meta_path` that answers the module names in
`MODULES` (`triton`, `triton.language`, `triton.language.core`, `triton.runtime.autotuner`,
...). Each is a fresh module object whose attributes are tritium's own objects
(`triton.jit is tritium.jit`, `triton.language.load is tritium.language.load`): nothing is
copied or wrapped, and tritium's own modules are not touched. A name that tritium cannot
back with a real implementation is left out, so a library's `hasattr(triton, ...)` or
`try: from triton... import ...` probe takes its fallback path; `missing()` lists those
upstream names. Any other `triton.X` is not found (the alias packages have an empty
`__path__`), so an installed upstream triton is never half-loaded beside the alias.

`triton.__version__` is `UPSTREAM_VERSION` ("3.6.0"): the upstream release whose language
and host API tritium implements. Libraries gate code on it (fla: `>= 3.4.0`, Liger:
`>= 3.0.0` picks `triton.language.extra.libdevice`); tritium reports the release it
follows, not an older one, so they take the paths written for that release, including
skipping workarounds for bugs of older upstream releases that tritium never had.
`triton.__tritium_version__` is tritium's own version: the way for a program to tell.
`TRITIUM_TRITON_VERSION=3.7.1` (read at the first `import triton`) reports that release
instead, opt-in, for a library that refuses a path on a version range because of an
upstream bug tritium does not have (fla refuses its gated chunked backward on Hopper for
3.4 <= version < 3.7.1: an upstream miscompile); docs/triton-compat.md has the cases.

Rules:
* installing twice is harmless (the second call does nothing);
* if a real upstream `triton` (or any `triton.*` not served here) is already imported,
  `install()` raises a TritiumError and replaces nothing: call it before the first
  `import triton`, or run the program with `python -m tritium run`;
* an upstream triton installed but not yet imported is shadowed for this process;
* `TRITON_INTERPRET=1` (upstream's switch) turns tritium's interpreter on, as
  `TRITIUM_INTERPRET=1` does, when set at install time;
* `uninstall()` removes the finder and the alias modules (tests use it);
* torch (>= 2.11) takes a successful `import triton` as triton installed: `import
  torch._dynamo` then needs `triton.compiler.compiler` (CompiledKernel, triton_key),
  OutOfResources, ... (served), and `torch.compile`'s inductor compiles its generated
  kernels with `triton.compile(ASTSource, target, options)` and launches them through
  the CompiledKernel's `run` (served by tritium/triton_compile.py, with the backend
  registry of tritium/triton_backends.py: "nvidia" and "cpu", the interpreter);
* `install()` keeps inductor's kernel compiles in this process and off the static
  launcher (INDUCTOR_SETTINGS, unless the environment already sets them): a compile
  worker process would import an upstream triton, or none, and the static launcher
  loads upstream's cubin files from upstream's cache directory, which tritium does not
  write.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import re
import sys
import types
from collections.abc import Callable

from tritium.errors import TritiumError

UPSTREAM_VERSION = "3.6.0"

# alias module -> {attribute: source}. A source is "module:attr" (tritium's object;
# left out when tritium has no such attribute), "module:*" (every public name of that
# module; `__all__` when it has one), or a function of the alias module building the value
# from tritium's objects. Child modules (`triton.language` under `triton`) become
# attributes of their parent after these.
_CF = "tritium.frontend.builtins.base:constexpr_function"


def _constexpr_fn(path: str) -> Callable[[types.ModuleType], object]:
    """A tritium host function made a `tl.constexpr_function` (as upstream's `triton.cdiv`
    is one): usable on the host (an int) and inside a kernel on constexprs."""

    def build(_module):
        return _resolve(_CF)(_resolve(path))

    return build


def _constexpr_0(_module):
    return _resolve("tritium.frontend.core:constexpr")(0)


def _itself(module):
    return module


def _backends_fn(builder: str) -> Callable[[types.ModuleType], object]:
    """A function of the alias module itself (`driver.set_active`), from triton_backends."""

    def build(module):
        return _resolve(f"tritium.triton_backends:{builder}")(module)

    return build


MODULES: dict[str, dict[str, str | Callable]] = {
    "triton": {
        "jit": "tritium.jit.jit:jit",
        "JITFunction": "tritium.jit.jit:JITFunction",
        "KernelInterface": "tritium.jit.jit:KernelInterface",
        "autotune": "tritium.jit.autotune:autotune",
        "Config": "tritium.jit.autotune:Config",
        "heuristics": "tritium.jit.heuristics:heuristics",
        "constexpr_function": _CF,
        "cdiv": _constexpr_fn("tritium:cdiv"),
        "next_power_of_2": _constexpr_fn("tritium:next_power_of_2"),
        "reinterpret": "tritium.runtime.reinterpret:reinterpret",
        "set_allocator": "tritium.runtime.global_scratch:set_allocator",
        "CompilationError": "tritium.errors:CompilationError",
        "OutOfResources": "tritium.errors:OutOfResources",
        "TritonError": "tritium.errors:TritiumError",
        "compile": "tritium.triton_compile:compile",
    },
    "triton.errors": {"TritonError": "tritium.errors:TritiumError"},
    "triton.language": {"*": "tritium.language:*"},
    "triton.language.core": {
        "*": "tritium.language:*",
        "CONSTEXPR_0": _constexpr_0,
        "_unwrap_if_constexpr": "tritium.frontend.core:unwrap",
        "_constexpr_to_value": "tritium.frontend.core:unwrap",
        "builtin": "tritium.frontend.builtins.base:builtin",
        "get_int_dtype": "tritium.frontend.standard:get_int_dtype",
        "is_builtin": "tritium.frontend.builtins.base:is_builtin",
    },
    # upstream's standard.py names, from tritium.language; `_log2` (inductor's sort helper)
    "triton.language.standard": {"_log2": "tritium.frontend.standard:_log2"},
    "triton.language.math": {"*": "tritium.frontend.math_namespace:*"},
    "triton.language.extra": {},
    "triton.language.extra.libdevice": {"*": "tritium.language.extra.libdevice:*"},
    "triton.language.extra.cuda": {},
    "triton.language.extra.cuda.libdevice": {"*": "tritium.language.extra.cuda.libdevice:*"},
    "triton.runtime": {
        "Autotuner": "tritium.jit.autotune:Autotuner",
        "Config": "tritium.jit.autotune:Config",
        "Heuristics": "tritium.jit.heuristics:Heuristics",
        "autotune": "tritium.jit.autotune:autotune",
        "heuristics": "tritium.jit.heuristics:heuristics",
        "JITFunction": "tritium.jit.jit:JITFunction",
        "KernelInterface": "tritium.jit.jit:KernelInterface",
        "OutOfResources": "tritium.errors:OutOfResources",
        "reinterpret": "tritium.runtime.reinterpret:reinterpret",
    },
    "triton.runtime.jit": {
        "jit": "tritium.jit.jit:jit",
        "JITFunction": "tritium.jit.jit:JITFunction",
        "KernelInterface": "tritium.jit.jit:KernelInterface",
        "KernelParam": "tritium.jit.jit:KernelParam",
        "constexpr_function": _CF,
        "ConstexprFunction": _CF,  # (the class: upstream's decorator makes one)
        "reinterpret": "tritium.runtime.reinterpret:reinterpret",
    },
    "triton.runtime.autotuner": {
        "Autotuner": "tritium.jit.autotune:Autotuner",
        "Config": "tritium.jit.autotune:Config",
        "Heuristics": "tritium.jit.heuristics:Heuristics",
        "autotune": "tritium.jit.autotune:autotune",
        "heuristics": "tritium.jit.heuristics:heuristics",
        "OutOfResources": "tritium.errors:OutOfResources",
    },
    "triton.runtime.cache": {"triton_key": "tritium.runtime.cache:triton_key"},
    # upstream's `triton.runtime.driver` attribute is its driver object (`.active`); here
    # the module is that object, and `triton.runtime.driver.driver` is the module itself
    "triton.runtime.driver": {
        "active": "tritium.triton_backends:active",
        "driver": _itself,
        "set_active": _backends_fn("set_active_of"),
        "reset_active": _backends_fn("reset_active_of"),
    },
    "triton.testing": {
        "do_bench": "tritium.testing:do_bench",
        "perf_report": "tritium.testing:perf_report",
        "Benchmark": "tritium.testing:Benchmark",
        "Mark": "tritium.testing:Mark",
        "assert_close": "tritium.testing:assert_close",
    },
    "triton.compiler": {
        "ASTSource": "tritium.triton_compile:ASTSource",
        "CompiledKernel": "tritium.triton_compile:CompiledKernel",
        "CompilationError": "tritium.errors:CompilationError",
        "compile": "tritium.triton_compile:compile",
        "triton_key": "tritium.runtime.cache:triton_key",
        "make_backend": "tritium.triton_backends:make_backend",
    },
    "triton.compiler.compiler": {
        "ASTSource": "tritium.triton_compile:ASTSource",
        "CompiledKernel": "tritium.triton_compile:CompiledKernel",
        "compile": "tritium.triton_compile:compile",
        "triton_key": "tritium.runtime.cache:triton_key",
        "make_backend": "tritium.triton_backends:make_backend",
    },
    "triton.compiler.errors": {"CompilationError": "tritium.errors:CompilationError"},
    "triton.backends": {
        "backends": "tritium.triton_backends:backends",
        "Backend": "tritium.triton_backends:Backend",
    },
    "triton.backends.compiler": {"GPUTarget": "tritium.runtime.driver:GPUTarget"},
}

# upstream 3.6's `triton.language.standard` functions (served when tritium.language has them)
STANDARD = (
    "argmax argmin bitonic_merge cdiv cumprod cumsum flip interleave max min ravel "
    "reduce_or sigmoid softmax sort sum swizzle2d topk xor_sum zeros zeros_like"
).split()

# upstream 3.6's public names, module by module, for `missing()` (and docs/triton-compat.md)
UPSTREAM: dict[str, list[str]] = {
    "triton": (
        "AsyncCompileMode CompilationError Config FutureKernel InterpreterError JITFunction "
        "KernelInterface MockTensor OutOfResources TensorWrapper TritonError autotune cdiv "
        "compile constexpr_function heuristics jit knobs language must_use_result "
        "next_power_of_2 reinterpret runtime set_allocator testing tools"
    ).split(),
    "triton.language": (
        "PropagateNan TRITON_MAX_TENSOR_NUMEL load_tensor_descriptor store_tensor_descriptor "
        "make_tensor_descriptor tensor_descriptor abs add advance arange argmax argmin "
        "associative_scan assume atomic_add atomic_and atomic_cas atomic_max atomic_min "
        "atomic_or atomic_xchg atomic_xor bfloat16 bitonic_merge block_type broadcast "
        "broadcast_to cat cast cdiv ceil clamp condition const constexpr constexpr_type cos "
        "cumprod cumsum debug_barrier device_assert device_print div_rn dot dot_scaled dtype "
        "erf exp exp2 expand_dims extra fdiv flip float16 float32 float64 float8e4b15 "
        "float8e4nv float8e4b8 float8e5 float8e5b16 floor fma full gather histogram "
        "inline_asm_elementwise interleave int1 int16 int32 int64 int8 join load log log2 "
        "make_block_ptr map_elementwise math max max_constancy max_contiguous maximum min "
        "minimum multiple_of num_programs pair_uniform_to_normal permute philox philox_impl "
        "pi32_t pointer_type program_id rand rand4x randint randint4x randn randn4x range "
        "ravel reduce reduce_or reshape rsqrt slice sigmoid sin softmax sort split sqrt "
        "sqrt_rn static_assert static_print static_range store sum swizzle2d target_info "
        "tensor topk trans tuple uint16 uint32 uint64 uint8 uint_to_uniform_float umulhi "
        "view void where xor_sum zeros zeros_like"
    ).split(),
    "triton.runtime": (
        "Autotuner Config Heuristics InterpreterError JITFunction KernelInterface MockTensor "
        "OutOfResources RedisRemoteCacheBackend RemoteCacheBackend TensorWrapper autotune "
        "driver heuristics reinterpret"
    ).split(),
    "triton.runtime.driver": ["active", "default", "reset_active", "set_active"],
    "triton.testing": (
        "Benchmark Mark assert_close do_bench do_bench_cudagraph get_dram_gbps "
        "get_max_simd_tflops get_max_tensorcore_tflops nvsmi perf_report set_gpu_clock"
    ).split(),
    "triton.compiler": (
        "ASTSource CompilationError CompiledKernel compile make_backend triton_key"
    ).split(),
}


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds and fills the alias modules (one instance, first on sys.meta_path)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MODULES:
            return None
        package = any(n.startswith(fullname + ".") for n in MODULES)
        return importlib.machinery.ModuleSpec(fullname, self, is_package=package)

    def create_module(self, spec):
        return None  # a plain module object

    def exec_module(self, module: types.ModuleType) -> None:
        _fill(module)

    def __repr__(self) -> str:
        return "<tritium's triton alias>"


_finder: _Finder | None = None


def install() -> None:
    """Serve `import triton` (and its submodules in `MODULES`) with tritium from now on in
    this process (see the module docstring for the rules)."""
    global _finder
    foreign = [n for n, m in list(sys.modules.items()) if _is_triton(n) and not is_alias(m)]
    if foreign:
        where = getattr(sys.modules.get("triton"), "__file__", None) or foreign[0]
        raise TritiumError(
            f"install_as_triton(): an upstream triton is already imported ({where}); "
            "tritium will not replace modules a program already holds. Call "
            "tritium.install_as_triton() before anything imports triton, or run the "
            "program with `python -m tritium run SCRIPT.py`"
        )
    if _finder is not None:
        return
    from tritium import config

    config.adopt_triton_interpret()
    _configure_inductor()
    _finder = _Finder()
    sys.meta_path.insert(0, _finder)


# torch inductor's switches (environment variable, its config attribute, value) install()
# sets: compiles in this process, no static launcher (module docstring)
INDUCTOR_SETTINGS = (
    ("TORCHINDUCTOR_COMPILE_THREADS", "compile_threads", 1),
    ("TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER", "use_static_cuda_launcher", False),
)


def _configure_inductor() -> None:
    """INDUCTOR_SETTINGS: as environment variables (read when torch._inductor.config is
    imported) where unset, and on the config itself when torch imported it already."""
    from tritium import config

    inductor = sys.modules.get("torch._inductor.config")
    for var, attr, value in INDUCTOR_SETTINGS:
        if config.set_default(var, str(int(value))) and inductor is not None:
            setattr(inductor, attr, value)


def reported_version() -> str:
    """`triton.__version__`: UPSTREAM_VERSION, or TRITIUM_TRITON_VERSION when set (a
    release number, checked here so a typo fails at `import triton`)."""
    from tritium import config

    version = config.triton_version()
    if version is None:
        return UPSTREAM_VERSION
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise TritiumError(
            f"TRITIUM_TRITON_VERSION={version!r}: give an upstream release number such as "
            "3.7.1 (the triton.__version__ the alias reports)"
        )
    return version


def uninstall() -> None:
    """Stop serving `import triton`: remove the finder and the alias modules."""
    global _finder
    if _finder is not None and _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    _finder = None
    for name, module in list(sys.modules.items()):
        if _is_triton(name) and is_alias(module):
            del sys.modules[name]


def installed() -> bool:
    return _finder is not None


def is_alias(module) -> bool:
    """`module` is one of the alias modules (not upstream's)."""
    spec = getattr(module, "__spec__", None)
    return isinstance(getattr(spec, "loader", None), _Finder)


def missing() -> dict[str, list[str]]:
    """Upstream 3.6's public names the alias leaves out, by module (what tritium lacks)."""
    out = {}
    for name, names in UPSTREAM.items():
        served = set(_values(name, types.ModuleType(name))) | {
            c.rpartition(".")[2] for c in _children(name)
        }
        lacking = sorted(n for n in names if n not in served)
        if lacking:
            out[name] = lacking
    return out


# --------------------------------------------------------------------------- building


def _is_triton(name: str) -> bool:
    return name == "triton" or name.startswith("triton.")


def _children(name: str) -> list[str]:
    return [n for n in MODULES if n.rpartition(".")[0] == name]


def _resolve(path: str):
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def _public(module_name: str) -> dict:
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    # submodules of the source are not copied: the alias has its own (triton.language.math)
    return {
        n: getattr(module, n)
        for n in names
        if hasattr(module, n) and not isinstance(getattr(module, n), types.ModuleType)
    }


def _values(name: str, module: types.ModuleType) -> dict:
    """The attributes alias module `name` gets from tritium (children not included)."""
    out: dict = {}
    if name == "triton.language.standard":
        tl = _public("tritium.language")
        out.update({n: tl[n] for n in STANDARD if n in tl})
    for attr, source in MODULES[name].items():
        if callable(source):
            out[attr] = source(module)
        elif source.endswith(":*"):
            out.update(_public(source[:-2]))
        else:
            mod, _, member = source.partition(":")
            value = getattr(importlib.import_module(mod), member, _MISSING)
            if value is not _MISSING:
                out[attr] = value
    return out


_MISSING = object()


def _fill(module: types.ModuleType) -> None:
    import tritium

    name = module.__name__
    module.__doc__ = (
        f"upstream's `{name}`, served by tritium {tritium.__version__} "
        "(tritium.install_as_triton; see docs/triton-compat.md)"
    )
    module.__tritium_version__ = tritium.__version__
    if name == "triton":
        module.__version__ = reported_version()
    for attr, value in _values(name, module).items():
        setattr(module, attr, value)
    for child in _children(name):
        setattr(module, child.rpartition(".")[2], importlib.import_module(child))


__all__ = [
    "INDUCTOR_SETTINGS",
    "MODULES",
    "STANDARD",
    "UPSTREAM",
    "UPSTREAM_VERSION",
    "install",
    "installed",
    "is_alias",
    "missing",
    "reported_version",
    "uninstall",
]
