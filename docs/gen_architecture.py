"""Write docs/architecture.md: the pipeline, with vector add's real IR at every stage.

    python3 docs/gen_architecture.py            # regenerate after changing the compiler
    python3 docs/gen_architecture.py --check    # exit 1 if the committed file is stale

Everything in the document that describes the IR (which passes changed it, the layout
chosen, the instructions in the PTX) is computed here from the compilation itself, so the
text cannot drift from what tritium does; tests/test_docs_architecture.py runs `--check`.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "architecture.md"
SIGNATURE = "*fp32:16,*fp32:16,*fp32:16,i32"
CONSTEXPRS = {"BLOCK_SIZE": 1024}
COMMAND = (
    'tritium compile examples/vector_add.py:add_kernel --signature "*fp32:16,*fp32:16,*fp32:16,i32" \\\n'
    "    --constexpr BLOCK_SIZE=1024 --dump-dir dump/ -o add.ptx"
)


def _compile(dump_dir: pathlib.Path, signature: str = SIGNATURE):
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import tritium
    from examples.vector_add import add_kernel

    return tritium.compile(
        add_kernel, signature=signature, constexprs=CONSTEXPRS, dump_dir=dump_dir, stop="ptx"
    )


def _ops(mlir: str) -> int:
    """Operations in printed IR: lines that are an op (not a brace, module or block label)."""
    n = 0
    for line in mlir.splitlines():
        s = line.strip()
        if s and not s.startswith(("}", "#", "^", "module")) and not s.endswith(":"):
            n += 1
    return n


def _names(mlir: str) -> str:
    """An example of a variable's successive SSA names in the IR, e.g. ` (%x, %x_1)`."""
    for m in re.finditer(r"%([a-z]\w*?)_1 = ", mlir):
        if f"%{m.group(1)} = " in mlir:
            return f" (`%{m.group(1)}`, `%{m.group(1)}_1`)"
    return ""


def _block(text: str, lang: str) -> str:
    return f"```{lang}\n{text.rstrip()}\n```"


def _pass_table(snapshots: list[tuple[str, str]]) -> str:
    rows = ["| # | pass | ops after | changed the IR |", "|---|---|---|---|"]
    for i in range(1, len(snapshots)):
        name, text = snapshots[i]
        changed = "yes" if text != snapshots[i - 1][1] else "no"
        rows.append(f"| {i} | `{name}` | {_ops(text)} | {changed} |")
    return "\n".join(rows)


