"""Block pointers in the frontend: `tl.make_block_ptr`, `tl.advance`, and `tl.load` /
`tl.store` through one. The TTIR checked here is the frontend's (`ast_to_ttir`, before any
TTIR pass: `rewrite-tensor-pointer` would lower the block pointers away); it must print
upstream's syntax, carry block pointers through loops and `if`s, and reject what upstream
rejects with an error naming the kernel's line."""

from __future__ import annotations

import inspect
import linecache
import re

import pytest

import tritium
import tritium.language as tl
from tests.frontend.helpers import ttir, ttir_text
from tritium.errors import CompilationError
from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir

THIS = __file__

# Upstream Triton 3.x's TTIR for `upstream_shape` below (SSA names aside).
UPSTREAM = """\
%0 = tt.make_tensor_ptr %arg0, [%M, %c64_i64], [%c64_i64, %c1_i64], [%c0_i32, %c0_i32] {order = array<i32: 1, 0>} : <tensor<32x64xf16>>
%1 = tt.advance %0, [%c64_i32, %c0_i32] : <tensor<32x64xf16>>
%2 = tt.load %1 {boundaryCheck = array<i32: 0, 1>, padding = 1 : i32} : !tt.ptr<tensor<32x64xf16>>
tt.store %3, %2 {boundaryCheck = array<i32: 0>} : !tt.ptr<tensor<32x64xf16>>"""


def template_regex(template: str) -> re.Pattern:
    """A regex for the lines of `template` in order (other lines may come between). A value
    the template defines (`%1 = ...`) must be the one its later lines use; every other SSA
    name (constants, arguments) matches any name."""
    defined: set[str] = set()
    parts = []
    for line in template.splitlines():
        lhs = re.match(r"(%\w+) = ", line)
        out, pos = [], 0
        for m in re.finditer(r"%\w+", line):
            out.append(re.escape(line[pos : m.start()]))
            name = "v" + m.group()[1:]
            if lhs and m.start() == 0:
                out.append(rf"(?P<{name}>%[\w.]+)")
            elif m.group() in defined:
                out.append(rf"(?P={name})")
            else:
                out.append(r"%[\w.]+")
            pos = m.end()
        out.append(re.escape(line[pos:]))
        if lhs:
            defined.add(lhs.group(1))
        parts.append(r"^\s*" + "".join(out) + r"$")
    return re.compile(r"\n(?:.*\n)*?".join(parts), re.M)


def operand_values(values) -> list:
    """Each value as the constant it is (`(64, "i64")`) or the argument's name."""
    out = []
    for v in values:
        op = getattr(v, "op", None)
        if op is not None and op.name == "arith.constant":
            out.append((op.value.value.data, str(v.type)))
        else:
            out.append(v.name_hint)
    return out


def ops(module, name):
    return [op for op in module.walk() if op.name == name]


def roundtrips(module) -> None:
    text = print_ir(module)
    again = parse_module(text)
    again.verify()
    assert print_ir(again) == text


# ---------------------------------------------------------------------- upstream's syntax
@tritium.jit
def upstream_shape(a_ptr, c_ptr, M):
    p = tl.make_block_ptr(a_ptr, (M, 64), (64, 1), (0, 0), (32, 64), (1, 0))
    q = tl.advance(p, (64, 0))
    x = tl.load(q, boundary_check=(1, 0), padding_option="zero")
    c = tl.make_block_ptr(
        c_ptr, shape=(M, 64), strides=(64, 1), offsets=(0, 0), block_shape=(32, 64), order=(1, 0)
    )
    tl.store(c, x, boundary_check=(0,))


def test_prints_upstream_syntax():
    module = ttir(upstream_shape, "*fp16,*fp16,i64")
    text = print_ir(module)
    assert template_regex(UPSTREAM).search(text), text
    mk, mk_c = ops(module, "tt.make_tensor_ptr")
    assert operand_values(mk.shape) == ["M", (64, "i64")]
    assert operand_values(mk.strides) == [(64, "i64"), (1, "i64")]
    assert operand_values(mk.offsets) == [(0, "i32"), (0, "i32")]
    assert mk.order_list == [1, 0]
    (adv,) = ops(module, "tt.advance")
    assert operand_values(adv.offsets) == [(64, "i32"), (0, "i32")]
    assert str(ops(module, "tt.load")[0].result.type) == "tensor<32x64xf16>"
    assert str(mk_c.result.type) == "!tt.ptr<tensor<32x64xf16>>"
    roundtrips(module)


