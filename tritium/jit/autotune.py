"""`@tritium.autotune`: time a few launch configurations of a kernel per problem size and
launch the fastest, as upstream's `triton.autotune`.

    @tritium.autotune(
        configs=[
            tritium.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, num_warps=8, num_stages=3),
            tritium.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=4, num_stages=4),
        ],
        key=["M", "N", "K"],
    )
    @tritium.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, ...): ...

    grid = lambda meta: (tritium.cdiv(M, meta["BLOCK_M"]) * tritium.cdiv(N, meta["BLOCK_N"]),)
    matmul_kernel[grid](a, b, c, M, N, K)     # the config's constexprs and options are added

The first launch for each value of the `key` arguments (the dtypes of the array
arguments, and the device the launch runs on: GPUs of a machine may differ, and each is
timed on its own) compiles every config, times each, and caches the fastest; later
launches with that key use it at once (`kernel.cache`, `kernel.best_config`,
`kernel.configs_timings`). The configs compile concurrently, each in a process of its own
(`compile_pool.py`; `TRITIUM_COMPILE_WORKERS` caps them), through the compiled-kernel
cache; they are then timed one at a time on the launch's GPU, as a serial sweep times
them, so the choice is the same. A config whose compilation or launch fails (too much
shared memory, say) is timed as infinitely slow. `TRITIUM_PRINT_AUTOTUNING=1` (or
upstream's `TRITON_PRINT_AUTOTUNING`) prints each sweep's key, time and choice;
`kernel.bench_time` and `kernel.compile_time` keep the last sweep's seconds.

Timing is CUDA events on the launch stream (`cuEventRecord` through tritium's driver;
torch's events when cuda-python is missing): a warm-up run, then as many runs as fit in
`rep` milliseconds, and the median. Arguments that are numpy arrays (which a launch
copies to the GPU and back) are staged on the GPU once for the whole tuning, each at the
same address modulo 256 as on the host (so every config compiles the specialisation the
real launch uses), and only kernel time is measured; the final launch then runs on the
numpy arrays as usual.

`reset_to_zero=[names]` zeroes those arguments before every timed run and once more
before the real launch; `restore_value=[names]` puts their contents back after every
timed run (both act on the staged copies of numpy arguments, which the timing cannot
change otherwise). `prune_configs_by={"early_config_prune": f, "perf_model": g,
"top_k": k}` and `do_bench=callable(fn) -> ms` work as upstream's. `Config(...,
pre_hook=f)` calls `f(args)` before each launch with that config.

In the interpreter (`TRITIUM_INTERPRET=1` or `@jit(interpret=True)`) nothing is timed:
the first config that `prune_configs_by` keeps is used.
"""

from __future__ import annotations

import contextlib
import inspect
import statistics
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tritium import config
from tritium.errors import ArgumentError, CompilationError, LaunchError
from tritium.jit import compile_pool
from tritium.jit.jit import JITFunction, KernelInterface
from tritium.runtime import array_kinds, driver, timing


class Config:
    """One launch configuration: constexpr values plus `num_warps`, `num_stages` (and
    `num_ctas`, `maxnreg`), as upstream's `triton.Config`."""

    def __init__(
        self,
        kwargs: dict,
        num_warps: int = 4,
        num_stages: int = 3,
        num_ctas: int = 1,
        maxnreg: int | None = None,
        pre_hook: Callable | None = None,
    ):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self) -> dict:
        """The keyword arguments a launch with this config gets."""
        out = dict(self.kwargs)
        out["num_warps"] = self.num_warps
        out["num_stages"] = self.num_stages
        if self.num_ctas != 1:
            out["num_ctas"] = self.num_ctas
        if self.maxnreg is not None:
            out["maxnreg"] = self.maxnreg
        return out

    def _key(self) -> tuple:
        return tuple(sorted(self.all_kwargs().items())) + (self.pre_hook,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        return ", ".join(f"{k}: {v}" for k, v in self.all_kwargs().items())

    def __repr__(self) -> str:
        return f"Config({self})"


# --------------------------------------------------------------------------- timing


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, stream=None) -> float:
    """Median milliseconds of `fn()` (which launches GPU work on `stream`), by CUDA events
    recorded on that stream (tritium.runtime.timing)."""
    clock = timing.clock(stream, prefer_torch=False)
    fn()
    clock.synchronize()
    start, end = clock.event(), clock.event()
    start.record()
    for _ in range(5):
        fn()
    end.record()
    estimate = max(start.elapsed_time(end) / 5, 1e-4)
    for _ in range(max(1, int(warmup / estimate))):
        fn()
    n = max(1, min(1000, int(rep / estimate)))
    marks = [(clock.event(), clock.event()) for _ in range(n)]
    for s, e in marks:
        s.record()
        fn()
        e.record()
    return statistics.median(s.elapsed_time(e) for s, e in marks)


