"""Mismatches already understood, and how each is classified.

    known = classify(program, verdict)      # a Known, or None for a new mismatch

Each entry is one difference the driver found, shrank and someone judged:
  * "upstream-bug": upstream Triton is wrong (its interpreter disagrees with its own
    compiler or with the language's definition);
  * "definitional": both are defensible, the two define the case differently;
    docs/language.md says what tritium does;
  * "tritium-bug": tritium was wrong; it is fixed, with a regression test, so seeing it
    again means the fix regressed (the driver reports it as new).
A mismatch matching an entry is counted under it and not shrunk again; everything else
is new: shrunk, printed as a runnable script, and left for a person to classify here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tritium.testing import fuzz_ir as ir
from tritium.testing.differential.verdict import Verdict
from tritium.testing.fuzz_ir import Program


@dataclass(frozen=True)
class Known:
    name: str
    cls: str  # "upstream-bug", "definitional", "tritium-bug"
    summary: str
    matches: Callable[[Program, Verdict], bool]


def _upstream_error(pattern: str) -> Callable[[Program, Verdict], bool]:
    rx = re.compile(pattern)
    return lambda p, v: v.kind == "upstream-error" and bool(rx.search(v.error))


def _float_scalar_argument(p: Program, v: Verdict) -> bool:
    seen = v.kind == "values" or (v.kind == "upstream-error" and "'float' object" in v.error)
    return seen and any(isinstance(s.value, float) for s in p.scalars)


def _u32_scalar_argument(p: Program, v: Verdict) -> bool:
    return v.kind == "values" and any(
        isinstance(s.value, int) and 2**31 <= s.value < 2**32 for s in p.scalars
    )


def _unsupported_atomic(p: Program, v: Verdict) -> bool:
    return v.kind == "upstream-error" and "Unsupported data type" in v.error and bool(p.atomics())


def _u32_atomic_argument(p: Program, v: Verdict) -> bool:
    return _unsupported_atomic(p, v) and any(
        isinstance(s.value, int) and 2**31 <= s.value < 2**32 for s in p.scalars
    )


def _float_atomic_xchg(p: Program, v: Verdict) -> bool:
    from tritium.testing.fuzz import results

    kinds = {o.name: o.dtype for o in results(p)}
    return _unsupported_atomic(p, v) and any(
        a.op == "xchg" and kinds[a.buf] == "fp32" for a in p.atomics()
    )


def _bf16_dot(p: Program, v: Verdict) -> bool:
    return (
        v.kind == "values"
        and all(d.side == "upstream-off-model" for d in v.diffs)
        and "tl.dot(" in p.source()
        and ".to(tl.bfloat16)" in p.source()
    )


def _definitions(stmts, out: dict) -> dict:
    """name -> the expressions assigned to it, anywhere in the program."""
    for st in stmts:
        if isinstance(st, ir.Assign):
            out.setdefault(st.name, []).append(st.expr)
        elif isinstance(st, ir.Loop):
            _definitions(st.body, out)
        elif isinstance(st, ir.If):
            _definitions(st.then + st.orelse, out)
    return out


def _is_view(e) -> bool:
    if isinstance(e, ir.Scan):
        return e.reverse
    return isinstance(e, ir.Shape) and (e.op.startswith("join_split") or e.op in ("trans", "permute"))


def _reaches_view(e, defs: dict, seen: set) -> bool:
    """Whether `e` is, or is computed from names bound to, a strided view's result."""
    if isinstance(e, ir.Name):
        if e.id in seen:
            return False
        seen.add(e.id)
        return any(_reaches_view(x, defs, seen) for x in defs.get(e.id, ()))
    if _is_view(e):
        return True
    return any(_reaches_view(getattr(e, f), defs, seen) for f in ("a", "b", "c")
               if getattr(e, f, None) is not None)  # fmt: skip


def _atomic_of_a_view(p: Program, v: Verdict) -> bool:
    if v.kind != "values" or not all(d.side == "upstream-off-model" for d in v.diffs):
        return False
    defs = _definitions(p.body, {})
    return any(_reaches_view(a.a, defs, set()) for a in p.atomics())