@tritium.jit
def paddings(a_ptr, b_ptr, M, KIND: tl.constexpr):
    p = tl.make_block_ptr(a_ptr, (M,), (1,), (0,), (128,), (0,))
    q = tl.make_block_ptr(b_ptr, (M,), (1,), (0,), (128,), (0,))
    if KIND == "none":
        x = tl.load(p)
    elif KIND == "check":
        x = tl.load(p, boundary_check=0)
    elif KIND == "nan":
        x = tl.load(p, boundary_check=[0], padding_option="nan")
    else:
        x = tl.load(p, padding_option="zero", cache_modifier=".cg", volatile=True)
    tl.store(q, x)


@pytest.mark.parametrize(
    "kind, attrs",
    [
        ("none", ""),
        ("check", " {boundaryCheck = array<i32: 0>}"),
        ("nan", " {boundaryCheck = array<i32: 0>, padding = 2 : i32}"),
        ("zero", " cacheModifier = cg {padding = 1 : i32, isVolatile = true}"),
    ],
)
def test_load_padding_and_boundary_check(kind, attrs):
    text = ttir_text(paddings, "*fp32,*fp32,i32", {"KIND": kind})
    loads = [line.strip() for line in text.splitlines() if "tt.load" in line]
    assert len(loads) == 1
    assert re.fullmatch(
        rf"%\w+ = tt.load %\w+{re.escape(attrs)} : !tt.ptr<tensor<128xf32>>", loads[0]
    )
    stores = [line.strip() for line in text.splitlines() if "tt.store" in line]
    assert re.fullmatch(r"tt.store %\w+, %\w+ : !tt.ptr<tensor<128xf32>>", stores[0])


# ---------------------------------------------------------------------- conversions
@tritium.jit
def index_types(a_ptr, M, N, sm, off16, offu, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(a_ptr, (M, N), (sm, 1), (off16, offu), (BLOCK, 2 * BLOCK), (0, 1))
    p = tl.advance(p, (off16, BLOCK))
    tl.store(p, 1)


def test_index_conversions():
    """shape/strides become i64 (extended by their signedness), offsets i32."""
    module = ttir(index_types, "*i8,i32,u32,i64,i16,u32", {"BLOCK": 16})
    text = print_ir(module)
    assert re.search(r"arith.extsi %M : i32 to i64", text)
    assert re.search(r"arith.extui %N : i32 to i64", text)
    assert re.search(r"arith.extsi %off16 : i16 to i32", text)
    (mk,) = ops(module, "tt.make_tensor_ptr")
    assert [str(v.type) for v in (*mk.shape, *mk.strides)] == ["i64"] * 4
    assert mk.strides[0].name_hint == "sm"  # an i64 stride is used as it is
    assert mk.offsets[1].name_hint == "offu"  # u32 is i32 in the IR
    assert [str(v.type) for v in mk.offsets] == ["i32", "i32"]
    assert str(mk.result.type) == "!tt.ptr<tensor<16x32xi8>>"
    assert mk.order_list == [0, 1]
    (st,) = ops(module, "tt.store")
    assert str(st.value.type) == "tensor<16x32xi8>"  # the literal 1, splat to the block


@tritium.jit
def bool_block(a_ptr, b_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n,), (1,), (0,), (64,), (0,))
    q = tl.make_block_ptr(b_ptr, (n,), (1,), (0,), (64,), (0,))
    x = tl.load(p, boundary_check=(0,))
    tl.store(q, x != 0, boundary_check=(0,))


