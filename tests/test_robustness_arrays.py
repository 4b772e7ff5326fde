"""Every kind of host array a launch can be given, and what happens to it (the table in
docs/robustness.md, "Host arrays"): read-only arrays (set by the caller, views of `bytes`,
`np.memmap` mode "r"), memory-mapped files, 0-d arrays, strided and negative-stride views,
structured fields, object / structured / byte-swapped dtypes, arrays that alias, and arrays
larger than the device's memory.

Each JIT test runs in the interpreter here and on the GPU with `-m gpu` (the `mode`
fixture); the Launcher's numpy staging is also tested on the CPU with a fake device
(tests/runtime/launcher_helpers.py). The rule under test: a kernel may read a read-only
array, and one it may write through (tritium/analysis/pointer_writes.py) is refused with an
ArgumentError naming the parameter before anything runs, on every path."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import tritium
import tritium.language as tl
from examples.vector_add import add_kernel
from tests.runtime.launcher_helpers import (
    ADD_PARAMS,
    CAI,
    FakeDevice,
    add_launcher,
    f32_at,
    meta,
)
from tritium.errors import ArgumentError, LaunchError, OutOfBoundsError
from tritium.ir.parser import parse_module
from tritium.runtime import array_kinds, driver, memory
from tritium.runtime.interpreter import interpret
from tritium.runtime.launcher import Launcher

# --------------------------------------------------------------------------- kernels


@tritium.jit
def scale(x_ptr, out_ptr, n, sx, so, BLOCK: tl.constexpr):
    """out[i * so] = 2 * x[i * sx]: strides in elements, so views of any stride work."""
    i = tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i * so, 2 * tl.load(x_ptr + i * sx, mask=m), mask=m)


@tritium.jit
def two_outputs(x_ptr, a_ptr, b_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i)
    tl.store(a_ptr + i, x + 1)
    tl.store(b_ptr + i, x + 2)


@tritium.jit
def accumulate(x_ptr, acc_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.atomic_add(acc_ptr + i, tl.load(x_ptr + i))


@tritium.jit
def scalar_copy(x_ptr, out_ptr):
    tl.store(out_ptr, tl.load(x_ptr) + 1)


@pytest.fixture(params=["interpreter", pytest.param("gpu", marks=pytest.mark.gpu)])
def mode(request, monkeypatch):
    if request.param == "interpreter":
        monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    else:
        monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    return request.param


def read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def memmap(tmp_path, values, mode: str, name="data.bin") -> np.memmap:
    path = tmp_path / name
    np.asarray(values, np.float32).tofile(path)
    return np.memmap(path, np.float32, mode=mode)


X = np.arange(8, dtype=np.float32)


# --------------------------------------------------------------------------- read-only arrays


def _read_only_inputs(tmp_path):
    return {
        "setflags": read_only(X.copy()),
        "bytes": np.frombuffer(X.tobytes(), np.float32),
        "memmap r": memmap(tmp_path, X, "r"),
        "read-only view": read_only(X.copy()[::-1][::-1]),
    }


@pytest.mark.parametrize("kind", ["setflags", "bytes", "memmap r", "read-only view"])
def test_a_kernel_may_read_read_only_arrays(mode, tmp_path, kind):
    x = _read_only_inputs(tmp_path)[kind]
    out = np.zeros(8, np.float32)
    add_kernel[(1,)](x, x, out, 8, BLOCK_SIZE=8)
    np.testing.assert_array_equal(out, 2 * X)
    np.testing.assert_array_equal(x, X)


SAYS = {
    "setflags": r"a read-only numpy array \(flags.writeable is False\)",
    "bytes": "a read-only view of a bytes object",
    "memmap r": r"a read-only view of a file \(a numpy.memmap opened with mode='r'",
    "read-only view": "a read-only numpy array",
}


@pytest.mark.parametrize("kind", list(SAYS))
def test_a_read_only_output_is_refused_before_anything_runs(mode, tmp_path, kind):
    b = _read_only_inputs(tmp_path)[kind]
    a = np.zeros(8, np.float32)
    whole = (
        rf"argument 'b_ptr' \(#2\) of kernel 'two_outputs' is {SAYS[kind]}.*, but the kernel writes"
    )
    with pytest.raises(ArgumentError, match=whole):
        two_outputs[(1,)](X, a, b, BLOCK=8)
    np.testing.assert_array_equal(a, 0)  # the kernel did not run: a was not written either
    np.testing.assert_array_equal(b, X)


def test_the_bytes_object_behind_a_view_is_never_changed(mode):
    data = bytes(32)
    with pytest.raises(ArgumentError, match="'output_ptr' .* bytes object"):
        add_kernel[(1,)](X, X, np.frombuffer(data, np.float32), 8, BLOCK_SIZE=8)
    assert data == bytes(32)


def test_atomics_count_as_writes(mode):
    acc = read_only(np.zeros(8, np.float32))
    with pytest.raises(ArgumentError, match="'acc_ptr' .* writes through it"):
        accumulate[(1,)](X, acc, BLOCK=8)
    acc = np.zeros(8, np.float32)
    accumulate[(2,)](read_only(X.copy()), acc, BLOCK=8)  # x only read: fine
    np.testing.assert_array_equal(acc, 2 * X)


# --------------------------------------------------------------------------- memory-mapped files


def test_memory_mapped_files(mode, tmp_path):
    out = memmap(tmp_path, np.zeros(8), "r+", "out.bin")  # writes reach the file
    scale[(1,)](memmap(tmp_path, X, "r"), out, 8, 1, 1, BLOCK=8)
    out.flush()
    np.testing.assert_array_equal(np.fromfile(tmp_path / "out.bin", np.float32), 2 * X)
    private = memmap(tmp_path, X, "c", "private.bin")  # copy-on-write: memory only
    scale[(1,)](X, private, 8, 1, 1, BLOCK=8)
    np.testing.assert_array_equal(private, 2 * X)
    np.testing.assert_array_equal(np.fromfile(tmp_path / "private.bin", np.float32), X)


# --------------------------------------------------------------------------- shapes and views


def test_0d_arrays_are_pointers_to_their_element(mode):
    x, out = np.array(41, np.int32), np.array(0, np.int32)
    scalar_copy[(1,)](x, out)
    assert out.shape == () and out[()] == 42
    with pytest.raises(ArgumentError, match="'out_ptr' .* read-only"):
        scalar_copy[(1,)](x, read_only(np.array(0, np.int32)))
    scalar_copy[(1,)](read_only(np.array(1, np.int32)), out)
    assert out[()] == 2


@pytest.mark.parametrize(
    "view, stride",
    [
        (lambda b: b[1::3], 3),  # a strided view: gaps between its elements
        (lambda b: b[::-2], -2),  # negative stride: the span lies below element 0
        (lambda b: b.reshape(6, 4)[:, 2], 4),  # a column of a 2-D array
    ],
    ids=["stride-3", "stride-minus-2", "column"],
)
def test_strided_views_are_written_at_their_elements_only(mode, view, stride):
    base = np.arange(24, dtype=np.float32)
    out = view(base)
    n = out.size
    scale[(1,)](np.ones(n, np.float32), out, n, 1, stride, BLOCK=16)
    want = np.arange(24, dtype=np.float32)
    view(want)[...] = 2
    np.testing.assert_array_equal(base, want)  # every gap as it was


def test_structured_fields_are_strided_views(mode):
    rec = np.zeros(8, dtype=[("a", "<f4"), ("b", "<i4")])
    rec["b"] = np.arange(8) + 100
    scale[(1,)](X, rec["a"], 8, 1, 2, BLOCK=8)  # field "a": every other fp32 slot
    np.testing.assert_array_equal(rec["a"], 2 * X)
    np.testing.assert_array_equal(rec["b"], np.arange(8) + 100)  # field "b" untouched


@pytest.mark.parametrize(
    "array, says",
    [
        (np.array([1.0] * 8, dtype=object), "dtype object .* references to Python objects"),
        (np.zeros(8, dtype=[("a", "<f4"), ("b", "<i4")]), r"structured dtype; pass one field"),
        (X.astype(">f4"), r"dtype >f4 .* not in this machine's byte order"),
        (X.astype(np.complex64), "arrays of dtype complex64 cannot be passed"),
    ],
    ids=["object", "structured", "big-endian", "complex64"],
)
def test_dtypes_a_kernel_cannot_use_are_refused(mode, array, says):
    before = array.copy()
    with pytest.raises(ArgumentError, match=f"argument 'x_ptr': .*{says}"):
        scale[(1,)](array, np.zeros(8, np.float32), 8, 1, 1, BLOCK=8)
    np.testing.assert_array_equal(array, before)


# --------------------------------------------------------------------------- aliasing


def test_arrays_that_alias_share_memory(mode):
    x = np.arange(8, dtype=np.float32)
    add_kernel[(1,)](x, np.ones(8, np.float32), x, 8, BLOCK_SIZE=8)  # in place: x += 1
    np.testing.assert_array_equal(x, np.arange(8) + 1)
    out = np.arange(8, dtype=np.float32)  # a read-only view of a writable output: allowed,
    ro = read_only(out.view())  # the caller gave write access through `out`
    add_kernel[(1,)](ro, ro, out, 8, BLOCK_SIZE=8)
    np.testing.assert_array_equal(out, 2 * np.arange(8))


def test_overlapping_views_see_each_other_s_writes(monkeypatch):
    # one shared copy: out[i] = 2 * buf[i], one element over. (On the GPU the same holds,
    # as on device memory: whether a program reads before another writes is the kernel's
    # race; tests/runtime/test_launcher.py checks the shared copy and its offsets.)
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    buf = np.arange(10, dtype=np.float32)
    add_kernel[(1,)](buf[:-1], buf[:-1], buf[1:], 9, BLOCK_SIZE=16)
    np.testing.assert_array_equal(buf, [0, 0, 2, 4, 6, 8, 10, 12, 14, 16])


# --------------------------------------------------------------------------- the interpreter


def test_the_interpreter_s_memory_refuses_stores_into_read_only_arrays():
    # interpret() called directly (no launch check): the address space itself refuses

    k = tritium.compile(scale, "*fp32,*fp32,i32,i32,i32", {"BLOCK": 8}, stop="ttir")
    module = parse_module(k.asm["ttir"])
    out = read_only(np.zeros(8, np.float32))
    with pytest.raises(OutOfBoundsError, match="store into argument 'out_ptr', a read-only array"):
        interpret(module, (1,), [X, out, 8, 1, 1])
    np.testing.assert_array_equal(out, 0)
    w = np.zeros(8, np.float32)
    interpret(module, (1,), [read_only(X.copy()), w, 8, 1, 1])
    np.testing.assert_array_equal(w, 2 * X)


def test_autotune_helpers_never_write_read_only_arrays():
    ro = read_only(X.copy())
    with pytest.raises(ArgumentError, match="reset_to_zero: cannot zero a read-only numpy array"):
        array_kinds.zero(ro)
    array_kinds.restore(ro, np.zeros(8, np.float32))  # nothing to put back: no launch wrote it
    np.testing.assert_array_equal(ro, X)


# --------------------------------------------------------------------------- GPU staging (fake)


def corrupt_inputs_add(raw, grid):
    """add_kernel that also scribbles over the device copies of its inputs."""
    x, y, out = (struct.unpack("<Q", r)[0] for r in raw[:3])
    (n,) = struct.unpack("<i", raw[3][:4])
    f32_at(out, n)[:] = f32_at(x, n) + f32_at(y, n)
    f32_at(x, n)[:] = -1
    f32_at(y, n)[:] = -1


@pytest.fixture
def fake(monkeypatch):
    dev = FakeDevice(monkeypatch, {"add_kernel": corrupt_inputs_add})
    dev.nparams_by_fn = {"add_kernel": 4, "fill_kernel": 2}
    return dev


def test_staging_refuses_a_read_only_output_before_copying(fake, monkeypatch):
    lau = fake.bind(add_launcher())
    allocs = []
    fake_alloc = memory.mem_alloc
    monkeypatch.setattr(memory, "mem_alloc", lambda n: allocs.append(n) or fake_alloc(n))
    with pytest.raises(ArgumentError, match=r"'out_ptr' \(#2\) of kernel 'add_kernel'"):
        lau((1,), [X, X, read_only(np.zeros(8, np.float32)), 8])
    assert not allocs and not fake.launches


def test_staging_copies_back_only_what_the_kernel_may_write(fake):
    lau = fake.bind(add_launcher())
    x, y, out = X.copy(), np.ones(8, np.float32), np.zeros(8, np.float32)
    lau((1,), [x, y, out, 8])
    np.testing.assert_array_equal(out, X + 1)
    np.testing.assert_array_equal(x, X)  # its device copy was overwritten: not copied back
    np.testing.assert_array_equal(y, 1)
    assert not fake.buffers


def fill_whole_span(raw, grid):
    """Writes 7 over 4 floats from its pointer: element 0 and whatever follows it."""
    (p,) = struct.unpack("<Q", raw[0])
    f32_at(p, 4)[:] = 7


def test_staging_copies_a_strided_view_back_element_by_element(fake):
    fake.kernels["fill_kernel"] = fill_whole_span
    params = [{"name": "out", "type": "*fp32", "writes": True}, {"name": "n", "type": "i32"}]
    lau = fake.bind(Launcher({"ptx": ""}, meta("fill_kernel", params)))
    base = np.arange(8, dtype=np.float32)
    lau((1,), [base[0:4:2], 2])  # the kernel also writes the gaps of its device copy
    np.testing.assert_array_equal(base, [7, 1, 7, 3, 4, 5, 6, 7])  # only the view changed


def test_staging_out_of_memory_is_one_clear_error_and_nothing_is_written(fake, monkeypatch):
    real_alloc = memory.mem_alloc

    def alloc(n):
        if n > 1000:
            raise driver.launch_error(2, "cuMemAlloc", detail=f"allocating {n} bytes")
        return real_alloc(n)

    monkeypatch.setattr(memory, "mem_alloc", alloc)
    lau = fake.bind(add_launcher())
    big = np.zeros(1000, np.float32)
    x = X.copy()
    with pytest.raises(LaunchError) as e:
        lau((1,), [x, x, big, 8])
    msg = str(e.value)
    assert "kernel 'add_kernel': its numpy arguments need" in msg
    assert "out_ptr 3.9 KiB" in msg and "CUDA_ERROR_OUT_OF_MEMORY" in msg
    assert "Nothing was copied or written" in msg
    assert e.value.cuda_error == "CUDA_ERROR_OUT_OF_MEMORY"
    assert not fake.buffers and not fake.launches  # x's copy freed again; nothing launched
    np.testing.assert_array_equal(big, 0)


def test_a_kernel_fault_leaves_the_host_arrays_unwritten(fake, monkeypatch):
    def fault(s=None):
        raise driver.launch_error(700, "cuStreamSynchronize")  # CUDA_ERROR_ILLEGAL_ADDRESS

    monkeypatch.setattr(driver.launch_state, "lost", None)
    monkeypatch.setattr(driver, "synchronize", fault)
    lau = fake.bind(add_launcher())
    out = np.zeros(8, np.float32)
    with pytest.raises(LaunchError, match="CUDA_ERROR_ILLEGAL_ADDRESS"):
        lau((1,), [X, X, out, 8])
    np.testing.assert_array_equal(out, 0)
    assert not fake.buffers


def test_metadata_without_writes_counts_every_pointer_as_written(fake):
    params = [{k: v for k, v in p.items() if k != "writes"} for p in ADD_PARAMS]  # an old file
    lau = fake.bind(Launcher({"ptx": ""}, meta("add_kernel", params)))
    with pytest.raises(ArgumentError, match="metadata does not say whether it writes"):
        lau((1,), [read_only(X.copy()), X, np.zeros(8, np.float32), 8])
    x = X.copy()
    lau((1,), [x, X, np.zeros(8, np.float32), 8])
    np.testing.assert_array_equal(x, -1)  # copied back, as the kernel might have written it


def test_read_only_cuda_array_interface(fake):
    lau = fake.bind(add_launcher())
    ro = CAI(0x2000)
    ro.__cuda_array_interface__["data"] = (0x2000, True)
    with pytest.raises(ArgumentError, match="'out_ptr' .* marks it read-only"):
        lau((1,), [CAI(0x1000), CAI(0x1000), ro, 4])
    lau((1,), [ro, ro, CAI(0x3000), 4])  # only read: launched with its address
    raw = fake.launches[-1]["raw"]
    assert [struct.unpack("<Q", r)[0] for r in raw[:3]] == [0x2000, 0x2000, 0x3000]


def test_a_compiled_kernel_s_launcher_knows_what_it_writes():
    k = tritium.compile(add_kernel, "*fp32,*fp32,*fp32,i32", {"BLOCK_SIZE": 64}, stop="ptx")
    lau = Launcher(k.asm, k.metadata)
    assert [p.writes for p in lau.params] == [False, False, True, False]


# --------------------------------------------------------------------------- GPU only


@pytest.mark.gpu
def test_gpu_arrays_larger_than_device_memory(tmp_path, monkeypatch):
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    total = driver.device().total_memory
    path = tmp_path / "huge.bin"
    n = (total + 2**30) // 4
    try:
        with open(path, "wb") as f:
            f.truncate(4 * n)  # a sparse file: no disk space used
        huge = np.memmap(path, np.float32, mode="r+", shape=(n,))
    except (OSError, ValueError, MemoryError) as e:
        pytest.skip(f"cannot map a sparse file of {4 * n} bytes here: {e}")
    x = X.copy()
    with pytest.raises(LaunchError, match="numpy arguments need .* CUDA_ERROR_OUT_OF_MEMORY"):
        add_kernel[(1,)](x, x, huge, 8, BLOCK_SIZE=8)
    np.testing.assert_array_equal(huge[:8], 0)
    np.testing.assert_array_equal(x, X)
    out = np.zeros(8, np.float32)  # the device is still usable
    add_kernel[(1,)](x, x, out, 8, BLOCK_SIZE=8)
    np.testing.assert_array_equal(out, 2 * X)
