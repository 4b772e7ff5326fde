"""Fit the polynomial coefficients of tritium/codegen/lower/libm/ and write them to
tritium/codegen/lower/libm/coefficients.py.

    python3 scripts/fit_libm.py          # rewrites coefficients.py (about a minute; needs mpmath)

Each polynomial p(v) approximates a smooth function g(v) on an interval, minimax in the
relative error: Lawson's iteratively reweighted least squares on Chebyshev points, in
60-digit arithmetic. The degree is the smallest that meets the target error (the error
of the term the polynomial contributes, relative to the result, then stays far below the
type's half ulp). Coefficients are rounded to the target type once; the accuracy of the
whole function, roundings included, is what tests/codegen/test_libm*.py measure.
"""

from __future__ import annotations

import pathlib

import mpmath as mp

mp.mp.dps = 60
OUT = pathlib.Path(__file__).resolve().parents[1] / "tritium/codegen/lower/libm/coefficients.py"
ERF_SPLIT = mp.mpf("0.84375")  # erf(x) = x (1 + G(x^2)) below, 1 - erfc(x) above


def fit(g, a, b, deg: int, iters: int = 14):
    n = 4 * (deg + 1) + 20
    a, b = mp.mpf(a), mp.mpf(b)
    vs = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (k + mp.mpf(0.5)) / n) for k in range(n)]
    gs = [g(v) for v in vs]
    ws = [mp.mpf(1) / n] * n
    for _ in range(iters):
        A, y = mp.matrix(n, deg + 1), mp.matrix(n, 1)
        for i, (v, gv) in enumerate(zip(vs, gs)):
            s = mp.sqrt(ws[i]) / abs(gv)
            for j in range(deg + 1):
                A[i, j] = s * v**j
            y[i] = s * gv
        c, _ = mp.qr_solve(A, y)
        c = [c[j] for j in range(deg + 1)]
        errs = [abs(mp.polyval(c[::-1], v) / gv - 1) for v, gv in zip(vs, gs)]
        tot = sum(w * e for w, e in zip(ws, errs))
        ws = [w * e / tot for w, e in zip(ws, errs)]
    err = max(abs(mp.polyval(c[::-1], v) / g(v) - 1) for v in mp.linspace(a, b, 1500))
    return c, err


def smallest(g, a, b, target_bits: int, start: int):
    for deg in range(start, start + 30):
        c, err = fit(g, a, b, deg)
        if err < mp.mpf(2) ** -target_bits:
            return c, err
    raise RuntimeError("no degree meets the target")


def _exp_p(r):  # e^r = 1 + r + r^2 P(r)
    return (mp.exp(r) - 1 - r) / r**2 if r else mp.mpf(0.5)


def _log_l(z):  # log(1+f) = 2s + s z L(z), s = f / (2 + f), z = s^2
    s = mp.sqrt(z)
    return (2 * mp.atanh(s) - 2 * s) / (s * z) if z else mp.mpf(2) / 3


def _sin_s(z):  # sin r = r + r^3 S(r^2)
    r = mp.sqrt(z)
    return (mp.sin(r) - r) / (r * z) if z else -mp.mpf(1) / 6


def _cos_c(z):  # cos r = 1 - r^2/2 + r^4 C(r^2)
    return (mp.cos(mp.sqrt(z)) - 1 + z / 2) / z**2 if z else mp.mpf(1) / 24


def _atan_a(z):  # atan u = u + u^3 A(u^2)
    u = mp.sqrt(z)
    return (mp.atan(u) - u) / (u * z) if z else -mp.mpf(1) / 3


def _asin_b(z):  # asin x = x + x^3 B(x^2)
    x = mp.sqrt(z)
    return (mp.asin(x) - x) / (x * z) if z else mp.mpf(1) / 6


def _tanh_t(z):  # tanh x = x + x^3 T(x^2)
    x = mp.sqrt(z)
    return (mp.tanh(x) - x) / (x * z) if z else -mp.mpf(1) / 3


