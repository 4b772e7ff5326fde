"""Launch-time mistakes and the runtime's checks (the catalogue in docs/robustness.md):
argument count and kinds, dtypes against a compiled signature, 16-byte alignment claims,
CUDA's grid limits, out-of-bounds accesses and failed asserts in the interpreter (named
by FILE:LINE), register-spill warnings, and tracebacks that stop at the user's call.

Everything here runs on the CPU: the interpreter, and the Launcher's checks, which run
before anything touches CUDA."""

from __future__ import annotations

import inspect
import struct
import traceback
import warnings

import numpy as np
import pytest

import tritium
import tritium.language as tl
from examples.vector_add import add_kernel
from tests.runtime.test_launcher import FakeDevice, add_launcher, fake_device_array
from tritium.compiler import RegisterSpillWarning, compile_jit
from tritium.errors import ArgumentError, KernelAssertionError, OutOfBoundsError
from tritium.jit.specialize import build_spec, launch_key
from tritium.runtime import cache
from tritium.runtime.launcher import MAX_GRID, Launcher, check_grid

THIS = __file__
ADD_SIG = "*fp32:16,*fp32:16,*fp32:16,i32"


def marked_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn.fn)
    return next(start + i for i, line in enumerate(lines) if "# <-" in line)


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")


@tritium.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


X = np.arange(8, dtype=np.float32)


# ------------------------------------------------------------------ binding the arguments


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        ((X, X.copy(), 8, 8, 5), {}, r"copy_kernel\(\) takes 4 arguments but 5 were given"),
        ((X, X.copy()), {"BLOCK": 8}, r"copy_kernel\(\) is missing argument\(s\): n"),
        ((X, X.copy(), 8), {}, r"copy_kernel\(\) is missing argument\(s\): BLOCK"),
        ((X, X.copy(), 8), {"BLOCK": 8, "blok": 2}, "unexpected keyword argument 'blok'"),
        ((X, [0.0] * 8, 8), {"BLOCK": 8}, "cannot pass a list to a kernel"),
        (
            (X.astype(np.complex64), X, 8),
            {"BLOCK": 8},
            "arrays of dtype complex64 cannot be passed",
        ),
        ((X, X.copy(), 2**70), {"BLOCK": 8}, "does not fit in 64 bits"),
        ((X, X.copy(), 8), {"BLOCK": 8, "num_warps": 3}, "num_warps must be a power of two"),
    ],
    ids=["extra", "missing", "missing-constexpr", "keyword", "list", "complex", "int>64b", "warps"],
)
def test_bad_arguments_at_launch(interp, args, kwargs, message):
    with pytest.raises(ArgumentError, match=message):
        copy_kernel[(1,)](*args, **kwargs)


def test_argument_given_twice_names_the_kernel(interp):
    # Python itself binds the launch arguments (in C, for speed), so this is its TypeError,
    # naming the kernel like any Python function call would.
    with pytest.raises(
        TypeError, match=r"copy_kernel\(\) got multiple values for argument 'BLOCK'"
    ):
        copy_kernel[(1,)](X, X.copy(), 8, 8, BLOCK=8)


# ------------------------------------------------------------------ grids


@pytest.mark.parametrize(
    "grid, message",
    [
        ((1, 2, 3, 4), "a grid has 1 to 3 dimensions"),
        ((-1,), "grid x = -1 is negative"),
        ((1, 65536), r"grid y = 65536 exceeds CUDA's limit of 65535"),
        ((2**31,), r"grid x = 2147483648 exceeds CUDA's limit of 2147483647"),
        ((1, 1, 70000), "grid z = 70000 exceeds"),
    ],
)
def test_grid_limits_in_the_interpreter(interp, grid, message):
    y = np.zeros(8, np.float32)
    with pytest.raises(ArgumentError, match=message):  # at once: no 2**31 programs run first
        copy_kernel[grid](X, y, 8, BLOCK=8)
    assert not y.any()


