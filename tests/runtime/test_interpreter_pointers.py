"""Pointers a kernel computes (issue 19, rule 8): an int64 table of addresses, loaded and
cast with `.to(tl.pointer_type(...))`, reaches the arrays it names in the interpreter as on
the GPU, bounds-checked against each array; ptr_to_int gives the program's own address."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.errors import OutOfBoundsError


@tritium.jit
def scale_rows(table, lengths, out, B: tl.constexpr):
    """Row g of `out` = 3 * the array whose address is table[g] (lengths[g] elements); the
    array itself gets +1."""
    g = tl.program_id(0)
    src = tl.load(table + g).to(tl.pointer_type(tl.float32))
    n = tl.load(lengths + g)
    offs = tl.arange(0, B)
    v = tl.load(src + offs, mask=offs < n, other=0.0)
    tl.store(out + g * B + offs, v * 3, mask=offs < n)
    tl.store(src + offs, v + 1, mask=offs < n)


@tritium.jit
def address_of(x, out):
    """out[0] = the address of x as an integer; out[1] = that of x + 2 elements."""
    tl.store(out, x.to(tl.int64, bitcast=True))
    tl.store(out + 1, (x + 2).to(tl.int64, bitcast=True))


def _rows(n_rows=3, seed=0):
    rng = np.random.default_rng(seed)
    lengths = np.array([5, 8, 1][:n_rows], np.int32)
    arrays = [rng.standard_normal(int(k)).astype(np.float32) for k in lengths]
    return arrays, lengths


def _expected(arrays, B=8):
    out = np.zeros((len(arrays), B), np.float32)
    for g, a in enumerate(arrays):
        out[g, : a.size] = 3 * a
    return out


def test_table_of_host_addresses(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    arrays, lengths = _rows()
    before = [a.copy() for a in arrays]
    table = np.array([a.ctypes.data for a in arrays], np.int64)
    out = np.zeros((3, 8), np.float32)
    scale_rows[(3,)](table, lengths, out, B=8)
    np.testing.assert_array_equal(out, _expected(before))
    for a, b in zip(arrays, before):
        np.testing.assert_array_equal(a, b + 1)  # the stores landed in the arrays themselves


def test_reached_array_is_bounds_checked(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    arrays, lengths = _rows()
    table = np.array([a.ctypes.data for a in arrays], np.int64)
    lengths[0] = 6  # one past the end of the first array (5 elements)
    with pytest.raises(OutOfBoundsError, match=r"element offset 5 .*reached by address"):
        scale_rows[(3,)](table, lengths, np.zeros((3, 8), np.float32), B=8)


def test_address_in_no_live_array(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    table = np.array([0x1234560], np.int64)
    with pytest.raises(OutOfBoundsError, match="0x1234560 .*no live array"):
        scale_rows[(1,)](table, np.array([4], np.int32), np.zeros((1, 8), np.float32), B=8)


def test_ptr_to_int_is_the_program_address(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    x = np.zeros(4, np.float32)
    out = np.zeros(2, np.int64)
    address_of[(1,)](x, out)
    assert list(out) == [x.ctypes.data, x.ctypes.data + 8]


@pytest.mark.gpu
def test_gpu_table_of_device_addresses_matches_the_interpreter(monkeypatch):
    from tritium.runtime.arrays import to_device

    arrays, lengths = _rows(seed=1)
    dev = [to_device(a) for a in arrays]
    table = to_device(np.array([d.ptr for d in dev], np.int64))
    out = tritium.zeros((3, 8), np.float32)
    scale_rows[(3,)](table, to_device(lengths), out, B=8)
    np.testing.assert_array_equal(out.numpy(), _expected(arrays))
    for d, a in zip(dev, arrays):
        np.testing.assert_array_equal(d.numpy(), a + 1)
    # the same device arrays, interpreted: copied to the host, reached by their device
    # addresses, written back
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    out2 = tritium.zeros((3, 8), np.float32)
    scale_rows[(3,)](table, to_device(lengths), out2, B=8)
    np.testing.assert_array_equal(out2.numpy(), _expected([a + 1 for a in arrays]))
    for d, a in zip(dev, arrays):
        np.testing.assert_array_equal(d.numpy(), (a + 1) + 1)