# --------------------------------------------------------------------------- staging


class _DeviceView:
    """A numpy array's copy on the GPU, at the host address modulo 256, reachable through
    `__cuda_array_interface__` (the launcher passes its address; read-only when the host
    array is, so a kernel that writes it is refused while tuning as at the real launch)."""

    ALIGN = 256

    def __init__(self, host: np.ndarray):
        from tritium.runtime import memory

        self.memory = memory  # kept: the finalizer may run when module globals are gone
        self.dtype = host.dtype
        self.shape = host.shape
        self.host = host
        lo, hi = array_kinds.host_span(host)
        self.offset = host.ctypes.data - lo  # where element 0 is within the span
        self.nbytes = hi - lo
        self.alloc = memory.mem_alloc(self.nbytes + lo % self.ALIGN) if self.nbytes else 0
        self.base = self.alloc + lo % self.ALIGN
        self.lo = lo
        self.upload()

    @property
    def ptr(self) -> int:
        return self.base + self.offset if self.nbytes else 0

    @property
    def __cuda_array_interface__(self) -> dict:
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.ptr, not self.host.flags.writeable),  # a read-only array stays so
            "strides": self.host.strides,
            "version": 3,
        }

    def upload(self, src: bytes | None = None) -> None:
        if not self.nbytes:
            return
        if src is None:
            self.memory.memcpy_htod(self.base, self.lo, self.nbytes)
        else:
            buf = np.frombuffer(src, np.uint8)
            self.memory.memcpy_htod(self.base, buf.ctypes.data, self.nbytes)

    def download(self) -> bytes:
        out = np.empty(self.nbytes, np.uint8)
        if self.nbytes:
            self.memory.memcpy_dtoh(out.ctypes.data, self.base, self.nbytes)
        return out.tobytes()

    def zero(self) -> None:
        if self.nbytes:
            self.memory.memset_d8(self.base, 0, self.nbytes)

    def free(self) -> None:
        if self.alloc:
            self.memory.mem_free(self.alloc, quiet=True)
            self.alloc = 0


def _zero(x) -> None:
    if isinstance(x, _DeviceView):
        x.zero()
    else:
        array_kinds.zero(x)


def _save(x):
    return x.download() if isinstance(x, _DeviceView) else array_kinds.save(x)


def _restore(x, saved) -> None:
    if isinstance(x, _DeviceView):
        x.upload(saved)
    else:
        array_kinds.restore(x, saved)


# --------------------------------------------------------------------------- the tuner


