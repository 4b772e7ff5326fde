"""Run a kernel's TTIR (or TTGIR: layouts are ignored) on the CPU with numpy, bounds-checked.

    from tritium.runtime.interpreter import interpret
    module = parse_module(ttir_text)
    interpret(module, grid=(n_rows,), args=[x, out, n_rows, n_cols])   # x, out: numpy arrays

runs the `tt.func` once per program id of the grid, in order (x fastest), reading and
writing the arrays in place. It is the CPU reference the GPU is checked against, so it
follows the GPU's semantics (integer wrap-around, C-style division, bf16 rounding, ...;
see `arith.py`), and unlike upstream's interpreter mode it checks every memory access:
an unmasked lane outside every argument's buffer raises `OutOfBoundsError` naming the
op's source line, the argument and the offset (`memory.py` holds the address space).

How it runs: each function is compiled once per call of `interpret` into Python
closures, one per op, found by op class in the op table (`ops.py`); a closure reads its
operands from a list of SSA slots (`env`) and writes its results there, so running an op
costs one call plus the numpy work. Control flow (`scf.for/if/while`, `cf.br/cond_br`,
early `tt.return`, `tt.call`) runs regions as chains of compiled blocks whose terminator
names the next block or the region's results. `tt.reduce` evaluates its combine region
on whole arrays, pairing neighbours (lower index on the left) in a tree: log2(n) region
runs; `tt.scan` runs it once per position, in scan order.

The files, each importing only files listed below it:

    grid.py          the entry: `interpret` (arguments, address space, the grid loop)
    live_arrays.py   arrays reached by address (pointer tables); device arrays copied in/back
    function.py      a `tt.func` compiled to closures, each op's builder from the op table
    ops.py           the op table: op class -> builder, merged from the op families below
    control_flow.py  terminators; scf.for/if/while/execute_region, tt.call, asserts
    reduce.py        tt.reduce            scan.py     tt.scan
    atomic.py        tt.atomic_rmw / tt.atomic_cas, element by element in order
    load_store.py    tt.addptr / tt.load / tt.store
    spmd.py          program ids          shape.py    make_range, splat, broadcast, ...
    dot.py           tt.dot               print_op.py tt.print (upstream's interpreter format)
    arith.py         arith.* and math.* (elementwise)
    blocks.py        compiled blocks, `run_block`, the running program's `State`
    memory.py        the address space: arrays as bounds-checked global memory
    values.py        numpy dtypes for element types, conversions, bf16 rounding
    fp8.py           exact fp8 (e4m3fn, e5m2) encode / decode tables and rounding
"""

from tritium.runtime.interpreter.grid import interpret

__all__ = ["interpret"]