def test_bool_base_is_int8():
    module = ttir(bool_block, "*i1,*fp32,i32")
    text = print_ir(module)
    assert "tt.bitcast %a_ptr : !tt.ptr<i1> -> !tt.ptr<i8>" in text
    assert str(ops(module, "tt.load")[0].result.type) == "tensor<64xi8>"
    (st,) = ops(module, "tt.store")
    assert str(st.value.type) == "tensor<64xf32>"  # the bool block, cast to the element type
    assert st.value.op.name == "arith.uitofp"


# ---------------------------------------------------------------------- loops and ifs
@tritium.jit
def matmul_like(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):  # fmt: skip
    pid = tl.program_id(0)
    a = tl.make_block_ptr(a_ptr, (M, K), (sam, sak), (pid * BM, 0), (BM, BK), (1, 0))
    b = tl.make_block_ptr(b_ptr, (K, N), (sbk, sbn), (0, 0), (BK, BN), (0, 1))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _k in range(0, K, BK):
        x = tl.load(a, boundary_check=(0, 1), padding_option="zero")
        y = tl.load(b, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(x, y, acc)
        a = tl.advance(a, (0, BK))
        b = tl.advance(b, (BK, 0))
    c = tl.make_block_ptr(c_ptr, (M, N), (scm, 1), (pid * BM, 0), (BM, BN), (1, 0))
    if pid % 2 == 0:
        c = tl.advance(c, (0, 0))
    else:
        c = shift(c, BN)
    tl.store(c, acc.to(tl.float16), boundary_check=(0, 1))


@tritium.jit
def shift(p, by: tl.constexpr):
    return tl.advance(p, (0, by))


def test_block_pointers_carried_through_for_and_if():
    sig = "*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32,i32,i32"
    module = ttir(matmul_like, sig, {"BM": 64, "BN": 32, "BK": 16})
    (loop,) = ops(module, "scf.for")
    carried = [str(a.type) for a in loop.body.block.args[1:]]
    assert carried == [
        "tensor<64x32xf32>",
        "!tt.ptr<tensor<64x16xf16>>",
        "!tt.ptr<tensor<16x32xf16>>",
    ]
    (y,) = [op for op in loop.body.block.ops if op.name == "scf.yield"]
    assert [op.name for op in (v.op for v in y.operands[1:])] == ["tt.advance", "tt.advance"]
    assert [v.op.ptr for v in y.operands[1:]] == list(loop.body.block.args[2:])
    (branch,) = ops(module, "scf.if")
    assert [str(r.type) for r in branch.results] == ["!tt.ptr<tensor<64x32xf16>>"]
    (st,) = ops(module, "tt.store")
    assert st.ptr == branch.results[0]
    text = print_ir(module)
    assert re.search(
        r"scf.for .* -> \(tensor<64x32xf32>, !tt.ptr<tensor<64x16xf16>>, !tt.ptr<tensor<16x32xf16>>\)",
        text,
    )
    roundtrips(module)


@tritium.jit
def while_carry(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n,), (1,), (0,), (32,), (0,))
    i = 0
    while i < n:
        tl.store(p, i, boundary_check=(0,))
        p = tl.advance(p, (32,))
        i += 32


def test_block_pointer_carried_through_while():
    module = ttir(while_carry, "*i32,i32")
    (loop,) = ops(module, "scf.while")
    assert [str(t) for t in loop.result_types] == ["!tt.ptr<tensor<32xi32>>", "i32"]
    body = loop.after_region.block
    (adv,) = [op for op in body.ops if op.name == "tt.advance"]
    assert adv.ptr == body.args[0] and body.last_op.operands[0] == adv.result
    roundtrips(module)


# ---------------------------------------------------------------------- errors
def marked_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn.fn)
    hits = [start + i for i, line in enumerate(lines) if "# <-" in line]
    assert len(hits) == 1, "mark exactly one line with # <-"
    return hits[0]


@tritium.jit
def err_load_mask(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n,), (1,), (0,), (32,), (0,))
    x = tl.load(p, mask=tl.arange(0, 32) < n)  # <-
    tl.store(p, x)


@tritium.jit
def err_load_other(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n,), (1,), (0,), (32,), (0,))
    x = tl.load(p, other=0.0)  # <-
    tl.store(p, x)


