"""The specialisation key: what a launch's arguments say about the kernel to compile,
written once for both launch paths.

As upstream: an array argument becomes a pointer to its dtype, marked
`tt.divisibility = 16` when its address is 16-byte aligned; a Python int is `i32` when it
fits, else `i64` (`u64` past 2**63), is marked divisible by 16 when it is, and becomes a
constant when it equals 1; a float is `fp32`; a bool is `i1`; `None` is a constexpr.
Subclasses count as their base (upstream's rules test `isinstance`): `np.float64` is a
Python float, so it is `fp32` too; every other numpy scalar (`np.float32`, `np.int64`,
`np.bool_`, ...) is refused, as upstream refuses it.

`RULES` says, per argument kind, which facts are keyed, each as a Python expression over
`{a}` (the argument) and `{p}` (its address, read once):

| kind | keyed | compiled as |
|---|---|---|
| an array (array_kinds: torch, cupy, DeviceArray, numpy, CAI) | its dtype; its device (not numpy: torch's `get_device()`, -1 on the CPU); `{p} & 15 == 0` | `*<dtype>`, `tt.divisibility = 16` when aligned; the device picks where it loads and runs |
| `int` | `== 1`; `& 15 == 0`; fits i32; fits i64 | the constant 1, else i32 / i64 / u64, divisible by 16 |
| `int`, `do_not_specialize` | fits i32; fits i64 | i32 / i64 / u64 |
| an array, `do_not_specialize` | its dtype (and device) | `*<dtype>` |
| `float` (also `np.float64`), `bool`, `None` | (the kind itself) | fp32, i1, the constant None |
| a `tl.constexpr` parameter (or a `constexpr` value, a `@jit` function) | the value | a constant |
| a tuple (also nested) | each element's kind and facts, by these rules | one leaf per element, named `t.0`, `t.1.2`, ... |

then the options `num_warps` and `num_stages` (None when not given), when the kernel
does not fix `interpret`, TRITIUM_INTERPRET (`config.INTERPRET.on`), and, when no
argument's kind carries a device (scalars, numpy arrays), the current device
(runtime/devices.py; None when interpreting). So a key names one device: a runner, and a
fast-path entry, launch on that device only.

Both paths read the same text: the general path (`launch_key`, in `JITFunction.run`)
through functions compiled from it, and the generated launch function (launch.py) inline,
for the argument kinds its guards fix. So for arguments the fast path serves,

    launch_key(...) == (the kinds, the fast path's key)               (tests/jit/test_specialize.py)

and `build_spec` derives the KernelSpec from exactly those facts: arguments with one key
compile to one kernel. Other options (`arch`, `debug`, ...) join the general path's key
only, after the rest; the fast path sends launches that give them to the general path.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tritium import config
from tritium.dtype_names import dtype_to_triton, unsupported_dtype
from tritium.errors import ArgumentError
from tritium.frontend import core, param_annotations
from tritium.frontend.builtins import is_builtin
from tritium.frontend.core import constexpr
from tritium.frontend.kernel_source import KernelSource
from tritium.frontend.ttir import KernelSpec
from tritium.options import IGNORED_LAUNCH_OPTIONS
from tritium.runtime.array_kinds import EXPRESSION_NAMES, KINDS, kind_of

__all__ = [
    "CONSTEXPR",
    "NO_SPECIALIZE",
    "OPTION_PARTS",
    "RULES",
    "RUNTIME",
    "KeyRule",
    "build_spec",
    "carries_device",
    "int_signature",
    "launch_key",
    "rule_for",
]

# how a parameter is declared (JITFunction.kinds)
RUNTIME, CONSTEXPR, NO_SPECIALIZE = 0, 1, 2

# options in every key (the generated function takes them as keywords; None: not given)
OPTION_PARTS = ("num_warps", "num_stages")

ALIGNED = "{p} & 15 == 0"
IS_ONE = "{a} == 1"
DIV16 = "{a} & 15 == 0"
FITS_I32 = "-0x80000000 <= {a} <= 0x7FFFFFFF"
FITS_I64 = "{a} <= 0x7FFFFFFFFFFFFFFF"


@dataclass(frozen=True)
class KeyRule:
    """What is keyed for one kind of argument: `parts` (expressions over `{a}` and `{p}`),
    named by `names`; `pointer` is the address expression `{p}` stands for (arrays)."""

    kind: str
    parts: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    pointer: str | None = None
    read: Any = field(init=False, repr=False, compare=False)  # the parts, as a function

    def __post_init__(self):
        ptr = f"    p = {self.pointer.format(a='a')}\n" if self.pointer else ""
        body = ", ".join(part.format(a="a", p="p") for part in self.parts)
        ns: dict = {}
        exec(f"def read(a):\n{ptr}    return ({body}{',' if body else ''})\n", dict(KINDS_NS), ns)
        object.__setattr__(self, "read", ns["read"])

    def exprs(self, arg: str, ptr: str) -> list[str]:
        """The parts as inline code for argument variable `arg` whose address is in `ptr`."""
        return [part.format(a=arg, p=ptr) for part in self.parts]


def _tuple_key(t: tuple) -> tuple:
    """A tuple argument's part of the key: per element, its kind and its facts."""
    out = []
    for v in t:
        rule = RULES[value_kind(v), RUNTIME]
        out.append((rule.kind, *rule.read(v)))
    return tuple(out)


