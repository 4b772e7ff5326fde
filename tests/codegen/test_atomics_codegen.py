"""Lowering of `tt.atomic_rmw` / `tt.atomic_cas` (tritium/codegen/lower/atomic.py), from
TTIR text: every operation and element type assembles with ptxas for sm_80/89/90, and the
PTX does one atom per element the thread owns, predicated by mask and ownership, with the
old values broadcast through shared memory only where other threads need them."""

from __future__ import annotations

import re
import subprocess

import pytest

import tritium

TYPES = {"f32": "f32", "f64": "f64", "f16": "f16", "bf16": "bf16", "i32": "i32", "i64": "i64"}
RMW_TYPES = [
    ("fadd", "f32"), ("fadd", "f64"), ("fadd", "f16"), ("add", "i32"), ("add", "i64"),
    ("and", "i32"), ("or", "i64"), ("xor", "i32"), ("max", "i32"), ("min", "i64"),
    ("umax", "i32"), ("umin", "i64"), ("exch", "f32"), ("exch", "i64"),
]  # fmt: skip


def kernel_text(
    rmw: str | None, ty: str, n: int, *, mask: bool, use: bool, scalar: bool = False
) -> str:
    """A TTIR kernel doing one atomic on `n` elements of `ty` (or on a scalar), storing the
    old values to a second pointer when `use`."""
    ptr, val = f"!tt.ptr<{ty}>", ty
    lines = [
        "module {",
        f"  tt.func public @atomic_kernel(%p: {ptr}, %v: {ptr}, %o: {ptr}) {{",
    ]
    if scalar:
        lines.append(f"    %x = tt.load %v : {ptr}")
        operands, types, tptr = "%p, %x", f"{ptr}, {val}", ptr
        if rmw is None:
            operands, types = "%p, %x, %x", f"{ptr}, {val}, {val}"
        out_ptr = "%o"
        res_t = val
    else:
        t = lambda e: f"tensor<{n}x{e}>"  # noqa: E731
        tptr = t(ptr)
        lines += [
            f"    %r = tt.make_range {{end = {n} : i32, start = 0 : i32}} : {t('i32')}",
            f"    %ps = tt.splat %p : {ptr} -> {tptr}",
            f"    %pp = tt.addptr %ps, %r : {tptr}, {t('i32')}",
            f"    %vs = tt.splat %v : {ptr} -> {tptr}",
            f"    %vp = tt.addptr %vs, %r : {tptr}, {t('i32')}",
            f"    %x = tt.load %vp : {tptr}",
            f"    %os = tt.splat %o : {ptr} -> {tptr}",
            f"    %out_ptr = tt.addptr %os, %r : {tptr}, {t('i32')}",
        ]
        operands, types = "%pp, %x", f"{tptr}, {t(val)}"
        if rmw is None:
            operands, types = "%pp, %x, %x", f"{tptr}, {t(val)}, {t(val)}"
        if mask and rmw is not None:  # (tt.atomic_cas has no mask)
            lines += [
                "    %c5 = arith.constant 5 : i32",
                f"    %c5s = tt.splat %c5 : i32 -> {t('i32')}",
                f"    %m = arith.cmpi sgt, %r, %c5s : {t('i32')}",
            ]
            operands += ", %m"
            types += f", {t('i1')}"
        out_ptr = "%out_ptr"
        res_t = t(val)
    if rmw is None:
        lines.append(f"    %old = tt.atomic_cas acq_rel, gpu, {operands} : ({types}) -> {res_t}")
    else:
        lines.append(
            f"    %old = tt.atomic_rmw {rmw}, acq_rel, gpu, {operands} : ({types}) -> {res_t}"
        )
    if use:
        lines.append(f"    tt.store {out_ptr}, %old : {tptr}")
    lines += ["    tt.return", "  }", "}"]
    return "\n".join(lines) + "\n"


def compile_text(tmp_path, text: str, arch: str = "sm_89", num_warps: int = 4):
    path = tmp_path / "k.ttir"
    path.write_text(text)
    return tritium.compile(str(path), arch=arch, num_warps=num_warps, stop="ptx")


def assemble(ptxas, ptx: str, arch: str, tmp_path) -> None:
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    subprocess.run(
        [ptxas, f"-arch={arch}", str(src), "-o", str(tmp_path / "k.cubin")],
        check=True,
        capture_output=True,
    )


