"""Which pointer parameters a kernel may write through: the memory a launch may change.

    tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %n: i32) {
      %xs = tt.splat %x                        {x}
      %p  = tt.addptr %xs, %offs               {x}
      %v  = tt.load %p                         {?}    a loaded value may be any address
      %os = tt.splat %out                      {out}
      %q  = tt.addptr %os, %offs               {out}  (the offset's ? is dropped)
      tt.store %q, %v                          writes {out}
    }
    -> written_params(module) == {"x": False, "out": True}

Each value gets the set of parameters whose memory it may address (its provenance, as
LLVM's "based on" rule): a pointer parameter addresses itself; `tt.addptr`, `tt.splat`,
`tt.broadcast`, `arith.select`, block pointers (`tt.make_tensor_ptr`, `tt.advance`) and
every other op pass on the provenance of their operands; `scf.for` / `scf.while` iter
args, `scf.if` / region results, `cf` block arguments and `tt.call` arguments and
results pass it on position by position, iterated to a fixed point. `tt.store`,
`tt.atomic_rmw` and `tt.atomic_cas` write through their pointer operand.

Where the analysis loses track, it says "may write anything" (`?`): a pointer loaded
from memory (any `tt.load` or atomic result carries `?`), or a `tt.int_to_ptr` of an
integer not computed from a `tt.ptr_to_int`. A write through a `?` pointer may write
every pointer parameter. Integers carry provenance too (`tt.ptr_to_int`, arithmetic),
but an offset's `?` does not make a pointer unknown (`out + tl.load(idx)` is `{out}`),
nor does a condition (`tl.where(loaded > 0, a, b)` is `{a, b}`). An op this file does
not know, that is not `Pure` and takes a pointer, is taken to write through it.

The compiler records the result per pointer parameter in the kernel's metadata
(`params[i]["writes"]`); the launch paths refuse a read-only array for a parameter that
may be written (tritium/runtime/launcher.py).
"""

from __future__ import annotations

from xdsl.dialects import cf, scf
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.traits import Pure

from tritium.ir.tt import CallOp, FuncOp
from tritium.ir.types import element_type, is_ptr

__all__ = ["UNKNOWN", "PointerWrites", "written_params"]

UNKNOWN = -1  # in a provenance set: an address the analysis lost track of

_WRITERS = ("tt.store", "tt.atomic_rmw", "tt.atomic_cas")  # write through operand 0
_LOADED = ("tt.load", "tt.atomic_rmw", "tt.atomic_cas")  # results: data read from memory
# Ops that are not Pure but write no global memory through their operands.
_NO_GLOBAL_WRITE = frozenset(
    {
        "tt.load", "tt.print", "tt.assert", "tt.reduce", "tt.scan", "tt.call", "tt.func",
        "ttg.async_copy_global_to_local", "ttg.local_alloc", "ttg.local_store",
        "ttg.local_load", "ttg.local_dealloc", "ttg.async_commit_group", "ttg.async_wait",
        "gpu.barrier",
    }
)  # fmt: skip

_EMPTY: frozenset = frozenset()


def _is_bool(v: SSAValue) -> bool:
    t = element_type(v.type)
    return isinstance(t, IntegerType) and t.width.data == 1