# names the rules' expressions use (the array kinds', the tuple key)
KINDS_NS = {**EXPRESSION_NAMES, "_tuple_key": _tuple_key}


def _array_rule(kind, spec: int) -> KeyRule:
    parts, names = [kind.dtype], ["dtype"]
    if kind.device is not None:
        parts.append(kind.device)
        names.append("device")
    if spec != NO_SPECIALIZE:
        parts.append(ALIGNED)
        names.append("aligned")
    return KeyRule(kind.name, tuple(parts), tuple(names), kind.pointer)


def _rules() -> dict[tuple[str, int], KeyRule]:
    out = {}
    for spec in (RUNTIME, NO_SPECIALIZE):
        for kind in KINDS.values():
            out[kind.name, spec] = _array_rule(kind, spec)
        out["float", spec] = KeyRule("float")
        out["bool", spec] = KeyRule("bool")
        out["none", spec] = KeyRule("none")
        out["constexpr", spec] = KeyRule("constexpr", ("{a}",), ("value",))
        # as upstream, a tuple's elements are specialised as ordinary arguments
        out["tuple", spec] = KeyRule("tuple", ("_tuple_key({a})",), ("elements",))
    out["int", RUNTIME] = KeyRule(
        "int", (IS_ONE, DIV16, FITS_I32, FITS_I64), ("is_one", "div16", "i32", "i64")
    )
    out["int", NO_SPECIALIZE] = KeyRule("int", (FITS_I32, FITS_I64), ("i32", "i64"))
    out["constexpr", CONSTEXPR] = KeyRule("constexpr", ("{a}",), ("value",))
    return out


# (argument kind, how the parameter is declared) -> KeyRule
RULES = _rules()

_SCALARS = {int: "int", float: "float", bool: "bool", type(None): "none"}


def value_kind(v) -> str:
    """The RULES kind of argument `v` (ArgumentError for what cannot be passed)."""
    kind = _SCALARS.get(type(v))
    if kind is not None:
        return kind
    array = kind_of(v)
    if array is not None:
        return array.name
    if isinstance(v, constexpr) or isinstance(v, KernelSource) or is_builtin(v):
        return "constexpr"  # as upstream, a @jit function (or a tl builtin) is a constant
    if isinstance(v, tuple):
        return "tuple"
    if isinstance(v, np.generic) and not isinstance(v, float):
        raise ArgumentError(
            f"cannot pass a numpy.{type(v).__name__} to a kernel (upstream Triton refuses "
            "numpy scalars too, except np.float64, a Python float, which is fp32): pass "
            "int(x), float(x) or bool(x)"
        )
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, numbers.Integral):
        return "int"
    if isinstance(v, numbers.Real):
        return "float"
    raise ArgumentError(f"cannot pass a {type(v).__name__} to a kernel")


def rule_for(v, spec: int) -> KeyRule:
    """The KeyRule of argument `v` for a parameter declared as `spec`."""
    if spec == CONSTEXPR:
        return RULES["constexpr", CONSTEXPR]
    return RULES[value_kind(v), spec]


def carries_device(rule: KeyRule) -> bool:
    """Arguments of `rule`'s kind say which device they are on (arrays other than numpy)."""
    return "device" in rule.names


