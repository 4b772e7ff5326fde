"""Hand-written TTGIR kernels shared by the PTX tests and the GPU tests.

Each `Case` holds a TTGIR module, what its PTX must (not) contain, and a `check(gpu)`
that runs it on a GPU (see cuda_launch.py) and compares with numpy in float64.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

UPSTREAM = Path(__file__).resolve().parents[1] / "data" / "upstream"

B1 = "#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"
B4 = "#blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"
B8 = "#blocked = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"
B2D = "\n".join(
    [
        "#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>",
        "#rows = #ttg.slice<{dim = 1, parent = #blocked}>",
        "#cols = #ttg.slice<{dim = 0, parent = #blocked}>",
    ]
)


def lower_ttgir(text: str) -> tuple[str, dict]:
    """Hand-written TTGIR -> (LLVM IR, metadata), after the two TTGIR passes the backend
    relies on, as `tritium.compile` runs them: allocate-shared-memory (offsets) and membar
    (`gpu.barrier` ops)."""
    from tritium.codegen import lower_to_llvm
    from tritium.ir.parser import parse_module
    from tritium.passes.pipeline import run_passes

    m = run_passes(parse_module(text), ["allocate-shared-memory", "membar"])
    return lower_to_llvm(m)


def module(layouts: str, body: str, num_warps: int = 4) -> str:
    return (
        f"{layouts}\n"
        f'module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {num_warps} : i32, '
        f'ttg.target = "cuda:89", "ttg.threads-per-warp" = 32 : i32}} {{\n{body}\n}}\n'
    )


@dataclass
class Case:
    name: str
    ttgir: str
    ptx_has: tuple[str, ...] = ()
    ptx_lacks: tuple[str, ...] = ()
    check: Callable | None = None
    tags: set = field(default_factory=set)
    max_registers: int = 64


CASES: dict[str, Case] = {}


def case(name: str, ttgir: str, ptx_has=(), ptx_lacks=(), tags=(), max_registers=64):
    def register(check):
        CASES[name] = Case(
            name, ttgir, tuple(ptx_has), tuple(ptx_lacks), check, set(tags), max_registers
        )
        return check

    return register


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def close(got, want, rtol=1e-6, atol=1e-6) -> None:
    np.testing.assert_allclose(
        np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=rtol, atol=atol
    )


# --------------------------------------------------------------------------- vector add


@case(
    "add_upstream",
    (UPSTREAM / "add_kernel.ttgir").read_text(),
    ptx_has=(".reqntid 128", "ld.global.b32", "st.global.b32", "add.f32"),
    ptx_lacks=("ld.global.v4", ".local"),
)
def _(gpu):
    n = 98_432 + 17
    x, y = rng().standard_normal((2, n)).astype(np.float32)
    out = np.zeros(n, np.float32)
    gpu.run(CASES["add_upstream"].ttgir, ((n + 1023) // 1024,), [x, y, out, n])
    close(out, x.astype(np.float64) + y)


def add_kernel(
    layout: str,
    n_div: str = " {tt.divisibility = 16 : i32}",
    ptr_div=" {tt.divisibility = 16 : i32}",
    ty="f32",
    other: str = "",
) -> str:
    t = f"tensor<1024x{ty}, #blocked>"
    pt = f"tensor<1024x!tt.ptr<{ty}>, #blocked>"
    return module(
        layout,
        f"""
  tt.func public @add_kernel(%x_ptr: !tt.ptr<{ty}>{ptr_div}, %y_ptr: !tt.ptr<{ty}>{ptr_div}, %out_ptr: !tt.ptr<{ty}>{ptr_div}, %n: i32{n_div}) attributes {{noinline = false}} {{
    %c1024 = arith.constant 1024 : i32
    %pid = tt.get_program_id x : i32
    %start = arith.muli %pid, %c1024 : i32
    %range = tt.make_range {{end = 1024 : i32, start = 0 : i32}} : tensor<1024xi32, #blocked>
    %starts = tt.splat %start : i32 -> tensor<1024xi32, #blocked>
    %offs = arith.addi %starts, %range : tensor<1024xi32, #blocked>
    %ns = tt.splat %n : i32 -> tensor<1024xi32, #blocked>
    %mask = arith.cmpi slt, %offs, %ns : tensor<1024xi32, #blocked>
    %xs = tt.splat %x_ptr : !tt.ptr<{ty}> -> {pt}
    %xp = tt.addptr %xs, %offs : {pt}, tensor<1024xi32, #blocked>
    %x = tt.load %xp, %mask : {pt}
    %ys = tt.splat %y_ptr : !tt.ptr<{ty}> -> {pt}
    %yp = tt.addptr %ys, %offs : {pt}, tensor<1024xi32, #blocked>
    %y = tt.load %yp, %mask : {pt}
    %os = tt.splat %out_ptr : !tt.ptr<{ty}> -> {pt}
    %op = tt.addptr %os, %offs : {pt}, tensor<1024xi32, #blocked>
    %sum = arith.addf %x, %y : {t}
    tt.store %op, %sum, %mask : {pt}
    tt.return
  }}""",
    )


@case(
    "add_vec4",
    add_kernel(B4),
    ptx_has=(".reqntid 128", "ld.global.v4.b32", "st.global.v4.b32"),
    ptx_lacks=(".local", "ld.global.b32", "st.global.b32"),
)
def _(gpu):
    n = 98_304 + 16 * 7  # divisible by 16, not by 1024
    x, y = rng(1).standard_normal((2, n)).astype(np.float32)
    out = np.full(n + 64, 5.0, np.float32)  # the tail past n must stay untouched
    gpu.run(CASES["add_vec4"].ttgir, ((n + 1023) // 1024,), [x, y, out, n])
    close(out[:n], x.astype(np.float64) + y)
    assert (out[n:] == 5.0).all()


@case(
    "add_vec4_fp16",
    add_kernel(B8, ty="f16"),
    ptx_has=("ld.global.v4.b32", "st.global.v4.b32"),
    ptx_lacks=(".local",),
)
def _(gpu):
    n = 4096 + 32
    x, y = rng(2).standard_normal((2, n)).astype(np.float16)
    out = np.zeros(n, np.float16)
    gpu.run(CASES["add_vec4_fp16"].ttgir, ((n + 1023) // 1024,), [x, y, out, n])
    close(out, (x.astype(np.float32) + y.astype(np.float32)).astype(np.float16), rtol=0, atol=0)


# Negative cases: nothing proves the alignment / mask constancy, so no vectors.
CASES["add_no_n_divisibility"] = Case(
    "add_no_n_divisibility", add_kernel(B4, n_div=""), ("ld.global.b32",), ("ld.global.v4",)
)
CASES["add_no_ptr_divisibility"] = Case(
    "add_no_ptr_divisibility", add_kernel(B4, ptr_div=""), ("ld.global.b32",), ("ld.global.v",)
)


# --------------------------------------------------------------------------- i64 offsets

ADD_I64 = module(
    B4,
    """
  tt.func public @add_i64(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %out_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i64 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %c1024 = arith.constant 1024 : i64
    %pid = tt.get_program_id x : i32
    %pid64 = arith.extsi %pid : i32 to i64
    %start = arith.muli %pid64, %c1024 : i64
    %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #blocked>
    %range64 = arith.extsi %range : tensor<1024xi32, #blocked> to tensor<1024xi64, #blocked>
    %starts = tt.splat %start : i64 -> tensor<1024xi64, #blocked>
    %offs = arith.addi %starts, %range64 : tensor<1024xi64, #blocked>
    %ns = tt.splat %n : i64 -> tensor<1024xi64, #blocked>
    %mask = arith.cmpi slt, %offs, %ns : tensor<1024xi64, #blocked>
    %xs = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked>
    %xp = tt.addptr %xs, %offs : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi64, #blocked>
    %x = tt.load %xp, %mask : tensor<1024x!tt.ptr<f32>, #blocked>
    %two = arith.constant dense<2.0> : tensor<1024xf32, #blocked>
    %y = arith.mulf %x, %two : tensor<1024xf32, #blocked>
    %os = tt.splat %out_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked>
    %op = tt.addptr %os, %offs : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi64, #blocked>
    tt.store %op, %y, %mask : tensor<1024x!tt.ptr<f32>, #blocked>
    tt.return
  }""",
)


@case(
    "add_i64_offsets",
    ADD_I64,
    ptx_has=("ld.global.v4.b32", "st.global.v4.b32"),
    ptx_lacks=(".local",),
)
def _(gpu):
    n = 8192 + 48
    x = rng(3).standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    gpu.run(ADD_I64, ((n + 1023) // 1024,), [x, out, n])
    close(out, 2.0 * x.astype(np.float64))


# --------------------------------------------------------------------------- 2D tiles


def tile_kernel(name: str, store_transposed: bool) -> str:
    t2 = "tensor<32x64xi32, #blocked>"
    p2 = "tensor<32x64x!tt.ptr<f32>, #blocked>"
    f2 = "tensor<32x64xf32, #blocked>"
    if store_transposed:  # out[c, r] = f(in[r, c]): rows of out are columns of in
        out_offs = """
    %ocs = tt.splat %stride_out : i32 -> tensor<1x64xi32, #blocked>
    %oc = arith.muli %c2, %ocs : tensor<1x64xi32, #blocked>
    %ocb = tt.broadcast %oc : tensor<1x64xi32, #blocked> -> tensor<32x64xi32, #blocked>
    %orb = tt.broadcast %r2 : tensor<32x1xi32, #blocked> -> tensor<32x64xi32, #blocked>
    %ooffs = arith.addi %ocb, %orb : tensor<32x64xi32, #blocked>"""
    else:
        out_offs = """
    %ors = tt.splat %stride_out : i32 -> tensor<32x1xi32, #blocked>
    %or = arith.muli %r2, %ors : tensor<32x1xi32, #blocked>
    %orb = tt.broadcast %or : tensor<32x1xi32, #blocked> -> tensor<32x64xi32, #blocked>
    %ooffs = arith.addi %orb, %cb : tensor<32x64xi32, #blocked>"""
    return module(
        B2D,
        f"""
  tt.func public @{name}(%in_ptr: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}, %out_ptr: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}, %M: i32, %N: i32 {{tt.divisibility = 16 : i32}}, %stride_in: i32 {{tt.divisibility = 16 : i32}}, %stride_out: i32 {{tt.divisibility = 16 : i32}}) attributes {{noinline = false}} {{
    %c32 = arith.constant 32 : i32
    %c64 = arith.constant 64 : i32
    %pid_m = tt.get_program_id x : i32
    %pid_n = tt.get_program_id y : i32
    %m0 = arith.muli %pid_m, %c32 : i32
    %n0 = arith.muli %pid_n, %c64 : i32
    %rows = tt.make_range {{end = 32 : i32, start = 0 : i32}} : tensor<32xi32, #rows>
    %cols = tt.make_range {{end = 64 : i32, start = 0 : i32}} : tensor<64xi32, #cols>
    %m0s = tt.splat %m0 : i32 -> tensor<32xi32, #rows>
    %n0s = tt.splat %n0 : i32 -> tensor<64xi32, #cols>
    %rm = arith.addi %m0s, %rows : tensor<32xi32, #rows>
    %cn = arith.addi %n0s, %cols : tensor<64xi32, #cols>
    %r2 = tt.expand_dims %rm {{axis = 1 : i32}} : tensor<32xi32, #rows> -> tensor<32x1xi32, #blocked>
    %c2 = tt.expand_dims %cn {{axis = 0 : i32}} : tensor<64xi32, #cols> -> tensor<1x64xi32, #blocked>
    %sis = tt.splat %stride_in : i32 -> tensor<32x1xi32, #blocked>
    %ri = arith.muli %r2, %sis : tensor<32x1xi32, #blocked>
    %rib = tt.broadcast %ri : tensor<32x1xi32, #blocked> -> {t2}
    %cb = tt.broadcast %c2 : tensor<1x64xi32, #blocked> -> {t2}
    %ioffs = arith.addi %rib, %cb : {t2}
    %Ms = tt.splat %M : i32 -> tensor<32x1xi32, #blocked>
    %Ns = tt.splat %N : i32 -> tensor<1x64xi32, #blocked>
    %mr = arith.cmpi slt, %r2, %Ms : tensor<32x1xi32, #blocked>
    %mc = arith.cmpi slt, %c2, %Ns : tensor<1x64xi32, #blocked>
    %mrb = tt.broadcast %mr : tensor<32x1xi1, #blocked> -> tensor<32x64xi1, #blocked>
    %mcb = tt.broadcast %mc : tensor<1x64xi1, #blocked> -> tensor<32x64xi1, #blocked>
    %mask = arith.andi %mrb, %mcb : tensor<32x64xi1, #blocked>
    %ins = tt.splat %in_ptr : !tt.ptr<f32> -> {p2}
    %ip = tt.addptr %ins, %ioffs : {p2}, {t2}
    %x = tt.load %ip, %mask : {p2}
    %two = arith.constant dense<2.0> : {f2}
    %one = arith.constant dense<1.0> : {f2}
    %x2 = arith.mulf %x, %two : {f2}
    %y = arith.addf %x2, %one : {f2}{out_offs}
    %outs = tt.splat %out_ptr : !tt.ptr<f32> -> {p2}
    %opp = tt.addptr %outs, %ooffs : {p2}, {t2}
    tt.store %opp, %y, %mask : {p2}
    tt.return
  }}""",
    )


