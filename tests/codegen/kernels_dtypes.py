"""More hand-written TTGIR kernels (see kernels.py): every element width through loads and
stores (vector packing, `other`), and f16 / bf16 / f64 arithmetic with cache modifiers."""

from __future__ import annotations

import numpy as np

from tests.codegen.kernels import B4, B8, CASES, Case, add_kernel, bf16_bits_rne, close, module, rng

# --------------------------------------------------------------------------- copies, every width

COPIES = [  # (element type, sizePerThread, numpy dtype, the load PTX expected)
    ("f32", 4, np.float32, "ld.global.v4.b32"),
    ("f16", 8, np.float16, "ld.global.v4.b32"),
    ("f16", 2, np.float16, "ld.global.b32"),
    ("f16", 1, np.float16, "ld.global.b16"),
    ("bf16", 4, np.uint16, "ld.global.v2.b32"),
    ("f64", 2, np.float64, "ld.global.v2.b64"),
    ("i64", 1, np.int64, "ld.global.b64"),
    ("i8", 16, np.int8, "ld.global.v4.b32"),
    ("i8", 4, np.int8, "ld.global.b32"),
    ("i8", 1, np.int8, "ld.global.b8"),
]


def copy_kernel(ty: str, spt: int) -> str:
    layout = f"#blocked = #ttg.blocked<{{sizePerThread = [{spt}], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}}>"
    t, ti, tp = (
        f"tensor<1024x{ty}, #blocked>",
        "tensor<1024xi32, #blocked>",
        f"tensor<1024x!tt.ptr<{ty}>, #blocked>",
    )
    other = "7.0" if ty.startswith(("f", "bf")) else "7"
    return module(
        layout,
        f"""
  tt.func public @copy(%x_ptr: !tt.ptr<{ty}> {{tt.divisibility = 16 : i32}}, %out_ptr: !tt.ptr<{ty}> {{tt.divisibility = 16 : i32}}, %n: i32 {{tt.divisibility = 16 : i32}}) attributes {{noinline = false}} {{
    %range = tt.make_range {{end = 1024 : i32, start = 0 : i32}} : {ti}
    %ns = tt.splat %n : i32 -> {ti}
    %mask = arith.cmpi slt, %range, %ns : {ti}
    %other = arith.constant dense<{other}> : {t}
    %xs = tt.splat %x_ptr : !tt.ptr<{ty}> -> {tp}
    %xp = tt.addptr %xs, %range : {tp}, {ti}
    %x = tt.load %xp, %mask, %other : {tp}
    %os = tt.splat %out_ptr : !tt.ptr<{ty}> -> {tp}
    %op = tt.addptr %os, %range : {tp}, {ti}
    tt.store %op, %x : {tp}
    tt.return
  }}""",
    )


def _copy_check(name: str, ty: str, dtype):
    def check(gpu):
        n = 496
        r = rng(16)
        if np.dtype(dtype).kind == "f":
            x = r.standard_normal(n).astype(dtype)
            seven = dtype(7.0)
        elif ty == "bf16":
            x = r.integers(0, 2**16, n).astype(np.uint16)
            seven = np.uint16(0x40E0)  # 7.0 in bfloat16
        else:
            x = r.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, n, dtype=np.int64).astype(
                dtype
            )
            seven = dtype(7)
        out = np.zeros(1024, dtype)
        gpu.run(CASES[name].ttgir, (1,), [x, out, n])
        np.testing.assert_array_equal(out[:n], x)
        assert (out[n:] == seven).all()

    return check


for _ty, _spt, _dtype, _instr in COPIES:
    _name = f"copy_{_ty}_x{_spt}"
    CASES[_name] = Case(
        _name, copy_kernel(_ty, _spt), (_instr,), (".local",), _copy_check(_name, _ty, _dtype)
    )


# --------------------------------------------------------------------------- f16 / bf16 / f64 math


def fp_mix_kernel(ty: str) -> str:
    """out = maximum(exp(x), y) / y (f64: maximum(x, y) / y), with cache modifiers."""
    t = add_kernel(B4 if ty == "f64" else B8, ty=ty)
    t = t.replace("tt.load %xp, %mask :", "tt.load %xp, %mask cacheModifier = cg :")
    t = t.replace("tt.load %yp, %mask :", "tt.load %yp, %mask evictionPolicy = evict_last :")
    t = t.replace("tt.store %op, %sum, %mask :", "tt.store %op, %sum, %mask cacheModifier = cs :")
    T = f"tensor<1024x{ty}, #blocked>"
    first = "%x" if ty == "f64" else "%e"
    exp = "" if ty == "f64" else f"%e = math.exp %x : {T}\n    "
    return t.replace(
        "%sum = arith.addf %x, %y",
        f"{exp}%m = arith.maximumf {first}, %y : {T}\n    %sum = arith.divf %m, %y",
    )


def _bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _fp_mix_check(name: str, ty: str):
    def check(gpu):
        n = 2048 + 16
        r = rng(17)
        x32, y32 = r.standard_normal((2, n)).astype(np.float32)
        y32 = np.where(np.abs(y32) < 0.1, np.float32(0.5), y32)
        if ty == "bf16":
            x, y = bf16_bits_rne(x32), bf16_bits_rne(y32)
            xf, yf = _bf16_to_f32(x), _bf16_to_f32(y)
            rnd = lambda v: _bf16_to_f32(bf16_bits_rne(v))  # noqa: E731
            out = np.zeros(n, np.uint16)
            tol = 1e-2
        else:
            dt = np.float16 if ty == "f16" else np.float64
            x, y = x32.astype(dt), y32.astype(dt)
            xf, yf = x.astype(np.float64), y.astype(np.float64)
            rnd = lambda v: np.asarray(v).astype(dt).astype(np.float64)  # noqa: E731
            out = np.zeros(n, dt)
            tol = 2e-3 if ty == "f16" else 0
        gpu.run(CASES[name].ttgir, ((n + 1023) // 1024,), [x, y, out, n])
        if ty == "f64":
            want = np.maximum(xf, yf) / yf
        else:
            e = rnd(np.exp(xf.astype(np.float64)).astype(np.float32))
            want = rnd(np.maximum(e, yf).astype(np.float32) / yf.astype(np.float32))
        got = _bf16_to_f32(out) if ty == "bf16" else out
        close(got, want, rtol=tol, atol=tol)

    return check


for _ty in ("f16", "bf16", "f64"):
    _name = f"fp_mix_{_ty}"
    _ld = "ld.global.cg.v2.b64" if _ty == "f64" else "ld.global.cg.v4.b32"
    CASES[_name] = Case(
        _name,
        fp_mix_kernel(_ty),
        (_ld, "st.global.cs", "L1::evict_last"),
        (".local",),
        _fp_mix_check(_name, _ty),
    )
