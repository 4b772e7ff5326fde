"""tritium's kernels compiled by upstream Triton, for side-by-side benchmarks.

There is one source per kernel: the twin is made from the tritium kernel's own text
(`examples/*.py`, `benchmarks/tritium_kernels.py`), re-decorated with `@triton.jit` and
executed with `tl` = `triton.language`. Triton reads a kernel's source through
`inspect`, so the text is registered in `linecache` under a name of its own.

    from upstream_kernels import add_kernel     # a triton.JITFunction
"""

import ast
import linecache
import pathlib

import triton
import triton.language as tl

REPO = pathlib.Path(__file__).resolve().parents[1]
SOURCES = {  # kernel name -> file defining its tritium version
    "add_kernel": "examples/vector_add.py",
    "softmax_kernel": "examples/softmax.py",
    "softmax_causal_simple_kernel": "examples/causal_softmax.py",
    "rms_norm_simple_kernel": "examples/rms_norm.py",
    "layer_norm_kernel": "examples/layer_norm.py",
    "online_softmax_kernel": "examples/online_softmax.py",
    "matmul_tiled_kernel": "examples/matmul.py",
    "matmul_precision_kernel": "benchmarks/tritium_kernels.py",
    "matmul_fp16_grouped_kernel": "examples/matmul_fp16_grouped.py",
    "attn_fwd_kernel": "examples/flash_attention.py",
    "attn_bwd_preprocess_kernel": "examples/flash_attention.py",
    "attn_bwd_dkdv_kernel": "examples/flash_attention.py",
    "attn_bwd_dq_kernel": "examples/flash_attention.py",
    "matmul_lowp_kernel": "benchmarks/tritium_kernels.py",
}


@triton.jit
def empty_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass


def _is_jit(node: ast.AST) -> bool:
    return isinstance(node, ast.FunctionDef) and any(
        ast.unparse(d).endswith("jit") for d in node.decorator_list
    )


def twin_source(name: str) -> str:
    """The upstream twin's source: the tritium kernel's text from `def` on, under @triton.jit,
    after the file's other `@tritium.jit` functions that are defined before it (the helpers
    it may call: upstream inlines them the same way)."""
    text = (REPO / SOURCES[name]).read_text()
    helpers = []
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            parts = [*helpers, ast.get_source_segment(text, node)]
            return "".join(f"@triton.jit\n{p}\n\n" for p in parts)
        if _is_jit(node) and node.name.startswith("_"):
            helpers.append(ast.get_source_segment(text, node))
    raise KeyError(f"{name} is not defined in {SOURCES[name]}")


def _make(name: str):
    src = twin_source(name)
    filename = f"<upstream twin of {SOURCES[name]}:{name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {"triton": triton, "tl": tl, "__name__": f"upstream_twin_{name}"}
    exec(compile(src, filename, "exec"), namespace)
    return namespace[name]


def __getattr__(name: str):
    if name not in SOURCES:
        raise AttributeError(name)
    kernel = globals()[name] = _make(name)
    return kernel


def fresh(name: str):
    """A new twin of `name` with a compile cache of its own (for compiling it again under
    other settings, e.g. DISABLE_MMA_V3, which upstream reads at compile time)."""
    return _make(name)
