"""The per-kernel launch function behind `kernel[grid](...)`: generated Python, so a launch
of an already compiled kernel costs little more than `cuLaunchKernel` itself.

`kernel[grid]` is `launch` bound to `grid` (`types.MethodType(launch, grid)`), where `launch` has the kernel's own
parameter list (Python binds the arguments, in C, and reports a wrong call as it would for
any function). The first call takes the general path (`JITFunction.run`: bind, key,
compile on a miss, launch through the `Launcher`). After it, `launch` is regenerated for
the argument *types* that call used: guards on those types, then everything the general
path would do, inlined. For `add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE)` called with
three torch tensors and an int:

    def launch(_t_grid, /, x_ptr=_M, y_ptr=_M, out_ptr=_M, n=_M, BLOCK_SIZE=_M, *_t_extra,
               stream=None, num_warps=None, num_stages=None, <other options>=None, **_t_kw):
        if _type(x_ptr) is _T0 and ... and _type(n) is _int and <other options> is None ...:
            _t_p0 = x_ptr.data_ptr(); _t_p1 = ...; _t_p2 = ...
            _t_key = (x_ptr.dtype, x_ptr.get_device(), _t_p0 & 15 == 0, ...,  # pointers
                      n == 1, n & 15 == 0, -2**31 <= n <= 2**31 - 1, n < 2**63,  # the int
                      BLOCK_SIZE, num_warps, num_stages, _t_interp.on)
            _t_e = _t_entries.get(_t_key)   # a raw launch entry (runtime/launch_entry.py)
            if _t_e is not None:
                <grid to 3 ints>; <pop a parameter buffer>; pack(buf, 0, _t_p0, _t_p1, _t_p2, n)
                stream = <torch's current stream on the entry's device> if stream is None
                cuLaunchKernel(function, gx, gy, gz, block, 1, 1, shared, stream, argv, 0)
                return
            return _t_miss(...)    # general path, then registers the entry for _t_key
        return _t_retype(...)      # general path, then maybe regenerates for the new types

The key is the general path's (`specialize.launch_key`), written from the same rules
(`specialize.RULES`, with the argument reads of `runtime/array_kinds.py`) for the kinds the
guards fix: pointer dtype, device (torch's `get_device()`, -1 for a CPU tensor, which so
never reaches the driver; a DeviceArray's `device`, cupy's `device.id`) and 16-byte
alignment, int width / ==1 / divisibility by 16, constexpr values, the options in it, the
interpreter switch (`config.INTERPRET.on`, kept current without reading the environment)
and, only when no argument carries a device, the current device. So an entry is only ever
used for arguments the general path would send to the same compiled kernel on the same
device, and arguments on two devices never find one (the general path refuses them).

The stream of a launch with `stream=None` is torch's current stream on the entry's device
(`torch._C._cuda_getCurrentRawStream(device)`, a C call, then a dict lookup for its
CUstream; a stream seen for the first time takes the general path once), as upstream's
launches: read when the arguments include torch tensors, or when the program had
initialised torch's CUDA state when the function was generated; else the legacy default
stream. A launch whose device's context is not current fails (CUDA_ERROR_INVALID_CONTEXT)
and takes the general path, which launches in that context (runtime/launcher.py).

Anything unusual (numpy arrays, which are staged; other options; a launch error; a bad
grid; a value struct cannot pack) takes the general path, which reports it. Each generated
layout has its own entries dict; after MAX_RETYPES regenerations a kernel keeps the last
layout.
"""

from __future__ import annotations

import inspect
import struct
import sys
import textwrap

from tritium import config
from tritium.errors import ArgumentError
from tritium.jit.specialize import CONSTEXPR, KINDS_NS, OPTION_PARTS, RULES, carries_device
from tritium.options import LAUNCH_OPTIONS
from tritium.runtime import devices, driver
from tritium.runtime.array_kinds import is_interned_dtype, kind_of
from tritium.runtime.launch_entry import build_entry

__all__ = ["build_launch"]

MAX_RETYPES = 4
# Options named in the generated signature (and in the fast key). The others arrive in
# **_t_kw, which sends the call down the general path.
OPTIONS = OPTION_PARTS