class PointerWrites:
    """The provenance of every value of `kernel` (and the functions it calls) and the
    parameters written through: `written` holds argument indices, or UNKNOWN."""

    def __init__(self, kernel: FuncOp):
        self.kernel = kernel
        module = kernel.parent_op()
        funcs = [op for op in module.ops if isinstance(op, FuncOp)] if module else [kernel]
        self.funcs = {f.sym_name.data: f for f in funcs}
        self.prov: dict[SSAValue, frozenset] = {}
        self.calls: dict[str, list[CallOp]] = {}
        self.ops: list[Operation] = []
        for f in funcs:
            for op in f.walk():
                if op is not f:
                    self.ops.append(op)
                if isinstance(op, CallOp):
                    self.calls.setdefault(op.callee.root_reference.data, []).append(op)
        for i, arg in enumerate(kernel.body.blocks.first.args):
            if is_ptr(arg.type):
                self.prov[arg] = frozenset({i})
        self.changed = True
        while self.changed:
            self.changed = False
            for op in self.ops:
                self._visit(op)
        self.written: set[int] = set()
        for op in self.ops:
            self.written |= self._writes(op)

    # ------------------------------------------------------------------ the fixed point
    def get(self, v: SSAValue) -> frozenset:
        return self.prov.get(v, _EMPTY)

    def _add(self, v: SSAValue, p: frozenset) -> None:
        if not p or _is_bool(v):
            return
        old = self.prov.get(v, _EMPTY)
        if not p <= old:
            self.prov[v] = old | p
            self.changed = True

    def _flow(self, srcs, dsts) -> None:
        """Position by position: dsts[k] may hold what srcs[k] holds."""
        for s, d in zip(srcs, dsts):
            self._add(d, self.get(s))

    def _union(self, values) -> frozenset:
        out = _EMPTY
        for v in values:
            out = out | self.get(v)
        return out

    def _visit(self, op: Operation) -> None:
        name = op.name
        if name in _LOADED:
            for r in op.results:
                self._add(r, frozenset({UNKNOWN}))
        elif name == "tt.int_to_ptr":
            p = self.get(op.operands[0])
            self._add(op.results[0], p if p - {UNKNOWN} else p | {UNKNOWN})
        elif isinstance(op, scf.ForOp):
            self._flow(op.iter_args, op.body.block.args[1:])
            self._flow(op.iter_args, op.results)
        elif isinstance(op, scf.WhileOp):
            self._flow(op.arguments, op.before_region.block.args)
        elif isinstance(op, CallOp):
            callee = self.funcs.get(op.callee.root_reference.data)
            if callee is None:  # an external function: its results may be anything
                for r in op.results:
                    self._add(r, self._union(op.operands) | {UNKNOWN})
            else:
                self._flow(op.operands, callee.body.blocks.first.args)
        elif isinstance(op, scf.IfOp):
            pass  # its results: from the yields (_visit_terminator)
        elif op.regions:  # tt.reduce, tt.scan, and ops this file does not know
            p = self._union(op.operands)
            for region in op.regions:
                for block in region.blocks:
                    if block.last_op is not None:
                        p |= self._union(block.last_op.operands)
            for region in op.regions:
                for block in region.blocks:
                    for a in block.args:
                        self._add(a, p)
            for r in op.results:
                self._add(r, p)
        elif op.successors:
            self._visit_branch(op)
        elif _is_terminator(op):
            self._visit_terminator(op)
        else:
            self._visit_generic(op)

    def _visit_generic(self, op: Operation) -> None:
        if not op.results:
            return
        whole = self._union(op.operands)
        # Into a pointer, only pointers (and integers made from pointers) bring their
        # unknown part: an offset or a condition computed from loaded data does not.
        known = _EMPTY
        for o in op.operands:
            known = known | (self.get(o) if is_ptr(o.type) else self.get(o) - {UNKNOWN})
        for r in op.results:
            self._add(r, known if is_ptr(r.type) else whole)

    def _visit_branch(self, op: Operation) -> None:
        if isinstance(op, cf.BranchOp):
            self._flow(op.arguments, op.successor.args)
        elif isinstance(op, cf.ConditionalBranchOp):
            self._flow(op.then_arguments, op.then_block.args)
            self._flow(op.else_arguments, op.else_block.args)
        else:  # an unknown branch: every successor argument may hold any operand
            p = self._union(op.operands)
            for block in op.successors:
                for a in block.args:
                    self._add(a, p)

    def _visit_terminator(self, op: Operation) -> None:
        parent = op.parent_op()
        if isinstance(parent, FuncOp):
            for call in self.calls.get(parent.sym_name.data, ()):
                self._flow(op.operands, call.results)
        elif isinstance(parent, scf.ForOp):
            self._flow(op.operands, parent.body.block.args[1:])
            self._flow(op.operands, parent.results)
        elif isinstance(parent, scf.WhileOp):
            if isinstance(op, scf.ConditionOp):
                self._flow(op.args, parent.after_region.block.args)
                self._flow(op.args, parent.results)
            else:
                self._flow(op.operands, parent.before_region.block.args)
        elif isinstance(parent, scf.IfOp):
            self._flow(op.operands, parent.results)

    # ------------------------------------------------------------------ the writes
    def _writes(self, op: Operation) -> frozenset:
        if op.name in _WRITERS:
            return self.get(op.operands[0])
        if op.name in _NO_GLOBAL_WRITE or op.has_trait(Pure) or _is_control_flow(op):
            return _EMPTY
        # an op this analysis does not know: it may write through any pointer it takes
        return self._union(o for o in op.operands if is_ptr(o.type))

    def may_write(self, i: int) -> bool:
        """May the kernel write through its argument `i`?"""
        return i in self.written or UNKNOWN in self.written


_TERMINATORS = frozenset({"scf.yield", "scf.condition", "tt.return"})


def _is_terminator(op: Operation) -> bool:
    """A terminator that hands values to its parent op (or its function's callers)."""
    return op.name in _TERMINATORS and op.parent_op() is not None


def _is_control_flow(op: Operation) -> bool:
    return op.name.startswith(("scf.", "cf.")) or op.name == "tt.return"


def kernel_of(module: ModuleOp) -> FuncOp:
    """The module's kernel: its only `tt.func`, else its only public one."""
    funcs = [op for op in module.ops if isinstance(op, FuncOp)]
    public = [f for f in funcs if f.sym_visibility is None or f.sym_visibility.data == "public"]
    if len(funcs) == 1:
        return funcs[0]
    if len(public) != 1:
        raise ValueError(f"expected one public tt.func, got {[f.sym_name.data for f in public]}")
    return public[0]


def written_params(module: ModuleOp) -> dict[str, bool]:
    """{pointer parameter name: may the kernel write through it} for the module's kernel."""
    kernel = kernel_of(module)
    analysis = PointerWrites(kernel)
    out = {}
    for i, arg in enumerate(kernel.body.blocks.first.args):
        if is_ptr(arg.type):
            out[arg.name_hint or f"arg{i}"] = analysis.may_write(i)
    return out
