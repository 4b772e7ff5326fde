"""`convert-triton-to-tritongpu`: TTIR -> TTGIR. Every tensor gets a layout.

    module {
      %offs = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
      %s = "tt.reduce"(%x) <{axis = 1 : i32}> ({...}) : (tensor<8x128xf32>) -> tensor<8xf32>
      %e = tt.expand_dims %s {axis = 1 : i32} : tensor<8xf32> -> tensor<8x1xf32>
  =>
    #blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
    #blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
    #blocked2 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]}>
    module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:89", "ttg.threads-per-warp" = 32 : i32} {
      %offs = tt.make_range {...} : tensor<1024xi32, #blocked>
      %s = "tt.reduce"(%x) <{axis = 1 : i32}> ({...}) : (tensor<8x128xf32, #blocked1>) -> tensor<8xf32, #ttg.slice<{dim = 1, parent = #blocked1}>>
      %s1 = ttg.convert_layout %s : ... #ttg.slice<{dim = 1, parent = #blocked1}>> -> tensor<8xf32, #ttg.slice<{dim = 1, parent = #blocked2}>>
      %e = tt.expand_dims %s1 {axis = 1 : i32} : ... -> tensor<8x1xf32, #blocked2>

The rules (upstream's, with the in-between conversions upstream's dialect-conversion
framework would materialize):
* a tensor of shape S gets the default blocked layout for S (`default_blocked_layout`:
  sizePerThread 1, order [rank-1, ..., 0], lanes then warps from the fastest dim);
* `tt.reduce` results are `#ttg.slice<{dim = axis, parent = <operand layout>}>`;
* `tt.expand_dims` takes its operand in `#ttg.slice<{dim = axis, parent = <result layout>}>`
  and `tt.broadcast` its operand in its result's layout (a `ttg.convert_layout` goes before
  them where the producer's layout differs);
* `tt.trans` takes its operand in its result's layout with the dims permuted back (a
  `ttg.convert_layout` in front moves the data; the trans is then a register permutation);
* `tt.dot` keeps blocked layouts: its result and accumulator get upstream's FMA layout
  (2x2 or 4x4 elements per thread for large tiles; a batched (3D) dot puts its warps
  along the batch first), its operands their default layout (dot-operand and mma layouts
  belong to a later stage);
* `tt.join`'s result is its operands' layout with the new dim of 2 in each thread's
  registers (sizePerThread 2, fastest), and `tt.split` takes its operand in that form of
  its results' layout, as upstream: both are then register moves; `tt.cat` takes its
  operands in its result's layout (each thread then holds both halves' elements at the
  position it needs: a select);
* `tt.gather`'s source gets a layout that holds the gathered axis within each warp
  (`gather_source_layout`), so the gather can be warp shuffles; its indices and result
  keep their default layout; `tt.histogram`'s mask takes its operand's layout;
* loop-carried values, `scf.if` / `scf.while` results, block arguments and function
  arguments/results take the default layout, and whatever flows into them is converted
  to it;
* the module gets `"ttg.num-ctas"`, `"ttg.num-warps"`, `ttg.target`, `"ttg.threads-per-warp"`.
Remove-layout-conversions then cleans up the converts this inserts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, IntegerAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass

from tritium.ir import tt
from tritium.ir.ttg import (
    NUM_CTAS_ATTR,
    NUM_WARPS_ATTR,
    TARGET_ATTR,
    THREADS_PER_WARP_ATTR,
    BlockedEncodingAttr,
    ConvertLayoutOp,
    SliceEncodingAttr,
    blocked_layout,
    default_blocked_layout,
)
from tritium.ir.types import encoding_of, is_tensor, shape_of, with_encoding
from tritium.passes.utils import expected_operand_types, insert_before, set_type, walk_values


def dot_layout(
    shape: tuple[int, ...], num_warps: int, threads_per_warp: int
) -> BlockedEncodingAttr:
    """Upstream's blocked layout for a `tt.dot` result on the FMA path: more elements per
    thread (2x2, then 4x4) once each thread has at least 4 (16) of them."""
    rank = len(shape)
    per_thread = math.prod(shape) // (num_warps * threads_per_warp)
    size = [1] * rank
    if per_thread >= 4:
        size[-1] = size[-2] = 2
    if per_thread >= 16:
        size[-1] = size[-2] = 4
    size[-1] = min(size[-1], shape[-1])
    size[-2] = min(size[-2], shape[-2])
    return blocked_layout(shape, size, list(range(rank - 1, -1, -1)), num_warps, threads_per_warp)


def batched_dot_layout(
    shape: tuple[int, ...], num_warps: int, threads_per_warp: int
) -> BlockedEncodingAttr:
    """A 3D (batched) dot's FMA layout: warps along the batch first (as upstream's mma
    layout for 3D dots), each warp's (M, N) part as `dot_layout` would lay it out."""
    batch, m, n = shape
    wb = min(num_warps, batch)
    inner = dot_layout((m, n), num_warps // wb, threads_per_warp)
    return BlockedEncodingAttr(
        [1, *inner.sizePerThread],
        [1, *inner.threadsPerWarp],
        [wb, *inner.warpsPerCTA],
        [2, 1, 0],
    )


def joined_layout(operand: Attribute) -> Attribute | None:
    """`tt.join`'s result layout for operands in `operand`: the new minor dim of size 2 in
    each thread's registers (sizePerThread 2, fastest in `order`), as upstream."""
    if not isinstance(operand, BlockedEncodingAttr):
        return None
    return BlockedEncodingAttr(
        [*operand.sizePerThread, 2],
        [*operand.threadsPerWarp, 1],
        [*operand.warpsPerCTA, 1],
        [operand.rank, *operand.order],
    )


def gather_source_layout(
    shape: tuple[int, ...], axis: int, num_warps: int, threads_per_warp: int
) -> BlockedEncodingAttr:
    """A `tt.gather` source layout with `axis` inside each warp: lanes (then registers)
    along `axis` first, the other dims after. A 1D source is then whole in every warp
    (replicated across warps), so any index can be read with warp shuffles."""
    rank = len(shape)
    lanes = min(threads_per_warp, shape[axis])
    size = [1] * rank
    size[axis] = max(1, shape[axis] // lanes)
    order = [axis] + [d for d in range(rank - 1, -1, -1) if d != axis]
    return blocked_layout(shape, size, order, num_warps, threads_per_warp)


def transposed_operand_layout(result: Attribute, order: list[int]) -> Attribute | None:
    """The layout a `tt.trans` operand needs so the transpose moves no data: the result's
    blocked layout with its dims permuted back (result dim i is operand dim order[i]).
    A `ttg.convert_layout` in front of the trans then does the moving, through smem."""
    if not isinstance(result, BlockedEncodingAttr):
        return None

    def back(values: list[int]) -> list[int]:
        out = [0] * len(values)
        for i, d in enumerate(order):
            out[d] = values[i]
        return out

    return BlockedEncodingAttr(
        back(result.sizePerThread),
        back(result.threadsPerWarp),
        back(result.warpsPerCTA),
        [order[d] for d in result.order],
    )


@dataclass
class _Layouts:
    num_warps: int
    threads_per_warp: int

    def default(self, t: Attribute) -> BlockedEncodingAttr:
        return default_blocked_layout(shape_of(t), self.num_warps, self.threads_per_warp)

    def natural(self, op: Operation | None, index: int, t: Attribute) -> Attribute:
        """The layout a freshly computed value of type `t` gets."""
        if isinstance(op, tt.ReduceOp):
            src = op.srcs[0].type
            return SliceEncodingAttr(op.axis.value.data, self.default(src))
        if isinstance(op, tt.DotOp):
            if len(shape_of(t)) == 3:
                return batched_dot_layout(shape_of(t), self.num_warps, self.threads_per_warp)
            return dot_layout(shape_of(t), self.num_warps, self.threads_per_warp)
        if isinstance(op, tt.JoinOp):
            return joined_layout(self.default(op.lhs.type))
        return self.default(t)

    def expected(self, op: Operation, index: int, t: Attribute) -> Attribute | None:
        """The layout `op` wants its tensor operand `index` (of type `t`) in."""
        if isinstance(op, tt.ExpandDimsOp):
            return SliceEncodingAttr(op.axis.value.data, encoding_of(op.result.type))
        if isinstance(op, tt.BroadcastOp):
            return encoding_of(op.result.type)
        if isinstance(op, tt.DotOp) and index == 2:
            return encoding_of(op.d.type)
        if isinstance(op, tt.TransOp):
            return transposed_operand_layout(encoding_of(op.result.type), op.order_list)
        if isinstance(op, tt.JoinOp):
            return self.default(t)
        if isinstance(op, tt.SplitOp):
            return joined_layout(encoding_of(op.outLHS.type))
        if isinstance(op, tt.CatOp):
            return encoding_of(op.result.type)
        if isinstance(op, tt.GatherOp):
            if index == 0:
                return gather_source_layout(
                    shape_of(t), op.axis_int, self.num_warps, self.threads_per_warp
                )
            return encoding_of(op.result.type)
        if isinstance(op, tt.HistogramOp) and index == 1:
            return encoding_of(op.src.type)
        if isinstance(op, ConvertLayoutOp):
            return None
        flows_into = expected_operand_types(op)
        if flows_into is not None:
            target = flows_into[index] if index < len(flows_into) else None
            return encoding_of(target) if target is not None else None
        return self.default(t)


def convert_triton_to_tritongpu(
    module: ModuleOp,
    num_warps: int = 4,
    threads_per_warp: int = 32,
    num_ctas: int = 1,
    target: str = "cuda:89",
) -> None:
    if num_ctas != 1:
        raise NotImplementedError("tritium targets one CTA per program (num_ctas = 1)")
    if NUM_WARPS_ATTR in module.attributes:
        raise ValueError("convert-triton-to-tritongpu: the module is already TTGIR")
    for key, value in (
        (NUM_CTAS_ATTR, IntegerAttr(num_ctas, 32)),
        (NUM_WARPS_ATTR, IntegerAttr(num_warps, 32)),
        (TARGET_ATTR, StringAttr(target)),
        (THREADS_PER_WARP_ATTR, IntegerAttr(threads_per_warp, 32)),
    ):
        module.attributes[key] = value
    layouts = _Layouts(num_warps, threads_per_warp)

    # 1. every tensor value gets the layout it is produced in
    todo = []
    for value in walk_values(module):
        t = value.type
        if isinstance(t, TensorType) and encoding_of(t) is None:
            owner = value.owner if isinstance(value.owner, Operation) else None
            index = getattr(value, "index", 0)
            todo.append((value, with_encoding(t, layouts.natural(owner, index, t))))
    for value, new_type in todo:
        set_type(value, new_type)
    for func in module.walk():
        if isinstance(func, tt.FuncOp) and func.body.blocks:
            outs = [
                with_encoding(t, layouts.default(t)) if isinstance(t, TensorType) else t
                for t in func.function_type.outputs.data
            ]
            ins = func.body.blocks.first.arg_types
            func.function_type = FunctionType.from_lists(list(ins), outs)

    # 2. where an operand is in another layout than its user wants, convert it
    for op in list(module.walk()):
        for i, v in enumerate(op.operands):
            if not is_tensor(v.type):
                continue
            want = layouts.expected(op, i, v.type)
            if want is not None and encoding_of(v.type) != want:
                cvt = insert_before(op, ConvertLayoutOp(v, with_encoding(v.type, want)))
                op.operands[i] = cvt.result


@dataclass(frozen=True)
class ConvertTritonToTritonGPUPass(ModulePass):
    name = "convert-triton-to-tritongpu"

    num_warps: int = 4
    threads_per_warp: int = 32
    num_ctas: int = 1
    target: str = "cuda:89"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convert_triton_to_tritongpu(
            op, self.num_warps, self.threads_per_warp, self.num_ctas, self.target
        )