_MISSING = object()
# What a fast launch may raise that means "let the general path handle (and report) it".
_FALLBACK = (
    TypeError, ValueError, KeyError, IndexError, OverflowError, AttributeError, struct.error,
)  # fmt: skip
_KEY_ERRORS = (TypeError, RuntimeError, AttributeError)


def _arg_kind(v) -> str | None:
    """The specialize.RULES kind of `v` when generated code reads it inline (exact scalar
    types, and arrays the fast path reads: not numpy, which is staged), else None."""
    t = type(v)
    if v is None:
        return "none"
    if t is bool or t is int or t is float:
        return t.__name__
    kind = kind_of(v)
    return kind.name if kind is not None and kind.read_fast else None


# struct code for a candidate the kernel does not read (only ints equal to 1 are dropped)
_JUNK_CODE = {"int": "q", "bool": "?", "float": "d"}
_I64 = RULES["int", 0].parts[-1]


def _inline_tests(parts: list[str], values: tuple, ns: dict) -> str | None:
    """`parts[i] == values[i]` for all i, as cheap inline tests (None if a value is of a
    kind that cannot be tested inline). Constants go into the namespace `ns`."""
    tests = []
    for i, (expr, v) in enumerate(zip(parts, values)):
        if v is True and expr.endswith(_I64.format(a="")) and values[i - 1]:
            continue  # (the i64 test follows the i32 test) an i32 fits in 64 bits
        if v is False and expr.endswith(" == 1"):
            tests.append(f"{expr[:-5]} != 1")
        elif v is True:
            tests.append(f"({expr})")
        elif v is False:
            tests.append(f"not ({expr})")
        elif v is None:
            tests.append(f"{expr} is None")
        elif type(v) is int and -5 <= v <= 256:  # (devices, most constexprs)
            ns[f"_t_v{i}"] = v
            # CPython keeps one object per small int: `is` is the cheaper test, and an equal
            # value that is another object (a bool, a numpy int) takes the dict path
            tests.append(f"{expr} is _t_v{i}")
        elif type(v) in (int, float, str):
            ns[f"_t_v{i}"] = v
            tests.append(f"{expr} == _t_v{i}")
        elif is_interned_dtype(v):
            ns[f"_t_v{i}"] = v
            tests.append(f"{expr} is _t_v{i}")  # the same dtype object (else: the dict path)
        else:
            return None
    return " and ".join(tests)


def _grid_of(grid, meta: dict, opts: tuple) -> tuple:
    """A callable grid, called as `JITFunction.run` calls it: with every argument by name
    and the options given."""
    for name, v in zip(OPTIONS, opts):
        if v is not None:
            meta[name] = v
    g = grid(meta)
    return g if type(g) is tuple else tuple(g)


