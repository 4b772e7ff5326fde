"""More hand-written TTGIR kernels (see kernels.py): control flow, masks with `other`,
math functions, asserts, replicated layouts and register-only layout conversions."""

from __future__ import annotations

import numpy as np

from tests.codegen.kernels import B1, B4, CASES, Case, case, close, module, rng

# --------------------------------------------------------------------------- scf.for

T = "tensor<1024xf32, #blocked>"
TI = "tensor<1024xi32, #blocked>"
TP = "tensor<1024x!tt.ptr<f32>, #blocked>"

# out[i] = sum_k x[k * n + i]; once with offsets from the induction variable, once with
# a loop-carried tensor of pointers.
SUM_ROWS = module(
    B4,
    f"""
  tt.func public @sum_rows(%x_ptr: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}, %out_ptr: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}, %out2_ptr: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}, %n: i32 {{tt.divisibility = 16 : i32}}, %K: i32) attributes {{noinline = false}} {{
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c1024 = arith.constant 1024 : i32
    %zero = arith.constant dense<0.0> : {T}
    %pid = tt.get_program_id x : i32
    %start = arith.muli %pid, %c1024 : i32
    %range = tt.make_range {{end = 1024 : i32, start = 0 : i32}} : {TI}
    %starts = tt.splat %start : i32 -> {TI}
    %offs = arith.addi %starts, %range : {TI}
    %ns = tt.splat %n : i32 -> {TI}
    %mask = arith.cmpi slt, %offs, %ns : {TI}
    %xs = tt.splat %x_ptr : !tt.ptr<f32> -> {TP}
    %acc = scf.for %k = %c0 to %K step %c1 iter_args(%a = %zero) -> ({T}) : i32 {{
      %kn = arith.muli %k, %n : i32
      %kns = tt.splat %kn : i32 -> {TI}
      %o = arith.addi %kns, %offs : {TI}
      %p = tt.addptr %xs, %o : {TP}, {TI}
      %v = tt.load %p, %mask : {TP}
      %s = arith.addf %a, %v : {T}
      scf.yield %s : {T}
    }}
    %os = tt.splat %out_ptr : !tt.ptr<f32> -> {TP}
    %op = tt.addptr %os, %offs : {TP}, {TI}
    tt.store %op, %acc, %mask : {TP}
    %p0 = tt.addptr %xs, %offs : {TP}, {TI}
    %res:2 = scf.for %k = %c0 to %K step %c1 iter_args(%a = %zero, %p = %p0) -> ({T}, {TP}) : i32 {{
      %v = tt.load %p, %mask : {TP}
      %s = arith.addf %a, %v : {T}
      %next = tt.addptr %p, %ns : {TP}, {TI}
      scf.yield %s, %next : {T}, {TP}
    }}
    %o2s = tt.splat %out2_ptr : !tt.ptr<f32> -> {TP}
    %o2p = tt.addptr %o2s, %offs : {TP}, {TI}
    tt.store %o2p, %res#0, %mask : {TP}
    tt.return
  }}""",
)