@case(
    "tile_2d",
    tile_kernel("tile_2d", False),
    ptx_has=("ld.global.v4.b32", "st.global.v4.b32"),
    ptx_lacks=(".local",),
)
def _(gpu):
    M, N, si, so = 70, 144, 160, 176
    x = rng(4).standard_normal((M, si)).astype(np.float32)
    out = np.full((M, so), -3.0, np.float32)
    gpu.run(CASES["tile_2d"].ttgir, ((M + 31) // 32, (N + 63) // 64), [x, out, M, N, si, so])
    close(out[:, :N], 2.0 * x[:, :N].astype(np.float64) + 1.0)
    assert (out[:, N:] == -3.0).all()


@case(
    "transpose_2d",
    tile_kernel("transpose_2d", True),
    ptx_has=("ld.global.v4.b32", "st.global.b32"),
    ptx_lacks=(".local", "st.global.v4"),
)
def _(gpu):
    M, N, si, so = 70, 144, 160, 96
    x = rng(5).standard_normal((M, si)).astype(np.float32)
    out = np.full((N, so), -3.0, np.float32)
    gpu.run(CASES["transpose_2d"].ttgir, ((M + 31) // 32, (N + 63) // 64), [x, out, M, N, si, so])
    close(out[:, :M], 2.0 * x[:, :N].T.astype(np.float64) + 1.0)
    assert (out[:, M:] == -3.0).all()


# --------------------------------------------------------------------------- casts

CASTS = module(
    B8,
    """
  tt.func public @casts(%x_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %bf_ptr: !tt.ptr<bf16> {tt.divisibility = 16 : i32}, %rz_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %f_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #blocked>
    %xs = tt.splat %x_ptr : !tt.ptr<f16> -> tensor<1024x!tt.ptr<f16>, #blocked>
    %xp = tt.addptr %xs, %range : tensor<1024x!tt.ptr<f16>, #blocked>, tensor<1024xi32, #blocked>
    %x = tt.load %xp : tensor<1024x!tt.ptr<f16>, #blocked>
    %xf = arith.extf %x : tensor<1024xf16, #blocked> to tensor<1024xf32, #blocked>
    %k = arith.constant dense<3.3> : tensor<1024xf32, #blocked>
    %y = arith.mulf %xf, %k : tensor<1024xf32, #blocked>
    %bf = arith.truncf %y : tensor<1024xf32, #blocked> to tensor<1024xbf16, #blocked>
    %bs = tt.splat %bf_ptr : !tt.ptr<bf16> -> tensor<1024x!tt.ptr<bf16>, #blocked>
    %bp = tt.addptr %bs, %range : tensor<1024x!tt.ptr<bf16>, #blocked>, tensor<1024xi32, #blocked>
    tt.store %bp, %bf : tensor<1024x!tt.ptr<bf16>, #blocked>
    %rz = tt.fp_to_fp %y, rounding = rtz : tensor<1024xf32, #blocked> -> tensor<1024xf16, #blocked>
    %rs = tt.splat %rz_ptr : !tt.ptr<f16> -> tensor<1024x!tt.ptr<f16>, #blocked>
    %rp = tt.addptr %rs, %range : tensor<1024x!tt.ptr<f16>, #blocked>, tensor<1024xi32, #blocked>
    tt.store %rp, %rz : tensor<1024x!tt.ptr<f16>, #blocked>
    %back = arith.extf %bf : tensor<1024xbf16, #blocked> to tensor<1024xf32, #blocked>
    %fs = tt.splat %f_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked>
    %fp = tt.addptr %fs, %range : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    tt.store %fp, %back : tensor<1024x!tt.ptr<f32>, #blocked>
    tt.return
  }""",
)


def bf16_bits_rne(x: np.ndarray) -> np.ndarray:
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def f16_rz(x: np.ndarray) -> np.ndarray:
    """float32 -> float16 rounded toward zero (x is in f16's normal range here)."""
    near = x.astype(np.float16)
    too_far = np.abs(near.astype(np.float32)) > np.abs(x)
    step_down = np.nextafter(near, np.float16(0))
    return np.where(too_far, step_down, near).astype(np.float16)


@case(
    "casts_f16_bf16", CASTS, ptx_has=("cvt.rz.f16.f32", "ld.global.v4.b32"), ptx_lacks=(".local",)
)
def _(gpu):
    x = (rng(6).standard_normal(1024) * 10).astype(np.float16)
    bf = np.zeros(1024, np.uint16)
    rz = np.zeros(1024, np.float16)
    back = np.zeros(1024, np.float32)
    gpu.run(CASTS, (1,), [x, bf, rz, back])
    y = x.astype(np.float32) * np.float32(3.3)
    np.testing.assert_array_equal(bf, bf16_bits_rne(y))
    np.testing.assert_array_equal(rz, f16_rz(y))
    np.testing.assert_array_equal(back, (bf16_bits_rne(y).astype(np.uint32) << 16).view(np.float32))


# --------------------------------------------------------------------------- integer ops

INT_OPS = [
    "divsi",
    "remsi",
    "divui",
    "remui",
    "shrsi",
    "shrui",
    "shli",
    "xori",
    "andi",
    "ori",
    "maxsi",
    "minui",
    "muli",
    "subi",
    "floordivsi",
    "ceildivsi",
]


def _int_body() -> str:
    lines = []
    for j, name in enumerate(INT_OPS):
        lines.append(
            f"""
    %r{j} = arith.{name} %a, %b : tensor<256xi32, #blocked>
    %o{j}c = arith.constant dense<{j * 256}> : tensor<256xi32, #blocked>
    %o{j}i = arith.addi %range, %o{j}c : tensor<256xi32, #blocked>
    %o{j}p = tt.addptr %outs, %o{j}i : tensor<256x!tt.ptr<i32>, #blocked>, tensor<256xi32, #blocked>
    tt.store %o{j}p, %r{j} : tensor<256x!tt.ptr<i32>, #blocked>"""
        )
    return "".join(lines)


INT_KERNEL = module(
    B1,
    f"""
  tt.func public @int_ops(%a_ptr: !tt.ptr<i32>, %b_ptr: !tt.ptr<i32>, %out_ptr: !tt.ptr<i32>, %c_ptr: !tt.ptr<i8>, %m_ptr: !tt.ptr<i1>) attributes {{noinline = false}} {{
    %range = tt.make_range {{end = 256 : i32, start = 0 : i32}} : tensor<256xi32, #blocked>
    %as = tt.splat %a_ptr : !tt.ptr<i32> -> tensor<256x!tt.ptr<i32>, #blocked>
    %ap = tt.addptr %as, %range : tensor<256x!tt.ptr<i32>, #blocked>, tensor<256xi32, #blocked>
    %a = tt.load %ap : tensor<256x!tt.ptr<i32>, #blocked>
    %bs = tt.splat %b_ptr : !tt.ptr<i32> -> tensor<256x!tt.ptr<i32>, #blocked>
    %bp = tt.addptr %bs, %range : tensor<256x!tt.ptr<i32>, #blocked>, tensor<256xi32, #blocked>
    %b = tt.load %bp : tensor<256x!tt.ptr<i32>, #blocked>
    %outs = tt.splat %out_ptr : !tt.ptr<i32> -> tensor<256x!tt.ptr<i32>, #blocked>{_int_body()}
    %cs = tt.splat %c_ptr : !tt.ptr<i8> -> tensor<256x!tt.ptr<i8>, #blocked>
    %cp = tt.addptr %cs, %range : tensor<256x!tt.ptr<i8>, #blocked>, tensor<256xi32, #blocked>
    %c = tt.load %cp : tensor<256x!tt.ptr<i8>, #blocked>
    %c32 = arith.extsi %c : tensor<256xi8, #blocked> to tensor<256xi32, #blocked>
    %c3 = arith.constant dense<3> : tensor<256xi32, #blocked>
    %cm = arith.muli %c32, %c3 : tensor<256xi32, #blocked>
    %c8 = arith.trunci %cm : tensor<256xi32, #blocked> to tensor<256xi8, #blocked>
    tt.store %cp, %c8 : tensor<256x!tt.ptr<i8>, #blocked>
    %lt = arith.cmpi slt, %a, %b : tensor<256xi32, #blocked>
    %ms = tt.splat %m_ptr : !tt.ptr<i1> -> tensor<256x!tt.ptr<i1>, #blocked>
    %mp = tt.addptr %ms, %range : tensor<256x!tt.ptr<i1>, #blocked>, tensor<256xi32, #blocked>
    %old = tt.load %mp : tensor<256x!tt.ptr<i1>, #blocked>
    %new = arith.xori %lt, %old : tensor<256xi1, #blocked>
    tt.store %mp, %new : tensor<256x!tt.ptr<i1>, #blocked>
    tt.return
  }}""",
)


def _int_reference(a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    au, bu = a.view(np.uint32).astype(np.int64), b.view(np.uint32).astype(np.int64)
    q = np.sign(a64) * np.sign(b64) * (np.abs(a64) // np.abs(b64))  # C-style
    sh = b64 & 31  # the data keeps shift amounts in range
    wrap = lambda v: (np.asarray(v, np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)  # noqa: E731
    return {
        "divsi": wrap(q),
        "remsi": wrap(a64 - q * b64),
        "divui": wrap(au // bu),
        "remui": wrap(au % bu),
        "shrsi": wrap(a64 >> sh),
        "shrui": wrap(au >> sh),
        "shli": wrap(a64 << sh),
        "xori": a ^ b,
        "andi": a & b,
        "ori": a | b,
        "maxsi": np.maximum(a, b),
        "minui": np.minimum(au, bu).astype(np.uint32).view(np.int32),
        "muli": wrap(a64 * b64),
        "subi": wrap(a64 - b64),
        "floordivsi": wrap(a64 // b64),
        "ceildivsi": wrap(-((-a64) // b64)),
    }


@case(
    "int_ops",
    INT_KERNEL,
    ptx_has=("div.s32", "ld.global.b8", "st.global.b8"),
    ptx_lacks=(".local",),
)
def _(gpu):
    r = rng(7)
    a = r.integers(-(2**31), 2**31, 256, dtype=np.int64).astype(np.int32)
    b = r.integers(1, 32, 256).astype(np.int32)  # 1..31: valid divisors and shift amounts
    b[1::2] = -b[1::2]  # negative divisors too (shifts are checked where b >= 0 only)
    a[:4] = [7, -7, 7, -7]
    b[:4] = [2, 2, -2, -2]
    shifts_ok = b >= 0
    out = np.zeros(len(INT_OPS) * 256, np.int32)
    c = r.integers(-128, 128, 256).astype(np.int8)
    c_in = c.copy()
    m = r.integers(0, 2, 256).astype(np.bool_)
    m_in = m.copy()
    gpu.run(INT_KERNEL, (1,), [a, b, out, c, m])
    want = _int_reference(a, b)
    for j, name in enumerate(INT_OPS):
        got = out[j * 256 : (j + 1) * 256]
        sel = shifts_ok if name in ("shrsi", "shrui", "shli") else np.ones(256, bool)
        np.testing.assert_array_equal(got[sel], want[name][sel], err_msg=name)
    np.testing.assert_array_equal(c, (c_in.astype(np.int32) * 3).astype(np.int8))
    np.testing.assert_array_equal(m, (a < b) ^ m_in)
