"""Control flow: `scf.for` / `scf.if` / `scf.while`, `cf.br` / `cf.cond_br`, `tt.return`.

All threads of a program run the same control flow (conditions are scalars), so each
construct becomes plain LLVM blocks; every loop-carried or merged value, scalar or tensor,
becomes one `phi` per register. Nothing is assumed about carried values while emitting:
what vectorization needs to know about them (a pointer tensor advanced by a multiple of
16 bytes stays aligned) is the axis info's fixed point over the loop, computed before
lowering, so each loop is emitted once.

    %r = scf.for %i = %lb to %ub step %s iter_args(%acc = %init) -> (tensor<4xf32, #b>)
    ->  header:  %i = phi [lb, pre], [i.next, latch]    %acc.k = phi [init.k, pre], ...
                 br (icmp slt %i, %ub), body, exit
        body:    ...; %i.next = add %i, %s; br header
        exit:    %r.k = %acc.k

An fp16 tensor in the mma.sync accumulator layout (`#ttg.nvidia_mma` version 2: a dot's
fp16 accumulators, `out_dtype=tl.float16`) is carried in pairs of registers, one
`<2 x half>` phi per pair ((m, n) and (m, n + 1): the f16x2 word the mma reads and
writes), split into its halves at the top of the header. The dot packs each pair
before its mma and unpacks after it; carried half by half, those packs met at the phis
and stayed: ptxas moved halves in and out of words with a PRMT each (111 per iteration
of the fp8 x fp8 -> fp16 128x128x64 / 4 warps loop on sm_90) and spilled 8 of them. As
pairs, LLVM folds each pack into the word it unpacked: no PRMT, no spill.

A function body with several blocks (`cf.cond_br %c, ^bb1, ^bb2` and an early
`tt.return`) maps block to block; block arguments become phis, and blocks are lowered in
reverse post-order so that every definition is lowered before its uses.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import scf
from xdsl.dialects.builtin import Float16Type
from xdsl.ir import Block, Operation, Region

from tritium.codegen.lower.context import FunctionLowering, lowers, unsupported
from tritium.codegen.lower.types import f16, i32
from tritium.ir.ttg_mma import NvidiaMmaEncodingAttr
from tritium.ir.types import element_type, encoding_of, is_tensor


def lower_body(ctx: FunctionLowering, block: Block) -> Operation | None:
    """Lower a region's single block up to its scf.yield / scf.condition, which is returned."""
    term = block.last_op
    for op in block.ops:
        if op is term and isinstance(op, scf.YieldOp | scf.ConditionOp):
            return op
        ctx.lower_op(op)
    return None


def _phis(ctx: FunctionLowering, like: list[list[ir.Value]]) -> list[list[ir.PhiInstr]]:
    return [[ctx.builder.phi(r.type) for r in regs] for regs in like]


def _incoming(phis: list[list[ir.PhiInstr]], values: list[list[ir.Value]], block) -> None:
    for ps, vs in zip(phis, values):
        for p, v in zip(ps, vs):
            p.add_incoming(v, block)


@lowers("scf.for")
def scf_for(ctx: FunctionLowering, op: Operation) -> None:
    b, fn = ctx.builder, ctx.fn
    lb, ub, step = ctx.get1(op.lb), ctx.get1(op.ub), ctx.get1(op.step)
    inits = [ctx.get(v) for v in op.iter_args]
    header = fn.append_basic_block("for.header")
    body = fn.append_basic_block("for.body")
    exit_ = fn.append_basic_block("for.exit")
    paired = [_carried_in_pairs(v.type, len(regs)) for v, regs in zip(op.iter_args, inits)]
    inits = [_pack(b, regs) if pairs else regs for regs, pairs in zip(inits, paired)]
    pre = b.block
    b.branch(header)
    b.position_at_end(header)
    iv = b.phi(lb.type)
    iv.add_incoming(lb, pre)
    carried = _phis(ctx, inits)
    _incoming(carried, inits, pre)
    values = [_unpack(b, ps) if pairs else ps for ps, pairs in zip(carried, paired)]
    b.cbranch(b.icmp_signed("<", iv, ub), body, exit_)

    b.position_at_end(body)
    block = op.body.block
    ctx.set(block.args[0], [iv])
    for arg, regs in zip(block.args[1:], values):
        ctx.set(arg, regs)
    yield_ = lower_body(ctx, block)
    yielded = [ctx.get(v) for v in yield_.operands] if yield_ else []
    yielded = [_pack(b, regs) if pairs else regs for regs, pairs in zip(yielded, paired)]
    latch = b.block
    iv.add_incoming(b.add(iv, step), latch)
    _incoming(carried, yielded, latch)
    b.branch(header)

    b.position_at_end(exit_)
    for res, regs in zip(op.results, values):
        ctx.set(res, regs)


def _carried_in_pairs(t, registers: int) -> bool:
    """An fp16 tensor in the mma.sync accumulator layout (the module docstring)."""
    if not is_tensor(t) or registers % 2 or not isinstance(element_type(t), Float16Type):
        return False
    enc = encoding_of(t)
    return isinstance(enc, NvidiaMmaEncodingAttr) and enc.version_major.data == 2


def _pack(b: ir.IRBuilder, regs: list[ir.Value]) -> list[ir.Value]:
    """Registers 2j and 2j + 1 as one <2 x half> each."""
    pairs = []
    for j in range(0, len(regs), 2):
        vec = ir.Constant(ir.VectorType(f16, 2), None)
        vec = b.insert_element(vec, regs[j], ir.Constant(i32, 0))
        pairs.append(b.insert_element(vec, regs[j + 1], ir.Constant(i32, 1)))
    return pairs


