"""Interop with upstream Triton 3.x, both ways.

* upstream -> tritium: every `.ttir` upstream Triton 3.6 printed (tests/data/upstream,
  locations and all) compiles to PTX that ptxas accepts (here) and that runs correctly
  against numpy (on a GPU);
* tritium -> upstream: tritium's printed TTIR (with locations) for every example uses only
  syntax upstream's MLIR parser reads (checked here without upstream), upstream
  `triton.compile("k.ttir")` accepts it (where triton is installed; no GPU needed) and the
  kernel it builds runs correctly (on a GPU, with torch).

Upstream's `triton.compile(path)` takes an IR file by its suffix (`IRSource`): it parses
the module, takes the public `tt.func` as the kernel and its argument types as the
signature (`*f32`, `i32`, `f32`), and starts the pipeline *after* the file's stage (TTIR
passes are skipped, TTIR -> TTGIR runs). So the file needs no other annotation; options
such as num_warps come from `options=`.
"""

from __future__ import annotations

import functools
import pathlib
import re
from dataclasses import dataclass

import numpy as np
import pytest

import tritium
from examples import causal_softmax, layer_norm, online_softmax, rms_norm, softmax
from tests.frontend import philox_numpy
from tests.frontend.test_examples_ttir import KERNELS

ROOT = pathlib.Path(__file__).resolve().parents[1]
UPSTREAM = ROOT / "tests" / "data" / "upstream"
UPSTREAM_TTIR = sorted(p.stem for p in UPSTREAM.glob("*.ttir"))


# ----------------------------------------------------------------------------- test cases


@dataclass
class Case:
    """A kernel's launch on random data: `make(rng)` gives (grid, args, output index,
    expected output); `check` compares in float64 with the example's own tolerances."""

    make: object
    num_warps: int = 4
    rtol: float = 1e-5
    atol: float = 1e-7
    frobenius: float | None = None  # relative Frobenius-norm bound instead (tf32 dots)

    def check(self, out: np.ndarray, expected: np.ndarray) -> None:
        if self.frobenius is not None:
            err = np.linalg.norm(out - expected) / np.linalg.norm(expected)
            assert err < self.frobenius, err
        else:
            np.testing.assert_allclose(out, expected, rtol=self.rtol, atol=self.atol)


def _nan_like(x):
    return np.full_like(x, np.nan)


def add_case(rng):
    n = 10_007
    x = rng.standard_normal(n, dtype=np.float32)  # separate arrays: 16-byte aligned
    y = rng.standard_normal(n, dtype=np.float32)
    return (tritium.cdiv(n, 1024), 1, 1), [x, y, _nan_like(x), n], 2, x.astype(np.float64) + y


def upstream_softmax_case(rng):  # softmax_kernel(x_ptr, out_ptr, n_rows, n_cols), BLOCK 1024
    x = rng.standard_normal((37, 781), dtype=np.float32)
    return (37, 1, 1), [x, _nan_like(x), 37, 781], 1, softmax.reference(x)


def example_softmax_case(rng):  # (output_ptr, input_ptr, in_stride, out_stride, n_cols)
    x = rng.standard_normal((37, 781), dtype=np.float32)
    return (37, 1, 1), [_nan_like(x), x, 781, 781, 781], 0, softmax.reference(x)


def causal_case(rng):  # (input, output, n_rows, n_cols, seq_len, in_stride, out_stride)
    seq = 40
    x = rng.standard_normal((3 * seq, seq), dtype=np.float32)
    args = [x, _nan_like(x), 3 * seq, seq, seq, seq, seq]
    return (3 * seq + 5, 1, 1), args, 1, causal_softmax.reference(x, seq)  # 5 early returns


def rms_case(rng):  # (X, W, Y, stride_x, stride_y, n_cols, eps), BLOCK 2048
    x = rng.standard_normal((29, 1536), dtype=np.float32)
    w = rng.standard_normal(1536, dtype=np.float32)
    args = [x, w, _nan_like(x), 1536, 1536, 1536, 1e-6]
    return (29, 1, 1), args, 2, rms_norm.reference(x, w, 1e-6)


