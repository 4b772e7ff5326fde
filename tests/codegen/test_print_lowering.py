"""Lowering of `tt.print` (tritium/codegen/lower/print_op.py): the PTX assembles with ptxas
for sm_80/89/90 and makes one `vprintf` per element a thread owns; the format strings
and argument types follow upstream (ints widened by signedness, floats as doubles,
pointers as %p, hex as 0x%0Nx); and the printed lines themselves, from running the
kernels' LLVM IR on the host CPU for every thread of a program (thread ids and `vprintf`
supplied from Python), are exactly one per element with upstream's text."""

from __future__ import annotations

import ctypes
import re
import struct
import subprocess

import llvmlite.binding as llvm
import pytest

import tritium
import tritium.language as tl
from tests.codegen.print_kernels import CASES, compile_case
from tritium.codegen import lower_to_llvm
from tritium.ir.parser import parse_module

VPRINTF = re.compile(r"call\.uni \(retval0\), vprintf,")


def assemble(ptxas, ptx: str, arch: str, tmp_path) -> None:
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    subprocess.run(
        [ptxas, f"-arch={arch}", str(src), "-o", str(tmp_path / "k.cubin")],
        check=True,
        capture_output=True,
    )


# --------------------------------------------------------------------------- PTX


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90"])
def test_every_case_assembles(arch, tmp_path, ptxas):
    for name, case in CASES.items():
        ptx = compile_case(case, arch).asm["ptx"]
        assert ".extern .func  (.param .b32 func_retval0) vprintf" in ptx, name
        assemble(ptxas, ptx, arch, tmp_path)