@tritium.jit
def err_store_mask(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n,), (1,), (0,), (32,), (0,))
    tl.store(p, 1.0, mask=tl.arange(0, 32) < n)  # <-


@tritium.jit
def err_order_not_permutation(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n, n), (n, 1), (0, 0), (32, 32), (1, 1))  # <-
    tl.store(p, 1.0)


@tritium.jit
def err_order_length(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n, n), (n, 1), (0, 0), (32, 32), (0,))  # <-
    tl.store(p, 1.0)


@tritium.jit
def err_block_shape_pow2(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n, n), (n, 1), (0, 0), (32, 48), (1, 0))  # <-
    tl.store(p, 1.0)


@tritium.jit
def err_block_shape_runtime(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n,), (1,), (0,), (n,), (0,))  # <-
    tl.store(p, 1.0)


@tritium.jit
def err_offsets_count(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n, n), (n, 1), (0,), (32, 32), (1, 0))  # <-
    tl.store(p, 1.0)


@tritium.jit
def err_offsets_i64(a_ptr, n, off):
    p = tl.make_block_ptr(a_ptr, (n,), (1,), (off,), (32,), (0,))  # <-
    tl.store(p, 1.0)


@tritium.jit
def err_base_not_ptr(a_ptr, n):
    p = tl.make_block_ptr(n, (n,), (1,), (0,), (32,), (0,))  # <-
    tl.store(p, 1.0)


@tritium.jit
def err_base_pointer_block(a_ptr, n):
    p = tl.make_block_ptr(a_ptr + tl.arange(0, 32), (n,), (1,), (0,), (32,), (0,))  # <-
    tl.store(p, 1.0)


@tritium.jit
def err_advance_count(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n, n), (n, 1), (0, 0), (32, 32), (1, 0))
    p = tl.advance(p, (32,))  # <-
    tl.store(p, 1.0)


@tritium.jit
def err_advance_plain_ptr(a_ptr, n):
    p = tl.advance(a_ptr, (32,))  # <-
    tl.store(p, 1.0)


@tritium.jit
def err_advance_unused(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n,), (1,), (0,), (32,), (0,))
    tl.advance(p, (32,))  # <-
    tl.store(p, 1.0)


@tritium.jit
def err_boundary_out_of_range(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n, n), (n, 1), (0, 0), (32, 32), (1, 0))
    x = tl.load(p, boundary_check=(0, 2))  # <-
    tl.store(p, x)


@tritium.jit
def err_boundary_duplicate(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n, n), (n, 1), (0, 0), (32, 32), (1, 0))
    tl.store(p, 1.0, boundary_check=(1, 1))  # <-


@tritium.jit
def err_nan_padding_int(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n,), (1,), (0,), (32,), (0,))
    x = tl.load(p, boundary_check=(0,), padding_option="nan")  # <-
    tl.store(p, x)


@tritium.jit
def err_unknown_padding(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n,), (1,), (0,), (32,), (0,))
    x = tl.load(p, boundary_check=(0,), padding_option="inf")  # <-
    tl.store(p, x)


@tritium.jit
def err_store_shape(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n, n), (n, 1), (0, 0), (32, 32), (1, 0))
    tl.store(p, tl.zeros((32, 16), dtype=tl.float32))  # <-


@tritium.jit
def err_store_broadcastable_shape(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n, n), (n, 1), (0, 0), (32, 32), (1, 0))
    tl.store(p, tl.zeros((1, 32), dtype=tl.float32))  # <-


@tritium.jit
def err_boundary_check_plain_ptr(a_ptr, n):
    x = tl.load(a_ptr + tl.arange(0, 32), boundary_check=(0,))  # <-
    tl.store(a_ptr + tl.arange(0, 32), x)


@tritium.jit
def err_loop_changes_block(a_ptr, n):
    p = tl.make_block_ptr(a_ptr, (n,), (1,), (0,), (32,), (0,))
    for i in range(0, n, 32):  # <-
        p = tl.make_block_ptr(a_ptr, (n,), (1,), (i,), (64,), (0,))
    tl.store(p, 1.0)