class Autotuner(KernelInterface):
    """A `@tritium.jit` kernel with a list of configs to choose from (see the module doc).

    The constructor takes upstream's `triton.runtime.autotuner.Autotuner` arguments in
    upstream's order (`fn, arg_names, configs, key, reset_to_zero, restore_value, ...`), and
    the attributes and methods a subclass overrides keep upstream's names (`configs`,
    `keys`, `cache`, `nargs`, `prune_configs(kwargs)`, `run(*args, grid, **kwargs)`), so
    libraries that subclass upstream's Autotuner can subclass this one.
    `use_cuda_graph` (upstream times with CUDA graphs) and `cache_results` (upstream's
    on-disk cache of choices) are accepted and do not change what is chosen: tritium times
    with CUDA events and keeps choices in memory."""

    def __init__(
        self,
        fn,
        arg_names: Sequence[str],
        configs: Sequence[Config],
        key: Sequence[str],
        reset_to_zero: Sequence[str] | None = None,
        restore_value: Sequence[str] | None = None,
        pre_hook: Callable | None = None,
        post_hook: Callable | None = None,
        prune_configs_by: dict | None = None,
        warmup: float | None = None,
        rep: float | None = None,
        use_cuda_graph: bool = False,
        do_bench: Callable | None = None,
        cache_results: bool = False,
    ):
        if not isinstance(fn, JITFunction):
            raise ArgumentError(
                "@tritium.autotune decorates a @tritium.jit function (put it above)"
            )
        self.fn = fn
        self.base_fn = fn.fn  # upstream's name for the Python function
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.arg_names = list(arg_names)
        if self.arg_names != list(fn.arg_names):
            raise ArgumentError(
                f"Autotuner: arg_names {self.arg_names} are not {fn.__name__}'s parameters "
                f"{list(fn.arg_names)}"
            )
        self.configs = list(configs) or [Config({})]
        for c in self.configs:
            if not isinstance(c, Config):
                raise ArgumentError(f"autotune configs must be tritium.Config, got {c!r}")
        self.keys = self._key_names(key)
        self.reset_to_zero = self._names(reset_to_zero or (), "reset_to_zero")
        self.restore_value = self._names(restore_value or (), "restore_value")
        # upstream's hook attributes, which subclasses replace (fla's CachedAutotuner):
        # `pre_hook(nargs)` / `post_hook(nargs, exception)` run around each timed launch,
        # after tritium's own reset_to_zero / restore_value handling; `restore_copies` is
        # where upstream's default hooks keep the saved values
        self.pre_hook, self.post_hook = pre_hook, post_hook
        self.user_defined_pre_hook = pre_hook is not None
        self.user_defined_post_hook = post_hook is not None
        self.restore_copies: dict = {}
        prune = dict(prune_configs_by or {})
        self.early_config_prune = prune.pop("early_config_prune", None)
        self.perf_model = prune.pop("perf_model", None)
        self.configs_top_k = prune.pop("top_k", None)
        if prune:
            raise ArgumentError(f"prune_configs_by: unknown keys {sorted(prune)}")
        self.num_warmups = 25 if warmup is None else warmup
        self.num_reps = 100 if rep is None else rep
        self.use_cuda_graph, self.cache_results = use_cuda_graph, cache_results
        self.do_bench = do_bench
        self.nargs: dict | None = None  # the launch's arguments by name, while it runs
        self.cache: dict[tuple, Config] = {}
        self.best_config: Config | None = None
        self.configs_timings: dict[Config, float] | None = None
        self.bench_time: float | None = None  # seconds the last sweep took, compiles included
        self.compile_time: float | None = None  # of which compiling the configs together
        self._errors: dict[Config, Exception] = {}

    def _key_names(self, names: Sequence[str]) -> list[str]:
        """The key's parameter names; a name the kernel lacks is left out with a warning
        (upstream ignores it silently: its 08-grouped-gemm tutorial names one)."""
        names = [names] if isinstance(names, str) else list(names)
        for n in names:
            if n not in self.fn.param_index:
                warnings.warn(
                    f"autotune key: {self.fn.__name__} has no parameter named {n!r}; ignored",
                    stacklevel=4,
                )
        return [n for n in names if n in self.fn.param_index]

    def _names(self, names: Sequence[str], what: str) -> list[str]:
        names = [names] if isinstance(names, str) else list(names)
        for n in names:
            if n not in self.fn.param_index:
                raise ArgumentError(
                    f"autotune {what}: {self.fn.__name__} has no parameter named {n!r}"
                )
        return names

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"`{self.__name__}` is a tritium kernel: launch it with {self.__name__}[grid](...)"
        )

    # ------------------------------------------------------------------ launch
    def run(self, *args, grid, **kwargs):
        named = self._named(args, kwargs)
        taken = {k for c in self.configs for k in c.all_kwargs()} & set(kwargs)
        if taken:
            raise ArgumentError(
                f"{self.__name__}: {', '.join(sorted(taken))} come from the autotune configs; "
                "do not pass them to the launch"
            )
        if self._interpreting():
            # nothing to time in the interpreter: the first config pruning keeps
            self.nargs = named
            try:
                config = self.prune_configs(kwargs)[0]
            finally:
                self.nargs = None
        else:
            device = self.fn.launch_device([named.get(n) for n in self.arg_names])
            key = (*self._key(named), device)
            config = self.cache.get(key)
            if config is None:
                self.nargs = named
                try:
                    with _on(device):  # timed (and staged) on the launch's device
                        config = self._tune(args, kwargs, named, grid, device)
                finally:
                    self.nargs = None
                self.cache[key] = config
                self._report(key, config)
                full = {**named, **config.all_kwargs()}
                for name in self.reset_to_zero:
                    if full[name] is not None:
                        _zero(full[name])
        self.best_config = config
        if config.pre_hook is not None:
            config.pre_hook({**named, **config.all_kwargs()})
        # through kernel[grid]: a warm configuration launches on the generated fast path
        return self.fn[grid](*args, **kwargs, **config.all_kwargs())

    def _interpreting(self) -> bool:
        if self.fn.interpret is not None:
            return bool(self.fn.interpret)
        return config.interpret()

    def _named(self, args, kwargs) -> dict:
        if len(args) > len(self.arg_names):
            raise ArgumentError(
                f"{self.__name__}() takes {len(self.arg_names)} arguments, got {len(args)}"
            )
        named = dict(zip(self.arg_names, args))
        named.update({k: v for k, v in kwargs.items() if k in self.fn.param_index})
        return named

    def _key(self, named: dict) -> tuple:
        key = []
        for name in self.keys:
            v = named.get(name)
            key.append(_hashable(v))
        key += [str(v.dtype) for v in named.values() if hasattr(v, "dtype") and not _scalar(v)]
        return tuple(key)

    # ------------------------------------------------------------------ tuning
    def prune_configs(self, kwargs: dict) -> list[Config]:
        """The configs to time for this launch (upstream's signature: the launch's
        arguments by name are `self.nargs`, the other keywords `kwargs`)."""
        named = self.nargs or {}
        configs = self.configs
        if self.early_config_prune is not None:
            configs = list(self.early_config_prune(configs, named, **kwargs))
        if self.perf_model is not None and self.configs_top_k is not None:
            k = self.configs_top_k
            if isinstance(k, float) and k <= 1.0:
                k = int(len(configs) * k)
            est = {c: self.perf_model(**named, **kwargs, **c.all_kwargs()) for c in configs}
            configs = sorted(configs, key=est.__getitem__)[: max(1, k)]
        if not configs:
            raise ArgumentError(f"{self.__name__}: every autotune config was pruned")
        return configs

    def _tune(self, args, kwargs, named, grid, device: int) -> Config:
        start = time.perf_counter()
        self.bench_time = self.compile_time = None
        configs = self.prune_configs(kwargs)
        if len(configs) == 1:
            self.configs_timings = None
            return configs[0]
        staged = [_stage(a) for a in args]
        skw = {k: _stage(v) for k, v in kwargs.items()}
        snamed = self._named(staged, skw)
        try:
            self._compile_configs(configs, staged, skw, device)
            self.compile_time = time.perf_counter() - start
            timings = {c: self._bench(c, staged, skw, snamed, grid) for c in configs}
        finally:
            for v in (*staged, *skw.values()):
                if isinstance(v, _DeviceView):
                    v.free()
        self.bench_time = time.perf_counter() - start
        self.configs_timings = timings
        best = min(configs, key=timings.__getitem__)
        if timings[best] == float("inf"):
            raise self._errors[best]
        return best

    def _compile_configs(self, configs: list[Config], args, kwargs, device: int) -> None:
        """Compile the configs' kernels together (compile_pool.py) and hand them to the
        JITFunction, so the timed launches find them ready. Whatever does not compile
        here (an error, a kernel already compiled) is left to the launch, as before."""
        keys, requests = [], []
        for c in configs:
            try:
                pending = self.fn.pending_compile(args, {**kwargs, **c.all_kwargs()})
            except Exception:  # noqa: BLE001 - the timed launch reports it
                continue
            if pending is not None and pending[0] not in keys:
                keys.append(pending[0])
                requests.append(pending[1:])
        if compile_pool.workers_for(len(requests)) < 2:
            return  # nothing to overlap: the timed launches compile, one after another
        for key, kernel in zip(keys, compile_pool.compile_all(self.fn, requests)):
            if kernel is not None:
                self.fn.runners[key] = self.fn.runner_for(kernel, device)

    def _report(self, key: tuple, best: Config) -> None:
        """upstream's TRITON_PRINT_AUTOTUNING lines, for a sweep that ran."""
        if self.bench_time is None or not config.print_autotuning():
            return
        print(
            f"tritium autotuning for function {self.__name__},\nwith key as {key},\n"
            f"finished after {self.bench_time:.2f}s (compiling {self.compile_time:.2f}s),\n"
            f"best config selected: {best};",
            flush=True,
        )

    def _bench(self, config: Config, args, kwargs, named, grid) -> float:
        full = {**named, **config.all_kwargs()}
        stream = kwargs.get("stream")

        def call():
            saved = {n: _save(full[n]) for n in self.restore_value if full[n] is not None}
            for n in self.reset_to_zero:
                if full[n] is not None:  # an optional pointer left out (None) is skipped
                    _zero(full[n])
            if self.pre_hook is not None:
                self.pre_hook(full)
            if config.pre_hook is not None:
                config.pre_hook(full)
            self.fn.run(*args, grid=grid, **kwargs, **config.all_kwargs())
            if self.post_hook is not None:
                self.post_hook(full, exception=None)
            for n, v in saved.items():
                _restore(full[n], v)

        try:
            if self.do_bench is not None:
                return _user_bench(self.do_bench, call)
            return do_bench(call, self.num_warmups, self.num_reps, stream)
        except (CompilationError, LaunchError) as e:
            self._errors[config] = e
            return float("inf")


