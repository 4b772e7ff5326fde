"""`tt.elementwise_inline_asm` (`tl.inline_asm_elementwise`): the user's PTX, once per group
of `packed_element` registers of each thread.

    %y = tt.elementwise_inline_asm "shl.b32 $0, $1, 3;" {constraints = "=r,r",
         packed_element = 4 : i32, pure = true} %x : tensor<128xi8, #blocked> -> ...
      ->  %p = (4 x i8 registers of %x packed into one i32)
          %r = call i32 asm "shl.b32 $0, $1, 3;", "=r,r"(i32 %p)
          (the four i8 registers of %y unpacked from %r)

As upstream: a thread's registers go in groups of `pack` (padded with undef when the
thread holds a number of elements `pack` does not divide); within a group, elements
narrower than 32 bits are packed into 32-bit words (4 x i8, 2 x f16: fewer when `pack`
is smaller), one operand (or result) per word, operands in order, each operand's words
together; several result words come back as a struct, in result order. Upstream passes
`<4 x i8>` vectors to LLVM, which gives the asm the same 32-bit register; the words here
are that vector bitcast to an integer. An impure asm (`pure = false`) is a side effect:
LLVM keeps every call of it.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from tritium.codegen.lower.context import FunctionLowering, lowers


def _per_word(t: ir.Type, pack: int) -> int:
    """How many elements of LLVM type `t` share one asm operand."""
    bits = t.width if isinstance(t, ir.IntType) else {"half": 16, "bfloat": 16}.get(str(t), 32)
    if isinstance(t, (ir.PointerType, ir.DoubleType)) or bits >= 32:
        return 1
    return min(32 // bits, pack)


def _pack(b: ir.IRBuilder, regs: list[ir.Value], t: ir.Type) -> ir.Value:
    if len(regs) == 1:
        return regs[0]
    vec = ir.Constant(ir.VectorType(t, len(regs)), ir.Undefined)
    for k, r in enumerate(regs):
        vec = b.insert_element(vec, r, ir.Constant(ir.IntType(32), k))
    bits = len(regs) * (t.width if isinstance(t, ir.IntType) else 16)
    return b.bitcast(vec, ir.IntType(bits))


def _word_type(t: ir.Type, n: int) -> ir.Type:
    return t if n == 1 else ir.IntType(n * (t.width if isinstance(t, ir.IntType) else 16))


def _unpack(b: ir.IRBuilder, word: ir.Value, t: ir.Type, n: int) -> list[ir.Value]:
    if n == 1:
        return [word]
    vec = b.bitcast(word, ir.VectorType(t, n))
    return [b.extract_element(vec, ir.Constant(ir.IntType(32), k)) for k in range(n)]


@lowers("tt.elementwise_inline_asm")
def elementwise_inline_asm(ctx: FunctionLowering, op: Operation) -> None:
    b = ctx.builder
    pack = op.packed_element.value.data
    pure = op.pure.value.data
    results = list(op.results)
    count = ctx.num_registers(results[0].type)
    arg_types = [ctx.llvm_type(v.type) for v in op.args]
    res_types = [ctx.llvm_type(r.type) for r in results]
    padded = -(-count // pack) * pack
    operands = [
        ctx.get(v) + [ir.Constant(t, ir.Undefined)] * (padded - count)
        for v, t in zip(op.args, arg_types)
    ]
    words_out = []  # per result: (elements per word, word type)
    for t in res_types:
        n = _per_word(t, pack)
        words_out += [(t, n)] * (pack // n)
    ret_types = [_word_type(t, n) for t, n in words_out]
    ret = ret_types[0] if len(ret_types) == 1 else ir.LiteralStructType(ret_types)
    memo: dict[tuple[int, ...], list[ir.Value]] = {}
    outs: list[list[ir.Value]] = [[] for _ in results]
    for start in range(0, padded, pack):
        group = [regs[start : start + pack] for regs in operands]
        key = tuple(id(r) for regs in group for r in regs)
        if not pure or key not in memo:
            args = []
            for regs, t in zip(group, arg_types):
                n = _per_word(t, pack)
                args += [_pack(b, regs[i : i + n], t) for i in range(0, pack, n)]
            fty = ir.FunctionType(ret, [a.type for a in args])
            value = b.asm(fty, op.asm_string.data, op.constraints.data, args, side_effect=not pure)
            words = (
                [value]
                if len(ret_types) == 1
                else [b.extract_value(value, i) for i in range(len(ret_types))]
            )
            elems = []
            for word, (t, n) in zip(words, words_out):
                elems += _unpack(b, word, t, n)
            memo[key] = elems
        elems = memo[key]
        for i in range(len(results)):
            outs[i] += elems[i * pack : (i + 1) * pack]
    for r, regs in zip(results, outs):
        ctx.set(r, regs[:count])


__all__ = ["elementwise_inline_asm"]
