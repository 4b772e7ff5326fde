"""Inline assembly: `tl.inline_asm_elementwise` (upstream's "Inline Assembly" group).

    y = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [x], dtype=tl.int8,
                                  is_pure=True, pack=4)
      ->  %y = tt.elementwise_inline_asm "shl.b32 $0, $1, 3;" {constraints = "=r,r",
              packed_element = 4 : i32, pure = true} %x : tensor<128xi8> -> tensor<128xi8>

As upstream: the arguments become tensors and broadcast to one shape (no type
promotion); `dtype` is one dtype (one result) or a tuple of them (a tuple of results).
On the GPU the asm runs once per group of `pack` elements of each thread; elements
narrower than 32 bits are packed into 32-bit registers (4 x i8, 2 x f16), so with
`pack=4` and i8 operands `$1` is one `.b32` holding four elements. The interpreter
cannot run PTX: it refuses the op with a located error, as upstream's interpreter does.
"""

from __future__ import annotations

from tritium.frontend.builtins.base import builtin, dtype_arg, int_arg
from tritium.frontend.core import block_type, tensor, unwrap
from tritium.frontend.semantic import SemanticError
from tritium.ir.tt import ElementwiseInlineAsmOp


def _text(x, what: str) -> str:
    v = unwrap(x)
    if not isinstance(v, str):
        raise SemanticError(f"tl.inline_asm_elementwise: {what} must be a compile-time string")
    return v


@builtin
def inline_asm_elementwise(
    asm, constraints, args, dtype, is_pure, pack, _semantic=None, _generator=None
):
    """Run `asm` (PTX) on each group of `pack` elements of `args`; results of `dtype`."""
    asm_text, constraint_text = _text(asm, "asm"), _text(constraints, "constraints")
    pure = unwrap(is_pure)
    if not isinstance(pure, bool):
        raise SemanticError("tl.inline_asm_elementwise: is_pure must be True or False")
    n = int_arg(pack, "tl.inline_asm_elementwise's pack")
    if n < 1:
        raise SemanticError(f"tl.inline_asm_elementwise: pack must be at least 1, got {n}")
    dts = unwrap(dtype)
    multiple = isinstance(dts, (tuple, list))
    dts = [dtype_arg(d) for d in (dts if multiple else [dts])]
    if not dts:
        raise SemanticError("tl.inline_asm_elementwise needs at least one result dtype")
    values = unwrap(args)
    if not isinstance(values, (tuple, list)):
        raise SemanticError("tl.inline_asm_elementwise: args must be a list of values")
    ts = [_semantic.to_tensor(unwrap(a)) for a in values]
    shape: tuple = ()
    for t in ts:
        shape = _semantic.broadcast_shapes(shape, t.shape)
    ts = [_semantic.broadcast_to(t, shape) for t in ts]
    types = [block_type(d, shape) if shape else d for d in dts]
    op = _semantic.b.insert(
        ElementwiseInlineAsmOp(
            asm_text,
            constraint_text,
            [t.handle for t in ts],
            [t.to_ir() for t in types],
            pure,
            n,
        )
    )
    results = [tensor(r, t) for r, t in zip(op.results, types)]
    return tuple(results) if multiple else results[0]


__all__ = ["inline_asm_elementwise"]
