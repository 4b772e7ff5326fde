"""Libdevice mode (TRITIUM_LIBDEVICE, codegen/libdevice_link.py, lower/libdevice_calls.py):
math calls NVIDIA's `__nv_*` functions where upstream does, the bitcode is linked, only
the functions called remain, the PTX assembles and calls nothing undefined; the kernel
cache tells the modes apart; a missing file is a clear error. Skipped where this machine
has no libdevice.10.bc (as the ptxas tests without ptxas). GPU: test_gpu_libdevice_mode.py."""

from __future__ import annotations

import re

import llvmlite.binding as llvm
import pytest

import tritium
import tritium.language as tl
from tests.codegen.libdevice_kernels import compile_ptx
from tests.codegen.test_libdevice_ptx import GROUPS, LIBDEVICE_ONLY_GROUPS
from tritium import compiler
from tritium.codegen import libdevice_link, ptx
from tritium.codegen.libdevice_link import LibdeviceNotFoundError
from tritium.codegen.module import DATA_LAYOUT, TRIPLE
from tritium.codegen.tools import assemble
from tritium.errors import NotSupportedError, TritiumError
from tritium.frontend.signature import parse_signature
from tritium.language.extra import libdevice


def _found():
    try:
        return str(libdevice_link.find("auto"))
    except LibdeviceNotFoundError:
        return None


LIBDEVICE = _found()
needs_libdevice = pytest.mark.skipif(LIBDEVICE is None, reason="no libdevice.10.bc here")


@pytest.fixture
def libdevice_mode(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_LIBDEVICE", LIBDEVICE)
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    return LIBDEVICE


@tritium.jit
def math_kernel(x_ptr, y_ptr, OP: tl.constexpr):
    offs = tl.arange(0, 128)
    x = tl.load(x_ptr + offs)
    if OP == "log":
        y = tl.log(x)
    elif OP == "cos":
        y = tl.cos(x)
    elif OP == "sin":
        y = tl.sin(x)
    elif OP == "erf":
        y = tl.erf(x)
    elif OP == "tanh":
        y = libdevice.tanh(x)
    elif OP == "exp":
        y = tl.exp(x)
    elif OP == "exp2":
        y = tl.exp2(x)
    elif OP == "sqrt":
        y = tl.sqrt(x)
    elif OP == "rsqrt":
        y = tl.rsqrt(x)
    elif OP == "floor":
        y = tl.floor(x)
    elif OP == "abs":
        y = tl.abs(x)
    elif OP == "fma":
        y = tl.fma(x, x, x)
    elif OP == "div":
        y = x / (x + 1)
    elif OP == "sqrt_rn":
        y = tl.sqrt_rn(x)
    elif OP == "div_rn":
        y = tl.div_rn(x, x + 1)
    elif OP == "fast_expf":
        y = libdevice.fast_expf(x)
    else:
        y = tl.randn(x.to(tl.int32, bitcast=True), offs)
    tl.store(y_ptr + offs, y)


def _compile(op: str, dtype: str = "fp32", stop: str = "ptx"):
    sig = {"x_ptr": f"*{dtype}", "y_ptr": f"*{dtype}", "OP": "constexpr"}
    return tritium.compile(math_kernel, sig, {"OP": op}, arch="sm_90", stop=stop)


def _spec():
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "OP": "constexpr"}
    return parse_signature(math_kernel, sig, {"OP": "log"})


def _called(ptx_text: str) -> set[str]:
    return set(re.findall(r"\bcall(?:\.uni)?\s+(?:\([^)]*\),\s*)?(\w+)", ptx_text))


def _defined_funcs(ptx_text: str) -> set[str]:
    return set(re.findall(r"^(?:\.visible\s+|\.weak\s+)?\.func\s*(?:\([^)]*\)\s*)?(\w+)", ptx_text, re.M))


def _nv_calls(llir: str) -> set[str]:
    return set(re.findall(r"call \w+ @(__nv_\w+)", llir))


