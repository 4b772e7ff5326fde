"""The state of lowering one `tt.func`: SSA value -> list of a thread's LLVM registers, plus
the thread-index service and the analysis facts computed before emission.

Every TTGIR value becomes the list of the scalar LLVM values one thread holds for it, in
the register order of its layout (`tritium.ir.layouts`); a scalar is a list of one.

    %x = arith.addf %a, %b : tensor<1024xf32, #blocked>      (8 registers per thread)
    ->  [fadd a0 b0, fadd a1 b1, ..., fadd a7 b7]

Values that depend only on the thread (`%tid.x`, lane, warp, the thread's coordinate in a
layout, "does this thread own its elements", and whatever else a lowering asks for once
per function through `ThreadIndex.entry_value`) are emitted once in the function's entry
block, which dominates everything else; op bodies are emitted by `FunctionLowering.builder`.

What the lowering needs to know about values (which registers form one vector access,
which mask registers are equal) is not discovered while emitting: it is the axis info of
the TTGIR (`tritium.analysis.axis_info`), computed before the first op is lowered and
handed in as `FunctionLowering.axis`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence

from llvmlite import ir
from xdsl.ir import Attribute, Block, Operation, SSAValue

from tritium.analysis.axis_info import AxisInfoAnalysis
from tritium.codegen.lower.types import i32, llvm_type
from tritium.errors import CompilationError, NotSupportedError
from tritium.ir.layouts import LinearLayout, layout_of
from tritium.ir.locations import op_source_loc

Lowering = Callable[["FunctionLowering", Operation], None]
LOWERINGS: dict[str, Lowering] = {}


# The op families most kernels never hold, by op name (or dialect prefix "math."): the
# module of this package registering their lowerings, imported on the first such op
# (`lowering_of`), so a kernel without dots, atomics or math calls loads neither those
# lowerings nor what they import (libm's routines and coefficients, the ldmatrix and
# shared-tile addressing, the scan and gather plans). The other modules are imported with
# the package (__init__.py). tests/codegen/test_lazy_lowerings.py checks the table
# against what each module registers.
LAZY_LOWERINGS: dict[str, str] = {
    "tt.dot": "dot",
    "ttng.warp_group_dot": "dot_wgmma",
    "ttng.warp_group_dot_wait": "dot_wgmma",
    "ttng.fence_async_shared": "dot_wgmma",
    "ttg.local_alloc": "local_memory",
    "ttg.local_store": "local_memory",
    "ttg.local_dealloc": "local_memory",
    "ttg.memdesc_index": "local_memory",
    "ttg.memdesc_trans": "local_memory",
    "ttg.local_load": "local_memory",
    "ttg.async_copy_global_to_local": "async_copy",
    "ttg.async_commit_group": "async_copy",
    "ttg.async_wait": "async_copy",
    "math.": "math_ops",
    "tt.precise_sqrt": "math_ops",
    "tt.precise_divf": "math_ops",
    "tt.mulhiui": "math_ops",
    "tt.fp_to_fp": "math_ops",
    "tt.extern_elementwise": "libdevice",
    "tt.atomic_rmw": "atomic",
    "tt.atomic_cas": "atomic",
    "tt.scan": "scan",
    "tt.gather": "gather",
    "tt.histogram": "histogram",
    "tt.elementwise_inline_asm": "inline_asm",
    "tt.print": "print_op",
    "tt.assert": "assert_op",
}


def lowering_of(name: str) -> Lowering | None:
    """The lowering registered for op `name`, importing its module first if it is lazy."""
    fn = LOWERINGS.get(name)
    if fn is None:
        module = LAZY_LOWERINGS.get(name) or LAZY_LOWERINGS.get(name.partition(".")[0] + ".")
        if module is not None:
            importlib.import_module(f"tritium.codegen.lower.{module}")
            fn = LOWERINGS.get(name)
    return fn


def lowers(*names: str) -> Callable[[Lowering], Lowering]:
    """Register a function as the lowering of the named ops."""

    def register(fn: Lowering) -> Lowering:
        for n in names:
            LOWERINGS[n] = fn
        return fn

    return register


def unsupported(op: Operation, why: str) -> NotSupportedError:
    """The error for an op the backend cannot lower: a `NotSupportedError` (a
    `CompilationError`, so it prints as FILE:LINE:COL: error: ..., and a
    `NotImplementedError`) at the op's source location."""
    return NotSupportedError(f"{op.name}: {why}", op_source_loc(op))


def intrinsic(module: ir.Module, name: str, ret: ir.Type, args: Sequence[ir.Type]) -> ir.Function:
    """The declaration of LLVM function `name` in `module` (added on first use)."""
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, list(args)), name)
    return fn


