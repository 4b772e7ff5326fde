"""Upstream's `triton.compile(ASTSource(fn, signature, constexprs, attrs), target, options)`
and the `CompiledKernel` it returns, served by tritium's compiler and launcher: what torch's
inductor calls for every kernel it generates (torch/_inductor/runtime/triton_heuristics.py).

    src = ASTSource(fn, {"in_ptr0": "*fp32", "xnumel": "i32", "XBLOCK": "constexpr"},
                    {"XBLOCK": 128}, {(0,): [["tt.divisibility", 16]]})
    binary = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    binary._init_handles()                    # load it: n_regs, n_spills, function, run
    binary.run(gx, gy, gz, stream, binary.function, binary.packed_metadata,
               launch_metadata, enter_hook, exit_hook, in_ptr0, xnumel, 128)

`ASTSource` becomes tritium's KernelSpec (frontend/signature.py's `parse_signature`: the
signature's types, `tt.divisibility = 16` from `attrs` as `:16`, `constexprs` as constants)
and `compile` is the JIT's own `compiler.compile_jit` (the kernel cache, TRITIUM_DUMP_DIR),
for the target's arch (`GPUTarget("cuda", 90, 32)` -> sm_90a, as a launch on that GPU).
A "cpu" target (inductor's `cpu_backend = "triton"`) stops at TTIR: its `run` is tritium's
interpreter on the CPU tensors.

`CompiledKernel` keeps upstream's attribute names: `src`, `hash`, `name`, `asm`,
`metadata` (a namedtuple: `name`, `num_warps`, `num_ctas`, `num_stages`, `shared`,
`cluster_dims`, `target`, `hash`, ...), `packed_metadata`, and after `_init_handles()`:
`module` (tritium's CompiledKernel), `function` (0: the runner holds the loaded function),
`n_regs`, `n_spills`, `n_max_threads` and `run`, whose arguments are upstream's
(grid, stream, function, packed metadata, launch metadata, the enter / exit hooks, then
every parameter of the kernel in order, constexprs too; the launch takes the runtime ones).
The class attributes `launch_enter_hook` / `launch_exit_hook` are called around a launch
when set, with `launch_metadata(grid, stream, *args)`. A pickled kernel (inductor
drops `module`, `function` and `run` from the state it pickles) is rebuilt from `asm` and
its metadata by `_init_handles()`.
"""

from __future__ import annotations

import hashlib
from collections import namedtuple

from tritium.errors import ArgumentError, NotSupportedError
from tritium.frontend.kernel_source import KernelSource
from tritium.options import Options
from tritium.triton_backends import as_target, make_backend

KernelMetadata = namedtuple(
    "KernelMetadata",
    "name hash target arch num_warps num_ctas num_stages shared cluster_dims debug "
    "backend_name enable_fp_fusion launch_cooperative_grid launch_pdl tritium_version",
)


class ASTSource:
    """Upstream's `ASTSource(fn, signature, constexprs=None, attrs=None)`: a `@jit`
    function with its parameters' types (name -> "*fp32" / "i32" / "constexpr"), constexpr
    values (keyed by name or by upstream's index path `(i,)`) and per-parameter attributes
    (`{(i,): [["tt.divisibility", 16]]}`)."""

    def __init__(self, fn, signature, constexprs=None, attrs=None):
        if not isinstance(fn, KernelSource):
            raise NotSupportedError(
                f"triton.compile(ASTSource({fn!r}, ...)): tritium compiles @triton.jit "
                "functions (served by tritium's jit)"
            )
        self.fn = fn
        self.ext = "ttir"
        self.name = fn.__name__
        self.signature = dict(signature)
        for k in self.signature:
            if not isinstance(k, str):
                raise ArgumentError(f"ASTSource: signature keys are parameter names, got {k!r}")
        self.constants: dict[tuple, object] = {}
        for k, v in (constexprs or {}).items():
            if isinstance(k, str):
                if k not in fn.param_index:
                    raise ArgumentError(f"ASTSource: `{fn.__name__}` has no parameter `{k}`")
                k = (fn.param_index[k],)
            self.constants[tuple(k)] = v
        self.attrs = dict(attrs or {})

    def hash(self) -> str:
        sig = [v for _, v in sorted(self.signature.items())]
        consts = sorted((k, repr(v)) for k, v in self.constants.items())
        attrs = sorted((k, repr(v)) for k, v in self.attrs.items())
        key = f"{self.fn.fingerprint()}-{attrs}-{sig}-{consts}"
        return hashlib.sha256(key.encode()).hexdigest()

    def kernel_spec(self):
        """tritium's KernelSpec of this source (frontend/signature.py's parse_signature)."""
        from tritium.frontend.signature import parse_signature

        names = self.fn.arg_names
        constexprs = {}
        for path, value in self.constants.items():
            if len(path) != 1 or not 0 <= path[0] < len(names):
                raise NotSupportedError(
                    f"ASTSource of `{self.name}`: constant at {path!r}: tritium takes "
                    "constexprs of whole parameters (no tuple elements)"
                )
            constexprs[names[path[0]]] = value
        divisible = set()
        for path, attrs in self.attrs.items():
            path = (path,) if isinstance(path, int) else tuple(path)
            for attr, value in attrs:
                if attr == "tt.divisibility" and value == 16 and len(path) == 1:
                    divisible.add(names[path[0]])
        signature = {
            n: t + (":16" if n in divisible else "")
            for n, t in self.signature.items()
            if n not in constexprs and t != "constexpr"
        }
        return parse_signature(self.fn, signature, constexprs)