def _cas_narrow_compare(p: Program, v: Verdict) -> bool:
    from tritium.testing.fuzz import results

    kinds = {o.name: o.dtype for o in results(p)}
    wide = {a.buf for a in p.atomics() if a.op == "cas" and kinds[a.buf] == "i64"}
    return (  # the buffer, or the old value read back (also 32 bits)
        v.kind == "values" and bool(wide) and all(d.side == "upstream-off-model" for d in v.diffs)
    )


def _int8_dot_accumulator(p: Program, v: Verdict) -> bool:
    src = p.source()
    return (
        v.kind == "upstream-error"
        and "AssertionError" in v.error
        and ".to(tl.int8)" in src
        and "out_dtype=tl.int32" not in src
    )


def _int8_dot_short_k(p: Program, v: Verdict) -> bool:
    return (
        v.kind == "upstream-error"
        and "CompilationError" in v.error
        and p.C < 32  # the fuzzer's dots are C x C tiles: K = C
        and re.search(r"tl\.dot\([^\n]*tl\.int8", p.source()) is not None
    )


KNOWN: list[Known] = [
    Known(
        "fp16-math",
        "definitional",
        "tl.exp / tl.sqrt (and the other tl.math functions) of fp16: upstream 3.6 refuses "
        "them (`Expected dtype ['fp32', 'fp64'] but got fp16`); tritium computes them in "
        "fp32 and rounds back (docs/language.md, math row). The generator's upstream mode "
        "casts to fp32 first.",
        _upstream_error(r"Expected dtype \[.*\] but got (fp16|bf16)"),
    ),
    Known(
        "interpreter-numpy-2.4",
        "upstream-bug",
        "upstream 3.6's interpreter keeps a scalar argument as a shape-(1,) array and calls "
        "int() on it for a `range` bound; NumPy 2.4 refuses that (`only 0-dimensional "
        "arrays can be converted to Python scalars`; deprecated since 1.25). Run upstream's "
        "interpreter with NumPy < 2.4.",
        _upstream_error(r"only 0-dimensional arrays can be converted to Python scalars"),
    ),
    Known(
        "interpreter-float-arguments",
        "upstream-bug",
        "upstream 3.6's interpreter passes a float kernel argument on as a Python float, "
        "where its compiler passes an fp32 scalar: `f % 2.0` is Python's floored modulo "
        "(0.75 for f = -1.25; compiled: -1.25), `f * x_fp16` stays fp16, `f.to(...)` fails. "
        "The worker fixes this by default (worker.py's `_fix_float_args`); only matched "
        "when the fix is off.",
        _float_scalar_argument,
    ),
    Known(
        "interpreter-loop-variable",
        "upstream-bug",
        "upstream 3.6's interpreter runs `for i in range(...)` as a Python loop, so `i` is a "
        "Python int where its compiler has an i32 scalar: `i.to(tl.float32)` fails "
        "(`'int' object has no attribute 'to'`).",
        _upstream_error(r"\W+int\W+ object has no attribute"),  # nested errors escape quotes
    ),
    Known(
        "interpreter-integer-sum-overflow",
        "upstream-bug",
        "upstream 3.6's interpreter sums an integer block in Python ints and converts the "
        "total back; when it does not fit (a sum that wraps, which the language defines), "
        "NumPy 2 refuses (`Python integer -5293366405 out of bounds for int32`) where the "
        "compiler (and tritium) wrap.",
        _upstream_error(r"Python integer -?\d+ out of bounds for u?int"),
    ),
    Known(
        "interpreter-u32-argument",
        "upstream-bug",
        "upstream 3.6's interpreter holds an int argument in [2**31, 2**32) in a numpy "
        "uint32 array while typing it i64 (as its compiler does): `s >> 1` of s = 3000000000 "
        "gives -647483648 where the compiler (and tritium) give 1500000000.",
        _u32_scalar_argument,
    ),
    Known(
        "interpreter-u32-atomic-argument",
        "upstream-bug",
        "the same u32 argument (above) as an atomic's value: upstream 3.6's interpreter "
        "fails (`tl.atomic_min(p + 0, s)` with s = 3000000000, an int64 buffer: "
        "`ValueError('Unsupported data type')`); with s = 5 it runs.",
        _u32_atomic_argument,
    ),
    Known(
        "interpreter-float-atomic-xchg",
        "upstream-bug",
        "upstream 3.6's interpreter has no float32 `tl.atomic_xchg` (`ValueError('Unsupported "
        "data type')`; int32 / int64 xchg and the other float32 atomics run). Its compiler "
        "and tritium exchange float32.",
        _float_atomic_xchg,
    ),
    Known(
        "int8-dot-accumulator-out-dtype",
        "definitional",
        "tl.dot(a_i8, b_i8, acc_i32) without out_dtype: upstream 3.6 asserts that an "
        "accumulator is of out_dtype, whose default is float32 whatever the operands "
        "(`assert acc.type.shape == ret_ty.shape and acc.type.element_ty == out_dtype`), "
        "so it needs out_dtype=tl.int32; tritium takes the int32 accumulator (an int8 dot "
        "is int32 either way; docs/language.md). The generator writes out_dtype=tl.int32.",
        _int8_dot_accumulator,
    ),
    Known(
        "int8-dot-k-below-32",
        "definitional",
        "an int8 tl.dot with K < 32 (a 16 x 16 tile): upstream 3.6's GPU compiler refuses it "
        "(`Input shapes should have M >= 1, N >= 1 and K >= 32`: the K of its int8 mma "
        "instruction); tritium computes it exactly with FMAs (mma.sync's int8 form needs K "
        "a multiple of 32 there too; docs/language.md). Seen 19 times in 2002 GPU kernels on "
        "an H200.",
        _int8_dot_short_k,
    ),
    Known(
        "interpreter-atomic-of-a-view",
        "upstream-bug",
        "upstream 3.6's interpreter applies an atomic whose value is a strided numpy view "
        "(the result of a reverse scan, or of tl.split after a permute) to the view's "
        "underlying memory instead of its elements: `tl.atomic_add(p + r, s)` of a reverse "
        "cummax s = [1, 1, 1, 1] adds [1, 0, 0, 65]; `tl.atomic_min` of "
        "`tl.split(tl.reshape(tl.permute(tl.join(a, b), (0, 2, 1)), (1, 4, 2)))[0]` "
        "(= [3, -9, 43, 59]) takes the minimum with a's [3, 14, -9, -6]. Storing the same "
        "value, or an atomic of a forward scan, is right; tritium and the model agree.",
        _atomic_of_a_view,
    ),
    Known(
        "interpreter-cas-narrow-compare",
        "upstream-bug",
        "upstream 3.6's interpreter swaps only 32 bits when `tl.atomic_cas` on an int64 "
        "buffer compares with an int32 value (a literal): -1 swapped for 96 leaves "
        "-4294967200 (0xFFFFFFFF00000060), 5 swapped for 2**40 + 3 leaves 3, and the old "
        "value it returns has 32 bits too (2 read as -4294967294); with the compare value "
        "cast to int64 it swaps all 64. Its compiler converts the compare value to the "
        "pointer's type, as tritium does.",
        _cas_narrow_compare,
    ),
    Known(
        "interpreter-bf16-dot",
        "upstream-bug",
        "upstream 3.6's interpreter holds bfloat16 blocks as their raw bits in uint16 numpy "
        "arrays, and its tl.dot multiplies those integers: a 1 x 1 (masked 16 x 16) "
        "bf16 dot whose value is 96.8399 gives 36553367552.0 (tritium and the model: "
        "96.8399).",
        _bf16_dot,
    ),
]

# Entries that apply only when the worker does not fix float arguments.
UNFIXED_ONLY = {"interpreter-float-arguments"}


def classify(p: Program, v: Verdict, fixed_float_args: bool = True) -> Known | None:
    for k in KNOWN:
        if fixed_float_args and k.name in UNFIXED_ONLY:
            continue
        if k.matches(p, v):
            return k
    return None