def test_check_grid():
    assert check_grid(5, "k") == (5, 1, 1)
    assert check_grid((2, 3), "k") == (2, 3, 1)
    assert check_grid((0,), "k") == (0, 1, 1)  # launches nothing, as upstream
    assert check_grid(MAX_GRID, "k") == MAX_GRID
    for bad in [(2.0,), ("1",), None, (1, 2, 3, 4), (MAX_GRID[0] + 1,), (1, 1, 65536)]:
        with pytest.raises(ArgumentError, match="grid"):
            check_grid(bad, "k")


def test_grid_limits_on_the_launch_fast_path(monkeypatch):
    fake = FakeDevice(monkeypatch)
    fake.nparams_by_fn = {"add_kernel": 4}
    lau = fake.bind(add_launcher())
    x = fake_device_array(0x1000, (4,), np.float32)
    lau((2**31 - 1, 65535, 65535), [x, x, x, 4])  # the largest legal grid
    assert fake.launches[-1]["grid"] == (2**31 - 1, 65535, 65535)
    for grid, axis in [((2**31, 1, 1), "x"), ((1, 65536, 1), "y"), ((1, 1, 2**20), "z")]:
        with pytest.raises(ArgumentError, match=f"kernel 'add_kernel': grid {axis} = .* exceeds"):
            lau(grid, [x, x, x, 4])
    with pytest.raises(ArgumentError, match="tuple of 1 to 3 ints"):
        lau((2.5, 1, 1), [x, x, x, 4])
    assert len(fake.launches) == 1  # nothing reached cuLaunchKernel


# ------------------------------------------------------------------ compiled signatures


@pytest.fixture(scope="module")
def add_ptx():
    return tritium.compile(add_kernel, ADD_SIG, {"BLOCK_SIZE": 64}, stop="ptx")


def test_metadata_records_the_alignment_each_pointer_was_compiled_for():
    ck = tritium.compile(
        add_kernel, "*fp32:16,*fp32,*fp32:16,i32:16", {"BLOCK_SIZE": 64}, stop="llir"
    )
    div = {p["name"]: p.get("divisibility") for p in ck.metadata.params}
    assert div == {"x_ptr": 16, "y_ptr": None, "output_ptr": 16, "n_elements": 16}


@pytest.mark.parametrize(
    "make_args, message",
    [
        (
            lambda x: [x.astype(np.float64), x, x, 4],
            r"argument 'x_ptr' \(#0\) of kernel 'add_kernel' is an array of float64 \(fp64\), "
            r"but the kernel was compiled for \*fp32",
        ),
        (
            lambda x: [x, np.zeros(65, np.float32)[1:], x, 4],
            r"argument 'y_ptr' \(#1\) of kernel 'add_kernel' starts at address 0x[0-9a-f]+, which "
            r"is not a multiple of 16 bytes, but the kernel was compiled assuming it is",
        ),
        (
            lambda x: [x, x, x],
            r"kernel 'add_kernel' takes 4 arguments \(x_ptr, y_ptr, output_ptr, n_elements\), got 3",
        ),
        (lambda x: [x, x, x, 2**31], r"'n_elements' \(#3\) .* = 2147483648 does not fit i32"),
        (lambda x: [x, x, 7, 4], r"'output_ptr' \(#2\) of type \*fp32 must be a numpy array"),
    ],
    ids=["dtype", "misaligned", "count", "range", "kind"],
)
def test_compiled_kernel_checks_its_arguments_before_cuda(add_ptx, make_args, message):
    x = np.zeros(64, np.float32)
    assert x.ctypes.data % 16 == 0
    with pytest.raises(ArgumentError, match=message):
        add_ptx[(1,)](*make_args(x))  # raised by the first call's checks, before cuModuleLoad


def test_alignment_is_only_required_where_claimed():
    ck = tritium.compile(add_kernel, "*fp32,*fp32,*fp32,i32", {"BLOCK_SIZE": 64}, stop="ptx")
    odd = np.zeros(65, np.float32)[1:]
    Launcher(ck.asm, ck.metadata).check_args([odd, odd, odd, 4])  # no claim: no complaint
    lau = add_launcher()  # a Launcher from metadata without divisibility (older entries)
    lau.check_args([odd, odd, odd, 4])