def _unpack(b: ir.IRBuilder, pairs: list[ir.Value]) -> list[ir.Value]:
    return [b.extract_element(p, ir.Constant(i32, k)) for p in pairs for k in (0, 1)]


@lowers("scf.if")
def scf_if(ctx: FunctionLowering, op: Operation) -> None:
    b, fn = ctx.builder, ctx.fn
    cond = ctx.get1(op.cond)
    then_bb = fn.append_basic_block("if.then")
    has_else = bool(op.false_region.blocks)
    else_bb = fn.append_basic_block("if.else") if has_else else None
    merge = fn.append_basic_block("if.end")
    b.cbranch(cond, then_bb, else_bb or merge)
    arms = []
    for region, bb in ((op.true_region, then_bb), (op.false_region, else_bb)):
        if bb is None:
            continue
        b.position_at_end(bb)
        y = lower_body(ctx, region.block)
        vals = [ctx.get(v) for v in y.operands] if y else []
        arms.append((vals, b.block))
        b.branch(merge)
    b.position_at_end(merge)
    if op.results:
        phis = _phis(ctx, arms[0][0])
        for vals, end in arms:
            _incoming(phis, vals, end)
        for res, ps in zip(op.results, phis):
            ctx.set(res, ps)


@lowers("scf.while")
def scf_while(ctx: FunctionLowering, op: Operation) -> None:
    b, fn = ctx.builder, ctx.fn
    inits = [ctx.get(v) for v in op.arguments]
    before = fn.append_basic_block("while.before")
    after = fn.append_basic_block("while.after")
    exit_ = fn.append_basic_block("while.exit")
    pre = b.block
    b.branch(before)
    b.position_at_end(before)
    carried = _phis(ctx, inits)
    _incoming(carried, inits, pre)
    for arg, phis in zip(op.before_region.block.args, carried):
        ctx.set(arg, phis)
    cond_op = lower_body(ctx, op.before_region.block)
    if not isinstance(cond_op, scf.ConditionOp):
        raise unsupported(op, "the before region must end in scf.condition")
    passed = [ctx.get(v) for v in cond_op.args]
    b.cbranch(ctx.get1(cond_op.condition), after, exit_)

    b.position_at_end(after)  # its only predecessor is the condition's block
    for arg, vals in zip(op.after_region.block.args, passed):
        ctx.set(arg, vals)
    y = lower_body(ctx, op.after_region.block)
    _incoming(carried, [ctx.get(v) for v in y.operands] if y else [], b.block)
    b.branch(before)

    b.position_at_end(exit_)
    for res, vals in zip(op.results, passed):
        ctx.set(res, vals)


# --------------------------------------------------------------------------- cf + return


def _edge(ctx: FunctionLowering, target: Block, operands) -> ir.Block:
    """The LLVM block to jump to for `target`, through an edge block carrying its args."""
    blocks = ctx.block_map
    if not target.args:
        return blocks[target]
    b = ctx.builder
    here = b.block
    edge = ctx.fn.append_basic_block("edge")
    b.position_at_end(edge)
    for arg, v in zip(target.args, operands):
        for phi, reg in zip(ctx.get(arg), ctx.get(v)):
            phi.add_incoming(reg, edge)
    b.branch(blocks[target])
    b.position_at_end(here)
    return edge


@lowers("cf.br")
def cf_br(ctx: FunctionLowering, op: Operation) -> None:
    ctx.builder.branch(_edge(ctx, op.successor, op.arguments))


@lowers("cf.cond_br")
def cf_cond_br(ctx: FunctionLowering, op: Operation) -> None:
    then_bb = _edge(ctx, op.then_block, op.then_arguments)
    else_bb = _edge(ctx, op.else_block, op.else_arguments)
    ctx.builder.cbranch(ctx.get1(op.cond), then_bb, else_bb)


@lowers("tt.return")
def tt_return(ctx: FunctionLowering, op: Operation) -> None:
    if op.operands:
        raise unsupported(op, "a kernel cannot return values")
    ctx.builder.ret_void()


def _reverse_post_order(entry: Block) -> list[Block]:
    seen: set[int] = set()
    order: list[Block] = []

    def visit(block: Block) -> None:
        seen.add(id(block))
        term = block.last_op
        for succ in term.successors if term is not None else ():
            if id(succ) not in seen:
                visit(succ)
        order.append(block)

    visit(entry)
    return order[::-1]


def lower_function_body(ctx: FunctionLowering, region: Region) -> ir.Block:
    """Lower a tt.func body (entry block args already bound); returns its first block."""
    order = _reverse_post_order(region.blocks.first)  # unreachable blocks are dropped
    ctx.block_map = {}
    for i, block in enumerate(order):
        bb = ctx.fn.append_basic_block("body" if i == 0 else f"bb{i}")
        ctx.block_map[block] = bb
        if i:
            ctx.builder.position_at_end(bb)
            for arg in block.args:
                n = ctx.num_registers(arg.type)
                ctx.set(arg, [ctx.builder.phi(ctx.llvm_type(arg.type)) for _ in range(n)])
    for block in order:
        ctx.builder.position_at_end(ctx.block_map[block])
        ctx.lower_ops(block)
    return ctx.block_map[order[0]]
