"""Shared helpers of the interpreter tests: hand-written TTIR snippets and references."""

from __future__ import annotations

import numpy as np

from tritium.ir.parser import parse_module as _parse_module
from tritium.ir.printer import print_ir
from tritium.runtime.interpreter import interpret

I32_MIN, I32_MAX = -(2**31), 2**31 - 1


def parse_module(text: str):
    """Parse a hand-written snippet, checking that it prints and re-parses unchanged."""
    module = _parse_module(text)
    printed = print_ir(module)
    assert print_ir(_parse_module(printed)) == printed
    return module


def ir_binary(op: str, ty: str, n: int, out_ty: str | None = None, types: str | None = None):
    """A kernel computing `out[i] = OP(a[i], b[i])` on one n-wide block."""
    out_ty = out_ty or ty
    return parse_module(f"""
module {{
  tt.func public @k(%pa: !tt.ptr<{ty}>, %pb: !tt.ptr<{ty}>, %pc: !tt.ptr<{out_ty}>) {{
    %r = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32>
    %pa1 = tt.splat %pa : !tt.ptr<{ty}> -> tensor<{n}x!tt.ptr<{ty}>>
    %pa2 = tt.addptr %pa1, %r : tensor<{n}x!tt.ptr<{ty}>>, tensor<{n}xi32>
    %pb1 = tt.splat %pb : !tt.ptr<{ty}> -> tensor<{n}x!tt.ptr<{ty}>>
    %pb2 = tt.addptr %pb1, %r : tensor<{n}x!tt.ptr<{ty}>>, tensor<{n}xi32>
    %pc1 = tt.splat %pc : !tt.ptr<{out_ty}> -> tensor<{n}x!tt.ptr<{out_ty}>>
    %pc2 = tt.addptr %pc1, %r : tensor<{n}x!tt.ptr<{out_ty}>>, tensor<{n}xi32>
    %a = tt.load %pa2 : tensor<{n}x!tt.ptr<{ty}>>
    %b = tt.load %pb2 : tensor<{n}x!tt.ptr<{ty}>>
    %c = {op} %a, %b : {types or f"tensor<{n}x{ty}>"}
    tt.store %pc2, %c : tensor<{n}x!tt.ptr<{out_ty}>>
    tt.return
  }}
}}""")


def run_binary(op, a, b, ty, out_dtype=None, out_ty=None):
    a, b = np.asarray(a), np.asarray(b)
    out = np.zeros(a.shape, out_dtype or a.dtype)
    interpret(ir_binary(op, ty, a.size, out_ty), (1,), [a, b, out])
    return out


def ir_scalar(body: str, in_ty: str, out_ty: str):
    """A kernel with one program per element: `%x` = in[pid]; body must define `%y`."""
    return parse_module(f"""
module {{
  tt.func public @k(%pin: !tt.ptr<{in_ty}>, %pout: !tt.ptr<{out_ty}>) {{
    %pid = tt.get_program_id x : i32
    %p = tt.addptr %pin, %pid : !tt.ptr<{in_ty}>, i32
    %x = tt.load %p : !tt.ptr<{in_ty}>
    {body}
    %q = tt.addptr %pout, %pid : !tt.ptr<{out_ty}>, i32
    tt.store %q, %y : !tt.ptr<{out_ty}>
    tt.return
  }}
}}""")


def run_scalar(body, x, in_ty, out_ty, out_dtype):
    x = np.asarray(x)
    out = np.zeros(x.shape, out_dtype)
    interpret(ir_scalar(body, in_ty, out_ty), (x.size,), [x, out])
    return out


def i32(values) -> np.ndarray:
    return np.array(values, dtype=np.int64).astype(np.int32)


def tf32(x: np.ndarray) -> np.ndarray:
    """Reference tf32 rounding (nearest even), done with Python ints per element."""
    out = []
    for v in x.astype(np.float32).ravel().view(np.uint32).tolist():
        low = v & 0x1FFF
        v &= ~0x1FFF
        if low > 0x1000 or (low == 0x1000 and v & 0x2000):
            v += 0x2000
        out.append(v)
    return np.array(out, np.uint32).view(np.float32).reshape(x.shape)


def bf16_bits(values) -> np.ndarray:
    """Reference float64 -> bf16 bits, nearest even, via Python ints (no NaN/overflow)."""
    out = []
    for v in np.asarray(values, np.float64).astype(np.float32).ravel().view(np.uint32).tolist():
        low, v = v & 0xFFFF, v >> 16
        if low > 0x8000 or (low == 0x8000 and v & 1):
            v += 1
        out.append(v)
    return np.array(out, np.uint16)


def ir_copy(n: int, masked: bool, i64: bool = False):
    """out[i] = x[i] for i < n (the block), masked by i < %limit if asked."""
    ty = "i64" if i64 else "i32"
    if i64:
        offsets = f"arith.constant dense<[{', '.join(map(str, range(n)))}]> : tensor<{n}xi64>"
    else:
        offsets = f"tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32>"
    mask = ", %m" if masked else ""
    return parse_module(f"""
module {{
  tt.func public @k(%x_ptr: !tt.ptr<f32>, %out_ptr: !tt.ptr<f32>, %limit: {ty}, %shift: {ty}) {{
    %o0 = {offsets}
    %sh = tt.splat %shift : {ty} -> tensor<{n}x{ty}>
    %o = arith.addi %o0, %sh : tensor<{n}x{ty}>
    %ls = tt.splat %limit : {ty} -> tensor<{n}x{ty}>
    %m = arith.cmpi slt, %o0, %ls : tensor<{n}x{ty}>
    %p1 = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<{n}x!tt.ptr<f32>>
    %p2 = tt.addptr %p1, %o : tensor<{n}x!tt.ptr<f32>>, tensor<{n}x{ty}>
    %v = tt.load %p2{mask} : tensor<{n}x!tt.ptr<f32>> loc("k.py":7:5)
    %q1 = tt.splat %out_ptr : !tt.ptr<f32> -> tensor<{n}x!tt.ptr<f32>>
    %q2 = tt.addptr %q1, %o0 : tensor<{n}x!tt.ptr<f32>>, tensor<{n}x{ty}>
    tt.store %q2, %v{mask} : tensor<{n}x!tt.ptr<f32>> loc("k.py":9:5)
    tt.return
  }}
}}""")
