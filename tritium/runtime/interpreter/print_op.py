"""The interpreter's `tt.print` (`tl.device_print`): one line per value, in upstream's
interpreter format.

    tt.print " x: " {hex = false, isSigned = array<i32: 1>} : %x : tensor<4xi32>
    ->  (0, 0, 0)  x:  [0 1 2 3]               (program id, prefix, the whole array)

As upstream's interpreter (`TRITON_INTERPRET=1`), not as the GPU: the GPU prints one line
per element (`pid (0, 0, 0) idx (3) x: 3`, see codegen/lower/print_op.py). Differences
from upstream's interpreter, all where upstream's output is not useful: a prefix with no
values prints the line `(0, 0, 0) hello` (upstream prints nothing); a scalar prints as
`7` (upstream: `[7]`); unsigned integers print unsigned (`isSigned = 0`, tritium's
interpreter holds them in signed dtypes); `hex` prints every element as
`0x` + its bits, zero-padded to the type's width (`0x0000002a`; floats too).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IntegerType

from tritium.ir.types import PointerType, element_type
from tritium.runtime.interpreter import values as rep

__all__ = ["HANDLERS", "format_value", "print_op"]


def format_value(value, elem, signed: bool, hex: bool) -> str:
    """How the interpreter prints one `tt.print` operand of element type `elem`."""
    if hex:
        if isinstance(elem, PointerType):
            bits, digits = np.asarray(value).view(np.uint64), 16
        else:
            bits = rep.to_bits(value, elem)
            digits = max(1, np.asarray(bits).dtype.itemsize * 2)
            if isinstance(elem, IntegerType) and elem.width.data == 1:
                digits = 1
        return np.array2string(
            np.asarray(bits), formatter={"all": lambda x: f"0x{int(x):0{digits}x}"}
        )
    arr = np.asarray(value)
    if isinstance(elem, IntegerType) and elem.width.data > 1 and not signed:
        arr = arr.view(np.dtype(f"uint{arr.dtype.itemsize * 8}"))
    elif isinstance(elem, PointerType):
        return np.array2string(arr, formatter={"all": lambda x: f"0x{int(x):x}"})
    return str(arr)


def print_op(op, fc):
    """Builder for `tt.print` (registered in ops.py's table)."""
    ins = [fc(v) for v in op.args]
    elems = [element_type(v.type) for v in op.args]
    signed, hex, prefix = op.signed_list, op.is_hex, op.prefix.data

    def run(env, st):
        head = "({}, {}, {})".format(*(int(p) for p in st.pid))
        if prefix:
            head += f" {prefix}"
        if not ins:
            print(head)
        for slot, elem, s in zip(ins, elems, signed):
            print(f"{head} {format_value(env[slot], elem, s, hex)}")

    return run


HANDLERS = {"tt.print": print_op}
