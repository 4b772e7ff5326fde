"""`tl.extra.libdevice` / `tl.extra.cuda.libdevice`: upstream Triton's libdevice functions
with its names, signatures and dispatch, as `tt.extern_elementwise` ops carrying the
libdevice symbol (`__nv_tanhf`, ...). The backend implements each symbol itself
(codegen/lower/libdevice.py), or with TRITIUM_LIBDEVICE calls NVIDIA's (tritium does not
ship the bitcode: it links a libdevice.10.bc found on the machine).

    y = libdevice.tanh(x)   ->  tt.extern_elementwise %x {..., symbol = "__nv_tanhf"}

Dispatch, as upstream's `extern_elementwise`: the arguments are broadcast together and the
symbol is chosen by their dtypes (an exact match first, then float arguments promoted to
the widest of them). fp16 / bf16 arguments are computed in fp32 and the result rounded
back (upstream has no fp16 versions). The functions tritium's own math has no GPU routine
for (`LIBDEVICE_ONLY`: Bessel functions, gamma functions, inverse error functions, ...)
compile to the same TTIR; on the GPU they need TRITIUM_LIBDEVICE (a located
NotSupportedError says so), the interpreter computes them (but y0, y1, yn, rcp64h).
"""

from __future__ import annotations

import inspect

from tritium.frontend import core
from tritium.frontend.builtins import builtin
from tritium.frontend.core import unwrap

# dtype letters: f fp32, d fp64, i int32, u uint32, l int64, L uint64
_DT = {"f": "fp32", "d": "fp64", "i": "int32", "u": "uint32", "l": "int64", "L": "uint64"}


def _fd(name: str, arity: int = 1) -> dict[str, str]:
    """fp32 -> __nv_<name>f, fp64 -> __nv_<name>."""
    return {"f" * arity + ">f": f"__nv_{name}f", "d" * arity + ">d": f"__nv_{name}"}


