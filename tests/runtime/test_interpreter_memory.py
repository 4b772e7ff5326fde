"""The interpreter's bounds-checked address space (`interpreter/memory.py`): masked and
unmasked out-of-bounds accesses, views inside a larger buffer, strided and reversed
views, aliasing, i64 offsets, partial and misaligned accesses."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from tests.runtime.interpreter_helpers import ir_copy, parse_module
from tritium.errors import OutOfBoundsError
from tritium.runtime.interpreter import interpret

RNG = np.random.default_rng(2)


def test_out_of_bounds_load_names_line_argument_and_offset():
    x = np.arange(10, dtype=np.float32)
    out = np.zeros(16, np.float32)
    with pytest.raises(OutOfBoundsError) as e:
        interpret(ir_copy(16, masked=False), (1,), [x, out, 10, 0])
    msg = str(e.value)
    assert str(e.value.loc) == "k.py:7:5" and msg.startswith("k.py:7:5: error:")
    assert "'x_ptr'" in msg and "element offset 10 " in msg and "[0, 10)" in msg
    assert "lane (10,)" in msg and "tt.load" in msg


def test_masked_out_of_bounds_lanes_are_not_touched():
    x = np.arange(10, dtype=np.float32)
    out = np.full(16, np.nan, np.float32)
    interpret(ir_copy(16, masked=True), (1,), [x, out, 10, 0])
    np.testing.assert_array_equal(out[:10], x)
    assert np.isnan(out[10:]).all()


def test_out_of_bounds_store_writes_nothing():
    x = np.arange(16, dtype=np.float32)
    out = np.full(12, -1.0, np.float32)
    with pytest.raises(OutOfBoundsError) as e:
        interpret(ir_copy(16, masked=False), (1,), [x, out, 16, 0])
    assert str(e.value.loc) == "k.py:9:5" and "'out_ptr'" in str(e.value)
    assert "element offset 12 " in str(e.value)
    assert (out == -1.0).all()


def test_negative_offset_is_out_of_bounds_but_not_inside_the_base_buffer():
    base = np.arange(20, dtype=np.float32)
    out = np.zeros(16, np.float32)
    with pytest.raises(OutOfBoundsError, match="element offset -1 "):
        interpret(ir_copy(16, masked=False), (1,), [base[:16], out, 16, -1])
    # A view starting mid-buffer: x[-2] is base[1], memory that exists (as on the GPU).
    interpret(ir_copy(16, masked=False), (1,), [base[3:], out, 16, -2])
    np.testing.assert_array_equal(out, base[1:17])
    with pytest.raises(OutOfBoundsError, match=r"holds elements \[-3, 17\)"):
        interpret(ir_copy(16, masked=False), (1,), [base[3:], out, 16, 2])


@pytest.mark.parametrize("misalign", [0, 4])
def test_buffer_alignment_is_kept_and_underruns_name_the_argument(misalign):
    # A buffer whose first byte is 256-byte aligned (then 4 past it) in real memory: an
    # access just below it is still attributed to it, and its pointer keeps the real
    # alignment modulo 256.
    raw = np.zeros(64 * 4 + 512, np.uint8)
    start = raw.ctypes.data + (-raw.ctypes.data) % 256 + misalign
    x = np.ctypeslib.as_array((ctypes.c_float * 16).from_address(start))  # its own root
    x[:] = np.arange(16)
    out = np.zeros(16, np.float32)
    interpret(ir_copy(16, masked=False), (1,), [x, out, 16, 0])
    np.testing.assert_array_equal(out, np.arange(16))
    with pytest.raises(OutOfBoundsError, match="element offset -2 from argument 'x_ptr'"):
        interpret(ir_copy(16, masked=False), (1,), [x, out, 16, -2])
    ptr = parse_module("""
module {
  tt.func public @k(%x_ptr: !tt.ptr<f32>, %out: !tt.ptr<i64>) {
    %i = tt.ptr_to_int %x_ptr : !tt.ptr<f32> -> i64
    tt.store %out, %i : !tt.ptr<i64>
    tt.return
  }
}""")
    addr = np.zeros(1, np.int64)
    interpret(ptr, (1,), [x, addr])
    assert addr[0] % 256 == misalign and addr[0] >= 1 << 40
    del raw  # (kept alive until here: x's memory)


def test_i64_offsets():
    x = np.arange(40, dtype=np.float32)
    out = np.full(16, np.nan, np.float32)
    interpret(ir_copy(16, masked=True, i64=True), (1,), [x, out, 13, 20])
    np.testing.assert_array_equal(out[:13], x[20:33])
    assert np.isnan(out[13:]).all()
    with pytest.raises(OutOfBoundsError, match=f"element offset {2**33} "):
        interpret(ir_copy(16, masked=True, i64=True), (1,), [x, out, 13, 2**33])


def test_pointer_into_no_buffer():
    text = """
