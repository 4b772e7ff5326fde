"""`arith` ops, register by register.

    %c = arith.addi %a, %b : tensor<1024xi32, #blocked>   ->  c_k = add a_k, b_k   (k < 8)

Registers with identical operands share one result. `arith.cmpi` emits one compare per
group of registers that the axis info proves equal (its constancy: `offs < n` with
`n % 16 == 0` is one predicate per 4 contiguous offsets of a thread), so a mask stays one
LLVM value per vector access through `broadcast` and `andi`, as the loads and stores that
use it (one predicate per vector) expect.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import Operation

from tritium.codegen.lower.context import FunctionLowering, lowers, unsupported
from tritium.codegen.lower.types import i1, llvm_type
from tritium.ir.arith import same_bytes_value
from tritium.ir.types import is_tensor

# --------------------------------------------------------------------------- constants


def _same(a, b) -> bool:
    """Equal values, NaN included (a dense<NaN> splat is a splat)."""
    return a == b or (a != a and b != b)


@lowers("arith.constant")
def constant(ctx: FunctionLowering, op: Operation) -> None:
    t = op.result.type
    ty = llvm_type(t)
    attr = op.value
    if is_tensor(t):
        # (by the bytes first: a GEMM's 128x128 zeros unpacked and compared took ~3 ms)
        value = same_bytes_value(attr) if isinstance(attr, DenseIntOrFPElementsAttr) else None
        if value is None:
            values = attr.get_values() if hasattr(attr, "get_values") else None
            if not values or any(not _same(v, values[0]) for v in values):
                raise unsupported(op, "only splat tensor constants are supported")
            value = values[0]
    else:
        value = attr.value.data
    if isinstance(ty, ir.IntType):
        value = int(value) & ((1 << ty.width) - 1)
    else:
        value = float(value)
    ctx.set(op.result, [ir.Constant(ty, value)] * ctx.num_registers(t))


# --------------------------------------------------------------------------- int binary


def _binary(ctx: FunctionLowering, op: Operation, emit) -> list[ir.Value]:
    a, b = ctx.get(op.lhs), ctx.get(op.rhs)
    out = ctx.zip_map([a, b], emit)
    ctx.set(op.result, out)
    return out


def _intrinsic2(ctx: FunctionLowering, name: str, ty: ir.Type):
    fn = ctx.intrinsic(f"llvm.{name}.{ty.intrinsic_name}", ty, [ty, ty])
    return lambda x, y: ctx.builder.call(fn, [x, y])


_SIMPLE_INT = {
    "arith.addi": "add",
    "arith.subi": "sub",
    "arith.muli": "mul",
    "arith.divsi": "sdiv",
    "arith.divui": "udiv",
    "arith.remsi": "srem",
    "arith.remui": "urem",
    "arith.andi": "and_",
    "arith.ori": "or_",
    "arith.xori": "xor",
}


@lowers(*_SIMPLE_INT)
def simple_int(ctx: FunctionLowering, op: Operation) -> None:
    _binary(ctx, op, getattr(ctx.builder, _SIMPLE_INT[op.name]))


@lowers("arith.shli", "arith.shrui", "arith.shrsi")
def shift(ctx: FunctionLowering, op: Operation) -> None:
    """Shifts as PTX's clamped shifts and the interpreter compute them: the amount is
    unsigned, and one >= the width gives 0 (`shrsi`: the sign in every bit). LLVM makes such
    a shift poison, so the lowering says what it means, except for a constant amount below
    the width (the usual `x >> 16`: one instruction):

        shli x, n   ->  select (n u< w), (shl x, n), 0
        shrui x, n  ->  select (n u< w), (lshr x, n), 0
        shrsi x, n  ->  ashr x, umin(n, w - 1)

    For i32, LLVM's NVPTX backend turns the select back into one clamped `shl.b32`. It does
    so for i64 too, but PTX takes a 64-bit shift's amount as its low 32 bits (`x << 2**63`
    would shift by 0), so a 64-bit shift first clamps the amount: `shl x, umin(n, 63)`.
    """
    b = ctx.builder
    ty = llvm_type(op.lhs.type)
    w = ty.width
    umin = _intrinsic2(ctx, "umin", ty)
    emit = {"arith.shli": b.shl, "arith.shrui": b.lshr, "arith.shrsi": b.ashr}[op.name]

    def clamped(x, n):
        if isinstance(n, ir.Constant) and isinstance(n.constant, int):
            if n.constant & ((1 << w) - 1) < w:
                return emit(x, n)
        if op.name == "arith.shrsi":
            return b.ashr(x, umin(n, ir.Constant(ty, w - 1)))
        shifted = emit(x, umin(n, ir.Constant(ty, w - 1)) if w == 64 else n)
        return b.select(b.icmp_unsigned("<", n, ir.Constant(ty, w)), shifted, ir.Constant(ty, 0))

    _binary(ctx, op, clamped)


@lowers("arith.minsi", "arith.maxsi", "arith.minui", "arith.maxui")
def int_min_max(ctx: FunctionLowering, op: Operation) -> None:
    name = {"minsi": "smin", "maxsi": "smax", "minui": "umin", "maxui": "umax"}[op.name[6:]]
    _binary(ctx, op, _intrinsic2(ctx, name, llvm_type(op.lhs.type)))


@lowers("arith.floordivsi", "arith.ceildivsi", "arith.ceildivui")
def rounded_div(ctx: FunctionLowering, op: Operation) -> None:
    b = ctx.builder
    ty = llvm_type(op.lhs.type)
    zero = ir.Constant(ty, 0)

    def floordiv(x, y):  # q = x / y rounded toward -inf
        q, r = b.sdiv(x, y), b.srem(x, y)
        adjust = b.and_(
            b.icmp_signed("!=", r, zero),
            b.icmp_signed("!=", b.icmp_signed("<", r, zero), b.icmp_signed("<", y, zero)),
        )
        return b.sub(q, b.zext(adjust, ty))

    def ceildiv_s(x, y):
        q, r = b.sdiv(x, y), b.srem(x, y)
        adjust = b.and_(
            b.icmp_signed("!=", r, zero),
            b.icmp_signed("==", b.icmp_signed("<", r, zero), b.icmp_signed("<", y, zero)),
        )
        return b.add(q, b.zext(adjust, ty))

    def ceildiv_u(x, y):
        q = b.udiv(x, y)
        return b.add(q, b.zext(b.icmp_unsigned("!=", b.urem(x, y), zero), ty))

    emit = {"arith.floordivsi": floordiv, "arith.ceildivsi": ceildiv_s}.get(op.name, ceildiv_u)
    _binary(ctx, op, emit)


# --------------------------------------------------------------------------- float binary


def _f32_div_full(ctx: FunctionLowering, x: ir.Value, y: ir.Value) -> ir.Value:
    fn = ctx.intrinsic("llvm.nvvm.div.full", ir.FloatType(), [ir.FloatType(), ir.FloatType()])
    return ctx.builder.call(fn, [x, y])


def in_f32(ctx: FunctionLowering, ty: ir.Type, fn):
    """Run an f32 computation on f16 / bf16 values: extend, compute, round back."""
    b = ctx.builder
    if isinstance(ty, ir.FloatType):
        return fn
    f32 = ir.FloatType()
    return lambda *xs: b.fptrunc(fn(*(b.fpext(x, f32) for x in xs)), ty)


@lowers("arith.addf", "arith.subf", "arith.mulf", "arith.divf")
def float_binary(ctx: FunctionLowering, op: Operation) -> None:
    b = ctx.builder
    ty = llvm_type(op.lhs.type)
    if op.name == "arith.divf" and not isinstance(ty, ir.DoubleType):
        # As upstream: `/` on f32 is div.full.f32 (about 2 ulp), not IEEE division.
        emit = in_f32(ctx, ty, lambda x, y: _f32_div_full(ctx, x, y))
    else:
        method = {"arith.addf": b.fadd, "arith.subf": b.fsub, "arith.mulf": b.fmul}.get(
            op.name, b.fdiv
        )

        def emit(x: ir.Value, y: ir.Value) -> ir.Value:
            # `contract`: LLVM may fuse a*b+c into fma, as upstream's enable_fp_fusion.
            v = method(x, y)
            if op.name != "arith.divf":
                v.flags.append("contract")
            return v

    _binary(ctx, op, emit)


@lowers("arith.remf")
def remf(ctx: FunctionLowering, op: Operation) -> None:
    # C's fmod (the remainder has the dividend's sign): LLVM's frem, which NVPTX expands
    # to x - trunc(x / y) * y with an IEEE division. f16/bf16 compute in f32.
    ty = llvm_type(op.lhs.type)
    frem = ctx.builder.frem
    _binary(ctx, op, frem if isinstance(ty, ir.DoubleType) else in_f32(ctx, ty, frem))


@lowers("arith.maxnumf", "arith.minnumf", "arith.maximumf", "arith.minimumf")
def float_min_max(ctx: FunctionLowering, op: Operation) -> None:
    # maxnum/minnum: a NaN operand is ignored. maximum/minimum: NaN propagates and
    # -0 < +0 (upstream's tl.maximum with propagate_nan=ALL). Both are LLVM intrinsics
    # that NVPTX turns into max.f32 / max.NaN.f32 (and compare/select chains for f64).
    name = op.name[6:].replace("f", "")
    ty = llvm_type(op.lhs.type)
    _binary(ctx, op, _intrinsic2(ctx, name, ty))


@lowers("arith.negf")
def negf(ctx: FunctionLowering, op: Operation) -> None:
    ctx.set(op.result, ctx.zip_map([ctx.get(op.operand)], ctx.builder.fneg))


# --------------------------------------------------------------------------- compare, select

_ICMP = {
    "eq": ("==", True), "ne": ("!=", True),
    "slt": ("<", True), "sle": ("<=", True), "sgt": (">", True), "sge": (">=", True),
    "ult": ("<", False), "ule": ("<=", False), "ugt": (">", False), "uge": (">=", False),
}  # fmt: skip


@lowers("arith.cmpi")
def cmpi(ctx: FunctionLowering, op: Operation) -> None:
    b = ctx.builder
    pred = op.predicate_name
    sym, signed = _ICMP[pred]
    cmp = b.icmp_signed if signed else b.icmp_unsigned
    a, c = ctx.get(op.lhs), ctx.get(op.rhs)
    leaders = ctx.axis.equal_registers(op.result)
    out: list[ir.Value] = []
    memo: dict[tuple[int, int], ir.Value] = {}
    for r, lead in enumerate(leaders):
        if lead != r:
            out.append(out[lead])
            continue
        key = (id(a[r]), id(c[r]))
        if key not in memo:
            memo[key] = cmp(sym, a[r], c[r])
        out.append(memo[key])
    ctx.set(op.result, out)


_FCMP = {
    "oeq": ("==", True), "ogt": (">", True), "oge": (">=", True), "olt": ("<", True),
    "ole": ("<=", True), "one": ("!=", True), "ord": ("ord", True),
    "ueq": ("==", False), "ugt": (">", False), "uge": (">=", False), "ult": ("<", False),
    "ule": ("<=", False), "une": ("!=", False), "uno": ("uno", False),
}  # fmt: skip


@lowers("arith.cmpf")
def cmpf(ctx: FunctionLowering, op: Operation) -> None:
    b = ctx.builder
    pred = op.predicate_name
    if pred in ("false", "true"):
        n = ctx.num_registers(op.result.type)
        ctx.set(op.result, [ir.Constant(i1, int(pred == "true"))] * n)
        return
    sym, ordered = _FCMP[pred]
    cmp = b.fcmp_ordered if ordered else b.fcmp_unordered
    _binary(ctx, op, lambda x, y: cmp(sym, x, y))


@lowers("arith.select")
def select(ctx: FunctionLowering, op: Operation) -> None:
    x, y = ctx.get(op.lhs), ctx.get(op.rhs)
    c = ctx.get(op.cond)
    if len(c) == 1 and len(x) > 1:
        c = c * len(x)
    ctx.set(op.result, ctx.zip_map([c, x, y], ctx.builder.select))


# --------------------------------------------------------------------------- casts


def _cast(ctx: FunctionLowering, op: Operation, emit) -> None:
    ty = llvm_type(op.results[0].type)
    ctx.set(op.results[0], ctx.zip_map([ctx.get(op.operands[0])], lambda x: emit(x, ty)))


@lowers("arith.extsi", "arith.trunci", "arith.index_cast")
def int_resize(ctx: FunctionLowering, op: Operation) -> None:
    b = ctx.builder

    def emit(x: ir.Value, ty: ir.Type) -> ir.Value:
        if ty.width > x.type.width:
            return b.sext(x, ty)
        if ty.width < x.type.width:
            return b.trunc(x, ty)
        return x

    _cast(ctx, op, emit)


@lowers("arith.extui")
def extui(ctx: FunctionLowering, op: Operation) -> None:
    _cast(ctx, op, ctx.builder.zext)


_CASTS = {
    "arith.sitofp": "sitofp",
    "arith.uitofp": "uitofp",
    "arith.fptosi": "fptosi",
    "arith.fptoui": "fptoui",
    "arith.extf": "fpext",
    "arith.truncf": "fptrunc",
    "arith.bitcast": "bitcast",
    "tt.bitcast": "bitcast",
    "tt.int_to_ptr": "inttoptr",
    "tt.ptr_to_int": "ptrtoint",
}


@lowers(*_CASTS)
def simple_cast(ctx: FunctionLowering, op: Operation) -> None:
    method = getattr(ctx.builder, _CASTS[op.name])

    def emit(x: ir.Value, ty: ir.Type) -> ir.Value:
        return x if x.type == ty else method(x, ty)

    _cast(ctx, op, emit)
