"""`CompiledKernel`: what compiling one specialisation gives (tritium/compiler.py makes it):
every stage's text in `asm` (an `AsmDict`: SASS disassembled on first read), the launch facts
in `metadata` (tritium/runtime/metadata.py), and how to run it: `ck[grid](*args)`,
`make_runner` (the JIT's fast path: tritium/jit/launch.py) on the GPU or in the interpreter,
and upstream's `n_regs` / `n_spills` / `n_max_threads`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tritium import config
from tritium.errors import ArgumentError, TritiumError
from tritium.runtime.metadata import KernelMetadata


class AsmDict(dict):
    """A CompiledKernel's `asm`, stage -> text (bytes for the cubin). As upstream's,
    `asm["sass"]` of a kernel compiled to its cubin only (the JIT's) disassembles the cubin
    on first access (nvdisasm / cuobjdump; KeyError without them): a launch never needs it."""

    def __missing__(self, key):
        if key != "sass" or "cubin" not in self:
            raise KeyError(key)
        from tritium.codegen.tools import disassemble

        sass = disassemble(self["cubin"])
        if sass is None:
            raise KeyError("sass: neither nvdisasm nor cuobjdump is installed")
        self["sass"] = sass
        return sass


@dataclass
class CompiledKernel:
    """The result of compiling one specialisation: every stage's text in `asm`,
    launch facts in `metadata`, and the runtime parameters in order."""

    name: str
    asm: dict = field(default_factory=dict)
    metadata: KernelMetadata = None  # type: ignore[assignment]
    runtime_params: list = field(default_factory=list)
    module: object = None  # the TTIR module (kept for the interpreter)
    interpret: bool = False
    arg_names: list = field(default_factory=list)  # every parameter, constexprs too (@jit)
    _function_attrs: dict | None = field(default=None, repr=False, compare=False)
    _runners: dict = field(default_factory=dict, repr=False, compare=False)  # [grid]'s, per device

    def __post_init__(self):
        if self.metadata is None:
            self.metadata = KernelMetadata(self.name)
        if type(self.asm) is not AsmDict:
            self.asm = AsmDict(self.asm)

    # upstream's CompiledKernel facts: `kernel._init_handles(); kernel.n_regs`
    def _init_handles(self) -> None:
        """Load the kernel on the current GPU (once) and read the function's registers,
        local memory and thread limit; without a GPU (or interpreted), ptxas's report."""
        if self._function_attrs is not None:
            return
        attrs = {"NUM_REGS": self.metadata.registers or 0, "LOCAL_SIZE_BYTES": 0}
        attrs["MAX_THREADS_PER_BLOCK"] = self.metadata.num_warps * self.metadata.threads_per_warp
        from tritium.runtime import driver

        image = self.asm.get("cubin") or self.asm.get("ptx")
        if not self.interpret and image is not None and driver.gpu_available():
            fn = driver.get_function(driver.load_module(image), self.name)
            attrs = {k: driver.function_attribute(fn, k) for k in attrs}
        self._function_attrs = attrs

    @property
    def n_regs(self) -> int:
        """Registers per thread (the loaded function's; ptxas's report without a GPU)."""
        self._init_handles()
        return self._function_attrs["NUM_REGS"]

    @property
    def n_spills(self) -> int:
        """Spilled 4-byte words per thread, as upstream counts them (local memory / 4)."""
        self._init_handles()
        spills = self._function_attrs["LOCAL_SIZE_BYTES"] // 4
        return spills or (self.metadata.spill_stores + 3) // 4

    @property
    def n_max_threads(self) -> int:
        self._init_handles()
        return self._function_attrs["MAX_THREADS_PER_BLOCK"]

    def make_runner(self, indices: list[int], device: int | None = None):
        """A `run(grid, values, stream)` callable taking all parameter values in order, that
        launches on GPU `device` (None: the device of the first launch's arguments, else the
        current one; `run.device` is the one given)."""
        if self.interpret:
            from tritium.runtime.array_kinds import as_host_array
            from tritium.runtime.interpreter import interpret
            from tritium.runtime.launcher import check_grid, check_writes, param_writes

            module, name = self.module, self.name
            writes = param_writes(self.metadata.params)

            def run_interpreted(grid, vals, stream):
                try:
                    check_grid(grid, name)  # the GPU's limits, before looping over programs
                    args = [as_host_array(vals[i]) for i in indices]
                    check_writes(name, writes, args)  # no read-only array is written
                    interpret(module, grid, args)
                except TritiumError as e:
                    raise user_error(e) from None

            run_interpreted.device = None  # type: ignore[attr-defined]
            run_interpreted.interpreted = True  # type: ignore[attr-defined]
            return run_interpreted
        from tritium.runtime.launcher import Launcher

        launcher = Launcher(self.asm, self.metadata, device=device)
        if indices == list(range(len(indices))):
            n = len(indices)

            def run(grid, vals, stream):  # (every value in order: no selection)
                try:
                    launcher(grid, vals[:n] if len(vals) != n else vals, stream)
                except TritiumError as e:
                    raise user_error(e) from None

        else:

            def run(grid, vals, stream):
                try:
                    launcher(grid, [vals[i] for i in indices], stream)
                except TritiumError as e:
                    raise user_error(e) from None

        run.launcher = launcher  # type: ignore[attr-defined]  (jit/launch.py)
        run.device = device  # type: ignore[attr-defined]
        run.interpreted = False  # type: ignore[attr-defined]
        return run

    def __getitem__(self, grid):
        """Launch an already-compiled kernel: `ck[grid](*runtime_args)`, or, as upstream's
        compiled kernels take them, every parameter in order (constexprs are ignored); on
        the device of its array arguments (else the current one), on torch's current stream
        there when the program uses torch and no stream is given."""
        n = len(self.runtime_params)
        flat = set(self.runtime_params) <= set(self.arg_names)  # (no tuple parameters)
        every = [self.arg_names.index(p) for p in self.runtime_params] if flat else []
        grid = tuple(grid) + (1,) * (3 - len(tuple(grid)))

        def launch(*args, stream=None):
            if len(args) != n and every and len(args) == len(self.arg_names):
                args = [args[i] for i in every]
            elif len(args) != n:  # (the Launcher's words, for the interpreter too)
                params = ", ".join(self.runtime_params)
                raise ArgumentError(
                    f"kernel '{self.name}' takes {n} arguments ({params}), got {len(args)}"
                )
            device = None
            if not self.interpret:
                from tritium.runtime import devices
                from tritium.runtime.array_kinds import arguments_device

                names = [str(p) for p in self.runtime_params]
                device = arguments_device(self.name, zip(names, args))
                device = devices.current_device() if device is None else device
                if stream is None:
                    stream = devices.current_stream(device)  # torch's, as upstream's launches
            runner = self._runners.get(device)
            if runner is None:
                runner = self._runners[device] = self.make_runner(list(range(n)), device)
            runner(grid, list(args), stream)

        return launch


def user_error(e: TritiumError) -> TritiumError:
    """`e` without the frames inside tritium (all of them with TRITIUM_DEBUG=1): a user
    sees their own call and the message, which names their kernel's FILE:LINE."""
    if config.debug():
        return e
    return e.with_traceback(None)