def compile(src, target=None, options=None, _env_vars=None):
    """Upstream's `triton.compile(src, target=None, options=None)` for an ASTSource: the
    kernel compiled by tritium for `target` (default: the current GPU), as upstream's
    `CompiledKernel`. A "cpu" target compiles to TTIR for the interpreter."""
    from tritium import compiler
    from tritium.runtime.driver import active

    if not isinstance(src, ASTSource):
        raise NotSupportedError(
            f"triton.compile({src!r}): tritium compiles an ASTSource(fn, signature, ...); "
            "for a .ttir file use tritium.compile(path)"
        )
    target = as_target(target if target is not None else active.get_current_target())
    backend = make_backend(target)
    opts = backend.parse_options(dict(options or {}))
    interpret = target.backend == "cpu"
    if interpret:
        arch = Options.arch  # (the interpreter runs TTIR: the arch changes nothing)
    else:
        arch = compiler.target_arch(f"sm_{int(target.arch)}")
    tritium_options = Options(
        num_warps=opts.num_warps,
        num_stages=opts.num_stages,
        num_ctas=opts.num_ctas,
        debug=bool(opts.debug),
        arch=arch,
    )
    kernel = compiler.compile_jit(src.fn, src.kernel_spec(), tritium_options, interpret=interpret)
    return CompiledKernel(src, kernel, target, opts)


class CompiledKernel:
    """Upstream's CompiledKernel over tritium's (module docstring)."""

    launch_enter_hook = None
    launch_exit_hook = None

    def __init__(self, src: ASTSource, kernel, target, options):
        self.src = src
        self.name = kernel.name
        self.asm = kernel.asm  # (tritium's AsmDict: `asm["sass"]` disassembles on first read)
        digest = f"{src.hash()}-{options.hash()}-{target}-{kernel.metadata.arch}"
        self.hash = hashlib.sha256(digest.encode()).hexdigest()
        m = kernel.metadata
        self.metadata = KernelMetadata(
            name=kernel.name,
            hash=self.hash,
            target=target,
            arch=m.arch,
            num_warps=m.num_warps,
            num_ctas=options.num_ctas,
            num_stages=options.num_stages,
            shared=m.shared,
            cluster_dims=tuple(options.cluster_dims),
            debug=m.debug,
            backend_name=target.backend,
            enable_fp_fusion=options.enable_fp_fusion,
            launch_cooperative_grid=options.launch_cooperative_grid,
            launch_pdl=options.launch_pdl,
            tritium_version=m.tritium_version,
        )
        self.packed_metadata = (m.num_warps, options.num_ctas, m.shared)
        # what rebuilds tritium's kernel after pickling (picklable: texts and dataclasses)
        self._tritium_state = (kernel.metadata, list(kernel.runtime_params), kernel.interpret)
        self.module = kernel
        self.function = None
        self.run = None

    def _init_handles(self) -> None:
        """Load the kernel (once): `function`, `n_regs`, `n_spills`, `n_max_threads`, `run`."""
        if self.run is not None:
            return
        kernel = self.module if self.module is not None else self._rebuild()
        self.module = kernel
        kernel._init_handles()
        self.n_regs, self.n_spills = kernel.n_regs, kernel.n_spills
        self.n_max_threads = kernel.n_max_threads
        runner = self.src.fn.runner_for(kernel)
        self.function = 0  # (the runner holds the loaded function: `run` ignores this one)

        def run(grid_0, grid_1, grid_2, stream, function, packed_metadata, launch_metadata,
                enter_hook, exit_hook, *args):  # fmt: skip
            if enter_hook is not None:
                enter_hook(launch_metadata)
            runner((grid_0, grid_1, grid_2), args, stream)
            if exit_hook is not None:
                exit_hook(launch_metadata)

        self.run = run

    def _rebuild(self):
        """tritium's CompiledKernel from the pickled state: the TTIR re-parsed for the
        interpreter; texts and metadata for the GPU."""
        from tritium import compiled_kernel

        metadata, runtime_params, interpret = self._tritium_state
        module = None
        if interpret:
            from tritium.ir.parser import parse_module

            module = parse_module(self.asm["ttir"], f"<{self.name}>")
        kernel = compiled_kernel.CompiledKernel(
            self.name, self.asm, metadata, runtime_params, module, interpret=interpret
        )
        kernel.arg_names = list(self.src.fn.arg_names)
        return kernel

    def launch_metadata(self, grid, stream, *args) -> dict:
        """What `launch_enter_hook` gets: the kernel's name, grid, stream and metadata."""
        return {"name": self.name, "grid": tuple(grid), "stream": stream,
                "metadata": self.metadata}  # fmt: skip

    def __getitem__(self, grid):
        """`binary[grid](*args)`: launch with every parameter in order (upstream's form)."""
        self._init_handles()
        grid = tuple(grid) + (1,) * (3 - len(tuple(grid)))

        def runner(*args, stream=None):
            hook = type(self).launch_enter_hook
            meta = self.launch_metadata(grid, stream, *args) if hook is not None else None
            self.run(*grid, stream, self.function, self.packed_metadata, meta, hook,
                     type(self).launch_exit_hook, *args)  # fmt: skip

        return runner

    def __repr__(self) -> str:
        return f"<CompiledKernel {self.name} for {self.metadata.target} (tritium)>"


__all__ = ["ASTSource", "CompiledKernel", "KernelMetadata", "compile"]