# what upstream 3.6's LLVM IR calls before linking (compiled from the same ops)
UPSTREAM = [
    ("log", "fp32", {"__nv_logf"}), ("cos", "fp32", {"__nv_cosf"}),
    ("sin", "fp32", {"__nv_sinf"}), ("erf", "fp32", {"__nv_erff"}),
    ("tanh", "fp32", {"__nv_tanhf"}), ("exp", "fp32", set()), ("exp2", "fp32", {"__nv_exp2f"}),
    ("sqrt", "fp32", {"__nv_sqrtf"}), ("rsqrt", "fp32", {"__nv_rsqrtf"}),
    ("floor", "fp32", {"__nv_floorf"}), ("abs", "fp32", set()), ("fma", "fp32", set()),
    ("div", "fp32", set()), ("sqrt_rn", "fp32", set()), ("div_rn", "fp32", set()),
    ("fast_expf", "fp32", {"__nv_fast_expf"}), ("randn", "fp32", {"__nv_logf", "__nv_cosf", "__nv_sqrtf"}),
    ("log", "fp64", {"__nv_log"}), ("exp", "fp64", {"__nv_exp"}), ("exp2", "fp64", {"__nv_exp2"}),
    ("rsqrt", "fp64", {"__nv_rsqrt"}), ("erf", "fp64", {"__nv_erf"}),
]  # fmt: skip


@needs_libdevice
@pytest.mark.parametrize("op,dtype,calls", UPSTREAM, ids=lambda v: v if isinstance(v, str) else "")
def test_calls_libdevice_where_upstream_does(libdevice_mode, op, dtype, calls):
    k = _compile(op, dtype)
    assert _nv_calls(k.asm["llir"]) == calls
    text = k.asm["ptx"]
    assert ".extern" not in text and "__nv_" not in text  # linked and inlined
    assert _called(text) <= _defined_funcs(text)


@needs_libdevice
def test_default_mode_calls_no_libdevice(monkeypatch):
    monkeypatch.delenv("TRITIUM_LIBDEVICE", raising=False)
    for op in ("log", "randn", "tanh"):
        assert _nv_calls(_compile(op, stop="llir").asm["llir"]) == set()


@needs_libdevice
def test_randn_follows_upstream_ftz(libdevice_mode):
    # nvvm-reflect-ftz = 1 as upstream: libdevice's flush-to-zero paths (fma.rn.ftz.f32)
    text = _compile("randn").asm["ptx"]
    assert "fma.rn.ftz.f32" in text and "sqrt.approx.ftz.f32" in text


@needs_libdevice
def test_only_called_functions_are_linked():
    src = f"""
target triple = "{TRIPLE}"
target datalayout = "{DATA_LAYOUT}"
declare float @__nv_logf(float)
declare double @__nv_sin(double)
define ptx_kernel void @k(ptr addrspace(1) %p, ptr addrspace(1) %q) {{
  %x = load float, ptr addrspace(1) %p
  %y = call float @__nv_logf(float %x)
  store float %y, ptr addrspace(1) %p
  %a = load double, ptr addrspace(1) %q
  %b = call double @__nv_sin(double %a)
  store double %b, ptr addrspace(1) %q
  ret void
}}
"""
    mod = llvm.parse_assembly(src)
    libdevice_link.link(mod, LIBDEVICE)
    mod.verify()
    defined = {f.name: f.linkage for f in mod.functions if not f.is_declaration}
    # sin's Payne-Hanek reduction is a noinline function of libdevice's own
    want = {"k", "__nv_logf", "__nv_sin", "__internal_trig_reduction_slowpathd"}
    assert set(defined) == want, sorted(defined)
    assert {v for k, v in defined.items() if k != "k"} == {llvm.Linkage.internal}
    assert len(libdevice_link._defined(LIBDEVICE)) > 300  # from a library of hundreds
    text = ptx.optimize(str(mod), "sm_90")
    assert not re.search(r"call .*@__nvvm_reflect", text)  # folded (reflect-ftz)
    assert not re.search(r"@__nv_\w+\(", text)  # inlined, dropped


ALL_GROUPS = [(k, tuple(sorted(v))) for k, v in sorted(GROUPS.items())] + [
    (k, tuple(sorted(v))) for k, v in sorted(LIBDEVICE_ONLY_GROUPS.items())
]  # (the functions tritium has no routine for: lgamma, j0, erfinv, ... here only)


@needs_libdevice
@pytest.mark.parametrize("key,names", ALL_GROUPS,
                         ids=[f"{'_'.join(k[0])}-{k[1]}-{len(n)}" for k, n in ALL_GROUPS])  # fmt: skip