ERRORS = [
    (err_load_mask, "*fp32,i32", "`mask` and `other` cannot be used with a block pointer"),
    (err_load_other, "*fp32,i32", "`mask` and `other` cannot be used with a block pointer"),
    (err_store_mask, "*fp32,i32", "`mask` cannot be used with a block pointer"),
    (err_order_not_permutation, "*fp32,i32", "order [1, 1] must be a permutation of [0, 1]"),
    (err_order_length, "*fp32,i32", "order has 1 entries"),
    (err_block_shape_pow2, "*fp32,i32", "power-of-two"),
    (err_block_shape_runtime, "*fp32,i32", "block_shape must be tl.constexpr"),
    (err_offsets_count, "*fp32,i32", "offsets has 1 entries"),
    (err_offsets_i64, "*fp32,i32,i64", "offsets must be 32-bit"),
    (err_base_not_ptr, "*fp32,i32", "`base` must be a scalar pointer"),
    (err_base_pointer_block, "*fp32,i32", "`base` must be a scalar pointer"),
    (err_advance_count, "*fp32,i32", "has 2 dims but 1 offsets"),
    (err_advance_plain_ptr, "*fp32,i32", "tl.advance needs a block pointer"),
    (err_advance_unused, "*fp32,i32", "tl.advance has no side effects"),
    (err_boundary_out_of_range, "*fp32,i32", "boundary_check dim 2 is out of range"),
    (err_boundary_duplicate, "*fp32,i32", "names a dim twice"),
    (err_nan_padding_int, "*i32,i32", 'padding_option="nan" needs a floating-point block'),
    (err_unknown_padding, "*fp32,i32", "unknown padding_option 'inf'"),
    (err_store_shape, "*fp32,i32", "value of shape [32, 16] does not match"),
    (err_store_broadcastable_shape, "*fp32,i32", "value of shape [1, 32] does not match"),
    (err_boundary_check_plain_ptr, "*fp32,i32", "boundary_check and padding_option need a block"),
    (err_loop_changes_block, "*fp32,i32", "loop-carried variable `p`"),
]


@pytest.mark.parametrize("fn, sig, match", ERRORS, ids=[e[0].__name__ for e in ERRORS])
def test_errors_name_the_line(fn, sig, match):
    with pytest.raises(CompilationError) as info:
        ttir(fn, sig)
    err = info.value
    assert err.loc is not None and err.loc.file == THIS
    assert err.loc.line == marked_line(fn), str(err)
    assert match in err.message, err.message
    assert "internal compiler error" not in err.message


@tritium.jit
def _arith_on_block_ptr(x_ptr, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (16,), (1,), (0,), (BLOCK,), (0,))
    p = p + 1  # <-


@tritium.jit
def _atomic_on_block_ptr(x_ptr, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (16,), (1,), (0,), (BLOCK,), (0,))
    tl.atomic_add(p, 1.0)  # <-


@tritium.jit
def _advance_method(x_ptr, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (16,), (1,), (0,), (BLOCK,), (0,))
    p = p.advance((4,))
    tl.store(p, tl.load(p, boundary_check=(0,)), boundary_check=(0,))


def test_block_pointers_take_no_arithmetic_or_atomics_but_advance_as_a_method():
    for fn, message in [
        (_arith_on_block_ptr, "takes no arithmetic: move it with tl.advance"),
        (_atomic_on_block_ptr, "does not take a block pointer"),
    ]:
        with pytest.raises(CompilationError, match=message) as info:
            ttir(fn, ["*fp32"], {"BLOCK": 16})
        assert "# <-" in linecache.getline(info.value.loc.file, info.value.loc.line)
    text = print_ir(ttir(_advance_method, ["*fp32"], {"BLOCK": 16}))
    assert "tt.advance" in text


@tritium.jit
def _empty_block(x_ptr):
    p = tl.make_block_ptr(x_ptr, (), (), (), (), ())  # <-
    tl.store(x_ptr, tl.load(p))


def test_a_0d_block_pointer_is_a_user_error():
    with pytest.raises(CompilationError, match="block_shape needs at least one dim") as info:
        ttir(_empty_block, ["*fp32"])
    assert "# <-" in linecache.getline(info.value.loc.file, info.value.loc.line)