class _KernelLaunch:
    """The launch state of one JITFunction: its current generated function and entries."""

    def __init__(self, jf):
        self.jf = jf
        self.names = list(jf.arg_names)
        self.retypes = 0
        self.kinds: tuple | None = None  # argument kinds of the current generated function
        self.entries: dict = {}  # its fast key -> raw launch entry (or None: none possible)
        self.primary: tuple | None = None  # the key of the entry it checks inline
        self.fn = None
        clash = set(self.names) & (LAUNCH_OPTIONS | {"stream", "grid"})
        self.simple = bool(clash) or any(n.startswith("_t_") for n in self.names)
        self.params, self.ns = self._signature()

    # ------------------------------------------------------------- the general path
    def general(self, grid, stream, opts, extra, kw, values):
        jf = self.jf
        if extra:
            n = len(values)
            raise ArgumentError(
                f"{jf.__name__}() takes {n} arguments but {n + len(extra)} were given"
            )
        given = {k: v for k, v in zip(self.names, values) if v is not _MISSING}
        options = {k: v for k, v in zip(OPTIONS, opts) if v is not None}
        if stream is not None:
            options["stream"] = stream
        return jf.run(grid=grid, **given, **options, **kw)

    def miss(self, entries, candidates, key, grid, stream, opts, extra, kw, values):
        """General path for arguments of the generated function's types; remember how to
        launch that specialisation directly next time."""
        runner = self.general(grid, stream, opts, extra, kw, values)
        if key is not None and key not in entries:
            launcher = getattr(runner, "launcher", None)
            entry = build_entry(launcher, candidates) if launcher is not None else None
            entries[key] = entry
            if entry is not None and self.entries is entries and self.primary is None:
                # the first entry of this layout: regenerate with it checked inline
                self.primary = key
                self.fn = self.jf._launch = self._generate(self.kinds, entries, key)

    def retype(self, grid, stream, opts, extra, kw, values):
        """General path for arguments of other types; then generate for these types."""
        kinds = self._kinds(values)
        self.general(grid, stream, opts, extra, kw, values)
        if kinds is not None and kinds != self.kinds and not extra and self.retypes < MAX_RETYPES:
            self.retypes += 1
            self.kinds, self.entries, self.primary = kinds, {}, None
            self.fn = self.jf._launch = self._generate(kinds, self.entries, None)

    def _kinds(self, values) -> tuple | None:
        if self.simple or self.jf.interpret:
            return None
        kinds = []
        for v, k in zip(values, self.jf.kinds):
            if v is _MISSING:
                return None
            kind = "constexpr" if k == CONSTEXPR else _arg_kind(v)
            if kind is None:
                return None
            kinds.append((kind, None if kind in ("constexpr", "none") else type(v)))
        return tuple(kinds)

    # ------------------------------------------------------------- code generation
    def _signature(self):
        ns: dict = {"_M": _MISSING, "_t_self": self}
        params = []
        for i, p in enumerate(self.jf.signature.parameters.values()):
            if p.default is inspect.Parameter.empty:
                params.append(
                    f"{p.name}=_M"
                )  # missing ones go to the general path, which names them
            else:
                ns[f"_t_d{i}"] = p.default
                params.append(f"{p.name}=_t_d{i}")
        return params, ns

    def _source(self, body: str) -> str:
        sig = ", ".join(["_t_grid", "/", *self.params, "*_t_extra", "stream=None"])
        sig += "".join(f", {o}=None" for o in OPTIONS) + ", **_t_kw"
        return f"def launch({sig}):\n{body}"

    def generic(self):
        """The function before any launch (or for kernels the fast path does not serve)."""
        if self.simple:
            jf = self.jf

            def launch(grid, /, *args, **kwargs):
                return jf.run(*args, grid=grid, **kwargs)

            return self._named(launch)
        return self._compile(f"    return _t_self.retype({self._slow_args()})\n", dict(self.ns))

    def _slow_args(self) -> str:
        vals = ", ".join(self.names) + ("," if len(self.names) == 1 else "")
        return f"_t_grid, stream, ({', '.join(OPTIONS)}), _t_extra, _t_kw, ({vals})"

    def _generate(self, kinds, entries: dict, primary: tuple | None):
        """The launch function for argument `kinds`; with `primary` (a key in `entries`),
        that specialisation is recognised by inline tests instead of a dict lookup."""
        ns = dict(self.ns, **KINDS_NS)
        guards, reads, key, values, candidates = [], [], [], [], []
        carried = False
        for i, (name, (kind, tp)) in enumerate(zip(self.names, kinds)):
            rule = RULES[kind, self.jf.kinds[i]]
            carried = carried or carries_device(rule)
            if kind == "none":
                guards.append(f"{name} is None")
            elif kind != "constexpr":
                ns[f"_t_T{i}"] = tp
                guards.append(f"_type({name}) is _t_T{i}")
            if rule.pointer is not None:
                reads.append(f"_t_p{i} = {rule.pointer.format(a=name)}")
            key += rule.exprs(name, f"_t_p{i}")
            if kind in ("constexpr", "none"):
                continue
            values.append(f"_t_p{i}" if rule.pointer is not None else name)
            candidates.append((name, _JUNK_CODE.get(kind, "Q")))
        guards += ["not _t_extra", "not _t_kw"]
        key += list(OPTIONS)
        if self.jf.interpret is None:
            key.append("_t_interp.on")
        if not carried:  # as specialize.launch_key: the current device (none interpreted)
            ns["_t_curdev"] = devices.current_device
            key.append("_t_curdev()" if self.jf.interpret is False else
                       "(None if _t_interp.on else _t_curdev())")  # fmt: skip
        lookup = f"""\
            _t_key = ({", ".join(key)},)
            _t_e = _t_entries.get(_t_key)"""
        inline = _inline_tests(key, primary, ns) if primary is not None else None
        if inline is not None:
            ns["_t_primary"] = entries[primary]
            lookup = f"""\
            if {inline}:
                _t_e = _t_primary
                _t_key = None
            else:
{textwrap.indent(lookup, "    ")}"""
        stream0 = "_t_st"  # the entry's: the legacy default stream
        torch = sys.modules.get("torch")
        if any(k == "torch" for k, _ in kinds) and torch is not None:
            reader = devices.torch_stream_reader(torch)
        else:
            reader = devices.stream_reader()  # torch's, if the program uses it on the GPU
        if reader is not None:  # torch's current stream on the entry's device
            stream0 = "_t_sd[_t_tsr(_t_dev)]"
            ns.update(_t_tsr=reader, _t_sd=driver.streams)
        ns.update(
            _type=type, _tuple=tuple, _len=len, _t_entries=entries,
            _t_interp=config.INTERPRET.watch(), _t_keyerrs=_KEY_ERRORS, _t_fallback=_FALLBACK,
            _t_pad={2: (1,), 3: ()}, _t_gridfn=_grid_of, _t_drv=driver,
            _t_state=driver.launch_state, _t_cands=candidates,
        )  # fmt: skip
        meta = "{" + ", ".join(f"{n!r}: {n}" for n in self.names) + "}"
        ind = "\n" + " " * 12
        body = f"""\
    if {" and ".join(guards)}:
        try:
            {ind.join(reads) or "pass"}
{lookup}
        except _t_keyerrs:
            _t_e = _t_key = None
        if _t_e is not None:
            try:
                _t_g = _t_grid if _type(_t_grid) is _tuple else _t_gridfn(_t_grid, {meta}, ({", ".join(OPTIONS)}))
                _t_n = _len(_t_g)
                if _t_n == 1:
                    _t_x = _t_g[0]
                    _t_y = _t_z = 1
                elif _t_n == 3:
                    _t_x, _t_y, _t_z = _t_g
                else:
                    _t_x, _t_y, _t_z = _t_g + _t_pad[_t_n]
                _t_cu, _t_f, _t_pack, _t_pool, _t_bx, _t_shm, _t_st, _t_name, _t_dev = _t_e
                _t_s = {stream0} if stream is None else _t_drv.stream(stream)
                _t_b = _t_pool.pop()
                try:
                    _t_pack(_t_b[0], 0, {", ".join(values)})
                    (_t_err,) = _t_cu(_t_f, _t_x, _t_y, _t_z, _t_bx, 1, 1, _t_shm, _t_s, _t_b[1], 0)
                finally:
                    _t_pool.append(_t_b)
            except _t_fallback:
                _t_err = 1
            if not _t_err:
                _t_state.kernel = _t_name
                return
        return _t_self.miss(_t_entries, _t_cands, _t_key, {self._slow_args()})
    return _t_self.retype({self._slow_args()})
"""
        return self._compile(body, ns)

    def _compile(self, body: str, ns: dict):
        src = self._source(body)
        exec(compile(src, f"<tritium launch {self.jf.__name__}>", "exec"), ns)
        fn = self._named(ns["launch"])
        fn._tritium_source = src  # for tests and curious readers
        return fn

    def _named(self, fn):
        # Python names the function in binding errors ("add_kernel() got multiple values for
        # argument 'BLOCK'"): make that the kernel's name.
        fn.__name__ = fn.__qualname__ = self.jf.__name__
        return fn


def build_launch(jf):
    """The launch function for `jf` before its first launch (regenerated after it)."""
    state = _KernelLaunch(jf)
    state.fn = state.generic()
    return state.fn
