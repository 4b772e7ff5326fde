"""`tl.device_print` kernels with the lines the GPU must print for them (upstream's format:
`pid (x, y, z) idx (i, j)<prefix>[(operand n) ]<value>`), shared by test_print_lowering.py
(which runs the kernels' LLVM IR on the host CPU) and test_gpu_print.py (on the GPU).

The kernels load nothing, so their LLVM IR needs only thread ids and `vprintf`. Every case
is `(kernel, constexprs, num_warps, runtime args, expected(pid, args) -> lines)`; the lines
are those of one program, in any order.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import tritium
import tritium.language as tl


@tritium.jit
def ints_1d(n, BLOCK: tl.constexpr):
    x = tl.arange(0, BLOCK) * 3 - 100 + tl.program_id(0)
    tl.device_print("x", x)


@tritium.jit
def types_1d(n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK) - 8
    tl.device_print(
        "v",
        i,  # %i
        i.to(tl.uint32),  # %u: -8 prints as 4294967288
        (i * 20).to(tl.int8),  # sign-extended to 32 bits
        i.to(tl.int64) * 1_000_000_000_000,  # %lli
        i.to(tl.float32) * 0.25,  # %f, as a double
        i.to(tl.float64) / 3,
        i % 3 == 0,  # bool: 0 / 1
    )


@tritium.jit
def hex_1d(n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK) - 2
    tl.device_print("h", i, i.to(tl.int64), i.to(tl.float32) * 1.5, hex=True)


@tritium.jit
def two_d(n, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    tl.device_print("r", r)


@tritium.jit
def scalars(p_ptr, n):
    tl.device_print("pid and n", tl.program_id(1), n)
    tl.device_print("p", p_ptr)
    tl.device_print("100% done")


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _bits32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _head(pid, index: tuple[int, ...], widths: tuple[int, ...]) -> str:
    idx = ", ".join(f"{i:{w}d}" if w else str(i) for i, w in zip(index, widths))
    return f"pid ({pid[0]}, {pid[1]}, {pid[2]}) idx ({idx})"


def _ints_1d(pid, args, block):
    return [f"{_head(pid, (i,), (3,))} x: {i * 3 - 100 + pid[0]}" for i in range(block)]


def _types_1d(pid, args, block):
    lines = []
    for k in range(block):
        i = k - 8
        i8 = ((i * 20 + 128) % 256) - 128
        values = [
            str(i),
            str(i % 2**32),
            str(i8),
            str(i * 1_000_000_000_000),
            f"{_f32(i * 0.25):f}",
            f"{i / 3:f}",
            str(int(i % 3 == 0)),
        ]
        head = _head(pid, (k,), (2,))
        lines += [f"{head} v: (operand {n}) {v}" for n, v in enumerate(values)]
    return lines


def _hex_1d(pid, args, block):
    lines = []
    for k in range(block):
        i = k - 2
        values = [f"0x{i % 2**32:08x}", f"0x{i % 2**64:016x}", f"0x{_bits32(i * 1.5):08x}"]
        head = _head(pid, (k,), (2,))
        lines += [f"{head} h: (operand {n}) {v}" for n, v in enumerate(values)]
    return lines


def _two_d(pid, args, rows, cols):
    w = (len(str(rows - 1)), len(str(cols - 1)))
    return [f"{_head(pid, (r, c), w)} r: {r * cols + c}" for r in range(rows) for c in range(cols)]


def _scalars(pid, args):
    p, n = args
    return [
        f"{_head(pid, (), ())} pid and n: (operand 0) {pid[1]}",
        f"{_head(pid, (), ())} pid and n: (operand 1) {n}",
        f"{_head(pid, (), ())} p: 0x{p:x}",
        f"pid ({pid[0]}, {pid[1]}, {pid[2]}) 100% done",
    ]


@dataclass
class Case:
    kernel: Any
    constexprs: dict
    num_warps: int
    args: list  # runtime args (a pointer is an int address: any value prints)
    expected: Callable[[tuple, list], list[str]]
    signature: dict = field(default_factory=lambda: {"n": "i32"})


CASES = {
    # 256 elements over 128 threads: 2 registers each
    "ints_1d": Case(ints_1d, {"BLOCK": 256}, 4, [7], lambda p, a: _ints_1d(p, a, 256)),
    # 16 elements over 64 threads: lanes 16-31 and warp 1 hold copies and print nothing
    "types_1d": Case(types_1d, {"BLOCK": 16}, 2, [7], lambda p, a: _types_1d(p, a, 16)),
    "hex_1d": Case(hex_1d, {"BLOCK": 32}, 4, [7], lambda p, a: _hex_1d(p, a, 32)),
    "two_d": Case(two_d, {"R": 16, "C": 64}, 4, [7], lambda p, a: _two_d(p, a, 16, 64)),
    # a 2D block smaller than the CTA: replicated across lanes and warps
    "two_d_small": Case(two_d, {"R": 4, "C": 8}, 4, [7], lambda p, a: _two_d(p, a, 4, 8)),
    "scalars": Case(
        scalars,
        {},
        4,
        [0x7F0012345600, -3],
        _scalars,
        {"p_ptr": "*fp32", "n": "i32"},
    ),
}


def compile_case(case: Case, arch: str = "sm_89", stop: str = "ptx"):
    return tritium.compile(
        case.kernel,
        signature=case.signature,
        constexprs=case.constexprs,
        num_warps=case.num_warps,
        arch=arch,
        stop=stop,
    )