def _erf_g(z):  # erf x = x (1 + G(x^2))
    x = mp.sqrt(z)
    return mp.erf(x) / x - 1 if z else 2 / mp.sqrt(mp.pi) - 1


def _erfc_h(x):  # erfc x = exp(-x^2) H(x)
    return mp.erfc(x) * mp.exp(x * x)


# name, g, interval, target bits (f32, f64), lowest degree tried (f32, f64)
SIMPLE = [
    ("EXP_P", _exp_p, (-mp.log(2) / 2, mp.log(2) / 2), (29, 59), (3, 8)),
    ("LOG_L", _log_l, (0, mp.mpf("0.0295")), (None, 61), (1, 6)),
    ("SIN_S", _sin_s, (0, (mp.pi / 4) ** 2), (None, 58), (1, 4)),
    ("COS_C", _cos_c, (0, (mp.pi / 4) ** 2), (None, 57), (1, 4)),
    ("ATAN_A", _atan_a, (0, mp.tan(mp.pi / 8) ** 2), (None, 58), (1, 8)),
    ("ASIN_B", _asin_b, (0, mp.mpf("0.25")), (None, 58), (1, 8)),
    ("TANH_T", _tanh_t, (0, mp.mpf("0.3025")), (28, None), (3, 8)),
    ("ERF_G", _erf_g, (0, ERF_SPLIT**2), (28, 58), (3, 8)),
]
# erfc's H on pieces [a, b): polynomials in x - (a+b)/2, or in 1/x times 1/x ("inv")
ERFC_PIECES = {
    "f32": [(ERF_SPLIT, 2, False), (2, 4, False)],
    "f64": [(ERF_SPLIT, mp.mpf(1.5), False), (mp.mpf(1.5), mp.mpf(2.5), False),
            (mp.mpf(2.5), 4, False), (4, 28, True)],
}  # fmt: skip
ERFC_TARGET = {"f32": 28, "f64": 57}


def erfc_pieces(ty: str):
    out = []
    for a, b, inv in ERFC_PIECES[ty]:
        a, b = mp.mpf(a), mp.mpf(b)
        if inv:
            c, err = smallest(lambda t: _erfc_h(1 / t) / t, 1 / b, 1 / a, ERFC_TARGET[ty], 8)
            out.append((float(a), float(b), None, c, err))
        else:
            m = (a + b) / 2
            c, err = smallest(lambda u, m=m: _erfc_h(u + m), a - m, b - m, ERFC_TARGET[ty], 6)
            out.append((float(a), float(b), float(m), c, err))
    return out


def rounded(c, ty: str) -> list[float]:
    import numpy as np

    return [float(np.float32(float(v))) if ty == "f32" else float(v) for v in c]


def main() -> None:
    lines = [
        '"""Polynomial coefficients of the libm functions, lowest degree first.',
        "",
        "Generated by scripts/fit_libm.py (minimax in the relative error; the comment after",
        "each table is its fitting error, log2). Do not edit by hand.",
        '"""',
        "",
        "# fmt: off",
        f"ERF_SPLIT = {float(ERF_SPLIT)!r}",
    ]
    for name, g, (a, b), bits, start in SIMPLE:
        for ty, tb, st in zip(("f32", "f64"), bits, start):
            if tb is None:
                continue
            c, err = smallest(g, a, b, tb, st)
            lines.append(f"{name}_{ty.upper()} = {rounded(c, ty)!r}  # {float(mp.log(err, 2)):.1f}")
    for ty in ("f32", "f64"):
        pieces = []
        for a, b, mid, c, err in erfc_pieces(ty):
            pieces.append(f"    ({a!r}, {b!r}, {mid!r}, {rounded(c, ty)!r}),  # {float(mp.log(err, 2)):.1f}")
        lines += [f"ERFC_H_{ty.upper()} = [  # (from, to, centre or None for 1/x, coefficients)", *pieces, "]"]
    lines.append("# fmt: on")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
