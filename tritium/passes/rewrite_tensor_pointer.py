"""`rewrite-tensor-pointer`: block pointers become pointer tensors and masks (TTIR).

    %p = tt.make_tensor_ptr %base, [%M, %N], [%sm, %c1_i64], [%om, %c0_i32]
           {order = array<i32: 1, 0>} : <tensor<32x64xf16>>
    %q = tt.advance %p, [%c0_i32, %c64_i32] : <tensor<32x64xf16>>
    %x = tt.load %q {boundaryCheck = array<i32: 1>, padding = 2 : i32}
           : !tt.ptr<tensor<32x64xf16>>
  =>
    %om64 = arith.extsi %om : i32 to i64                      // offsets are carried as i64
    %c64_i64 = arith.constant 64 : i64                        // (0 + 64, folded)
    %r0 = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
    %r0w = arith.extsi %r0 : tensor<32xi32> to tensor<32xi64>
    %i0 = arith.addi (tt.splat %om64), %r0w : tensor<32xi64>  // rows offsets[0] + i0
    %e0 = tt.expand_dims %i0 {axis = 1 : i32} : tensor<32xi64> -> tensor<32x1xi64>
    %o0 = arith.muli %e0, (tt.splat %sm) : tensor<32x1xi64>   // * strides[0]
    ...   %i1 (columns 64 + i1, expanded to 1x64), %o1 = %i1 * 1 (not emitted)
    %off = arith.addi (tt.broadcast %o0), (tt.broadcast %o1) : tensor<32x64xi64>
    %ptrs = tt.addptr (tt.splat %base), %off : tensor<32x64x!tt.ptr<f16>>, tensor<32x64xi64>
    %m1 = arith.cmpi slt, %e1, (tt.splat %N) : tensor<1x64xi64>  // 64 + i1 >= 0: no sge
    %nan = arith.constant dense<0x7E00> : tensor<32x64xf16>
    %x = tt.load %ptrs, (tt.broadcast %m1), %nan : tensor<32x64x!tt.ptr<f16>>

A block pointer is (base, shape[d], strides[d], offsets[d]) plus the block shape in its
type. `tt.make_tensor_ptr` and `tt.advance` disappear: the pass tracks those parts as
plain SSA values (offsets widened to i64 and summed there, as upstream, so offsets times
strides cannot wrap) and each `tt.load` / `tt.store` through a block pointer computes
`base + sum_d (offsets[d] + i_d) * strides[d]` in i64. Only the dims in `boundaryCheck`
are masked (`0 <= offsets[d] + i_d < shape[d]`, leaving out a half that constants
decide); `padding` gives the load's `other` (1: zero, 2: NaN), none leaves masked lanes
unspecified (zero in tritium). `order` is only a layout hint and is dropped.

Block pointers carried by control flow are replaced by their parts: an `scf.for` /
`scf.while` carries every part, then drops those that provably never change (the init
comes back unchanged, or a while's value goes round the loop untouched), so the usual
`a_ptr = tl.advance(a_ptr, ...)` loop carries just the offsets; an `scf.if` yields only
the parts its branches disagree on; `arith.select` selects part by part. A block pointer
anywhere else (a function argument or result, `tt.call`, `cf.br`, ...) is a
`CompilationError` at that op.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tritium.errors import CompilationError
from tritium.ir import arith, tt
from tritium.ir.arith import constant_value
from tritium.ir.locations import op_source_loc
from tritium.ir.tt_block_ptr import (
    PADDING_NAN,
    PADDING_ZERO,
    AdvanceOp,
    MakeTensorPtrOp,
    is_block_ptr,
)
from tritium.ir.types import PointerType, i32, i64, is_float, tensor
from tritium.passes.utils import insert_before, make_constant


@dataclass
class BlockPtr:
    """The parts of one block pointer value: `base` (a scalar pointer) and, per dim, the
    i64 `shape`, `strides` (in elements) and `offsets`."""

    type: PointerType  # !tt.ptr<tensor<block_shape x elem>>
    base: SSAValue
    shape: list[SSAValue]
    strides: list[SSAValue]
    offsets: list[SSAValue]

    @property
    def block_shape(self) -> tuple[int, ...]:
        return tuple(self.type.pointee.get_shape())

    def parts(self) -> list[SSAValue]:
        return [self.base, *self.shape, *self.strides, *self.offsets]

    @staticmethod
    def part_types(t: PointerType) -> list[Attribute]:
        rank = len(t.pointee.get_shape())
        return [PointerType(t.pointee.element_type, t.address_space.data)] + [i64] * (3 * rank)

    @classmethod
    def from_parts(cls, t: PointerType, parts) -> BlockPtr:
        parts = list(parts)
        r = len(t.pointee.get_shape())
        return cls(t, parts[0], parts[1 : 1 + r], parts[1 + r : 1 + 2 * r], parts[1 + 2 * r :])


def _error(op: Operation, message: str) -> CompilationError:
    return CompilationError(message, op_source_loc(op))


def _inside(value: SSAValue, blocks: tuple[Block, ...]) -> bool:
    """Whether `value` is defined in one of `blocks` (or in an op nested in them)."""
    block = value.block if isinstance(value, BlockArgument) else value.owner.parent_block()
    while block is not None:
        if block in blocks:
            return True
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    return False


class _Rewriter:
    def __init__(self) -> None:
        self.ptrs: dict[SSAValue, BlockPtr] = {}
        self.dead: list[Operation] = []  # old ops, erased last to first at the end

    # ----------------------------------------------------------------- helpers

    def get(self, value: SSAValue, user: Operation) -> BlockPtr:
        bp = self.ptrs.get(value)
        if bp is None:
            raise _error(
                user, f"{user.name}: cannot follow this block pointer to its tt.make_tensor_ptr"
            )
        return bp

    def expand(self, values, user: Operation) -> list[SSAValue]:
        """`values` with each block pointer replaced by its parts."""
        out: list[SSAValue] = []
        for v in values:
            out += self.get(v, user).parts() if is_block_ptr(v.type) else [v]
        return out

    def collect(self, olds, types, news) -> None:
        """Map `olds` (values, some block pointers) to the flat `news` (their parts)."""
        news = list(news)
        for old, t in zip(olds, types):
            if is_block_ptr(t):
                n = len(BlockPtr.part_types(t))
                self.ptrs[old] = BlockPtr.from_parts(t, news[:n])
                news = news[n:]
            else:
                old.replace_all_uses_with(news.pop(0))

    @staticmethod
    def flat_types(types) -> list[Attribute]:
        out: list[Attribute] = []
        for t in types:
            out += BlockPtr.part_types(t) if is_block_ptr(t) else [t]
        return out

    @staticmethod
    def part_flags(types) -> list[bool]:
        """For the flat list of `types`: True where the entry is a block pointer's part."""
        out: list[bool] = []
        for t in types:
            out += [True] * len(BlockPtr.part_types(t)) if is_block_ptr(t) else [False]
        return out

    @staticmethod
    def emit(anchor: Operation, op: Operation) -> SSAValue:
        insert_before(anchor, op)
        return op.results[0]

    def to_i64(self, anchor: Operation, v: SSAValue) -> SSAValue:
        c = constant_value(v)
        if c is not None:
            return self.emit(anchor, make_constant(c, i64))
        return self.emit(anchor, arith.ExtSIOp(v, i64))

    def add_i64(self, anchor: Operation, a: SSAValue, b: SSAValue) -> SSAValue:
        ca, cb = constant_value(a), constant_value(b)
        if cb == 0:
            return a
        if ca == 0:
            return b
        if ca is not None and cb is not None:
            return self.emit(anchor, make_constant(ca + cb, i64))
        return self.emit(anchor, arith.AddiOp(a, b))

    @staticmethod
    def move_ops(old: Block, new: Block) -> None:
        for o in list(old.ops):
            o.detach()
            new.add_op(o)

    # ----------------------------------------------------------------- walk

    def visit_block(self, block: Block, skip_terminator: bool = False) -> None:
        for a in block.args:
            if is_block_ptr(a.type):
                owner = block.parent_op()
                raise _error(
                    owner,
                    f"{owner.name}: block pointers cannot be passed as arguments "
                    "(of a function or a block); tritium rewrites them only within a kernel",
                )
        ops = list(block.ops)
        if skip_terminator and ops:
            ops = ops[:-1]
        for op in ops:
            self.visit(op)

    def visit(self, op: Operation) -> None:
        if isinstance(op, MakeTensorPtrOp):
            self.make_tensor_ptr(op)
        elif isinstance(op, AdvanceOp):
            self.advance(op)
        elif isinstance(op, tt.LoadOp) and is_block_ptr(op.ptr.type):
            self.load(op)
        elif isinstance(op, tt.StoreOp) and is_block_ptr(op.ptr.type):
            self.store(op)
        elif isinstance(op, arith.SelectOp) and is_block_ptr(op.result.type):
            self.select(op)
        elif isinstance(op, scf.ForOp) and any(is_block_ptr(v.type) for v in op.iter_args):
            self.for_(op)
        elif isinstance(op, scf.IfOp) and any(is_block_ptr(v.type) for v in op.output):
            self.if_(op)
        elif isinstance(op, scf.WhileOp) and any(
            is_block_ptr(v.type) for v in (*op.arguments, *op.res)
        ):
            self.while_(op)
        else:
            if any(is_block_ptr(v.type) for v in (*op.operands, *op.results)):
                raise _error(op, f"{op.name}: block pointers cannot be used by this op")
            for region in op.regions:
                for block in region.blocks:
                    self.visit_block(block)

    # ----------------------------------------------------------------- pointer ops

    def make_tensor_ptr(self, op: MakeTensorPtrOp) -> None:
        offsets = [self.to_i64(op, v) for v in op.offsets]
        self.ptrs[op.result] = BlockPtr(
            op.result.type, op.base, list(op.shape), list(op.strides), offsets
        )
        self.dead.append(op)

    def advance(self, op: AdvanceOp) -> None:
        bp = self.get(op.ptr, op)
        offsets = [self.add_i64(op, o, self.to_i64(op, d)) for o, d in zip(bp.offsets, op.offsets)]
        self.ptrs[op.result] = BlockPtr(bp.type, bp.base, bp.shape, bp.strides, offsets)
        self.dead.append(op)

    def select(self, op: Operation) -> None:
        a, b = self.get(op.lhs, op), self.get(op.rhs, op)
        parts = [
            x if x is y else self.emit(op, arith.SelectOp(op.cond, x, y))
            for x, y in zip(a.parts(), b.parts())
        ]
        self.ptrs[op.result] = BlockPtr.from_parts(a.type, parts)
        self.dead.append(op)

    def index(self, anchor: Operation, bp: BlockPtr, d: int) -> SSAValue:
        """`offsets[d] + i_d` as i64, shaped 1 x .. x n_d x .. x 1 (n_d at dim d)."""
        shape = bp.block_shape
        n = shape[d]
        r = self.emit(anchor, tt.MakeRangeOp(0, n, tensor([n], i32)))
        idx = self.emit(anchor, arith.ExtSIOp(r, tensor([n], i64)))
        if constant_value(bp.offsets[d]) != 0:
            start = self.emit(anchor, tt.SplatOp(bp.offsets[d], tensor([n], i64)))
            idx = self.emit(anchor, arith.AddiOp(start, idx))
        cur = [n]
        for axis in range(len(shape)):
            if axis != d:
                cur.insert(axis, 1)
                idx = self.emit(anchor, tt.ExpandDimsOp(idx, axis, tensor(cur, i64)))
        return idx

    def in_bounds(
        self, op: Operation, idx: SSAValue, offset: SSAValue, size: SSAValue, n: int
    ) -> SSAValue | None:
        """`0 <= idx < size` (idx = offset + range(n)), leaving out the half that
        constants already decide; None when both are known true."""
        t = idx.type
        off, lim = constant_value(offset), constant_value(size)
        conds = []
        if off is None or off < 0:
            zero = self.emit(op, make_constant(0, t))
            conds.append(self.emit(op, arith.CmpiOp(idx, zero, "sge")))
        if off is None or lim is None or off + n > lim:
            bound = self.emit(op, tt.SplatOp(size, t))
            conds.append(self.emit(op, arith.CmpiOp(idx, bound, "slt")))
        if len(conds) == 2:
            return self.emit(op, arith.AndIOp(*conds))
        return conds[0] if conds else None

    def addresses(self, op: Operation, bp: BlockPtr) -> tuple[SSAValue, SSAValue | None]:
        """The pointer tensor and the boundary mask (None: no dim checked) of `op`."""
        shape, rank = bp.block_shape, len(bp.block_shape)
        checks = list(op.boundaryCheck.get_values()) if op.boundaryCheck is not None else []
        for d in checks:
            if not 0 <= d < rank:
                raise _error(op, f"{op.name}: boundary check on dim {d} of a rank-{rank} block")

        def full(v: SSAValue) -> SSAValue:
            if tuple(v.type.get_shape()) == shape:
                return v
            return self.emit(op, tt.BroadcastOp(v, tensor(shape, v.type.element_type)))

        total = mask = None
        for d in range(rank):
            idx = self.index(op, bp, d)
            part_shape = idx.type.get_shape()
            off = idx
            if constant_value(bp.strides[d]) != 1:
                stride = self.emit(op, tt.SplatOp(bp.strides[d], tensor(part_shape, i64)))
                off = self.emit(op, arith.MuliOp(idx, stride))
            off = full(off)
            total = off if total is None else self.emit(op, arith.AddiOp(total, off))
            if d in checks:
                m = self.in_bounds(op, idx, bp.offsets[d], bp.shape[d], shape[d])
                if m is not None:
                    m = full(m)
                    mask = m if mask is None else self.emit(op, arith.AndIOp(mask, m))
        ptr_t = tensor(shape, bp.base.type)
        ptrs = self.emit(op, tt.SplatOp(bp.base, ptr_t))
        if total is not None:  # rank 0 cannot happen: blocks have at least one dim
            ptrs = self.emit(op, tt.AddPtrOp(ptrs, total))
        return ptrs, mask

    def load(self, op: tt.LoadOp) -> None:
        if op.mask is not None or op.other is not None:
            raise _error(op, "tt.load: a load through a block pointer takes no mask or other")
        bp = self.get(op.ptr, op)
        ptrs, mask = self.addresses(op, bp)
        other = None
        padding = op.padding.value.data if op.padding is not None else None
        elem = bp.type.pointee.element_type
        if padding not in (None, PADDING_ZERO, PADDING_NAN):
            raise _error(op, f"tt.load: unknown padding {padding} (1: zero, 2: NaN)")
        if padding == PADDING_NAN and not is_float(elem):
            raise _error(op, f"tt.load: NaN padding needs a float block, not {elem}")
        if mask is not None and padding is not None:
            value = float("nan") if padding == PADDING_NAN else 0
            other = self.emit(op, make_constant(value, TensorType(elem, bp.block_shape)))
        props = {k: v for k, v in op.properties.items() if k in ("cache", "evict", "isVolatile")}
        new = tt.LoadOp(ptrs, mask, other)
        new.properties |= props
        new.attributes |= op.attributes
        insert_before(op, new)
        op.result.replace_all_uses_with(new.result)
        Rewriter.erase_op(op)

    def store(self, op: tt.StoreOp) -> None:
        if op.mask is not None:
            raise _error(op, "tt.store: a store through a block pointer takes no mask")
        bp = self.get(op.ptr, op)
        ptrs, mask = self.addresses(op, bp)
        new = tt.StoreOp(ptrs, op.value, mask)
        new.properties |= {k: v for k, v in op.properties.items() if k in ("cache", "evict")}
        new.attributes |= op.attributes
        insert_before(op, new)
        Rewriter.erase_op(op)

    # ----------------------------------------------------------------- control flow

    def new_terminator(self, old: Operation, new: Operation) -> Operation:
        insert_before(old, new)
        Rewriter.erase_op(old)
        return new

    @staticmethod
    def drop(block: Block, k: int, term: Operation, t: int) -> None:
        """Erase argument `k` of `block` (now unused) and operand `t` of `term`."""
        block.erase_arg(block.args[k])
        ops = list(term.operands)
        term.operands = ops[:t] + ops[t + 1 :]

    def for_(self, op: scf.ForOp) -> None:
        self.dead.append(op)
        old = op.body.block
        old_types = [v.type for v in op.iter_args]
        inits = self.expand(op.iter_args, op)
        flags = self.part_flags(old_types)
        body = Block(arg_types=[old.args[0].type] + [v.type for v in inits])
        old.args[0].replace_all_uses_with(body.args[0])
        self.collect(old.args[1:], old_types, body.args[1:])
        self.move_ops(old, body)
        self.visit_block(body, skip_terminator=True)
        term = body.last_op
        yield_ = self.new_terminator(term, scf.YieldOp(*self.expand(term.operands, term)))

        # Drop the parts that never change: the init comes back (or the arg itself).
        kept = list(range(len(inits)))  # flat positions still carried
        fixed: dict[int, SSAValue] = {}
        changed = True
        while changed:
            changed = False
            for k, i in enumerate(kept):
                arg, y = body.args[1 + k], yield_.operands[k]
                if flags[i] and (y is arg or y is inits[i]):
                    arg.replace_all_uses_with(inits[i])
                    self.drop(body, 1 + k, yield_, k)
                    fixed[i] = inits[i]
                    kept.pop(k)
                    changed = True
                    break
        new = scf.ForOp(op.lb, op.ub, op.step, [inits[i] for i in kept], Region(body))
        new.attributes |= op.attributes  # loop hints (tt.num_stages, ...)
        insert_before(op, new)
        flat = [new.res[kept.index(i)] if i in kept else fixed[i] for i in range(len(inits))]
        self.collect(op.res, old_types, flat)

    def if_(self, op: scf.IfOp) -> None:
        self.dead.append(op)
        old_types = [v.type for v in op.output]
        flags = self.part_flags(old_types)
        yields = []
        for region in (op.true_region, op.false_region):
            self.visit_block(region.block, skip_terminator=True)
            term = region.block.last_op
            yields.append(self.new_terminator(term, scf.YieldOp(*self.expand(term.operands, term))))
        then_y, else_y = yields
        n = len(flags)
        same = [flags[i] and then_y.operands[i] is else_y.operands[i] for i in range(n)]
        fixed = {i: then_y.operands[i] for i in range(n) if same[i]}
        kept = [i for i in range(n) if not same[i]]
        for y in yields:
            y.operands = [y.operands[i] for i in kept]
        types = [then_y.operands[k].type for k in range(len(kept))]
        regions = (op.true_region, op.false_region)
        new = scf.IfOp(op.cond, types, *(op.detach_region(r) for r in regions))
        new.attributes |= op.attributes  # loop hints (tt.num_stages, ...)
        insert_before(op, new)
        flat = [new.output[kept.index(i)] if i in kept else fixed[i] for i in range(n)]
        self.collect(op.output, old_types, flat)

    def while_(self, op: scf.WhileOp) -> None:
        self.dead.append(op)
        old_before, old_after = op.before_region.block, op.after_region.block
        in_types = [v.type for v in op.arguments]
        out_types = [v.type for v in op.res]
        inits = self.expand(op.arguments, op)
        before = Block(arg_types=[v.type for v in inits])
        after = Block(arg_types=self.flat_types(out_types))
        self.collect(old_before.args, in_types, before.args)
        self.move_ops(old_before, before)
        self.visit_block(before, skip_terminator=True)
        term = before.last_op
        cond = self.new_terminator(
            term, scf.ConditionOp(term.condition, *self.expand(term.args, term))
        )
        self.collect(old_after.args, out_types, after.args)
        self.move_ops(old_after, after)
        self.visit_block(after, skip_terminator=True)
        term = after.last_op
        yield_ = self.new_terminator(term, scf.YieldOp(*self.expand(term.operands, term)))

        in_flags, out_flags = self.part_flags(in_types), self.part_flags(out_types)
        kept_in = list(range(len(inits)))
        kept_out = list(range(len(out_flags)))
        fixed_out: dict[int, SSAValue] = {}
        blocks = (before, after)

        def drop_in(k: int) -> None:
            i = kept_in.pop(k)
            before.args[k].replace_all_uses_with(inits[i])
            self.drop(before, k, yield_, k)

        changed = True
        while changed:
            changed = False
            # A part forwarded from outside the loop: the after-arg and result are it.
            for k, j in enumerate(kept_out):
                c = cond.args[k]
                if out_flags[j] and not _inside(c, blocks):
                    after.args[k].replace_all_uses_with(c)
                    self.drop(after, k, cond, 1 + k)
                    fixed_out[j] = c
                    kept_out.pop(k)
                    changed = True
                    break
            if changed:
                continue
            # A part that comes back as its init, or goes round the loop untouched.
            for k, i in enumerate(kept_in):
                if not in_flags[i]:
                    continue
                y = yield_.operands[k]
                round_trip = (
                    isinstance(y, BlockArgument)
                    and y.block is after
                    and cond.args[y.index] is before.args[k]
                )
                if y is inits[i] or round_trip:
                    drop_in(k)
                    changed = True
                    break
        new = scf.WhileOp(
            [inits[i] for i in kept_in],
            [a.type for a in after.args],
            Region(before),
            Region(after),
        )
        new.attributes |= op.attributes  # loop hints (tt.num_stages, ...)
        insert_before(op, new)
        flat = [
            new.res[kept_out.index(j)] if j in kept_out else fixed_out[j]
            for j in range(len(out_flags))
        ]
        self.collect(op.res, out_types, flat)

    # ----------------------------------------------------------------- driver

    def run(self, module: ModuleOp) -> None:
        self.visit_block(module.body.block)
        for op in reversed(self.dead):
            Rewriter.erase_op(op)


def rewrite_tensor_pointer(module: ModuleOp) -> None:
    """Rewrite every block pointer of `module` in place (see the module docstring)."""
    _Rewriter().run(module)


class RewriteTensorPointerPass(ModulePass):
    name = "rewrite-tensor-pointer"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_tensor_pointer(op)


__all__ = ["BlockPtr", "RewriteTensorPointerPass", "rewrite_tensor_pointer"]