def online_case(rng):  # (input, output, n_cols, in_stride, out_stride), BLOCK 1024
    x = rng.standard_normal((11, 3001), dtype=np.float32)
    return (11, 1, 1), [x, _nan_like(x), 3001, 3001, 3001], 1, online_softmax.reference(x)


def layer_norm_case(rng):  # (X, Y, W, B, stride, N, eps), BLOCK 1024
    x = rng.standard_normal((7, 2500), dtype=np.float32) * 3 + 1
    w = rng.standard_normal(2500, dtype=np.float32)
    b = rng.standard_normal(2500, dtype=np.float32)
    args = [x, _nan_like(x), w, b, 2500, 2500, 1e-5]
    return (7, 1, 1), args, 1, layer_norm.reference(x, w, b, 1e-5)


def dropout_case(rng):  # (x, out, n, p, seed), BLOCK 1024: the mask from a numpy Philox
    n, p, seed = 10_007, np.float32(0.3), 2**40 + 1234
    x = rng.standard_normal(n, dtype=np.float32)
    u = philox_numpy.uniform(philox_numpy.randint4x(seed, np.arange(n))[0])
    expected = np.where(u > p, x / (np.float32(1) - p), np.float32(0))
    return (tritium.cdiv(n, 1024), 1, 1), [x, _nan_like(x), n, float(p), seed], 1, expected


def matmul_case(rng):  # (a, b, c, M, N, K), BLOCK 64 x 64 x 32
    a = rng.standard_normal((130, 72), dtype=np.float32)
    b = rng.standard_normal((72, 90), dtype=np.float32)
    c = np.full((130, 90), np.nan, np.float32)
    return (3, 2, 1), [a, b, c, 130, 90, 72], 2, a.astype(np.float64) @ b


def _fp16_operands(rng, M=130, N=90, K=72):
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float16)
    return a, b, c, a.astype(np.float64) @ b.astype(np.float64)


def matmul_fp16_case(rng):  # grouped (a, b, c, M, N, K, 6 strides), BLOCK 64 x 64 x 32
    a, b, c, ref = _fp16_operands(rng)
    args = [a, b, c, 130, 90, 72, 72, 1, 90, 1, 90, 1]
    return (6, 1, 1), args, 2, ref


def matmul_autotune_case(rng):  # (a, b, c, M, N, K), BLOCK 64 x 64 x 32
    a, b, c, ref = _fp16_operands(rng)
    return (3, 2, 1), [a, b, c, 130, 90, 72], 2, ref


# upstream's .ttir files (num_warps as upstream chose them: see the .ttgir beside each)
UPSTREAM_CASES = {
    "add_kernel": Case(add_case, rtol=2**-24, atol=0),
    "softmax_kernel": Case(upstream_softmax_case),
    "softmax_causal_simple_kernel": Case(causal_case, num_warps=8),
    "rms_norm_simple_kernel": Case(rms_case, num_warps=8, atol=1e-6),
    "online_softmax_kernel": Case(online_case, atol=1e-8),
    "matmul_tiled_kernel": Case(matmul_case, frobenius=5e-3),
}
# tritium's examples, by their name in tests/frontend/test_examples_ttir.py's KERNELS
EXAMPLE_CASES = {
    "add": UPSTREAM_CASES["add_kernel"],
    "softmax": Case(example_softmax_case),
    "causal": UPSTREAM_CASES["softmax_causal_simple_kernel"],
    "rms": UPSTREAM_CASES["rms_norm_simple_kernel"],
    "online": UPSTREAM_CASES["online_softmax_kernel"],
    "layer_norm": Case(layer_norm_case, rtol=1e-4, atol=1e-5),
    "dropout": Case(dropout_case, rtol=1e-6, atol=0),
    "matmul": UPSTREAM_CASES["matmul_tiled_kernel"],
    "matmul_fp16": Case(matmul_fp16_case, frobenius=1e-2),
    "matmul_autotune": Case(matmul_autotune_case, frobenius=1e-2),
}


def test_every_case_has_a_file_and_an_example():
    assert set(UPSTREAM_CASES) == set(UPSTREAM_TTIR)
    assert set(EXAMPLE_CASES) == set(KERNELS)


# ----------------------------------------------------------------------------- upstream -> tritium


