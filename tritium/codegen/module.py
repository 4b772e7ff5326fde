"""A TTGIR module -> an LLVM module holding one kernel, plus the launch metadata.

    module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32, ...} {
      tt.func public @add_kernel(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32) {...}
    }
    ->
    define ptx_kernel void @add_kernel(ptr addrspace(1) %x, i32 %n) #0 { ... }
    attributes #0 = { "nvvm.reqntid"="128" }
    metadata = {"name": "add_kernel", "num_warps": 4, "threads_per_warp": 32, "shared": 0,
                "params": [{"name": "x", "type": "*fp32"}, {"name": "n", "type": "i32"}]}

The kernel's parameters are exactly the tt.func's arguments (upstream appends two scratch
pointers; tritium does not). `.reqntid` comes from an `!nvvm.annotations` entry, which
LLVM 22 upgrades to the `"nvvm.reqntid"` function attribute.

The analyses run first, on the TTGIR (axis info, shared-memory offsets, barrier points);
then the function is lowered in one pass over its ops, reading their results.
"""

from __future__ import annotations

import re

import llvmlite.binding as llvm
from llvmlite import ir
from xdsl.dialects.builtin import IntegerAttr, ModuleOp

from tritium.analysis.allocation import shared_total
from tritium.analysis.axis_info import AxisInfoAnalysis
from tritium.codegen import lower  # noqa: F401  (registers the op lowerings)
from tritium.codegen.lower.context import FunctionLowering
from tritium.codegen.lower.control_flow import lower_function_body
from tritium.codegen.lower.types import i32, llvm_type, signature_type
from tritium.ir.tt import FuncOp

TRIPLE = "nvptx64-nvidia-cuda"
# As LLVM's NVPTX target with --nvptx-short-ptr (ptx.py): 32-bit shared/const/local pointers.
DATA_LAYOUT = "e-p3:32:32-p4:32:32-p5:32:32-p6:32:32-p7:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"


def _int_attr(module: ModuleOp, key: str, default: int) -> int:
    a = module.attributes.get(key)
    return a.value.data if isinstance(a, IntegerAttr) else default


def _kernel(module: ModuleOp) -> FuncOp:
    funcs = [op for op in module.ops if isinstance(op, FuncOp)]
    public = [f for f in funcs if f.sym_visibility is None or f.sym_visibility.data == "public"]
    if len(public) != 1 or len(funcs) != 1:
        names = [f.sym_name.data for f in funcs]
        raise NotImplementedError(
            f"expected one tt.func (the kernel, callees inlined), got {names or 'none'}"
        )
    if public[0].function_type.outputs.data:
        raise NotImplementedError("a kernel cannot return values")
    return public[0]


def _arg_name(func: FuncOp, i: int) -> str:
    hint = func.body.blocks.first.args[i].name_hint
    return hint if hint else f"arg{i}"


def lower_to_llvm(module: ModuleOp, libdevice: str | None = None) -> tuple[str, dict]:
    """Lower a TTGIR module with one public `tt.func` to verified LLVM IR text + metadata.
    `libdevice`: a libdevice.10.bc to call for math (libdevice mode: the IR declares the
    `__nv_*` functions; `ptx.llir_to_ptx(..., libdevice=)` links them)."""
    num_warps = _int_attr(module, "ttg.num-warps", 4)
    threads_per_warp = _int_attr(module, "ttg.threads-per-warp", 32)
    if threads_per_warp != 32:
        raise NotImplementedError("NVIDIA GPUs have 32 threads per warp")
    func = _kernel(module)
    name = func.sym_name.data
    arg_types = list(func.function_type.inputs.data)

    m = ir.Module(name=name)
    m.triple = TRIPLE
    m.data_layout = DATA_LAYOUT
    fn = ir.Function(m, ir.FunctionType(ir.VoidType(), [llvm_type(t) for t in arg_types]), name)
    fn.calling_convention = "ptx_kernel"
    annotations = m.add_named_metadata("nvvm.annotations")
    annotations.add(
        m.add_metadata([fn, ir.MetaDataString(m, "reqntidx"), ir.Constant(i32, 32 * num_warps)])
    )

    ctx = FunctionLowering(
        m, fn, num_warps, threads_per_warp, axis=AxisInfoAnalysis(func), libdevice=libdevice
    )
    params = []
    for i, (t, arg) in enumerate(zip(arg_types, fn.args)):
        arg.name = re.sub(r"[^\w.]", "_", _arg_name(func, i))
        params.append({"name": _arg_name(func, i), "type": signature_type(t)})
        ctx.set(func.body.blocks.first.args[i], [arg])

    first = lower_function_body(ctx, func.body)
    ctx.threads.entry_builder.branch(first)

    parsed = llvm.parse_assembly(str(m))
    parsed.verify()
    metadata = {
        "name": name,
        "num_warps": num_warps,
        "threads_per_warp": threads_per_warp,
        "shared": shared_total(module),
        "params": params,
    }
    return str(parsed), metadata
