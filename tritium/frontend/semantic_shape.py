"""Triton's rules for the ops that move elements between positions (mixed into `Semantic`):
`join`, `split`, `cat`, `gather`, `histogram`.

    c = tl.join(a, b)            ->  %c = tt.join %a, %b : tensor<64xf32> -> tensor<64x2xf32>
    l, r = tl.split(c)           ->  %l, %r = tt.split %c : tensor<64x2xf32> -> tensor<64xf32>
    g = tl.gather(x, idx, 0)     ->  %g = tt.gather %x[%idx] {axis = 0 : i32} : (...) -> ...
    h = tl.histogram(x, 16)      ->  %h = tt.histogram %x : tensor<128xi32> -> tensor<16xi32>

As upstream's semantic.py: `join` broadcasts its operands to one shape (two scalars give
a tensor of 2); `split` of a 1D tensor of 2 gives two scalars (the builtin reduces the
size-1 halves); `cat` takes 1D tensors of one type and must be allowed to reorder.
"""

from __future__ import annotations

from tritium.frontend import core
from tritium.frontend.core import block_type, tensor
from tritium.frontend.semantic_errors import SemanticError
from tritium.ir import tt
from tritium.ir import types as irt


class ShapeOps:
    """`tl.join`, `tl.split`, `tl.cat`, `tl.gather`, `tl.histogram`."""

    def join(self, a, b) -> tensor:
        a, b = self.to_tensor(a), self.to_tensor(b)
        if a.dtype != b.dtype:
            raise SemanticError(f"tl.join needs two tensors of one type, got {a.dtype} and {b.dtype}")
        a, b = self.broadcast_pair(a, b)
        scalars = not a.shape
        if scalars:
            a, b = self.expand_dims(a, 0), self.expand_dims(b, 0)
        shape = a.shape + (2,)
        self.check_shape(shape)
        t = irt.tensor(shape, a.dtype.to_ir())
        out = tensor(self.b.result(tt.JoinOp(a.handle, b.handle, t)), block_type(a.dtype, shape))
        return self.reshape(out, (2,)) if scalars else out

    def split(self, a) -> tuple[tensor, tensor]:
        a = self.to_tensor(a)
        if not a.shape or a.shape[-1] != 2:
            raise SemanticError(
                f"tl.split needs a tensor whose last dimension is 2, got shape {list(a.shape)}"
            )
        shape = a.shape[:-1]
        t = irt.tensor(shape, a.dtype.to_ir())
        op = self.b.insert(tt.SplitOp(a.handle, t))
        ty = block_type(a.dtype, shape)
        return tensor(op.outLHS, ty), tensor(op.outRHS, ty)

    def cat(self, lhs, rhs, can_reorder: bool) -> tensor:
        lhs, rhs = self.to_tensor(lhs), self.to_tensor(rhs)
        if not can_reorder:
            raise SemanticError(
                "tl.cat: the current implementation of `cat` always may reorder elements "
                "(pass can_reorder=True), as upstream"
            )
        if len(lhs.shape) != 1 or lhs.type != rhs.type:
            raise SemanticError(
                f"tl.cat needs two 1D tensors of one type and shape, got {lhs.type} and {rhs.type}"
            )
        shape = (2 * lhs.shape[0],)
        self.check_shape(shape)
        t = irt.tensor(shape, lhs.dtype.to_ir())
        return tensor(
            self.b.result(tt.CatOp(lhs.handle, rhs.handle, t)), block_type(lhs.dtype, shape)
        )

    def gather(self, src, index, axis: int) -> tensor:
        src, index = self.to_tensor(src), self.to_tensor(index)
        rank = len(src.shape)
        if not rank or len(index.shape) != rank:
            raise SemanticError(
                f"tl.gather: source and index must be tensors of one rank, got shapes "
                f"{list(src.shape)} and {list(index.shape)}"
            )
        if not -rank <= axis < rank:
            raise SemanticError(f"tl.gather: axis {axis} is out of range for rank {rank}")
        axis %= rank
        if not index.dtype.is_int():
            raise SemanticError(f"tl.gather: the index must be integers, got {index.dtype}")
        for d, (s, i) in enumerate(zip(src.shape, index.shape)):
            if d != axis and i > s:
                raise SemanticError(
                    f"tl.gather: index dimension {d} ({i}) is larger than the source's ({s})"
                )
        t = irt.tensor(index.shape, src.dtype.to_ir())
        op = tt.GatherOp(src.handle, index.handle, axis, t)
        return tensor(self.b.result(op), block_type(src.dtype, index.shape))

    def histogram(self, x, num_bins: int, mask=None) -> tensor:
        x = self.to_tensor(x)
        if len(x.shape) != 1 or not x.dtype.is_int():
            raise SemanticError(f"tl.histogram needs a 1D integer tensor, got {x.type}")
        if num_bins < 1:
            raise SemanticError(f"tl.histogram: num_bins must be positive, got {num_bins}")
        self.check_shape((num_bins,))
        m = None
        if mask is not None:
            mask = self.to_tensor(mask)
            if mask.dtype != core.int1:
                raise SemanticError(f"tl.histogram's mask must be tl.int1, got {mask.dtype}")
            m = self.broadcast_to(mask, x.shape).handle
        t = irt.tensor((num_bins,), core.int32.to_ir())
        op = tt.HistogramOp(x.handle, t, m)
        return tensor(self.b.result(op), block_type(core.int32, (num_bins,)))