module {
  tt.func public @k(%out: !tt.ptr<f32>) {
    %c = arith.constant 4096 : i64
    %p = tt.int_to_ptr %c : i64 -> !tt.ptr<f32>
    %v = tt.load %p : !tt.ptr<f32> loc("k.py":3:9)
    tt.store %out, %v : !tt.ptr<f32>
    tt.return
  }
}"""
    with pytest.raises(OutOfBoundsError, match="0x1000 .*no live array"):
        interpret(parse_module(text), (1,), [np.zeros(1, np.float32)])


COPY_2D = """
module {
  tt.func public @copy2d(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %sx0: i32, %sx1: i32, %so0: i32, %so1: i32) {
    %ri = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
    %rj = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %i = tt.expand_dims %ri {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
    %j = tt.expand_dims %rj {axis = 0 : i32} : tensor<8xi32> -> tensor<1x8xi32>
    %ib = tt.broadcast %i : tensor<4x1xi32> -> tensor<4x8xi32>
    %jb = tt.broadcast %j : tensor<1x8xi32> -> tensor<4x8xi32>
    %a0 = tt.splat %sx0 : i32 -> tensor<4x8xi32>
    %a1 = tt.splat %sx1 : i32 -> tensor<4x8xi32>
    %b0 = tt.splat %so0 : i32 -> tensor<4x8xi32>
    %b1 = tt.splat %so1 : i32 -> tensor<4x8xi32>
    %xi = arith.muli %ib, %a0 : tensor<4x8xi32>
    %xj = arith.muli %jb, %a1 : tensor<4x8xi32>
    %xo = arith.addi %xi, %xj : tensor<4x8xi32>
    %oi = arith.muli %ib, %b0 : tensor<4x8xi32>
    %oj = arith.muli %jb, %b1 : tensor<4x8xi32>
    %oo = arith.addi %oi, %oj : tensor<4x8xi32>
    %xp = tt.splat %x : !tt.ptr<f32> -> tensor<4x8x!tt.ptr<f32>>
    %xq = tt.addptr %xp, %xo : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>
    %op = tt.splat %out : !tt.ptr<f32> -> tensor<4x8x!tt.ptr<f32>>
    %oq = tt.addptr %op, %oo : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>
    %v = tt.load %xq : tensor<4x8x!tt.ptr<f32>>
    tt.store %oq, %v : tensor<4x8x!tt.ptr<f32>>
    tt.return
  }
}"""


def _strides(a: np.ndarray) -> list[int]:
    return [s // a.itemsize for s in a.strides]


@pytest.mark.parametrize(
    "view",
    [
        lambda b: b.T[:4, :8],  # transposed
        lambda b: b[:4, ::2],  # every other column
        lambda b: b[::-1, ::-1][:4, :8],  # negative strides: starts at the buffer's end
        lambda b: b[3:7, 5:13],  # starts mid-buffer
    ],
    ids=["transposed", "step2", "reversed", "offset"],
)
def test_strided_views(view):
    base = RNG.standard_normal((16, 16)).astype(np.float32)
    x = view(base)
    out_base = np.full((4, 20), np.nan, np.float32)
    out = out_base[:, 1:17:2]  # the output is a strided view too
    interpret(parse_module(COPY_2D), (1,), [x, out, *_strides(x), *_strides(out)])
    np.testing.assert_array_equal(out, x)
    assert np.isnan(out_base[:, 0::2]).all() and np.isnan(out_base[:, 17:]).all()


def test_same_buffer_passed_twice_aliases():
    x = np.arange(16, dtype=np.float32)
    interpret(ir_copy(16, masked=True), (1,), [x[1:], x, 15, 0])  # x[i] = x[i + 1], i < 15
    np.testing.assert_array_equal(x[:15], np.arange(1, 16))


MISALIGNED = """
module {
  tt.func public @k(%raw: !tt.ptr<i8>, %out: !tt.ptr<f32>, %byte: i32) {
    %p = tt.addptr %raw, %byte : !tt.ptr<i8>, i32
    %f = tt.bitcast %p : !tt.ptr<i8> -> !tt.ptr<f32>
    %v = tt.load %f : !tt.ptr<f32>
    tt.store %out, %v : !tt.ptr<f32>
    tt.return
  }
}"""


def test_partial_and_misaligned_accesses():
    raw = np.zeros(10, np.uint8)  # numpy allocations are at least 16-byte aligned
    raw[4:8] = np.array([2.5], np.float32).view(np.uint8)
    out = np.zeros(1, np.float32)
    interpret(parse_module(MISALIGNED), (1,), [raw, out, 4])
    assert out[0] == 2.5
    with pytest.raises(OutOfBoundsError, match=r"byte offset 8 .*'raw'.*bytes \[0, 10\)"):
        interpret(parse_module(MISALIGNED), (1,), [raw, out, 8])  # bytes 8..11 of 10
    with pytest.raises(OutOfBoundsError, match="misaligned"):
        interpret(parse_module(MISALIGNED), (1,), [raw, out, 2])