def _on(device: int):
    """The device's context for the tuning (its events, staged copies); nothing to make
    current without a GPU (a `do_bench` of the caller's times the configs then)."""
    if not driver.gpu_available():
        return contextlib.nullcontext()
    return driver.using(driver.opened(device))


def _user_bench(bench: Callable, call: Callable[[], None]) -> float:
    """Milliseconds from a user's `do_bench`: `bench(call) -> ms`, or upstream's
    `bench(call, quantiles=(0.5, 0.2, 0.8)) -> [median, p20, p80]` when it takes
    `quantiles` (as upstream calls it)."""
    try:
        params = inspect.signature(bench).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        params = {}
    if "quantiles" in params:
        result = bench(call, quantiles=(0.5, 0.2, 0.8))
        return float(result[0] if isinstance(result, (list, tuple)) else result)
    return float(bench(call))


def _stage(a):
    """A numpy array's copy on the GPU for the tuning (other arguments as they are)."""
    kind = array_kinds.kind_of(a)
    return _DeviceView(a) if kind is not None and kind.name == "numpy" else a


def _scalar(v) -> bool:
    return isinstance(v, np.generic) or (isinstance(v, np.ndarray) and v.ndim == 0)


def _hashable(v):
    if hasattr(v, "shape") and hasattr(v, "dtype") and not _scalar(v):
        return ("array", tuple(v.shape), str(v.dtype))
    try:
        hash(v)
    except TypeError:
        return repr(v)
    return v