class ThreadIndex:
    """The thread's hardware indices and everything derived from them alone, each emitted
    once in the entry block: `tid`, `lane`, `warp`, `thread_coords(layout)`,
    `owner_predicate(layout)`, and `entry_value(key, make)` for any other per-thread value
    (a tile's thread offset, a reduction's writer predicate, printf's argument buffer)."""

    def __init__(self, module: ir.Module, entry: ir.Block, num_warps: int, threads_per_warp: int):
        self.module = module
        self.entry = entry
        self.entry_builder = ir.IRBuilder(entry)
        self.num_warps = num_warps
        self.threads_per_warp = threads_per_warp
        self._values: dict[object, object] = {}

    def entry_value(self, key: object, make: Callable[[], object]):
        """`make()` the first time `key` is asked for in this function, then the same
        result. `make` emits with `entry_builder` and uses only thread-dependent values."""
        if key not in self._values:
            self._values[key] = make()
        return self._values[key]

    def sreg(self, name: str, b: ir.IRBuilder | None = None) -> ir.Value:
        """`%tid.x`, `%ctaid.y`, ... as an i32 (llvm.nvvm.read.ptx.sreg.*), emitted by `b`
        (the entry block's builder by default)."""
        fn = intrinsic(self.module, f"llvm.nvvm.read.ptx.sreg.{name}", i32, [])
        return (b or self.entry_builder).call(fn, [])

    @property
    def tid(self) -> ir.Value:
        return self.entry_value("tid", lambda: self.sreg("tid.x"))

    @property
    def lane(self) -> ir.Value:
        eb = self.entry_builder
        return self.entry_value(
            "lane", lambda: eb.and_(self.tid, ir.Constant(i32, self.threads_per_warp - 1))
        )

    @property
    def warp(self) -> ir.Value:
        eb = self.entry_builder
        shift = self.threads_per_warp.bit_length() - 1
        return self.entry_value("warp", lambda: eb.lshr(self.tid, ir.Constant(i32, shift)))

    def thread_coords(self, layout: LinearLayout) -> tuple[ir.Value, ...]:
        """This thread's coordinate in `layout` (register 0's element), one i32 per dim."""
        return self.entry_value(("coords", layout), lambda: self._emit_thread_coords(layout))

    def _emit_thread_coords(self, layout: LinearLayout) -> tuple[ir.Value, ...]:
        b = self.entry_builder
        zero = ir.Constant(i32, 0)
        coords: list[ir.Value] = [zero] * layout.rank
        for value, bases in ((self.lane, layout.lane), (self.warp, layout.warp)):
            # Runs of consecutive id bits that map to consecutive bits of one dim become
            # one `(id & mask) << shift`; a blocked layout needs one run per dim.
            runs: list[list[int]] = []  # [dim, first bit, count, shift]
            for bit, basis in enumerate(bases):
                nonzero = [(d, x) for d, x in enumerate(basis) if x]
                if not nonzero:
                    continue
                if len(nonzero) != 1 or nonzero[0][1] & (nonzero[0][1] - 1):
                    raise NotImplementedError(f"layout basis {basis} is not a single bit")
                d, x = nonzero[0]
                shift = x.bit_length() - 1 - bit
                last = runs[-1] if runs else None
                if last and last[0] == d and last[1] + last[2] == bit and last[3] == shift:
                    last[2] += 1
                else:
                    runs.append([d, bit, 1, shift])
            for d, first, count, shift in runs:
                part = b.and_(value, ir.Constant(i32, ((1 << count) - 1) << first))
                if shift > 0:
                    part = b.shl(part, ir.Constant(i32, shift))
                elif shift < 0:
                    part = b.lshr(part, ir.Constant(i32, -shift))
                coords[d] = part if coords[d] is zero else b.or_(coords[d], part)
        return tuple(coords)

    def owner_predicate(self, layout: LinearLayout | None) -> ir.Value | None:
        """i1 "this thread owns its elements" when the layout replicates across threads
        (None when every thread owns its elements). Scalars: thread 0 only."""
        if layout is None:
            return self.entry_value(
                "owner0",
                lambda: self.entry_builder.icmp_unsigned("==", self.tid, ir.Constant(i32, 0)),
            )
        lane_mask, warp_mask = layout.free_lane_mask, layout.free_warp_mask
        if not lane_mask and not warp_mask:
            return None

        def make() -> ir.Value:
            b = self.entry_builder
            shift = self.threads_per_warp.bit_length() - 1
            mask = lane_mask | (warp_mask << shift)
            bits = b.and_(self.tid, ir.Constant(i32, mask))
            return b.icmp_unsigned("==", bits, ir.Constant(i32, 0))

        return self.entry_value(("owner", lane_mask, warp_mask), make)