SIGNATURES: dict[str, dict[str, str]] = {
    "clz": {"i>i": "__nv_clz", "l>i": "__nv_clzll"},
    "popc": {"i>i": "__nv_popc", "l>i": "__nv_popcll"},
    "byte_perm": {"iii>i": "__nv_byte_perm"},
    "mulhi": {"ii>i": "__nv_mulhi", "uu>u": "__nv_umulhi", "ll>l": "__nv_mul64hi",
              "LL>L": "__nv_umul64hi"},
    "mul24": {"ii>i": "__nv_mul24", "uu>u": "__nv_umul24"},
    "brev": {"i>i": "__nv_brev", "l>l": "__nv_brevll"},
    "sad": {"iiu>i": "__nv_sad", "uuu>u": "__nv_usad"},
    "abs": {"i>i": "__nv_abs", "l>l": "__nv_llabs", "f>f": "__nv_fabsf", "d>d": "__nv_fabs"},
    "floor": _fd("floor"), "rcp64h": {"d>d": "__nv_rcp64h"}, "rsqrt": _fd("rsqrt"),
    "ceil": _fd("ceil"), "trunc": _fd("trunc"), "exp2": _fd("exp2"),
    "saturatef": {"f>f": "__nv_saturatef"},
    "fast_dividef": {"ff>f": "__nv_fast_fdividef"},
    "sqrt": _fd("sqrt"),
    "double2float_rn": {"d>f": "__nv_double2float_rn"},
    "int2double_rn": {"i>d": "__nv_int2double_rn"},
    "uint2double_rn": {"u>d": "__nv_uint2double_rn"},
    "hiloint2double": {"ii>d": "__nv_hiloint2double"},
    "double2loint": {"d>i": "__nv_double2loint"}, "double2hiint": {"d>i": "__nv_double2hiint"},
    "int_as_float": {"i>f": "__nv_int_as_float"}, "float_as_int": {"f>i": "__nv_float_as_int"},
    "uint_as_float": {"u>f": "__nv_uint_as_float"}, "float_as_uint": {"f>i": "__nv_float_as_uint"},
    "longlong_as_double": {"l>d": "__nv_longlong_as_double"},
    "double_as_longlong": {"d>l": "__nv_double_as_longlong"},
    "fast_sinf": {"f>f": "__nv_fast_sinf"}, "fast_cosf": {"f>f": "__nv_fast_cosf"},
    "fast_log2f": {"f>f": "__nv_fast_log2f"}, "fast_logf": {"f>f": "__nv_fast_logf"},
    "fast_expf": {"f>f": "__nv_fast_expf"}, "fast_tanf": {"f>f": "__nv_fast_tanf"},
    "fast_exp10f": {"f>f": "__nv_fast_exp10f"}, "fast_log10f": {"f>f": "__nv_fast_log10f"},
    "fast_powf": {"ff>f": "__nv_fast_powf"},
    "hadd": {"ii>i": "__nv_hadd", "uu>u": "__nv_uhadd"},
    "rhadd": {"ii>i": "__nv_rhadd", "uu>u": "__nv_urhadd"},
    "rsqrt_rn": {"f>f": "__nv_frsqrt_rn"},
    "ffs": {"i>i": "__nv_ffs", "l>i": "__nv_ffsll"},
    "rint": _fd("rint"), "llrint": {"f>l": "__nv_llrintf", "d>l": "__nv_llrint"},
    "nearbyint": _fd("nearbyint"),
    "isnan": {"f>i": "__nv_isnanf", "d>i": "__nv_isnand"},
    "signbit": {"f>i": "__nv_signbitf", "d>i": "__nv_signbitd"},
    "copysign": _fd("copysign", 2), "finitef": {"f>i": "__nv_finitef"},
    "isinf": {"f>i": "__nv_isinff", "d>i": "__nv_isinfd"},
    "nextafter": _fd("nextafter", 2),
    "sin": _fd("sin"), "cos": _fd("cos"), "sinpi": _fd("sinpi"), "cospi": _fd("cospi"),
    "tan": _fd("tan"), "log2": _fd("log2"), "exp": _fd("exp"), "exp10": _fd("exp10"),
    "cosh": _fd("cosh"), "sinh": _fd("sinh"), "tanh": _fd("tanh"), "atan2": _fd("atan2", 2),
    "atan": _fd("atan"), "asin": _fd("asin"), "acos": _fd("acos"), "log": _fd("log"),
    "log10": _fd("log10"), "log1p": _fd("log1p"), "acosh": _fd("acosh"), "asinh": _fd("asinh"),
    "atanh": _fd("atanh"), "expm1": _fd("expm1"), "hypot": _fd("hypot", 2),
    "rhypot": _fd("rhypot", 2), "norm3d": _fd("norm3d", 3), "rnorm3d": _fd("rnorm3d", 3),
    "norm4d": _fd("norm4d", 4), "rnorm4d": _fd("rnorm4d", 4), "cbrt": _fd("cbrt"),
    "rcbrt": _fd("rcbrt"), "j0": _fd("j0"), "j1": _fd("j1"), "y0": _fd("y0"), "y1": _fd("y1"),
    "yn": {"if>f": "__nv_ynf", "id>d": "__nv_yn"}, "jn": {"if>f": "__nv_jnf", "id>d": "__nv_jn"},
    "cyl_bessel_i0": _fd("cyl_bessel_i0"), "cyl_bessel_i1": _fd("cyl_bessel_i1"),
    "erf": _fd("erf"), "erfinv": _fd("erfinv"), "erfc": _fd("erfc"), "erfcx": _fd("erfcx"),
    "erfcinv": _fd("erfcinv"), "normcdfinv": _fd("normcdfinv"), "normcdf": _fd("normcdf"),
    "lgamma": _fd("lgamma"), "ldexp": {"fi>f": "__nv_ldexpf", "di>d": "__nv_ldexp"},
    "scalbn": {"fi>f": "__nv_scalbnf", "di>d": "__nv_scalbn"}, "fmod": _fd("fmod", 2),
    "remainder": _fd("remainder", 2), "fma": _fd("fma", 3),
    "pow": {"fi>f": "__nv_powif", "di>d": "__nv_powi", "ff>f": "__nv_powf", "dd>d": "__nv_pow"},
    "tgamma": _fd("tgamma"), "round": _fd("round"),
    "llround": {"f>l": "__nv_llroundf", "d>l": "__nv_llround"},
    "fdim": _fd("fdim", 2), "ilogb": {"f>i": "__nv_ilogbf", "d>i": "__nv_ilogb"},
    "logb": _fd("logb"), "isfinited": {"d>i": "__nv_isfinited"},
    # not in upstream 3.6's CUDA module (libdevice has them): tl.minimum / tl.maximum there
    "fmin": _fd("fmin", 2), "fmax": _fd("fmax", 2),
}  # fmt: skip
for _m in ("rn", "rz", "rd", "ru"):
    SIGNATURES[f"fma_{_m}"] = {"fff>f": f"__nv_fmaf_{_m}", "ddd>d": f"__nv_fma_{_m}"}
    for _name, _f, _d, _n in (("div", "fdiv", "ddiv", 2), ("rcp", "frcp", "drcp", 1),
                              ("sqrt", "fsqrt", "dsqrt", 1), ("add", "fadd", "dadd", 2),
                              ("mul", "fmul", "dmul", 2), ("sub", "fsub", "dsub", 2)):  # fmt: skip
        SIGNATURES[f"{_name}_{_m}"] = {"f" * _n + ">f": f"__nv_{_f}_{_m}", "d" * _n + ">d": f"__nv_{_d}_{_m}"}
    SIGNATURES[f"double2float_{_m}"] = {"d>f": f"__nv_double2float_{_m}"}
    for _s, _l in (("float", "f"), ("double", "d")):
        SIGNATURES[f"{_s}2int_{_m}"] = {f"{_l}>i": f"__nv_{_s}2int_{_m}"}
        SIGNATURES[f"{_s}2uint_{_m}"] = {f"{_l}>i": f"__nv_{_s}2uint_{_m}"}
        SIGNATURES[f"{_s}2ll_{_m}"] = {f"{_l}>l": f"__nv_{_s}2ll_{_m}"}
        SIGNATURES[f"{_s}2ull_{_m}"] = {f"{_l}>l": f"__nv_{_s}2ull_{_m}"}
    SIGNATURES[f"int2float_{_m}"] = {"i>f": f"__nv_int2float_{_m}"}
    SIGNATURES[f"uint2float_{_m}"] = {"u>f": f"__nv_uint2float_{_m}"}
    SIGNATURES[f"ll2float_{_m}"] = {"l>f": f"__nv_ll2float_{_m}"}
    SIGNATURES[f"ull2float_{_m}"] = {"L>f": f"__nv_ull2float_{_m}"}
    SIGNATURES[f"ll2double_{_m}"] = {"l>d": f"__nv_ll2double_{_m}"}
    SIGNATURES[f"ull2double_{_m}"] = {"L>d": f"__nv_ull2double_{_m}"}

