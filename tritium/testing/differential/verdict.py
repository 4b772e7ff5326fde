"""Comparing two implementations' outputs of one random kernel, with the model as referee.

    verdict = compare(program, tritium_outputs, upstream_outputs, model_outputs)
    verdict.kind        # "agree", "values", "tritium-error", "upstream-error", "both-error"
    verdict.signature   # what shrinking keeps: ("values", "tritium-off-model", "fp32"), ...

The rule per output element is the numpy model's error bound `err` (fuzz_model.py):
  * err == 0, where the language defines the result exactly (integer arithmetic, loads and
    stores, min / max, comparisons, casts, elementwise float ops in their own dtype), the
    two results must be the same bits (a sign of zero included), and so must the elements
    no program stores to (they keep the sentinel);
  * 0 < err < inf (a reduction's order, a transcendental, GPU arithmetic): each result
    may be `err` from the model, so they may be 2 * err apart;
  * err == inf (an integer that may wrap computed from an inexact value): not compared.
A differing element is then judged against the model: which side is within `err` of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from tritium.testing.fuzz import results
from tritium.testing.fuzz_ir import NP_DTYPE, Program

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@dataclass
class OutputDiff:
    index: int  # which output
    name: str  # the variable stored
    dtype: str
    bad: int  # how many elements differ
    size: int
    examples: list = field(default_factory=list)  # (element, tritium, upstream, model, err)
    side: str = ""  # "tritium-off-model", "upstream-off-model", "both-off-model"


@dataclass
class Verdict:
    kind: str
    diffs: list[OutputDiff] = field(default_factory=list)
    error: str = ""  # the error text (an "*-error" kind)
    exact: int = 0  # elements compared bit for bit
    bounded: int = 0  # elements compared within a bound
    skipped: int = 0  # elements with no defined value

    @property
    def signature(self) -> tuple:
        """What a shrunk kernel must keep to be the same mismatch."""
        if self.kind in ("values",):
            d = self.diffs[0]
            return (self.kind, d.side, d.dtype)
        if self.kind.endswith("error"):  # the message's words, without names and numbers
            first = self.error.splitlines()[0] if self.error else ""
            first = re.sub(r"^<[^>]*>:\d+:\d+: ", "", first)  # a generated kernel's location
            return (self.kind, re.sub(r"'[^']*'|\d+", "_", first)[:120])
        return (self.kind,)

    def summary(self) -> str:
        if self.kind == "agree":
            return f"agree ({self.exact} elements bit-exact, {self.bounded} within bounds)"
        if self.kind.endswith("error"):
            return f"{self.kind}: {self.error}"
        lines = []
        for d in self.diffs:
            ex = "; ".join(
                f"[{j}] tritium {t!r}, upstream {u!r}, model {m!r} (bound {e:.3g})"
                for j, t, u, m, e in d.examples
            )
            lines.append(
                f"out{d.index} ({d.name} as {d.dtype}): {d.bad} of {d.size} differ, {d.side}: {ex}"
            )
        return "\n".join(lines)


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(UINT[a.dtype.itemsize])


def _within(got: np.ndarray, want: np.ndarray, err: np.ndarray) -> np.ndarray:
    """got is want's value: the same bits where err == 0, within err elsewhere."""
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(got.astype(np.float64) - want.astype(np.float64)) <= err
    return np.where(err == 0, _bits(got) == _bits(want), close)


def compare_arrays(t: np.ndarray, u: np.ndarray, want: np.ndarray, err: np.ndarray) -> tuple:
    """(bad mask, exact mask, bounded mask) for one output."""
    exact = err == 0
    bounded = np.isfinite(err) & ~exact
    with np.errstate(invalid="ignore", over="ignore"):
        apart = np.abs(t.astype(np.float64) - u.astype(np.float64))
        bad = np.where(exact, _bits(t) != _bits(u), bounded & ~(apart <= 2 * err))
    return bad, exact, bounded


def compare(p: Program, tritium, upstream, expected) -> Verdict:
    """`tritium` / `upstream`: lists of output arrays, or an error text (str); `expected`:
    the model's [(values, err)] per output."""
    t_err, u_err = isinstance(tritium, str), isinstance(upstream, str)
    if t_err and u_err:
        return Verdict("both-error", error=f"tritium: {tritium} | upstream: {upstream}")
    if t_err:
        return Verdict("tritium-error", error=tritium)
    if u_err:
        return Verdict("upstream-error", error=upstream)
    v = Verdict("agree")
    for i, (o, t, u, (want, err)) in enumerate(zip(results(p), tritium, upstream, expected)):
        want = want.astype(NP_DTYPE[o.dtype])
        if t.dtype != want.dtype or u.dtype != want.dtype or t.shape != want.shape:
            v.kind = "values"
            v.diffs.append(OutputDiff(i, o.name, o.dtype, want.size, want.size,
                                      side=f"shape/dtype {t.dtype}{t.shape} vs {u.dtype}{u.shape}"))  # fmt: skip
            continue
        bad, exact, bounded = compare_arrays(t, u, want, err)
        v.exact += int(exact.sum())
        v.bounded += int(bounded.sum())
        v.skipped += int((~exact & ~bounded).sum())
        if not bad.any():
            continue
        idx = np.flatnonzero(bad)
        t_ok = _within(t[idx], want[idx], err[idx])
        u_ok = _within(u[idx], want[idx], err[idx])
        if u_ok.all():
            side = "tritium-off-model"
        elif t_ok.all():
            side = "upstream-off-model"
        else:
            side = "both-off-model"
        examples = [(int(j), t[j].item(), u[j].item(), want[j].item(), float(err[j]))
                    for j in idx[:4]]  # fmt: skip
        v.kind = "values"
        v.diffs.append(OutputDiff(i, o.name, o.dtype, int(bad.sum()), want.size, examples, side))
    return v