@tritium.jit
def fp16_kernel(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_print("x", x, x.to(tl.bfloat16))
    tl.device_print("bits", x, hex=True)
    tl.device_print("ptrs", x_ptr + tl.arange(0, BLOCK))


def test_half_floats_and_pointers(tmp_path, ptxas):
    ck = tritium.compile(
        fp16_kernel, signature={"x_ptr": "*fp16:16"}, constexprs={"BLOCK": 128}, stop="ptx"
    )
    llir = ck.asm["llir"]
    assert "fpext half" in llir and "fpext bfloat" in llir  # %f takes a double
    assert "bitcast half" in llir and "zext i16" in llir  # hex: the half's 16 bits
    assert re.search(r'c"pid \(%u, %u, %u\) idx \(%3u\) x: \(operand 1\) %f\\0A\\00"', llir)
    assert re.search(r'c"pid \(%u, %u, %u\) idx \(%3u\) bits: 0x%04x\\0A\\00"', llir)
    assert re.search(r'c"pid \(%u, %u, %u\) idx \(%3u\) ptrs: %p\\0A\\00"', llir)
    assert "ptrtoint ptr addrspace(1)" in llir
    assert len(VPRINTF.findall(ck.asm["ptx"])) == 4  # 128 elements, 128 threads: 1 each
    for arch in ("sm_80", "sm_90"):
        ptx = tritium.compile(
            fp16_kernel,
            signature={"x_ptr": "*fp16:16"},
            constexprs={"BLOCK": 128},
            arch=arch,
            stop="ptx",
        ).asm["ptx"]
        assemble(ptxas, ptx, arch, tmp_path)


@pytest.mark.parametrize(
    "name, calls",
    [
        ("ints_1d", 2),  # 256 elements / 128 threads
        ("types_1d", 7),  # 16 elements / 64 threads: 1 element, 7 operands
        ("hex_1d", 3),  # 32 elements / 128 threads: 1 element, 3 operands
        ("two_d", 8),  # 1024 / 128
        ("two_d_small", 1),  # 32 / 128
        ("scalars", 4),  # 2 + 1 + 1 (the prefix alone)
    ],
)
def test_one_vprintf_per_owned_element(name, calls):
    ptx = compile_case(CASES[name]).asm["ptx"]
    assert len(VPRINTF.findall(ptx)) == calls


def test_formats_and_argument_types():
    llir = compile_case(CASES["types_1d"], stop="llir").asm["llir"]
    for n, conv in enumerate(["%i", "%u", "%i", "%lli", "%f", "%f", "%u"]):
        assert f'idx (%2u) v: (operand {n}) {conv}\\0A\\00"' in llir, conv
    assert "sext i8" in llir and "zext i1" in llir and "fpext float" in llir
    hex_llir = compile_case(CASES["hex_1d"], stop="llir").asm["llir"]
    for n, conv in enumerate(["0x%08x", "0x%016llx", "0x%08x"]):
        assert f'h: (operand {n}) {conv}\\0A\\00"' in hex_llir, conv
    assert "bitcast float" in hex_llir
    scalar_llir = compile_case(CASES["scalars"], stop="llir").asm["llir"]
    assert 'c"pid (%u, %u, %u) 100%% done\\0A\\00"' in scalar_llir  # '%' escaped
    assert 'c"pid (%u, %u, %u) idx () p: %p\\0A\\00"' in scalar_llir


def test_one_argument_buffer_per_struct_type():
    # the buffer is allocated once, in the entry block, and reused by every call
    llir = compile_case(CASES["ints_1d"], stop="llir").asm["llir"]
    entry = llir.split("entry:", 1)[1].split("\n\n", 1)[0]
    assert entry.count("alloca { i32, i32, i32, i32, i32 }") == 1
    assert llir.count("alloca") == 1
    types_llir = compile_case(CASES["types_1d"], stop="llir").asm["llir"]
    assert "alloca { i32, i32, i32, i32, double }" in types_llir  # the double 8-aligned
    assert "alloca { i32, i32, i32, i32, i64 }" in types_llir


DUPLICATE_REGISTERS = """
#blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:89", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @dup() {
    %r = tt.make_range {end = 2 : i32, start = 0 : i32} : tensor<2xi32, #blocked>
    tt.print " r: " {hex = false, isSigned = array<i32: 1>} : %r : tensor<2xi32, #blocked>
    tt.return
  }
}
"""


def test_several_registers_per_thread():
    # sizePerThread = [4] (a coalesced load's layout): registers 0-3 hold 4 neighbours,
    # the tile repeats at 512
    text = DUPLICATE_REGISTERS.replace("end = 2 ", "end = 1024 ").replace("2xi32", "1024xi32")
    llir, _ = lower_to_llvm(parse_module(text))
    assert llir.count("call i32 @vprintf") == 8
    got = run_on_host(llir, "dup", 128, (1, 0, 0), [])
    assert sorted(got) == sorted(f"pid (1, 0, 0) idx ({i:4d}) r: {i}" for i in range(1024))


def test_duplicate_registers_print_once():
    # 4 registers per thread for 2 elements: registers 2 and 3 copy 0 and 1; every other
    # thread holds copies too, so thread 0 prints 2 lines
    llir, _ = lower_to_llvm(parse_module(DUPLICATE_REGISTERS))
    assert llir.count("call i32 @vprintf") == 2
    assert sorted(run_on_host(llir, "dup", 128, (0, 0, 0), [])) == [
        "pid (0, 0, 0) idx (0) r: 0",
        "pid (0, 0, 0) idx (1) r: 1",
    ]


# --------------------------------------------------------------------------- on the host


@pytest.mark.parametrize("name", sorted(CASES))
def test_printed_lines_match_upstreams_format(name):
    case = CASES[name]
    ck = compile_case(case, stop="llir")
    for pid in [(0, 0, 0), (3, 1, 2)]:
        got = run_on_host(ck.asm["llir"], case.kernel.__name__, 32 * case.num_warps, pid, case.args)
        assert sorted(got) == sorted(case.expected(pid, case.args))


# The host harness: the kernel's LLVM IR retargeted to this CPU, `llvm.nvvm.read.ptx.sreg.*`
# renamed to functions answering from `_STATE`, and `vprintf` a Python printf reading the
# argument buffer as the device does (each value at its natural alignment).

_STATE: dict = {"tid": 0, "ctaid": (0, 0, 0), "lines": []}
_CONVERSION = re.compile(r"%%|%(\d*)(ll)?([uifpx])")


def _sreg(name: str) -> int:
    if name == "tid_x":
        return _STATE["tid"]
    if name.startswith("ctaid_"):
        return _STATE["ctaid"]["xyz".index(name[-1])]
    raise AssertionError(f"unexpected special register {name}")


def _vprintf(fmt: int, buf: int) -> int:
    offset = 0

    def take(size: int, code: str):
        nonlocal offset
        offset = -(-offset // size) * size
        (value,) = struct.unpack(code, ctypes.string_at(buf + offset, size))
        offset += size
        return value

    def convert(m: re.Match) -> str:
        if m.group(0) == "%%":
            return "%"
        width, ll, kind = m.group(1), m.group(2), m.group(3)
        if kind == "f":
            return f"%{width}f" % take(8, "<d")
        if kind == "p":
            return hex(take(8, "<Q"))
        code = {"u": "<I", "x": "<I", "i": "<i"}[kind]
        value = take(8, code.replace("I", "Q").replace("i", "q")) if ll else take(4, code)
        return f"%{width}{'x' if kind == 'x' else 'd'}" % value

    text = ctypes.string_at(fmt).decode()
    assert text.endswith("\n")
    _STATE["lines"].append(_CONVERSION.sub(convert, text[:-1]))
    return 0


_SREG_FN = ctypes.CFUNCTYPE(ctypes.c_int32)
_VPRINTF_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)
_CALLBACKS: dict[str, object] = {}


def _register_symbols() -> None:
    if _CALLBACKS:
        return
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    for name in ("tid_x", "ctaid_x", "ctaid_y", "ctaid_z"):
        _CALLBACKS[name] = _SREG_FN(lambda name=name: _sreg(name))
        llvm.add_symbol(f"host_sreg_{name}", ctypes.cast(_CALLBACKS[name], ctypes.c_void_p).value)
    _CALLBACKS["vprintf"] = _VPRINTF_FN(_vprintf)
    llvm.add_symbol("host_vprintf", ctypes.cast(_CALLBACKS["vprintf"], ctypes.c_void_p).value)


def run_on_host(llir: str, name: str, threads: int, pid: tuple, args: list) -> list[str]:
    """Run kernel `name` of `llir` for threads 0..threads-1 of program `pid`; the lines printed."""
    _register_symbols()
    text = re.sub(r"@llvm\.nvvm\.read\.ptx\.sreg\.(\w+)\.([xyz])", r"@host_sreg_\1_\2", llir)
    text = text.replace("@vprintf", "@host_vprintf").replace("ptx_kernel ", "")
    text = re.sub(r"^target (datalayout|triple) = .*$", "", text, flags=re.M)
    module = llvm.parse_assembly(text)
    module.verify()
    machine = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    fn = llvm.parse_assembly(text).get_function(name)
    types = [ctypes.c_void_p if a.type.is_pointer else ctypes.c_int32 for a in fn.arguments]
    kernel = ctypes.CFUNCTYPE(None, *types)(engine.get_function_address(name))
    _STATE["lines"], _STATE["ctaid"] = [], pid
    for tid in range(threads):
        _STATE["tid"] = tid
        kernel(*args)
    return list(_STATE["lines"])