class FunctionLowering:
    """One function's value map (`get` / `set`), its builder, its thread-index service
    (`threads`) and the analysis facts it was given (`axis`: the TTGIR's axis info; may be
    None for code that lowers no memory op or compare, as the libm tests); `libdevice`: the
    libdevice file whose `__nv_*` functions math calls (TRITIUM_LIBDEVICE), or None."""

    def __init__(
        self,
        module: ir.Module,
        fn: ir.Function,
        num_warps: int,
        threads_per_warp: int,
        axis: AxisInfoAnalysis | None = None,
        libdevice: str | None = None,
    ):
        self.module = module
        self.fn = fn
        self.num_warps = num_warps
        self.threads_per_warp = threads_per_warp
        self.threads = ThreadIndex(
            module, fn.append_basic_block("entry"), num_warps, threads_per_warp
        )
        self.builder = ir.IRBuilder()
        self.axis = axis
        self.libdevice = libdevice  # libdevice.10.bc in libdevice mode (lower/libdevice_calls.py)
        self.values: dict[SSAValue, list[ir.Value]] = {}
        self._strings: dict[str, ir.GlobalVariable] = {}
        self.block_map: dict[Block, ir.Block] = {}  # tt.func blocks (control_flow.py)
        self.pending_barrier: Operation | None = None  # a gpu.barrier for this op (shared.py)

    # ----------------------------------------------------------------- values

    def get(self, v: SSAValue) -> list[ir.Value]:
        try:
            return self.values[v]
        except KeyError:
            raise KeyError(f"value {v.name_hint or v} used before it was lowered") from None

    def get1(self, v: SSAValue) -> ir.Value:
        """The single register of a scalar value."""
        regs = self.get(v)
        assert len(regs) == 1, f"expected a scalar, got {len(regs)} registers"
        return regs[0]

    def set(self, v: SSAValue, regs: Sequence[ir.Value]) -> None:
        want = self.num_registers(v.type)
        if len(regs) != want:
            raise AssertionError(f"{v.type}: {len(regs)} registers, layout says {want}")
        self.values[v] = list(regs)

    def layout(self, t: Attribute) -> LinearLayout | None:
        layout = layout_of(t)
        if layout is not None and (
            layout.num_lanes != self.threads_per_warp or layout.num_warps != self.num_warps
        ):
            raise NotImplementedError(
                f"layout of {t} spans {layout.num_lanes} lanes x {layout.num_warps} warps, "
                f"the module has {self.threads_per_warp} x {self.num_warps}"
            )
        return layout

    def num_registers(self, t: Attribute) -> int:
        layout = layout_of(t)
        return 1 if layout is None else layout.num_registers

    def llvm_type(self, t: Attribute) -> ir.Type:
        return llvm_type(t)

    # ----------------------------------------------------------------- module symbols

    def intrinsic(self, name: str, ret: ir.Type, args: Sequence[ir.Type]) -> ir.Function:
        return intrinsic(self.module, name, ret, args)

    def global_string(self, text: str) -> ir.Value:
        """A NUL-terminated constant string in global memory, as a generic pointer."""
        if text not in self._strings:
            data = bytearray(text.encode() + b"\0")
            ty = ir.ArrayType(ir.IntType(8), len(data))
            g = ir.GlobalVariable(self.module, ty, f"str.{len(self._strings)}", addrspace=1)
            g.global_constant = True
            g.linkage = "internal"
            g.initializer = ir.Constant(ty, data)
            self._strings[text] = g
        return self._strings[text]

    # ----------------------------------------------------------------- helpers

    def zip_map(
        self, operands: Sequence[Sequence[ir.Value]], fn: Callable[..., ir.Value]
    ) -> list[ir.Value]:
        """Apply `fn` register-wise; registers with identical operands share one result."""
        memo: dict[tuple[int, ...], ir.Value] = {}
        out = []
        for regs in zip(*operands):
            key = tuple(map(id, regs))
            if key not in memo:
                memo[key] = fn(*regs)
            out.append(memo[key])
        return out

    # ----------------------------------------------------------------- driving

    def lower_op(self, op: Operation) -> None:
        fn = lowering_of(op.name)
        if fn is None:
            raise unsupported(op, "no GPU lowering for this op yet")
        try:
            fn(self, op)
        except (NotImplementedError, CompilationError):
            raise
        except Exception as e:  # an internal error: say which op it was
            loc = op_source_loc(op)
            e.add_note(f"while lowering {op.name}{f' at {loc}' if loc else ''}")
            raise

    def lower_ops(self, block: Block) -> None:
        for op in block.ops:
            self.lower_op(op)
