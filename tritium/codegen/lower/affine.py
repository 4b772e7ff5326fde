"""Per-register affine forms: what lowering knows about an integer or pointer register.

Each integer (or pointer) register the lowering emits may carry a form

    value = c1*a1 + c2*a2 + ... + const          (a_i: opaque LLVM values, "atoms")

where every atom is known to be a multiple of a power of two (its divisibility: a kernel
argument's `tt.divisibility`, the thread-dependent part of a `make_range`, ...). Forms are
built by `make_range`, constants, `addi`/`subi`/`muli`/`shli` by constants, casts and
`tt.addptr` (pointer forms count bytes); every other value is an atom of its own.

They answer the two questions vectorization needs, with no TTGIR analysis pass:
* are registers r..r+v-1 at consecutive addresses?  -> same atoms, consts k*elem apart;
* is the first one aligned to v*elem bytes?         -> divisibility of the whole form.

    %offs = tt.make_range {start = 0, end = 1024} : tensor<1024xi32, #blocked(spt=4)>
      register 5:  tid4 + 513          (tid4 = thread part, a multiple of 4)
    %p = tt.addptr (splat %x_ptr {tt.divisibility = 16}), (splat(%pid*1024) + %offs)
      register 5:  x_ptr + 4*pid1024 + 4*tid4 + 2052 bytes
      registers 4..7 share their atoms, consts 2048, 2052, 2056, 2060, alignment 16:
      one ld.global.v4.b32.

As upstream's axis analysis does, forms treat `extsi` (and the sign extension inside
`tt.addptr`) as exact: i32 offsets are assumed not to overflow. Additions and products at
one width are exact modulo 2^width, and so is everything derived from them here.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_DIV = 1 << 31

Term = tuple[int, int, int]  # (atom key, atom divisibility, coefficient)


def lowbit(x: int) -> int:
    """Largest power of two dividing x (MAX_DIV for 0)."""
    return min(abs(x) & -abs(x), MAX_DIV) if x else MAX_DIV


@dataclass(frozen=True)
class Affine:
    terms: tuple[Term, ...] = ()
    const: int = 0

    @staticmethod
    def atom(key: int, divisibility: int = 1) -> Affine:
        return Affine(((key, min(divisibility, MAX_DIV), 1),), 0)

    @staticmethod
    def constant(c: int) -> Affine:
        return Affine((), c)

    @property
    def is_constant(self) -> bool:
        return not self.terms

    @property
    def terms_divisibility(self) -> int:
        """Power of two dividing the non-constant part."""
        d = MAX_DIV
        for _, div, coeff in self.terms:
            d = min(d, min(div * lowbit(coeff), MAX_DIV))
        return d

    @property
    def divisibility(self) -> int:
        """Power of two dividing the whole value."""
        return min(self.terms_divisibility, lowbit(self.const))

    def __add__(self, other: Affine) -> Affine:
        merged: dict[int, list[int]] = {}
        for key, div, coeff in self.terms + other.terms:
            if key in merged:
                merged[key][1] += coeff
            else:
                merged[key] = [div, coeff]
        terms = tuple((k, d, c) for k, (d, c) in sorted(merged.items()) if c != 0)
        return Affine(terms, self.const + other.const)

    def scale(self, k: int) -> Affine:
        if k == 0:
            return Affine()
        return Affine(tuple((key, d, c * k) for key, d, c in self.terms), self.const * k)

    def __neg__(self) -> Affine:
        return self.scale(-1)

    def __sub__(self, other: Affine) -> Affine:
        return self + (-other)

    def offset_from(self, other: Affine) -> int | None:
        """`self - other` when it is a known constant, else None."""
        if self.terms != other.terms:
            return None
        return self.const - other.const


def contiguous_run(forms: list[Affine], start: int, count: int, step: int) -> bool:
    """True when forms[start + k] == forms[start] + k*step for k < count."""
    first = forms[start]
    return all(forms[start + k].offset_from(first) == k * step for k in range(count))


def aligned_contiguous(forms: list[Affine], vec: int, step: int) -> bool:
    """Every group of `vec` registers (from a multiple of vec) is contiguous with `step`
    and starts at a multiple of vec*step."""
    if len(forms) % vec:
        return False
    for g in range(0, len(forms), vec):
        if not contiguous_run(forms, g, vec, step):
            return False
        if forms[g].divisibility % (vec * step):
            return False
    return True