@pytest.mark.parametrize("rmw, ty", RMW_TYPES + [(None, "i32"), (None, "f64")])
def test_every_operation_assembles(rmw, ty, tmp_path, ptxas):
    ck = compile_text(tmp_path, kernel_text(rmw, ty, 256, mask=True, use=True))
    ptx = ck.asm["ptx"]
    op = "cas" if rmw is None else {"fadd": "add", "umax": "max", "umin": "min"}.get(rmw, rmw)
    atoms = re.findall(rf"atom\.acq_rel\.gpu\.global\.{op}\.\S+", ptx)
    assert len(atoms) == 2  # 256 elements over 128 threads: 2 each, no replication
    assert "st.shared" not in ptx  # every thread owns its elements: no broadcast
    assert ptx.count("@%p") >= (2 if rmw else 0)  # masked
    assemble(ptxas, ptx, "sm_89", tmp_path)


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90"])
def test_types_per_operation(arch, tmp_path, ptxas):
    want = {
        ("fadd", "f32"): ".add.f32", ("fadd", "f16"): ".add.noftz.f16", ("add", "i64"): ".add.u64",
        ("max", "i32"): ".max.s32", ("umin", "i64"): ".min.u64", ("xor", "i32"): ".xor.b32",
        ("exch", "f32"): ".exch.b32",
    }  # fmt: skip
    for (rmw, ty), suffix in want.items():
        ptx = compile_text(tmp_path, kernel_text(rmw, ty, 128, mask=False, use=True), arch).asm[
            "ptx"
        ]
        assert f"global{suffix} " in ptx, (rmw, ty)
        assemble(ptxas, ptx, arch, tmp_path)


def test_bf16_add_needs_hopper(tmp_path, ptxas):
    text = kernel_text("fadd", "bf16", 128, mask=False, use=False)
    ptx = compile_text(tmp_path, text, "sm_90").asm["ptx"]
    assert ".add.noftz.bf16" in ptx
    assemble(ptxas, ptx, "sm_90", tmp_path)
    with pytest.raises(NotImplementedError, match="bf16 needs sm_90"):  # (as every unsupported op)
        compile_text(tmp_path, text, "sm_89")


def test_replicated_elements_update_once_and_broadcast(tmp_path, ptxas):
    # 32 elements over 128 threads: warps 1-3 hold copies of warp 0's elements
    used = compile_text(tmp_path, kernel_text("fadd", "f32", 32, mask=True, use=True)).asm["ptx"]
    assert len(re.findall(r"atom\.", used)) == 1
    assert "st.shared" in used and "bar.sync" in used  # the owners' old values to the copies
    assemble(ptxas, used, "sm_89", tmp_path)
    unused = compile_text(tmp_path, kernel_text("fadd", "f32", 32, mask=True, use=False)).asm["ptx"]
    assert "st.shared" not in unused and "bar.sync" not in unused
    # only warp 0 owns the elements: (tid & 0b1100000) == 0, which LLVM writes as tid < 32
    assert re.search(r"setp\.lt\.u32\s+%p\d+, %r\d+, 32;", unused), unused


def test_scalar_atomics_are_done_by_thread_0(tmp_path, ptxas):
    for rmw in ("add", None):
        ptx = compile_text(
            tmp_path, kernel_text(rmw, "i32", 1, mask=False, use=True, scalar=True)
        ).asm["ptx"]
        assert len(re.findall(r"atom\.", ptx)) == 1
        assert re.search(r"setp\.eq\.b32\s+(%p\d+), %r\d+, 0;", ptx)  # tid == 0
        assert "st.shared" in ptx  # everyone gets thread 0's old value
        assemble(ptxas, ptx, "sm_89", tmp_path)


def test_atomics_survive_dce_and_cse(tmp_path):
    # two identical atomics with unused results: both stay (each updates memory)
    text = kernel_text("add", "i32", 128, mask=False, use=False)
    line = next(x for x in text.splitlines() if "tt.atomic_rmw" in x)
    text = text.replace(line, line + "\n" + line.replace("%old", "%old2"))
    ck = tritium.compile(str(_write(tmp_path, text)), stop="ttgir")
    assert ck.asm["ttgir"].count("tt.atomic_rmw") == 2


def _write(tmp_path, text):
    path = tmp_path / "k2.ttir"
    path.write_text(text)
    return path
