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
    "matmul_lowp_kernel": "benchmarks/tritium_kernels.py",
}


@triton.jit
def empty_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass


def twin_source(name: str) -> str:
    """The upstream twin's source: the tritium kernel's text from `def` on, under @triton.jit."""
    text = (REPO / SOURCES[name]).read_text()
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return "@triton.jit\n" + ast.get_source_segment(text, node) + "\n"
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
