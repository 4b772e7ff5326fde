"""Shape ops, done with index maths only: no data moves between threads.

    %r = tt.make_range {start = 0, end = 1024}  ->  reg k = thread_coord + start + reg_coord(k)
    %s = tt.splat %x                             ->  [x, x, ..., x]
    %b = tt.broadcast %s : 1x64 -> 32x64         ->  reg k = src reg holding the same column
    %e = tt.expand_dims %s {axis = 0}            ->  reg k = src reg holding the same element
    %j = tt.join %a, %b : 64 -> 64x2             ->  reg k = a's or b's reg (by k's last coord)
    %l, %r = tt.split %j : 64x2 -> 64            ->  l = j's regs at [..., 0], r at [..., 1]
    %c = tt.cat %a, %b : 64 -> 128               ->  reg k = select(coord >= 64, b[k'], a[k'])

For broadcast / expand_dims / trans / reshape / join / split, each result register must
be found, on every thread, in one fixed source register of the *same* thread. With linear
layouts this is a check on bases: the lane and warp bases of the result, mapped back to
source coordinates, must equal the source's; then each result register's coordinate is
looked up among the source registers. When that fails the data would have to move between
threads, which TTGIR never asks of these ops (the passes put a `ttg.convert_layout`,
convert_layout.py, where layouts differ). `tt.join` / `tt.split` need the size-2 dim in
registers (convert-triton-to-tritongpu's layouts put it there). `tt.cat` takes its
operands in its result's layout on half the shape, where the coordinate bit of the
operand's size is replicated: every thread holds the element it needs of both operands,
and picks one by that bit (a constant per register, or one bit of the thread id).
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir
from xdsl.ir import Operation

from tritium.analysis.convert_plan import Coord, register_map
from tritium.codegen.lower.context import FunctionLowering, lowers, unsupported
from tritium.codegen.lower.types import i32
from tritium.ir.layouts import LinearLayout


def _gather(ctx: FunctionLowering, op: Operation, to_src: Callable[[Coord], Coord]) -> None:
    src_t, dst_t = op.operands[0].type, op.results[0].type
    src, dst = ctx.layout(src_t), ctx.layout(dst_t)
    mapping = register_map(src, dst, to_src)
    if mapping is None:
        raise unsupported(
            op,
            f"moving data between threads ({src_t} -> {dst_t}) is only done by ttg.convert_layout",
        )
    regs = ctx.get(op.operands[0])
    ctx.set(op.results[0], [regs[i] for i in mapping])


@lowers("tt.make_range")
def make_range(ctx: FunctionLowering, op: Operation) -> None:
    layout = ctx.layout(op.result.type)
    start = op.start.value.data
    (thread,) = ctx.threads.thread_coords(layout)
    b = ctx.builder
    regs = []
    for r in range(layout.num_registers):
        c = ir.Constant(i32, start + layout.register_coord(r)[0])
        if isinstance(thread, ir.Constant):
            regs.append(c)
            continue
        regs.append(b.add(thread, c, flags=("nuw", "nsw")))
    ctx.set(op.result, regs)


@lowers("tt.splat")
def splat(ctx: FunctionLowering, op: Operation) -> None:
    ctx.set(op.result, [ctx.get1(op.src)] * ctx.num_registers(op.result.type))


@lowers("tt.broadcast")
def broadcast(ctx: FunctionLowering, op: Operation) -> None:
    src_shape = op.src.type.get_shape()
    keep = [s != 1 for s in src_shape]
    _gather(ctx, op, lambda c: tuple(x if k else 0 for x, k in zip(c, keep)))


@lowers("tt.expand_dims")
def expand_dims(ctx: FunctionLowering, op: Operation) -> None:
    axis = op.axis.value.data
    _gather(ctx, op, lambda c: c[:axis] + c[axis + 1 :])


@lowers("tt.trans")
def trans(ctx: FunctionLowering, op: Operation) -> None:
    order = op.order_list  # result dim i is source dim order[i]

    def to_src(c: Coord) -> Coord:
        out = [0] * len(c)
        for i, d in enumerate(order):
            out[d] = c[i]
        return tuple(out)

    _gather(ctx, op, to_src)


@lowers("tt.reshape")
def reshape(ctx: FunctionLowering, op: Operation) -> None:
    src_shape = list(op.src.type.get_shape())
    dst_shape = list(op.result.type.get_shape())

    def to_src(c: Coord) -> Coord:  # row-major flatten, then unflatten
        flat = 0
        for x, n in zip(c, dst_shape):
            flat = flat * n + x
        out = []
        for n in reversed(src_shape):
            out.append(flat % n)
            flat //= n
        return tuple(reversed(out))

    _gather(ctx, op, to_src)


def _registers_hold(op: Operation, layout: LinearLayout, dim: int) -> None:
    """`dim` must vary only with the register index: no lane or warp basis moves it."""
    if any(b[dim] for b in layout.lane + layout.warp):
        raise unsupported(op, f"dim {dim} of {op.name}'s tensors must be in each thread's registers")


@lowers("tt.join")
def join(ctx: FunctionLowering, op: Operation) -> None:
    src, dst = ctx.layout(op.lhs.type), ctx.layout(op.result.type)
    _registers_hold(op, dst, dst.rank - 1)
    mapping = register_map(src, dst, lambda c: c[:-1])
    if mapping is None:
        raise unsupported(op, f"operands in {op.lhs.type} cannot be joined into {op.result.type}")
    halves = ctx.get(op.lhs), ctx.get(op.rhs)
    regs = [halves[dst.register_coord(r)[-1]][i] for r, i in enumerate(mapping)]
    ctx.set(op.result, regs)


@lowers("tt.split")
def split(ctx: FunctionLowering, op: Operation) -> None:
    src, dst = ctx.layout(op.src.type), ctx.layout(op.outLHS.type)
    _registers_hold(op, src, src.rank - 1)
    lhs = register_map(src, dst, lambda c: (*c, 0))
    if lhs is None:
        raise unsupported(op, f"{op.src.type} cannot be split into {op.outLHS.type}")
    where: dict[Coord, int] = {}
    for r in range(src.num_registers):
        where.setdefault(src.register_coord(r), r)
    regs = ctx.get(op.src)
    ctx.set(op.outLHS, [regs[i] for i in lhs])
    ctx.set(op.outRHS, [regs[where[(*src.register_coord(i)[:-1], 1)]] for i in lhs])


@lowers("tt.cat")
def cat(ctx: FunctionLowering, op: Operation) -> None:
    src, dst = ctx.layout(op.lhs.type), ctx.layout(op.result.type)
    half = src.shape[0]
    mapping = register_map(src, dst, lambda c: (c[0] % half, *c[1:]))
    if mapping is None:
        raise unsupported(op, f"operands in {op.lhs.type} cannot be concatenated into {op.result.type}")
    lhs, rhs = ctx.get(op.lhs), ctx.get(op.rhs)
    b = ctx.builder
    high = None  # i1: this thread's coordinate has the `half` bit (it is a lane / warp bit)
    if any(base[0] & half for base in dst.lane + dst.warp):
        (coord, *_) = ctx.threads.thread_coords(dst)
        eb = ctx.threads.entry_builder
        high = ctx.threads.entry_value(
            ("cat-high", dst, half),
            lambda: eb.icmp_unsigned("!=", eb.and_(coord, ir.Constant(i32, half)), ir.Constant(i32, 0)),
        )
    regs = []
    for r, i in enumerate(mapping):
        first, second = (rhs[i], lhs[i]) if dst.register_coord(r)[0] & half else (lhs[i], rhs[i])
        regs.append(first if high is None else b.select(high, second, first))
    ctx.set(op.result, regs)