def autotune(
    configs: Sequence[Config],
    key: Sequence[str],
    prune_configs_by: dict | None = None,
    reset_to_zero: Sequence[str] | None = None,
    restore_value: Sequence[str] | None = None,
    pre_hook: Callable | None = None,
    post_hook: Callable | None = None,
    warmup: float | None = None,
    rep: float | None = None,
    use_cuda_graph: bool = False,
    do_bench: Callable | None = None,
    cache_results: bool = False,
):
    """Decorate a `@tritium.jit` kernel to launch the fastest of `configs` for each value of
    the `key` arguments (see the module docstring); upstream's parameters, in upstream's
    order. `use_cuda_graph` and `cache_results` (upstream's on-disk cache of choices) are
    accepted and change nothing (see `Autotuner`)."""

    def decorator(fn) -> Autotuner:
        if not isinstance(fn, JITFunction):
            raise ArgumentError(
                "@tritium.autotune decorates a @tritium.jit function (put it above)"
            )
        return Autotuner(
            fn,
            fn.arg_names,
            configs,
            key,
            reset_to_zero,
            restore_value,
            pre_hook=pre_hook,
            post_hook=post_hook,
            prune_configs_by=prune_configs_by,
            warmup=warmup,
            rep=rep,
            use_cuda_graph=use_cuda_graph,
            do_bench=do_bench,
            cache_results=cache_results,
        )

    return decorator


__all__ = ["Autotuner", "Config", "autotune", "do_bench"]