@functools.cache
def _compile_upstream(stem: str, arch: str):
    try:
        return tritium.compile(
            UPSTREAM / f"{stem}.ttir", num_warps=UPSTREAM_CASES[stem].num_warps, arch=arch,
            stop="ptx",
        )  # fmt: skip
    except NotImplementedError as e:
        return e


def compile_upstream(stem: str, arch: str = "sm_89"):
    """tritium.compile of upstream's TTIR; xfail only for an op the backend cannot lower yet."""
    k = _compile_upstream(stem, arch)
    if isinstance(k, NotImplementedError):
        if "no GPU lowering" in str(k):
            pytest.xfail(f"tritium's backend cannot lower this kernel yet: {k}")
        raise k
    return k


@pytest.mark.parametrize("stem", UPSTREAM_TTIR)
def test_upstream_ttir_compiles_to_ptx(stem):
    k = compile_upstream(stem)
    ptx = k.asm["ptx"]
    assert re.search(rf"\.visible \.entry {stem}\(", ptx)
    assert f".reqntid {32 * UPSTREAM_CASES[stem].num_warps}" in ptx
    text = (UPSTREAM / f"{stem}.ttir").read_text()
    n_args = len(re.findall(r"%\w+: [^,)]+ loc\(", text.split(") attributes")[0]))
    assert len(k.metadata.params) == n_args


@pytest.mark.parametrize("stem", UPSTREAM_TTIR)
def test_upstream_ttir_ptx_assembles(stem, ptxas):
    from tritium.codegen.tools import ptxas as run_ptxas

    for arch in ("sm_89", "sm_90"):
        cubin = run_ptxas(compile_upstream(stem, arch).asm["ptx"], arch)
        assert cubin and len(cubin) > 0


def run_in_interpreter(ttir_text: str, case: Case, rng) -> None:
    from tritium.ir.parser import parse_module
    from tritium.runtime.interpreter import interpret

    grid, args, out_index, expected = case.make(rng)
    interpret(parse_module(ttir_text), grid, args)
    case.check(args[out_index], expected)


@pytest.mark.parametrize("stem", UPSTREAM_TTIR)
def test_upstream_ttir_runs_in_the_interpreter(stem):
    """Upstream's TTIR on numpy (and the cases the GPU tests use, checked here)."""
    text = (UPSTREAM / f"{stem}.ttir").read_text()
    run_in_interpreter(text, UPSTREAM_CASES[stem], np.random.default_rng(5))


def run_with_tritium(kernel, case: Case, rng) -> None:
    grid, args, out_index, expected = case.make(rng)
    kernel[grid](*args)  # numpy arrays: copied in, launched on, copied back
    case.check(args[out_index], expected)


@pytest.mark.gpu
@pytest.mark.parametrize("stem", UPSTREAM_TTIR)
def test_upstream_ttir_runs_on_the_gpu(stem):
    from tritium.compiler import target_arch
    from tritium.runtime.driver import current_arch

    k = compile_upstream(stem, target_arch(current_arch()))
    run_with_tritium(k, UPSTREAM_CASES[stem], np.random.default_rng(7))


# ----------------------------------------------------------------------------- tritium -> upstream


@functools.cache
def tritium_ttir(name: str) -> str:
    """tritium's TTIR for an example, as `tritium compile --emit ttir` prints it."""
    fn, sig, cx, _ = KERNELS[name]
    return tritium.compile(fn, signature=sig, constexprs=cx, stop="ttir").asm["ttir"]


# Argument attributes upstream's frontend itself writes on tt.func arguments.
UPSTREAM_ARG_ATTRS = {"tt.divisibility", "tt.equal_to", "tt.pointer_range", "tt.nv_tma_desc"}
_STRING = r'"(?:[^"\\\n]|\\["\\nt]|\\[0-9A-Fa-f]{2})*"'