def test_device_arrays_are_checked_for_alignment_too(add_ptx):
    lau = Launcher(add_ptx.asm, add_ptx.metadata)
    good, bad = (fake_device_array(a, (16,), np.float32) for a in (0x10000, 0x10004))
    lau.check_args([good, good, good, 4])
    with pytest.raises(ArgumentError, match="'output_ptr'.*0x10004"):
        lau.check_args([good, good, bad, 4])


def test_jit_key_never_reuses_an_aligned_specialisation_for_misaligned_arrays():
    buf = np.zeros(80, np.float32)
    aligned, odd = buf[:64], buf[1:65]
    assert aligned.ctypes.data % 16 == 0 and odd.ctypes.data % 16 == 4
    k_aligned = launch_key(add_kernel.kinds, [aligned, aligned, aligned, 64, 64], {}, True, lambda: 0)
    k_odd = launch_key(add_kernel.kinds, [aligned, odd, aligned, 64, 64], {}, True, lambda: 0)
    assert k_aligned != k_odd  # a different runner, compiled for what it gets
    spec = build_spec(add_kernel, [aligned, odd, aligned, 64, 64])
    assert spec.divisible_by_16 == {"x_ptr", "output_ptr", "n_elements"}
    nospec = tritium.jit(do_not_specialize=["x_ptr"])(add_kernel.fn)
    assert "x_ptr" not in build_spec(nospec, [aligned, aligned, aligned, 64, 64]).divisible_by_16


def test_numpy_staging_keeps_the_alignment_the_key_saw(monkeypatch):
    fake = FakeDevice(monkeypatch)
    fake.nparams_by_fn = {"add_kernel": 4}
    lau = fake.bind(Launcher(*_aligned_add()))
    buf = np.zeros(64, np.float32)
    lau((1,), [buf[:16], buf[16:32], buf[32:48], 16])
    addrs = [struct.unpack("<Q", r)[0] for r in fake.launches[-1]["raw"][:3]]
    assert all(a % 16 == 0 for a in addrs)


def _aligned_add():
    lau = add_launcher()
    meta = {
        "name": "add_kernel",
        "num_warps": 4,
        "threads_per_warp": 32,
        "shared": 0,
        "params": [
            {"name": p.name, "type": p.type, "divisibility": 16 if p.is_pointer else None}
            for p in lau.params
        ],
    }
    return {"ptx": lau.image}, meta


# ------------------------------------------------------------------ faults in the interpreter