def launch_key(specs, vals, opts: dict, keyed_interpret: bool, current_device) -> tuple:
    """The general path's key of a launch: `(kinds, parts)`, then the other options.
    `specs[i]` is how parameter i is declared (RUNTIME, CONSTEXPR, NO_SPECIALIZE);
    `keyed_interpret`: the kernel does not fix `interpret`, so TRITIUM_INTERPRET is keyed;
    `current_device()`: the device to key when no argument's kind carries one."""
    kinds = []
    parts: list = []
    carried = False
    for v, spec in zip(vals, specs):
        rule = rule_for(v, spec)
        kinds.append(rule.kind)
        parts += rule.read(v)
        carried = carried or carries_device(rule)
    parts += [opts.get(o) for o in OPTION_PARTS]
    if keyed_interpret:
        parts.append(config.interpret())
    if not carried:
        parts.append(current_device())
    key: tuple = (tuple(kinds), tuple(parts))
    rest = tuple(sorted((k, v) for k, v in opts.items() if k not in _NOT_IN_REST))
    return key + (rest,) if rest else key


# the stream is not part of what is compiled; upstream's ignored options neither
_NOT_IN_REST = frozenset(OPTION_PARTS) | {"stream"} | IGNORED_LAUNCH_OPTIONS


def hashable_key(key: tuple) -> tuple:
    """`key` with lists (a list-valued constexpr) as tuples, so that it can index a dict."""
    if isinstance(key, list | tuple):
        return tuple(hashable_key(k) for k in key)
    return key


# --------------------------------------------------------------------------- KernelSpec


def int_signature(v: int) -> str:
    if -(2**31) <= v < 2**31:
        return "i32"
    if -(2**63) <= v < 2**63:
        return "i64"
    if 2**63 <= v < 2**64:
        return "u64"
    raise ArgumentError(f"integer argument {v} does not fit in 64 bits")


def _dtype(sig: str):
    try:
        return core.dtype_from_signature(sig)
    except KeyError:
        raise ArgumentError(f"arguments of type {sig} are not supported yet") from None


def _constant(v):
    v = v.value if isinstance(v, constexpr) else v
    return constexpr(tuple(v) if isinstance(v, list) else v)


def build_spec(fn, vals) -> KernelSpec:
    """The KernelSpec for parameter values `vals` (in order) of JITFunction `fn`, from the
    keyed facts (RULES) of each argument."""
    spec = KernelSpec()
    annotated, _ = param_annotations.param_types(fn)
    for name, v, declared in zip(fn.arg_names, vals, fn.kinds):
        _specialise(spec, name, v, rule_for(v, declared), annotated.get(name))
    return spec


def _specialise(spec: KernelSpec, name: str, v, rule: KeyRule, annotated) -> None:
    """Put argument `v` of parameter (or tuple leaf) `name` into `spec`, by `rule`'s facts."""
    facts = dict(zip(rule.names, rule.read(v)))
    kind = rule.kind
    if kind == "tuple":  # one leaf per element, `name.0`, `name.1`, ... (frontend: ttir.py)
        if not v:
            spec.constants[name] = constexpr(())
        for i, x in enumerate(v):
            _specialise(spec, f"{name}.{i}", x, RULES[value_kind(x), RUNTIME], None)
    elif annotated is not None and kind not in ("constexpr", "none"):  # `n: tl.int64`
        param_annotations.specialise(spec, name, annotated, kind, facts, v)
    elif kind == "constexpr":
        spec.constants[name] = _constant(facts["value"])
    elif kind == "none":
        spec.constants[name] = constexpr(None)
    elif kind == "float":
        spec.types[name] = _dtype("fp32")
    elif kind == "bool":
        spec.types[name] = _dtype("i1")
    elif kind == "int":
        if facts.get("is_one"):
            spec.constants[name] = constexpr(1)
            return
        spec.types[name] = _dtype(int_signature(int(v)))
        if facts.get("div16"):
            spec.divisible_by_16.add(name)
    else:  # an array
        elem = dtype_to_triton(facts["dtype"])
        if elem is None:
            raise ArgumentError(f"argument '{name}': {unsupported_dtype(facts['dtype'])}")
        spec.types[name] = _dtype("*" + elem)
        if facts.get("aligned"):
            spec.divisible_by_16.add(name)