# upstream casts these int32 results to int1
_TO_BOOL = {"isnan", "isinf", "finitef", "isfinited"}
# upstream names tritium's own math has no GPU routine for: they compile to TTIR (and run in
# the interpreter, runtime/libdevice_special.py, but for the Bessel functions of the second
# kind and rcp64h), and reach the GPU as calls of NVIDIA's libdevice with TRITIUM_LIBDEVICE
# (the backend says so, located, without it)
LIBDEVICE_ONLY = {
    "rcp64h", "j0", "j1", "y0", "y1", "jn", "yn", "cyl_bessel_i0", "cyl_bessel_i1",
    "erfinv", "erfcx", "erfcinv", "normcdfinv", "normcdf", "lgamma", "tgamma",
}  # fmt: skip


def _parse(sig: str) -> tuple[tuple[str, ...], str]:
    args, ret = sig.split(">")
    return tuple(_DT[c] for c in args), _DT[ret]


def _make(name: str, table: dict[str, str]):
    sigs = {_parse(k)[0]: (v, _parse(k)[1]) for k, v in table.items()}
    arity = len(next(iter(sigs)))

    def call(args, _semantic, _generator):
        out = _semantic.extern_elementwise(name, [unwrap(a) for a in args], sigs)
        return _semantic.cast(out, core.int1) if name in _TO_BOOL else out

    def fn(*args, _semantic=None, _generator=None):
        return call(args, _semantic, _generator)

    # a real signature (arg0, arg1, ...): the code generator checks calls against it
    kw = inspect.Parameter.KEYWORD_ONLY
    fn.__signature__ = inspect.Signature(
        [inspect.Parameter(f"arg{k}", inspect.Parameter.POSITIONAL_OR_KEYWORD) for k in range(arity)]
        + [inspect.Parameter("_semantic", kw, default=None), inspect.Parameter("_generator", kw, default=None)]
    )
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"libdevice's {name} ({', '.join(sorted(v[0] for v in sigs.values()))})."
    return builtin(fn)


FUNCTIONS = {name: _make(name, table) for name, table in SIGNATURES.items()}
globals().update(FUNCTIONS)
__all__ = sorted(FUNCTIONS) + ["LIBDEVICE_ONLY", "SIGNATURES"]