@tritium.jit
def oob_load(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # <-
    tl.store(y_ptr + offs, x)


@tritium.jit
def oob_store(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < 8, other=0.0)
    tl.store(y_ptr + offs, x)  # <-


@tritium.jit(debug=True)
def failing_assert(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    tl.device_assert(x < 5, "x must stay below 5")  # <-


@tritium.jit(debug=True)
def overflowing_multiply(x_ptr):
    offs = tl.arange(0, 8)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, x * 1000000000)  # <-


@pytest.mark.parametrize(
    "kernel, args, cls, message",
    [
        (
            oob_load,
            lambda: (X.copy(), np.zeros(16, np.float32)),
            OutOfBoundsError,
            "out-of-bounds load at lane (8,)",
        ),
        (
            oob_store,
            lambda: (X.copy(), np.zeros(8, np.float32)),
            OutOfBoundsError,
            "out-of-bounds store at lane (8,)",
        ),
        (failing_assert, lambda: (X.copy(),), KernelAssertionError, "x must stay below 5"),
        (
            overflowing_multiply,
            lambda: (np.arange(8, dtype=np.int32),),
            KernelAssertionError,
            "int32 overflow detected for operation mul",
        ),
    ],
    ids=["oob-load", "oob-store", "device-assert", "overflow-check"],
)
def test_interpreter_faults_name_the_kernel_line(interp, kernel, args, cls, message):
    kwargs = {"BLOCK": 16} if "BLOCK" in kernel.arg_names else {}
    with pytest.raises(cls) as info:
        kernel[(1,)](*args(), **kwargs)
    err = info.value
    assert (err.loc.file, err.loc.line) == (THIS, marked_line(kernel))
    assert message in err.message
    assert str(err).startswith(f"{THIS}:{err.loc.line}:") and str(err).rstrip().endswith("^")


def test_tracebacks_stop_at_the_users_call(interp, monkeypatch):
    """A compile error raised at launch carries no frames from the frontend's internals."""

    @tritium.jit
    def bad(x_ptr, n):
        tl.store(x_ptr + tl.arange(0, n), 1.0)

    def files(exc):
        return [f.filename for f in traceback.extract_tb(exc.__traceback__)]

    with pytest.raises(tritium.CompilationError) as info:
        bad[(1,)](X.copy(), 8)
    seen = files(info.value)
    assert seen[0] == THIS and seen[-1].endswith("compiler.py"), seen
    assert not [f for f in seen if "frontend/codegen" in f or "semantic" in f]
    with pytest.raises(OutOfBoundsError) as info:
        oob_load[(1,)](X.copy(), np.zeros(16, np.float32), BLOCK=16)
    assert not [f for f in files(info.value) if "interpreter" in f]
    monkeypatch.setenv("TRITIUM_DEBUG", "1")  # then everything, for tritium's developers
    bad.runners.clear()
    with pytest.raises(tritium.CompilationError) as info:
        bad[(1,)](X.copy(), 4)
    assert any("codegen" in f for f in files(info.value))


# ------------------------------------------------------------------ register spills

SPILL_LOG = (
    "ptxas info    : Compiling entry function 'add_kernel' for 'sm_89'\n"
    "ptxas info    : Function properties for add_kernel\n"
    "    96 bytes stack frame, 96 bytes spill stores, 88 bytes spill loads\n"
    "ptxas info    : Used 255 registers, 380 bytes cmem[0]\n"
)


@pytest.fixture
def fake_ptxas(monkeypatch):
    logs = []
    monkeypatch.setattr(
        "tritium.codegen.tools._start_ptxas", lambda ptx, arch, extra: lambda: (b"\x7fELF", logs[-1])
    )
    monkeypatch.setattr("tritium.codegen.tools.disassemble", lambda cubin: None)
    return logs


def test_spills_warn_at_the_kernels_def_line(fake_ptxas):
    fake_ptxas.append(SPILL_LOG)
    with pytest.warns(
        RegisterSpillWarning, match=r"96 bytes spill stores, 88 bytes spill loads; 255 registers"
    ) as rec:
        ck = tritium.compile(add_kernel, ADD_SIG, {"BLOCK_SIZE": 64}, stop="cubin")
    assert (rec[0].filename, rec[0].lineno) == (add_kernel.file, add_kernel.def_line)
    assert ck.metadata.spill_stores == 96 and ck.metadata.registers == 255
    fake_ptxas.append("ptxas info    : Used 12 registers, 380 bytes cmem[0]\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ck = tritium.compile(add_kernel, ADD_SIG, {"BLOCK_SIZE": 64}, stop="cubin")
    assert ck.metadata.registers == 12 and ck.metadata.spill_stores == 0


def test_spills_warn_again_when_the_kernel_comes_from_the_cache(fake_ptxas, monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    fake_ptxas.append(SPILL_LOG)
    spec = build_spec(add_kernel, [X, X, X, 8, 64])
    for _ in range(2):
        with pytest.warns(RegisterSpillWarning):
            compile_jit(add_kernel, spec, {"arch": "sm_89"})
        cache.default_cache().clear_memory()


@tritium.jit
def spilling_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    w = x * y + tl.load(y_ptr + BLOCK + offs)
    tl.store(x_ptr + offs, w + tl.sum(x * y, axis=0))
    tl.store(y_ptr + offs, y * w + tl.sum(y * w, axis=0))


def test_real_ptxas_spills_are_reported(ptxas):
    with pytest.warns(RegisterSpillWarning, match="spills registers") as rec:
        ck = tritium.compile(
            spilling_kernel, "*fp32:16,*fp32:16", {"BLOCK": 4096}, num_warps=1, stop="cubin"
        )
    assert ck.metadata.spill_stores > 0 and ck.metadata.registers > 200
    assert rec[0].lineno == spilling_kernel.def_line