def _layout_facts(ttgir: str) -> str:
    m = re.search(
        r"#blocked = #ttg\.blocked<\{sizePerThread = \[(\d+)\], threadsPerWarp = \[(\d+)\], "
        r"warpsPerCTA = \[(\d+)\]",
        ttgir,
    )
    if not m:
        return "The layouts are in the `#blocked` aliases at the top."
    spt, tpw, wpc = map(int, m.groups())
    n = CONSTEXPRS["BLOCK_SIZE"]
    tile = spt * tpw * wpc
    reps = max(n // tile, 1)
    return (
        f"`#blocked` gives each thread `sizePerThread = [{spt}]` contiguous elements; "
        f"{tpw} threads per warp and {wpc} warps cover a tile of {spt} x {tpw} x {wpc} = "
        f"{tile} elements, so the {n}-element tensors repeat the tile {reps} time"
        f"{'s' if reps != 1 else ''}: each of the {tpw * wpc} threads holds {spt * reps} "
        f"elements, in {reps} run{'s' if reps != 1 else ''} of {spt}."
    )


def _count(pattern: str, text: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for m in re.finditer(pattern, text):
        found[m.group(0)] = found.get(m.group(0), 0) + 1
    return found


def _ptx_version(ptx: str) -> str:
    m = re.search(r"^\.version (\S+)", ptx, re.MULTILINE)
    return m.group(1) if m else "?"


def _ptx_facts(ptx: str, ptx_aligned: str) -> str:
    loads = _count(r"ld\.global(?:\.v\d)?\.b\d+", ptx)
    stores = _count(r"st\.global(?:\.v\d)?\.b\d+", ptx)
    v4 = _count(r"ld\.global\.v4\.b32", ptx_aligned).get("ld.global.v4.b32", 0)
    reqntid = re.search(r"\.reqntid (\d+)", ptx)

    def fmt(d):
        return ", ".join(f"{n} x `{k}`" for k, n in sorted(d.items())) or "none"

    return (
        f"The kernel declares `.reqntid {reqntid.group(1) if reqntid else '?'}` (the block "
        f"size it must be launched with). Per thread: loads {fmt(loads)}; stores "
        f"{fmt(stores)}, each predicated on the mask. `n_elements` has no divisibility "
        f"hint in this signature, so the mask may change inside a run of contiguous "
        f'elements; compiled with `"*fp32:16,*fp32:16,*fp32:16,i32:16"` the same '
        f"kernel has {v4} x `ld.global.v4.b32`."
    )


def render() -> str:
    with tempfile.TemporaryDirectory(prefix="tritium-arch-") as tmp:
        d = pathlib.Path(tmp)
        kernel = _compile(d)
        files = sorted(d.iterdir())
        texts = {f.name: f.read_text() for f in files}
    with tempfile.TemporaryDirectory(prefix="tritium-arch-") as tmp:
        aligned = _compile(pathlib.Path(tmp), SIGNATURE.rsplit(",", 1)[0] + ",i32:16")
    source = next(t for n, t in texts.items() if n.endswith("-source.py"))
    mlir = [(re.sub(r"^\d+-|\.mlir$", "", n), t) for n, t in texts.items() if n.endswith(".mlir")]
    split = next(i for i, (n, _) in enumerate(mlir) if n == "convert-triton-to-tritongpu")
    ttir_snaps, ttgir_snaps = mlir[:split], [mlir[split - 1]] + mlir[split:]
    frontend = ttir_snaps[0][1]
    ttir = ttir_snaps[-1][1]
    ttgir = ttgir_snaps[-1][1]
    llir = kernel.asm["llir"]
    ptx = kernel.asm["ptx"]
    meta = kernel.metadata.to_dict()
    params = ", ".join(f"`{p['name']}: {p['type']}`" for p in meta["params"])
    asm_loads = len(re.findall(r"call \S+ asm sideeffect .*ld\.global", llir))
    return "\n".join(
        [
            "# How tritium compiles a kernel",
            "",
            "<!-- Generated by docs/gen_architecture.py from a real compilation; do not edit.",
            "     Regenerate with `python3 docs/gen_architecture.py`; CI checks it is current. -->",
            "",
            "tritium turns a `@tritium.jit` Python function into PTX in five stages. Each arrow",
            "is a plain function with a typed input and output, and `tritium.compile` is their",
            "composition (`tritium/compiler.py`):",
            "",
            "```",
            "Python source ──frontend──▶ TTIR ──TTIR passes──▶ TTIR ──TTGIR passes──▶ TTGIR",
            "TTGIR ──codegen (per-thread LLVM IR, llvmlite)──▶ LLVM IR ──LLVM NVPTX──▶ PTX",
            "PTX ──runtime (cuModuleLoadData + cuLaunchKernel, cuda-python)──▶ the GPU",
            "TTIR ──runtime/interpreter──▶ numpy, on the CPU (TRITIUM_INTERPRET=1)",
            "```",
            "",
            "| stage | function | package | read |",
            "|---|---|---|---|",
            "| Python -> TTIR | `frontend.ttir.ast_to_ttir` | `tritium/frontend/` | "
            "[frontend](../tritium/frontend/ARCHITECTURE.md) |",
            "| `tl.*` names for kernel authors | `language`, `language.extra.cuda.libdevice` | "
            "`tritium/language/` | [language](../tritium/language/ARCHITECTURE.md) |",
            "| TTIR dialects, parser, printer | `ir.parser.parse_module`, `ir.printer.print_ir` | "
            "`tritium/ir/` | [ir](../tritium/ir/ARCHITECTURE.md) |",
            "| TTIR -> TTIR, TTIR -> TTGIR | `passes.pipeline.run_ttir_passes`, `run_ttgir_passes` | "
            "`tritium/passes/` | [passes](../tritium/passes/ARCHITECTURE.md) |",
            "| facts both read (axis info, ...) | `analysis.axis_info.AxisInfoAnalysis` | "
            "`tritium/analysis/` | [analysis](../tritium/analysis/ARCHITECTURE.md) |",
            "| TTGIR -> LLVM IR -> PTX | `codegen.lower_to_llvm`, `codegen.ptx.llir_to_ptx` | "
            "`tritium/codegen/` | [codegen](../tritium/codegen/ARCHITECTURE.md) |",
            "| launch, caches, interpreter | `runtime.launcher.Launcher`, `runtime.interpreter` | "
            "`tritium/runtime/` | [runtime](../tritium/runtime/ARCHITECTURE.md) |",
            "| `@jit`, specialisation, `kernel[grid]` | `jit.jit.JITFunction`, `jit.specialize`, "
            "`jit.launch` | `tritium/jit/` | [jit](../tritium/jit/ARCHITECTURE.md) |",
            "| saved kernels | `runtime.metadata`, `aot.c_wrapper`, `tritium.load_ptx` | "
            "`tritium/aot/` | [aot](../tritium/aot/ARCHITECTURE.md), [cli](cli.md) |",
            "| `import triton` served by tritium | `triton_alias.install` | "
            "`tritium/triton_alias.py` | [triton-compat](triton-compat.md) |",
            "| upstream's `triton.compile`, for torch.compile's inductor | "
            "`triton_compile.compile`, `triton_backends.make_backend` | "
            "`tritium/triton_compile.py`, `tritium/triton_backends.py` | "
            "[triton-compat](triton-compat.md) |",
            "",
            "The rest of this page follows one kernel, vector add, through every stage. It is",
            "what this command prints into `dump/` (numbered files, one per stage and pass) and",
            "`add.ptx`; locations (`loc(...)`) are left out here, as `--dump-dir` leaves them out:",
            "",
            _block(COMMAND, "sh"),
            "",
            "## 1. Source",
            "",
            "The frontend reads the function's source (`examples/vector_add.py`) once, parses",
            "it with `ast`, and specialises it for the signature and constexprs: `*fp32:16` is",
            "a pointer to fp32 whose address is divisible by 16, `BLOCK_SIZE` is folded in.",
            "",
            _block(source, "python"),
            "",
            "## 2. TTIR from the frontend",
            "",
            "One `tt.func` with one argument per runtime parameter (the `:16` became",
            "`tt.divisibility = 16`); each Python expression became `tt`/`arith` ops, and SSA",
            f"values are named after the variables they were assigned to{_names(frontend)}.",
            f"{_ops(frontend)} operations:",
            "",
            _block(frontend, "mlir"),
            "",
            "## 3. TTIR after the TTIR passes",
            "",
            "`passes/pipeline.py` runs the TTIR passes in order (upstream's names), verifying",
            "after each; `--dump-dir` writes the IR after every one:",
            "",
            _pass_table(ttir_snaps),
            "",
            _block(ttir, "mlir"),
            "",
            "## 4. TTGIR",
            "",
            "`convert-triton-to-tritongpu` gives every tensor type a layout encoding, and the",
            "TTGIR passes choose and clean up layouts (`coalesce` picks how many contiguous",
            "elements each thread owns from the pointers' axis info):",
            "",
            _pass_table(ttgir_snaps),
            "",
            _layout_facts(ttgir),
            "",
            _block(ttgir, "mlir"),
            "",
            "## 5. LLVM IR",
            "",
            "`codegen.lower_to_llvm` writes the program of *one thread*: every tensor value",
            "becomes the list of that thread's scalar registers (the mask here is "
            f"{len(re.findall(r' = icmp slt ', llir))} `icmp slt`), thread and block ids come "
            "from NVVM intrinsics, and",
            f"loads and stores are inline PTX ({asm_loads} load instructions, as wide as the",
            "TTGIR's axis info allows: `AxisInfoAnalysis.vector_width`) so masked-off",
            "lanes never touch memory. The parameters are exactly the `tt.func` arguments:",
            f"{params}; `metadata` records the block ({meta['num_warps']} warps x "
            f"{meta['threads_per_warp']} threads) and {meta['shared']} bytes of shared memory.",
            "",
            _block(llir, "llvm"),
            "",
            "## 6. PTX",
            "",
            "`codegen.ptx.llir_to_ptx` runs LLVM's O3 pipeline and the NVPTX backend (llvmlite)",
            f"for `{meta['arch']}`, writing PTX ISA {_ptx_version(ptx)}.",
            _ptx_facts(ptx, aligned.asm["ptx"]),
            "",
            _block(ptx, "ptx"),
            "",
            "## 7. Running it",
            "",
            "`kernel[grid](x, y, out, n)` keys a dict of ready launchers by the arguments'",
            "kinds (`jit/specialize.py`); `runtime.launcher.Launcher` loads the PTX once",
            "(`cuModuleLoadData`), packs",
            "the arguments into a pre-built buffer and calls `cuLaunchKernel` with",
            f"{meta['num_warps'] * meta['threads_per_warp']} threads per block. Compiled kernels",
            "are cached on disk (`runtime/cache.py`). Ahead of time, `tritium compile -o add.ptx",
            "--meta add.json --c-header add` saves the PTX with its launch metadata and a C",
            "wrapper (`load_add_kernel()`, `launch_add_kernel(stream, grid..., args...)`);",
            '`tritium.load_ptx("add.ptx")` launches it from Python without importing the',
            "compiler. With `TRITIUM_INTERPRET=1` the TTIR of section 3 runs on numpy instead,",
            "bounds-checked, for every program id.",
            "",
            "Where to go next: [contributing.md](contributing.md) (adding an op, a pass, a",
            "lowering), [cli.md](cli.md), [language.md](language.md).",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the file is out of date")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT} is out of date: run python3 docs/gen_architecture.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