def _parse_loc(text: str, i: int) -> int:
    """Check one MLIR location body starting at text[i]; return the index after it.
    Forms: unknown | "file":L:C | "name"(LOC) | callsite(LOC at LOC) | fused[LOC, ...] | #locN."""
    for pattern in (r"unknown", rf"{_STRING}:\d+:\d+", r"#loc\d*"):
        m = re.compile(pattern).match(text, i)
        if m:
            return m.end()
    m = re.compile(rf"{_STRING}\(").match(text, i)
    if m:
        j = _parse_loc(text, m.end())
        assert text[j] == ")", text[i : j + 20]
        return j + 1
    if text.startswith("callsite(", i):
        j = _parse_loc(text, i + 9)
        assert text.startswith(" at ", j), text[i : j + 20]
        j = _parse_loc(text, j + 4)
        assert text[j] == ")", text[i : j + 20]
        return j + 1
    if text.startswith("fused[", i):
        j = _parse_loc(text, i + 6)
        while text.startswith(", ", j):
            j = _parse_loc(text, j + 2)
        assert text[j] == "]", text[i : j + 20]
        return j + 1
    raise AssertionError(f"not an MLIR location: {text[i : i + 60]!r}")


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_tritium_ttir_uses_upstream_syntax(name):
    """What upstream's parser needs from the parts tritium prints its own way: argument
    attributes, `loc(...)`, the function attributes; every op from upstream's dialects."""
    text = tritium_ttir(name)
    header = re.search(r"tt\.func public @(\w+)\((.*)\) attributes \{(.*?)\} \{\n", text)
    assert header, text[:300]
    assert header.group(3) == "noinline = false"
    args = header.group(2)
    for attrs in re.findall(r"\{([^{}]*)\}", args):
        for entry in attrs.split(", "):
            key, _, value = entry.partition(" = ")
            assert key in UPSTREAM_ARG_ATTRS and re.fullmatch(r"-?\d+ : i\d+", value), entry
    for m in re.finditer(r"\bloc\(", text):
        end = _parse_loc(text, m.end())
        assert text[end] == ")", text[m.start() : end + 20]
    for line in map(str.strip, text.splitlines()):  # ops that open a region end with `} loc`
        if not (line.endswith("{") or line.startswith("^") or line == "}"):
            assert "loc(" in line, line
    ops = set(re.findall(r"^\s*(?:%[\w, %:#]+ = )?\"?([a-z_]+\.[a-z_.]+)", text, re.MULTILINE))
    assert ops and {op.split(".")[0] for op in ops} <= {"tt", "arith", "math", "scf", "cf"}, ops


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_example_cases_in_the_interpreter(name):
    """tritium's TTIR on numpy with the launches the upstream GPU test makes."""
    run_in_interpreter(tritium_ttir(name), EXAMPLE_CASES[name], np.random.default_rng(5))


def upstream_compile(name: str, tmp_path, target=None):
    """Upstream `triton.compile` on tritium's TTIR file for an example (needs triton)."""
    triton = pytest.importorskip("triton", reason="upstream triton is not installed here")
    from triton.backends.compiler import GPUTarget

    path = tmp_path / f"{KERNELS[name][0].__name__}.ttir"
    path.write_text(tritium_ttir(name))
    target = target or GPUTarget("cuda", 89, 32)
    return triton.compile(
        str(path), target=target, options={"num_warps": EXAMPLE_CASES[name].num_warps}
    )


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_upstream_compiles_tritium_ttir(name, tmp_path):
    """No GPU needed: upstream parses, lowers and assembles tritium's TTIR for sm_89."""
    k = upstream_compile(name, tmp_path)
    fn, sig, _, _ = KERNELS[name]
    assert k.name == fn.__name__
    assert len(k.src.signature) == len(sig.split(","))
    assert isinstance(k.asm["cubin"], bytes) and len(k.asm["cubin"]) > 0
    assert f".entry {fn.__name__}(" in k.asm["ptx"]


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_upstream_runs_tritium_ttir(name, tmp_path):
    torch = pytest.importorskip("torch", reason="torch is not installed here")
    pytest.importorskip("triton", reason="upstream triton is not installed here")
    import triton

    k = upstream_compile(name, tmp_path, triton.runtime.driver.active.get_current_target())
    case = EXAMPLE_CASES[name]
    grid, args, out_index, expected = case.make(np.random.default_rng(11))
    dev = [torch.from_numpy(a).cuda() if isinstance(a, np.ndarray) else a for a in args]
    k[grid](*dev)
    torch.cuda.synchronize()
    case.check(dev[out_index].cpu().numpy(), expected)