def test_every_libdevice_function_assembles(libdevice_mode, key, names, ptxas):
    args, ret = key
    text = compile_ptx(list(names), args, ret)
    assert ".extern" not in text and "__nv_" not in text  # every __nv_* inlined
    # what remains called is libdevice's own noinline helpers, defined in the PTX
    assert _called(text) <= _defined_funcs(text), _called(text) - _defined_funcs(text)
    assemble(text, "sm_90")


@needs_libdevice
def test_cache_keys_differ(monkeypatch, tmp_path):
    spec = _spec()
    opts = compiler.Options()
    default = compiler.cache_key(math_kernel, spec, opts)
    assert default is not None
    mode = compiler.cache_key(math_kernel, spec, opts, LIBDEVICE)
    assert mode not in (None, default)
    other = tmp_path / "libdevice.10.bc"
    other.write_bytes(open(LIBDEVICE, "rb").read() + b"\0")
    assert compiler.cache_key(math_kernel, spec, opts, str(other)) not in (default, mode)


@needs_libdevice
def test_jit_cache_does_not_mix_the_modes(monkeypatch, tmp_path):
    """A kernel compiled (and cached on disk) in the default mode is compiled again in
    libdevice mode, not loaded from the cache."""
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    spec = _spec()
    opts = compiler.Options(arch="sm_90")
    monkeypatch.delenv("TRITIUM_LIBDEVICE", raising=False)
    a = compiler.compile_kernel(math_kernel, spec, opts, cache=True, stop="ptx")
    monkeypatch.setenv("TRITIUM_LIBDEVICE", LIBDEVICE)
    b = compiler.compile_kernel(math_kernel, spec, opts, cache=True, stop="ptx")
    assert _nv_calls(a.asm["llir"]) == set() and _nv_calls(b.asm["llir"]) == {"__nv_logf"}
    monkeypatch.delenv("TRITIUM_LIBDEVICE")
    c = compiler.compile_kernel(math_kernel, spec, opts, cache=True, stop="ptx")
    assert c.asm["ptx"] == a.asm["ptx"]


def test_missing_file_is_a_clear_error(monkeypatch, tmp_path):
    missing = tmp_path / "nowhere" / "libdevice.10.bc"
    monkeypatch.setenv("TRITIUM_LIBDEVICE", str(missing))
    with pytest.raises(LibdeviceNotFoundError, match="TRITIUM_LIBDEVICE=.*is not a file"):
        _compile("log")
    assert issubclass(LibdeviceNotFoundError, TritiumError)


def test_auto_without_libdevice_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(libdevice_link, "candidates", lambda: [tmp_path / "libdevice.10.bc"])
    monkeypatch.setenv("TRITIUM_LIBDEVICE", "auto")
    with pytest.raises(LibdeviceNotFoundError, match="no libdevice.10.bc found .* unset it"):
        _compile("log")


def test_a_folder_holding_libdevice_is_accepted(tmp_path):
    (tmp_path / "libdevice.10.bc").write_bytes(b"BC")
    assert libdevice_link.find(str(tmp_path)) == tmp_path / "libdevice.10.bc"


def test_auto_looks_in_cuda_home_and_the_triton_package(monkeypatch, tmp_path):
    home = tmp_path / "cuda"
    monkeypatch.setenv("CUDA_HOME", str(home))
    monkeypatch.setattr(libdevice_link, "_triton_copy", lambda: tmp_path / "triton.bc")
    where = libdevice_link.candidates()
    assert where[0] == tmp_path / "triton.bc"  # upstream's own copy first
    assert where[1] == home / "nvvm" / "libdevice" / "libdevice.10.bc"
    (home / "nvvm" / "libdevice").mkdir(parents=True)
    where[1].write_bytes(b"BC")
    assert libdevice_link.find("auto") == where[1]


@needs_libdevice
def test_a_function_the_file_lacks_is_a_located_error(libdevice_mode, monkeypatch):
    monkeypatch.setattr(libdevice_link, "defines", lambda path, symbol: symbol != "__nv_logf")
    with pytest.raises(NotSupportedError, match=r"test_libdevice_mode.py:\d+:\d+: error: .*__nv_logf"):
        _compile("log")
