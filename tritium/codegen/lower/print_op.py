"""`tt.print` (`tl.device_print`): one CUDA `vprintf` per element a thread owns, in
upstream's format.

    tt.print " x: " {hex = false, isSigned = array<i32: 1>} : %x : tensor<256xi32, #blocked>
    ->  (entry)  %args = alloca { i32, i32, i32, i32, i32 }          ; local memory
        (owners only, each owned register r:)
        store ctaid.x, ctaid.y, ctaid.z, <r's index>, <x_r> into %args
        call i32 @vprintf(ptr "pid (%u, %u, %u) idx (%3u) x: %i\\n", ptr %args)

printed as `pid (0, 0, 0) idx ( 37) x: 37`. The format, as upstream's PrintOpToLLVM:
`pid (x, y, z) idx (i, j, ...)<prefix>[(operand n) ]<value>\\n`, each index padded to the
digits of its dimension's size, `(operand n) ` only when the op has several operands.
Values: `%i` / `%u` (`%lli` / `%llu` for 64 bits) by `isSigned`, `%f` for floats (passed
as double, as C varargs require), `%p` for pointers, and with `hex` `0x%0Nx` (N = hex
digits of the type; floats print their bits). A prefix alone prints `pid (x, y, z)<prefix>`.

`vprintf(format, args)` is CUDA's device printf: `args` points to the values packed as a
C struct (each field at its natural alignment), one buffer per struct type in the entry
block, reused by every call. The format strings are constants in global memory, cast to
generic pointers. Output lands in the driver's printf FIFO and is written to stdout when
the host synchronizes.

Differences from upstream, both to print each element once: registers that duplicate
another register (`layout.free_register_mask`) and threads holding copies of another
thread's elements (`ctx.threads.owner_predicate`) print nothing; a scalar, or a prefix
with no values, is printed by thread 0 only (upstream: by every thread). `%` in the prefix is
escaped. Floats with `hex` print their own bits (upstream: the bits of the double).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.codegen.lower.context import FunctionLowering, lowers
from tritium.codegen.lower.types import i32, i64, is_float_type
from tritium.ir.types import shape_of

GENERIC = ir.PointerType()
AXES = "xyz"


def index_width(dim: int) -> int:
    """Digits of the largest index along a dimension of size `dim` (upstream's
    ceil(log10(dim)))."""
    return len(str(dim - 1)) if dim > 1 else 0


def value_format(ty: ir.Type, signed: bool, hex: bool) -> tuple[str, ir.Type]:
    """The printf conversion for a register of LLVM type `ty`, and the type it is passed as."""
    if isinstance(ty, ir.PointerType):
        return "%p", i64
    bits = ty.width if isinstance(ty, ir.IntType) else _float_bits(ty)
    wide = bits > 32
    if hex:
        return f"0x%0{max(1, bits // 4)}{'ll' if wide else ''}x", i64 if wide else i32
    if is_float_type(ty):
        return "%f", ir.DoubleType()
    conv = "i" if signed and bits > 1 else "u"
    return f"%{'ll' if wide else ''}{conv}", i64 if wide else i32


def _float_bits(ty: ir.Type) -> int:
    if isinstance(ty, ir.DoubleType):
        return 64
    if isinstance(ty, ir.FloatType):
        return 32
    return 16  # half, bfloat


def _convert(b: ir.IRBuilder, v: ir.Value, to: ir.Type, signed: bool) -> ir.Value:
    """A register as printf's argument: ints widened, floats to double (or to their bits)."""
    ty = v.type
    if isinstance(ty, ir.PointerType):
        return b.ptrtoint(v, i64)
    if is_float_type(ty):
        if isinstance(to, ir.DoubleType):
            return v if isinstance(ty, ir.DoubleType) else b.fpext(v, to)
        v = b.bitcast(v, ir.IntType(_float_bits(ty)))  # hex: the float's bits
        signed = False
    if v.type.width == to.width:
        return v
    return b.sext(v, to) if signed and v.type.width > 1 else b.zext(v, to)


def _escape(text: str) -> str:
    return text.replace("%", "%%")


class _Printf:
    """`vprintf` calls sharing an argument buffer per struct type (in the entry block)."""

    def __init__(self, ctx: FunctionLowering):
        self.ctx = ctx
        self.fn = ctx.intrinsic("vprintf", i32, [GENERIC, GENERIC])

    def buffer(self, types: list[ir.Type]) -> tuple[ir.Value, ir.Type]:
        struct = ir.LiteralStructType(types)
        eb = self.ctx.threads.entry_builder
        key = ("printf.args", str(struct))
        buf = self.ctx.threads.entry_value(key, lambda: eb.alloca(struct))
        return buf, struct

    def __call__(self, fmt: str, args: list[ir.Value]) -> None:
        b = self.ctx.builder
        text = b.addrspacecast(self.ctx.global_string(fmt + "\n"), GENERIC)
        if not args:
            b.call(self.fn, [text, ir.Constant(GENERIC, None)])
            return
        buf, struct = self.buffer([a.type for a in args])
        zero = ir.Constant(i32, 0)
        for k, a in enumerate(args):
            field = b.gep(buf, [zero, ir.Constant(i32, k)], inbounds=True)
            b.store(a, field)
        b.call(self.fn, [text, b.bitcast(buf, GENERIC)])


def _guarded(ctx: FunctionLowering, pred: ir.Value | None, emit) -> None:
    """Run `emit()` in a block entered only where `pred` holds (always when None)."""
    if pred is None:
        emit()
        return
    b = ctx.builder
    do = ctx.fn.append_basic_block("print.do")
    cont = ctx.fn.append_basic_block("print.cont")
    b.cbranch(pred, do, cont)
    b.position_at_end(do)
    emit()
    b.branch(cont)
    b.position_at_end(cont)


@lowers("tt.print")
def print_(ctx: FunctionLowering, op: Operation) -> None:
    printf = _Printf(ctx)
    prefix = _escape(op.prefix.data)
    b = ctx.builder
    if not op.args:

        def emit_prefix() -> None:
            pid = [ctx.threads.sreg(f"ctaid.{a}", ctx.builder) for a in AXES]
            printf(f"pid (%u, %u, %u){prefix}", pid)

        _guarded(ctx, ctx.threads.owner_predicate(None), emit_prefix)
        return
    many = len(op.args) > 1
    for n, (value, signed) in enumerate(zip(op.args, op.signed_list)):
        regs = ctx.get(value)
        layout = ctx.layout(value.type)
        shape = shape_of(value.type)
        conv, arg_ty = value_format(regs[0].type, signed, op.is_hex)
        dims = ", ".join(f"%{w}u" if w else "%u" for w in map(index_width, shape))
        fmt = f"pid (%u, %u, %u) idx ({dims}){prefix}{f'(operand {n}) ' if many else ''}{conv}"

        def emit(regs=regs, layout=layout, fmt=fmt, arg_ty=arg_ty, signed=signed) -> None:
            pid = [ctx.threads.sreg(f"ctaid.{a}", ctx.builder) for a in AXES]
            if layout is None:
                printf(fmt, pid + [_convert(b, regs[0], arg_ty, signed)])
                return
            thread = ctx.threads.thread_coords(layout)
            for r, reg in enumerate(regs):
                if r & layout.free_register_mask:
                    continue  # a copy of a register printed already
                index = [
                    c if not k else b.xor(c, ir.Constant(i32, k))
                    for c, k in zip(thread, layout.register_coord(r))
                ]
                printf(fmt, pid + index + [_convert(b, reg, arg_ty, signed)])

        _guarded(ctx, ctx.threads.owner_predicate(layout), emit)