@case("scf_for", SUM_ROWS, ptx_has=("ld.global.v4.b32",), ptx_lacks=(".local",))
def _(gpu):
    n, K = 2048 + 32, 5
    x = rng(8).standard_normal((K, n)).astype(np.float32)
    out, out2 = np.zeros(n, np.float32), np.zeros(n, np.float32)
    gpu.run(SUM_ROWS, ((n + 1023) // 1024,), [x, out, out2, n, K])
    close(out, x.astype(np.float64).sum(0), rtol=1e-5)
    close(out2, x.astype(np.float64).sum(0), rtol=1e-5)


# --------------------------------------------------------------------------- early return

EARLY_RETURN = module(
    B1,
    f"""
  tt.func public @early_return(%x_ptr: !tt.ptr<f32>, %out_ptr: !tt.ptr<f32>, %n_rows: i32) attributes {{noinline = false}} {{
    %pid = tt.get_program_id x : i32
    %done = arith.cmpi sge, %pid, %n_rows : i32
    cf.cond_br %done, ^bb1, ^bb2
  ^bb1:
    tt.return
  ^bb2:
    %c1024 = arith.constant 1024 : i32
    %start = arith.muli %pid, %c1024 : i32
    %row = tt.addptr %x_ptr, %start : !tt.ptr<f32>, i32
    %orow = tt.addptr %out_ptr, %start : !tt.ptr<f32>, i32
    %range = tt.make_range {{end = 1024 : i32, start = 0 : i32}} : {TI}
    %rs = tt.splat %row : !tt.ptr<f32> -> {TP}
    %rp = tt.addptr %rs, %range : {TP}, {TI}
    %v = tt.load %rp : {TP}
    %one = arith.constant dense<1.0> : {T}
    %w = arith.addf %v, %one : {T}
    %os = tt.splat %orow : !tt.ptr<f32> -> {TP}
    %op = tt.addptr %os, %range : {TP}, {TI}
    cf.br ^bb3(%op, %w : {TP}, {T})
  ^bb3(%ptrs: {TP}, %vals: {T}):
    tt.store %ptrs, %vals : {TP}
    tt.return
  }}""",
)


@case("early_return", EARLY_RETURN, ptx_has=("ret;",), ptx_lacks=(".local",))
def _(gpu):
    rows = 3
    x = rng(9).standard_normal((rows + 2, 1024)).astype(np.float32)
    out = np.full((rows + 2, 1024), 9.0, np.float32)
    gpu.run(EARLY_RETURN, (rows + 2,), [x, out, rows])  # two programs return at once
    close(out[:rows], x[:rows].astype(np.float64) + 1.0)
    assert (out[rows:] == 9.0).all()


# --------------------------------------------------------------------------- mask + other

MASK_OTHER = module(
    B4,
    f"""
  tt.func public @mask_other(%x_ptr: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}, %out_ptr: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}, %n: i32 {{tt.divisibility = 16 : i32}}) attributes {{noinline = false}} {{
    %range = tt.make_range {{end = 1024 : i32, start = 0 : i32}} : {TI}
    %ns = tt.splat %n : i32 -> {TI}
    %mask = arith.cmpi slt, %range, %ns : {TI}
    %other = arith.constant dense<7.0> : {T}
    %xs = tt.splat %x_ptr : !tt.ptr<f32> -> {TP}
    %xp = tt.addptr %xs, %range : {TP}, {TI}
    %x = tt.load %xp, %mask, %other : {TP}
    %os = tt.splat %out_ptr : !tt.ptr<f32> -> {TP}
    %op = tt.addptr %os, %range : {TP}, {TI}
    tt.store %op, %x : {TP}
    tt.return
  }}""",
)


@case("mask_other", MASK_OTHER, ptx_has=("ld.global.v4.b32", "mov.b32"), ptx_lacks=(".local",))
def _(gpu):
    n = 496
    x = rng(10).standard_normal(n).astype(np.float32)
    out = np.zeros(1024, np.float32)
    gpu.run(MASK_OTHER, (1,), [x, out, n])
    close(out[:n], x)
    assert (out[n:] == 7.0).all()


# --------------------------------------------------------------------------- scf.if / while, scalars

SCALARS = module(
    B1,
    f"""
  tt.func public @scalars(%x_ptr: !tt.ptr<f32>, %out_ptr: !tt.ptr<f32>, %count_ptr: !tt.ptr<i32>, %limit: i32, %flag: i32) attributes {{noinline = false}} {{
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %range = tt.make_range {{end = 1024 : i32, start = 0 : i32}} : {TI}
    %xs = tt.splat %x_ptr : !tt.ptr<f32> -> {TP}
    %xp = tt.addptr %xs, %range : {TP}, {TI}
    %x = tt.load %xp : {TP}
    %on = arith.cmpi ne, %flag, %c0 : i32
    %y = scf.if %on -> ({T}) {{
      %d = arith.addf %x, %x : {T}
      scf.yield %d : {T}
    }} else {{
      %m = arith.negf %x : {T}
      scf.yield %m : {T}
    }}
    %os = tt.splat %out_ptr : !tt.ptr<f32> -> {TP}
    %op = tt.addptr %os, %range : {TP}, {TI}
    tt.store %op, %y : {TP}
    %res:2 = scf.while (%v = %c1, %i = %c0) : (i32, i32) -> (i32, i32) {{
      %go = arith.cmpi slt, %v, %limit : i32
      scf.condition(%go) %v, %i : i32, i32
    }} do {{
    ^bb0(%v2: i32, %i2: i32):
      %v3 = arith.muli %v2, %c2 : i32
      %i3 = arith.addi %i2, %c1 : i32
      scf.yield %v3, %i3 : i32, i32
    }}
    tt.store %count_ptr, %res#1 : !tt.ptr<i32>
    %first = tt.load %x_ptr : !tt.ptr<f32>
    %last = tt.addptr %out_ptr, %limit : !tt.ptr<f32>, i32
    tt.store %last, %first : !tt.ptr<f32>
    tt.return
  }}""",
)


@case("scf_if_while_scalars", SCALARS, ptx_lacks=(".local",))
def _(gpu):
    x = rng(11).standard_normal(1024).astype(np.float32)
    for flag in (0, 1):
        out = np.zeros(2048, np.float32)
        count = np.zeros(1, np.int32)
        gpu.run(SCALARS, (1,), [x, out, count, 1500, flag])
        close(out[:1024], 2.0 * x if flag else -x)
        assert count[0] == 11  # 2**11 = 2048 is the first power of two >= 1500
        assert out[1500] == x[0]


# --------------------------------------------------------------------------- math

UNARY = [
    "exp",
    "exp2",
    "log",
    "log2",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "floor",
    "ceil",
    "absf",
    "tanh",
]
BINARY = ["maximumf", "minimumf", "maxnumf", "minnumf", "divf"]


def _math_kernel() -> str:
    lines = []
    for j, name in enumerate(UNARY + BINARY + ["fma", "precise_divf", "precise_sqrt"]):
        if name in UNARY:
            expr = f"%r{j} = math.{name} %x : {T}"
        elif name in BINARY:
            expr = f"%r{j} = arith.{name} %x, %y : {T}"
        elif name == "fma":
            expr = f"%r{j} = math.fma %x, %y, %x : {T}"
        elif name == "precise_divf":
            expr = f"%r{j} = tt.precise_divf %x, %y : {T}"
        else:
            expr = f"%r{j} = tt.precise_sqrt %x : {T}"
        lines.append(
            f"""
    {expr}
    %o{j}c = arith.constant dense<{j * 1024}> : {TI}
    %o{j}i = arith.addi %range, %o{j}c : {TI}
    %o{j}p = tt.addptr %outs, %o{j}i : {TP}, {TI}
    tt.store %o{j}p, %r{j} : {TP}"""
        )
    return module(
        B4,
        f"""
  tt.func public @math_ops(%x_ptr: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}, %y_ptr: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}, %out_ptr: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}) attributes {{noinline = false}} {{
    %range = tt.make_range {{end = 1024 : i32, start = 0 : i32}} : {TI}
    %xs = tt.splat %x_ptr : !tt.ptr<f32> -> {TP}
    %xp = tt.addptr %xs, %range : {TP}, {TI}
    %x = tt.load %xp : {TP}
    %ys = tt.splat %y_ptr : !tt.ptr<f32> -> {TP}
    %yp = tt.addptr %ys, %range : {TP}, {TI}
    %y = tt.load %yp : {TP}
    %outs = tt.splat %out_ptr : !tt.ptr<f32> -> {TP}{"".join(lines)}
    tt.return
  }}""",
    )


MATH = _math_kernel()


@case(
    "math",
    MATH,
    ptx_has=(
        "ex2.approx.f32",
        "sqrt.approx.ftz.f32",
        "rsqrt.approx.ftz.f32",
        "sqrt.rn.f32",
        "div.rn.f32",
        "max.NaN.f32",
        "div.full.f32",
    ),
    ptx_lacks=(".local", "lg2.approx", "sin.approx", "cos.approx", "tanh.approx"),
    max_registers=128,
)
def _(gpu):
    r = rng(12)
    x = (r.standard_normal(1024) * 3).astype(np.float32)
    x[:8] = [0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, 1e-30, 80.0]
    y = (r.standard_normal(1024) * 3).astype(np.float32)
    y[:8] = [-0.0, 0.0, np.nan, 1.0, 2.0, 3.0, 4.0, 5.0]
    names = UNARY + BINARY + ["fma", "precise_divf", "precise_sqrt"]
    out = np.zeros(len(names) * 1024, np.float32)
    gpu.run(MATH, (1,), [x, y, out])
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    ulp2 = 2.0 * 2.0**-23  # accurate log / log2 / sin / cos / tanh: within 2 ulp (libm/)
    with np.errstate(all="ignore"):
        want = {
            "exp": (np.exp(xd), 2e-6, 1e-30),
            "exp2": (np.exp2(xd), 2e-6, 1e-30),
            "log": (np.log(xd), ulp2, 1e-37),
            "log2": (np.log2(xd), ulp2, 1e-37),
            "sqrt": (np.sqrt(xd), 1e-6, 2e-19),  # .ftz: a subnormal input gives 0
            "rsqrt": (1 / np.sqrt(xd), 1e-6, 0),
            "sin": (np.sin(xd), ulp2, 1e-37),
            "cos": (np.cos(xd), ulp2, 1e-37),
            "floor": (np.floor(xd), 0, 0),
            "ceil": (np.ceil(xd), 0, 0),
            "absf": (np.abs(xd), 0, 0),
            "tanh": (np.tanh(xd), ulp2, 1e-37),  # accurate (libm): 1.5 ulp
            "maximumf": (np.maximum(xd, yd), 0, 0),
            "minimumf": (np.minimum(xd, yd), 0, 0),
            "maxnumf": (np.fmax(xd, yd), 0, 0),
            "minnumf": (np.fmin(xd, yd), 0, 0),
            "divf": (xd / yd, 3e-7, 0),  # div.full.f32: 2 ulp
            "fma": (xd * yd + xd, 1e-6, 1e-6),
            "precise_divf": ((x / y).astype(np.float64), 0, 0),
            "precise_sqrt": (np.sqrt(x).astype(np.float64), 0, 0),
        }
    for j, name in enumerate(names):
        got = out[j * 1024 : (j + 1) * 1024].astype(np.float64)
        ref, rtol, atol = want[name]
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)
    # maximum / minimum order -0 < +0 (LLVM's llvm.maximum, PTX max.NaN).
    if getattr(gpu, "signed_zero_min_max", True):
        assert np.signbit(out[13 * 1024 + 0]) and not np.signbit(out[12 * 1024 + 0])
    # log / sin / cos over the whole f32 range: subnormals, the Payne-Hanek path (|x| >= 2^17).
    big = np.exp(r.uniform(-100, 88, 1024)).astype(np.float32) * r.choice([-1, 1], 1024)
    big[:10] = [1e-40, 2.5e5, -1e6, 3e38, 1e10, -7e20, 131072.0, 131071.99, 1e-45, 5e-39]
    big = big.astype(np.float32)
    gpu.run(MATH, (1,), [big, y, out])
    bd = big.astype(np.float64)
    with np.errstate(all="ignore"):
        ref = {"log": np.log(bd), "log2": np.log2(bd), "sin": np.sin(bd), "cos": np.cos(bd)}
    for name, want_v in ref.items():
        j = names.index(name)
        got = out[j * 1024 : (j + 1) * 1024].astype(np.float64)
        np.testing.assert_allclose(got, want_v, rtol=ulp2, atol=1e-37, equal_nan=True, err_msg=name)


# --------------------------------------------------------------------------- assert

ASSERT = module(
    B1,
    f"""
  tt.func public @assert_positive(%x_ptr: !tt.ptr<f32>) attributes {{noinline = false}} {{
    %range = tt.make_range {{end = 1024 : i32, start = 0 : i32}} : {TI}
    %xs = tt.splat %x_ptr : !tt.ptr<f32> -> {TP}
    %xp = tt.addptr %xs, %range : {TP}, {TI}
    %x = tt.load %xp : {TP}
    %zero = arith.constant dense<0.0> : {T}
    %ok = arith.cmpf ogt, %x, %zero : {T}
    tt.assert %ok, "x must be positive" : tensor<1024xi1, #blocked> loc("kernel.py":12:4)
    tt.return
  }}""",
)
CASES["assert"] = Case(
    "assert", ASSERT, ("call.uni", "__assertfail"), (".local",), None, {"assert"}
)


# --------------------------------------------------------------------------- replication

REPLICATED = module(
    B1,
    """
  tt.func public @replicated(%x_ptr: !tt.ptr<f32>, %out_ptr: !tt.ptr<f32>) attributes {noinline = false} {
    %range = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #blocked>
    %xs = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>, #blocked>
    %xp = tt.addptr %xs, %range : tensor<64x!tt.ptr<f32>, #blocked>, tensor<64xi32, #blocked>
    %x = tt.load %xp : tensor<64x!tt.ptr<f32>, #blocked>
    %one = arith.constant dense<1.0> : tensor<64xf32, #blocked>
    %y = arith.addf %x, %one : tensor<64xf32, #blocked>
    %os = tt.splat %out_ptr : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>, #blocked>
    %op = tt.addptr %os, %range : tensor<64x!tt.ptr<f32>, #blocked>, tensor<64xi32, #blocked>
    tt.store %op, %y : tensor<64x!tt.ptr<f32>, #blocked>
    tt.return
  }""",
)


@case("replicated_store", REPLICATED, ptx_has=("st.global.b32",), ptx_lacks=(".local",))
def _(gpu):
    x = rng(13).standard_normal(64).astype(np.float32)
    out = np.zeros(64, np.float32)
    gpu.run(REPLICATED, (1,), [x, out])
    close(out, x.astype(np.float64) + 1)


# --------------------------------------------------------------------------- convert_layout

CONVERT = module(
    "\n".join(
        [
            "#a = #ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>",
            "#b = #ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [0, 1]}>",
            "#ra = #ttg.slice<{dim = 1, parent = #a}>",
            "#ca = #ttg.slice<{dim = 0, parent = #a}>",
        ]
    ),
    """
  tt.func public @convert(%x_ptr: !tt.ptr<f32>, %out_ptr: !tt.ptr<f32>) attributes {noinline = false} {
    %c256 = arith.constant dense<256> : tensor<4x1xi32, #a>
    %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32, #ra>
    %c = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32, #ca>
    %r2 = tt.expand_dims %r {axis = 1 : i32} : tensor<4xi32, #ra> -> tensor<4x1xi32, #a>
    %c2 = tt.expand_dims %c {axis = 0 : i32} : tensor<256xi32, #ca> -> tensor<1x256xi32, #a>
    %rr = arith.muli %r2, %c256 : tensor<4x1xi32, #a>
    %rb = tt.broadcast %rr : tensor<4x1xi32, #a> -> tensor<4x256xi32, #a>
    %cb = tt.broadcast %c2 : tensor<1x256xi32, #a> -> tensor<4x256xi32, #a>
    %offs = arith.addi %rb, %cb : tensor<4x256xi32, #a>
    %xs = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<4x256x!tt.ptr<f32>, #a>
    %xp = tt.addptr %xs, %offs : tensor<4x256x!tt.ptr<f32>, #a>, tensor<4x256xi32, #a>
    %x = tt.load %xp : tensor<4x256x!tt.ptr<f32>, #a>
    %xb = ttg.convert_layout %x : tensor<4x256xf32, #a> -> tensor<4x256xf32, #b>
    %ob = ttg.convert_layout %offs : tensor<4x256xi32, #a> -> tensor<4x256xi32, #b>
    %os = tt.splat %out_ptr : !tt.ptr<f32> -> tensor<4x256x!tt.ptr<f32>, #b>
    %op = tt.addptr %os, %ob : tensor<4x256x!tt.ptr<f32>, #b>, tensor<4x256xi32, #b>
    %y = arith.mulf %xb, %xb : tensor<4x256xf32, #b>
    tt.store %op, %y : tensor<4x256x!tt.ptr<f32>, #b>
    tt.return
  }""",
)


@case("convert_layout_registers", CONVERT, ptx_lacks=(".local",))
def _(gpu):
    x = rng(14).standard_normal((4, 256)).astype(np.float32)
    out = np.zeros((4, 256), np.float32)
    gpu.run(CONVERT, (1,), [x, out])
    close(out, x.astype(np.float64) ** 2, rtol=1e-6)


__all__ = ["B4", "CASES"]


# --------------------------------------------------------------------------- loop-carried pointers


def advance_kernel(step_div: str) -> str:
    return module(
        B4,
        f"""
  tt.func public @advance(%x_ptr: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}, %out_ptr: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}, %out2_ptr: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}, %step: i32{step_div}, %K: i32) attributes {{noinline = false}} {{
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : {T}
    %range = tt.make_range {{end = 1024 : i32, start = 0 : i32}} : {TI}
    %xs = tt.splat %x_ptr : !tt.ptr<f32> -> {TP}
    %p0 = tt.addptr %xs, %range : {TP}, {TI}
    %steps = tt.splat %step : i32 -> {TI}
    %r:2 = scf.for %k = %c0 to %K step %c1 iter_args(%a = %zero, %p = %p0) -> ({T}, {TP}) : i32 {{
      %v = tt.load %p : {TP}
      %s = arith.addf %a, %v : {T}
      %next = tt.addptr %p, %steps : {TP}, {TI}
      scf.yield %s, %next : {T}, {TP}
    }}
    %os = tt.splat %out_ptr : !tt.ptr<f32> -> {TP}
    %op = tt.addptr %os, %range : {TP}, {TI}
    tt.store %op, %r#0 : {TP}
    %q:2 = scf.for %k = %c0 to %K step %c1 iter_args(%a = %zero, %off = %c0) -> ({T}, i32) : i32 {{
      %offs = tt.splat %off : i32 -> {TI}
      %o = arith.addi %offs, %range : {TI}
      %p = tt.addptr %xs, %o : {TP}, {TI}
      %v = tt.load %p : {TP}
      %s = arith.addf %a, %v : {T}
      %next = arith.addi %off, %step : i32
      scf.yield %s, %next : {T}, i32
    }}
    %o2s = tt.splat %out2_ptr : !tt.ptr<f32> -> {TP}
    %o2p = tt.addptr %o2s, %range : {TP}, {TI}
    tt.store %o2p, %q#0 : {TP}
    tt.return
  }}""",
    )


def _advance_check(name: str, step: int):
    def check(gpu):
        K = 4
        x = rng(15).standard_normal(K * step + 1024).astype(np.float32)
        out, out2 = np.zeros(1024, np.float32), np.zeros(1024, np.float32)
        gpu.run(CASES[name].ttgir, (1,), [x, out, out2, step, K])
        want = sum(x[k * step : k * step + 1024].astype(np.float64) for k in range(K))
        close(out, want, rtol=1e-5)
        close(out2, want, rtol=1e-5)

    return check


# With a step divisible by 16 the loop-carried pointers stay aligned: vector loads in both
# loops (the axis info's fixed point over each loop keeps the pointers' divisibility).
# With an odd step the carried pointers lose it: scalar loads (a v4 load there would
# fault: misaligned).
CASES["loop_pointers_aligned"] = Case(
    "loop_pointers_aligned",
    advance_kernel(" {tt.divisibility = 16 : i32}"),
    ("ld.global.v4.b32",),
    (".local", "ld.global.b32"),
    _advance_check("loop_pointers_aligned", 1040),
)
CASES["loop_pointers_unaligned"] = Case(
    "loop_pointers_unaligned",
    advance_kernel(""),
    ("ld.global.b32", "st.global.v4.b32"),
    (".local", "ld.global.v4"),
    _advance_check("loop_pointers_unaligned", 1027),
)


# --------------------------------------------------------------------------- bitcast, int <-> ptr

BITS = module(
    B4,
    f"""
  tt.func public @bits(%x_ptr: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}, %out_ptr: !tt.ptr<i32> {{tt.divisibility = 16 : i32}}, %n_ptr: !tt.ptr<i32>) attributes {{noinline = false}} {{
    %c4 = arith.constant 4 : i64
    %pid = tt.get_program_id x : i32
    %np = tt.get_num_programs x : i32
    %c1024 = arith.constant 1024 : i32
    %start = arith.muli %pid, %c1024 : i32
    %range = tt.make_range {{end = 1024 : i32, start = 0 : i32}} : {TI}
    %starts = tt.splat %start : i32 -> {TI}
    %offs = arith.addi %starts, %range : {TI}
    %base = tt.ptr_to_int %x_ptr : !tt.ptr<f32> -> i64
    %offs64 = arith.extsi %offs : {TI} to tensor<1024xi64, #blocked>
    %four = tt.splat %c4 : i64 -> tensor<1024xi64, #blocked>
    %bytes = arith.muli %offs64, %four : tensor<1024xi64, #blocked>
    %bases = tt.splat %base : i64 -> tensor<1024xi64, #blocked>
    %addrs = arith.addi %bases, %bytes : tensor<1024xi64, #blocked>
    %xp = tt.int_to_ptr %addrs : tensor<1024xi64, #blocked> -> {TP}
    %x = tt.load %xp : {TP}
    %xi = tt.bitcast %x : {T} -> {TI}
    %os = tt.splat %out_ptr : !tt.ptr<i32> -> tensor<1024x!tt.ptr<i32>, #blocked>
    %op = tt.addptr %os, %offs : tensor<1024x!tt.ptr<i32>, #blocked>, {TI}
    tt.store %op, %xi : tensor<1024x!tt.ptr<i32>, #blocked>
    %slot = tt.addptr %n_ptr, %pid : !tt.ptr<i32>, i32
    tt.store %slot, %np : !tt.ptr<i32>
    tt.return
  }}""",
)


@case(
    "bitcast_int_ptr",
    BITS,
    ptx_has=("%nctaid.x", "ld.global.v4.b32", "st.global.v4.b32"),
    ptx_lacks=(".local",),
)
def _(gpu):
    x = rng(18).standard_normal(3 * 1024).astype(np.float32)
    out = np.zeros(3 * 1024, np.int32)
    nprog = np.zeros(3, np.int32)
    gpu.run(BITS, (3,), [x, out, nprog])
    np.testing.assert_array_equal(out, x.view(np.int32))
    assert (nprog == 3).all()
