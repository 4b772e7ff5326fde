"""The C header + source from `tritium compile --c-header`: it compiles against the CUDA
headers (gcc and g++), it calls the driver API as it should (against a fake libcuda
written here), and on a GPU it runs vector add on data checked against numpy."""

from __future__ import annotations

import glob
import json
import os
import pathlib
import re
import shutil
import subprocess

import numpy as np
import pytest

from tritium.aot.c_wrapper import c_identifier, c_string_lines, write_c_wrapper
from tritium.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
ADD = f"{ROOT / 'examples' / 'vector_add.py'}:add_kernel"
SIG = "*fp32:16,*fp32:16,*fp32:16,i32"


def cuda_include_dir() -> str | None:
    """The directory holding cuda.h: $CUDA_HOME / $CUDA_PATH, /usr/local/cuda*, or beside nvcc."""
    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    candidates += sorted(glob.glob("/usr/local/cuda-*"), reverse=True)
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(str(pathlib.Path(nvcc).resolve().parent.parent))
    for c in candidates:
        if c and (pathlib.Path(c) / "include" / "cuda.h").is_file():
            return str(pathlib.Path(c) / "include")
    return None


@pytest.fixture(scope="module")
def cc():
    """A C compiler and the CUDA include directory; skips (saying which) when either is absent."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler (gcc or cc) on this machine")
    inc = cuda_include_dir()
    if inc is None:
        pytest.skip("the CUDA headers (cuda.h) are not installed here")
    return compiler, inc


def write_wrapper(tmp_path, *extra, source=ADD, sig=SIG, cx=("BLOCK_SIZE=1024",), name="add"):
    argv = ["compile", source, "-s", sig, *sum((["-c", c] for c in cx), [])]
    argv += ["-o", str(tmp_path / f"{name}.ptx"), "--meta", str(tmp_path / f"{name}.json")]
    assert main([*argv, "--c-header", str(tmp_path / name), *extra]) == 0
    return tmp_path / f"{name}.h", tmp_path / f"{name}.c"


def build(compiler, inc, sources, out, *libs, lang=None):
    cmd = [compiler, *(["-x", lang] if lang else []), "-std=c11" if lang is None else "-std=c++11"]
    cmd += ["-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{inc}", *map(str, sources)]
    cmd += ["-o", str(out), *libs]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"


def test_c_identifiers_and_strings():
    assert c_identifier("x_ptr") == "x_ptr"
    assert c_identifier("char") == "char_" and c_identifier("stream", frozenset({"stream"})) == (
        "stream_"
    )
    assert c_identifier("9lives") == "_9lives" and c_identifier("π") == "_"
    assert c_string_lines('a\\b "q"\n\tz\n') == '    "a\\\\b \\"q\\"\\n"\n    "\\tz\\n"'
    assert c_string_lines("é") == '    "\\303\\251"'


def test_header_and_source_compile_as_c_and_cxx(tmp_path, cc):
    compiler, inc = cc
    h, c = write_wrapper(tmp_path)
    header = h.read_text()
    assert "CUresult load_add_kernel(void);" in header
    assert re.search(r"CUresult launch_add_kernel\(CUstream stream,\s+unsigned int gridX,", header)
    assert "int32_t n_elements);" in header and "#define ADD_KERNEL_BLOCK_THREADS 128" in header
    assert '#include "add.h"' in c.read_text()
    build(compiler, inc, ["-c", c], tmp_path / "add.o")
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler here (the C build passed)")
    build(cxx, inc, ["-c", c], tmp_path / "add_cxx.o", lang="c++")


# A stand-in for libcuda: records what the wrapper asks the driver for.
FAKE_CUDA = r"""
#include <cuda.h>
#include <stdio.h>
#include <string.h>

int fake_nparams;         /* set by main: how many parameters, and each one's size */
int fake_sizes[16];
static int dummy_module, dummy_function;

CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  FILE *f = fopen("loaded.ptx", "w");
  fputs((const char *)image, f);
  fclose(f);
  *module = (CUmodule)&dummy_module;
  printf("load\n");
  return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction *fn, CUmodule module, const char *name) {
  if (module != (CUmodule)&dummy_module) return CUDA_ERROR_INVALID_HANDLE;
  printf("function %s\n", name);
  *fn = (CUfunction)&dummy_function;
  return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction fn, CUfunction_attribute attr, int value) {
  (void)fn;
  printf("attribute %d %d\n", (int)attr, value);
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule module) {
  (void)module;
  printf("unload\n");
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                        CUstream stream, void **params, void **extra) {
  int i, j;
  if (f != (CUfunction)&dummy_function) return CUDA_ERROR_INVALID_HANDLE;
  printf("launch grid %u %u %u block %u %u %u shared %u stream %p extra %p\n", gx, gy, gz, bx,
         by, bz, shared, (void *)stream, (void *)extra);
  for (i = 0; i < fake_nparams; i++) {
    printf("param %d", i);
    for (j = 0; j < fake_sizes[i]; j++) printf(" %02x", ((unsigned char *)params[i])[j]);
    printf("\n");
  }
  return CUDA_SUCCESS;
}
"""


def run_fake(tmp_path, compiler, inc, main_c, wrapper_c):
    (tmp_path / "fake_cuda.c").write_text(FAKE_CUDA)
    (tmp_path / "main.c").write_text(main_c)
    exe = tmp_path / "app"
    build(compiler, inc, [tmp_path / "main.c", wrapper_c, tmp_path / "fake_cuda.c"], exe)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, cwd=tmp_path, timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_wrapper_drives_the_driver_api(tmp_path, cc):
    """Against a fake libcuda: the PTX handed to cuModuleLoadData is the PTX file byte for
    byte; the launch has the .reqntid block, the grid, the stream and every argument."""
    compiler, inc = cc
    _, c = write_wrapper(tmp_path, "--num-warps", "8")
    out = run_fake(tmp_path, compiler, inc, r"""
#include <stdio.h>
#include "add.h"
extern int fake_nparams, fake_sizes[16];
int main(void) {
  fake_nparams = 4; fake_sizes[0] = fake_sizes[1] = fake_sizes[2] = 8; fake_sizes[3] = 4;
  if (launch_add_kernel(0, 0, 1, 1, 1, 2, 3, 4) != CUDA_SUCCESS) return 1;  /* empty grid */
  printf("empty done\n");
  if (launch_add_kernel((CUstream)0x50, 7, 2, 1, 0x1122334455667788ull, 0x10, 0x20, -2)) return 2;
  if (launch_add_kernel(0, 1, 1, 1, 1, 2, 3, 1000)) return 3;  /* loaded once */
  unload_add_kernel();
  return 0;
}
""", c)  # fmt: skip
    assert out.splitlines() == [
        "empty done",
        "load",
        "function add_kernel",
        "launch grid 7 2 1 block 256 1 1 shared 0 stream 0x50 extra (nil)",
        "param 0 88 77 66 55 44 33 22 11",
        "param 1 10 00 00 00 00 00 00 00",
        "param 2 20 00 00 00 00 00 00 00",
        "param 3 fe ff ff ff",
        "launch grid 1 1 1 block 256 1 1 shared 0 stream (nil) extra (nil)",
        "param 0 01 00 00 00 00 00 00 00",
        "param 1 02 00 00 00 00 00 00 00",
        "param 2 03 00 00 00 00 00 00 00",
        "param 3 e8 03 00 00",
        "unload",
    ]
    assert (tmp_path / "loaded.ptx").read_text() == (tmp_path / "add.ptx").read_text()


SCALARS_KERNEL = """
import tritium
import tritium.language as tl


@tritium.jit
def scalars_kernel(out, char, stream, params, h, wide, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.where(char, h.to(tl.float32), wide.to(tl.float32))
    tl.store(out + offs, v + stream + params)
"""


def test_scalar_types_and_renamed_parameters(tmp_path, cc):
    """i1 as bool, fp16 as its bits, i64 and fp64 at full width; parameters named like C
    keywords or like the wrapper's own arguments get a trailing underscore."""
    compiler, inc = cc
    src = tmp_path / "scalars.py"
    src.write_text(SCALARS_KERNEL)
    h, c = write_wrapper(tmp_path, source=str(src), sig="*fp32,i1,fp32,fp64,fp16,i64",
                         cx=("BLOCK=64",), name="scalars")  # fmt: skip
    meta = json.loads((tmp_path / "scalars.json").read_text())
    assert [p["type"] for p in meta["params"]] == ["*fp32", "i1", "fp32", "fp64", "fp16", "i64"]
    assert re.search(
        r"CUdeviceptr out,\s+bool char_,\s+float stream_,\s+double params_,\s+uint16_t h,\s+"
        r"int64_t wide\);",
        h.read_text(),
    )
    out = run_fake(tmp_path, compiler, inc, r"""
#include "scalars.h"
extern int fake_nparams, fake_sizes[16];
int main(void) {
  fake_nparams = 6;
  fake_sizes[0] = 8; fake_sizes[1] = 1; fake_sizes[2] = 4; fake_sizes[3] = 8; fake_sizes[4] = 2;
  fake_sizes[5] = 8;
  return launch_scalars_kernel(0, 1, 1, 1, 0x40, true, 1.5f, -2.0, 0x3c00, -3) != CUDA_SUCCESS;
}
""", c)  # fmt: skip
    lines = out.splitlines()
    assert lines[2] == "launch grid 1 1 1 block 128 1 1 shared 0 stream (nil) extra (nil)"
    assert lines[3:] == [
        "param 0 40 00 00 00 00 00 00 00",
        "param 1 01",
        "param 2 00 00 c0 3f",  # 1.5f
        "param 3 00 00 00 00 00 00 00 c0",  # -2.0
        "param 4 00 3c",  # fp16 1.0
        "param 5 fd ff ff ff ff ff ff ff",
    ]


def test_c_header_names_a_base_path(tmp_path):
    meta = {"name": "k", "params": [], "num_warps": 1, "threads_per_warp": 32, "reqntid": 32,
            "shared": 65536, "arch": "sm_80"}  # fmt: skip
    h, c = write_c_wrapper(meta, ".entry k()\n{\n}\n", tmp_path / "sub.h")
    assert (h.name, c.name) == ("sub.h", "sub.c")
    src = c.read_text()
    assert (
        "void **params = NULL;" in src and "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES" in src
    )
    assert "#define K_SHARED_BYTES 65536" in h.read_text()


# ----------------------------------------------------------------------------- on the GPU


def libcuda_path() -> str | None:
    """The driver library to link against: from the linker cache, else the one cuda-python
    loaded into this process."""
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    except OSError:
        out = ""
    for line in out.splitlines():
        if "libcuda.so.1 " in line and "=>" in line:
            return line.split("=>")[-1].strip()
    from tritium.runtime import driver

    driver.init()
    for line in pathlib.Path("/proc/self/maps").read_text().splitlines():
        if re.search(r"/libcuda\.so[.\d]*$", line):
            return line.split()[-1]
    return None


MAIN_GPU = r"""
#include <stdio.h>
#include <stdlib.h>
#include "add.h"

#define CHECK(call)                                                        \
  do {                                                                     \
    CUresult e_ = (call);                                                  \
    if (e_ != CUDA_SUCCESS) {                                              \
      const char *s_ = NULL;                                               \
      cuGetErrorName(e_, &s_);                                             \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_);  \
      return 1;                                                            \
    }                                                                      \
  } while (0)

static int read_floats(const char *path, float *dst, int n) {
  FILE *f = fopen(path, "rb");
  int ok = f != NULL && fread(dst, sizeof(float), (size_t)n, f) == (size_t)n;
  if (f) fclose(f);
  return ok;
}

int main(int argc, char **argv) {
  CUdevice dev;
  CUcontext ctx;
  CUdeviceptr dx, dy, dout;
  int n = argc > 1 ? atoi(argv[1]) : 0;
  size_t bytes = (size_t)n * sizeof(float);
  float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
  FILE *f;
  if (n <= 0 || !read_floats("x.bin", x, n) || !read_floats("y.bin", y, n)) return 2;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  CHECK(load_add_kernel());
  CHECK(cuMemAlloc(&dx, bytes));
  CHECK(cuMemAlloc(&dy, bytes));
  CHECK(cuMemAlloc(&dout, bytes));
  CHECK(cuMemcpyHtoD(dx, x, bytes));
  CHECK(cuMemcpyHtoD(dy, y, bytes));
  CHECK(cuMemsetD32(dout, 0x7fc00000u, (size_t)n)); /* NaN: unwritten elements show */
  CHECK(launch_add_kernel(0, 0, 1, 1, dx, dy, dout, n)); /* an empty grid: nothing */
  CHECK(launch_add_kernel(0, (unsigned)(n + 1023) / 1024, 1, 1, dx, dy, dout, n));
  CHECK(cuCtxSynchronize());
  CHECK(cuMemcpyDtoH(out, dout, bytes));
  f = fopen("out.bin", "wb");
  if (f == NULL || fwrite(out, sizeof(float), (size_t)n, f) != (size_t)n) return 3;
  fclose(f);
  unload_add_kernel();
  printf("ran %d elements on %d blocks of %d threads\n", n, (n + 1023) / 1024,
         ADD_KERNEL_BLOCK_THREADS);
  return 0;
}
"""


def test_gpu_main_compiles(tmp_path, cc):
    """The GPU test's main() compiles here (linking needs libcuda, so it runs there)."""
    compiler, inc = cc
    _, c = write_wrapper(tmp_path)
    (tmp_path / "main.c").write_text(MAIN_GPU)
    for src in (tmp_path / "main.c", c):
        build(compiler, inc, ["-c", src], src.with_suffix(".o"))


@pytest.mark.gpu
def test_c_wrapper_runs_vector_add_on_the_gpu(tmp_path, cc):
    """Build the wrapper with a C main() against libcuda, run it on data, check against numpy."""
    from tritium.compiler import target_arch
    from tritium.runtime.driver import current_arch

    compiler, inc = cc
    lib = libcuda_path()
    if lib is None:
        pytest.skip("libcuda.so.1 not found to link against")
    _, c = write_wrapper(tmp_path, "--arch", target_arch(current_arch()))
    (tmp_path / "main.c").write_text(MAIN_GPU)
    exe = tmp_path / "add_app"
    build(compiler, inc, [tmp_path / "main.c", c], exe, lib, f"-Wl,-rpath,{os.path.dirname(lib)}")
    rng = np.random.default_rng(3)
    n = 100_003  # not a multiple of the block: the mask matters
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    x.tofile(tmp_path / "x.bin")
    y.tofile(tmp_path / "y.bin")
    proc = subprocess.run(
        [str(exe), str(n)], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"ran {n} elements on 98 blocks of 128 threads" in proc.stdout
    out = np.fromfile(tmp_path / "out.bin", dtype=np.float32)
    np.testing.assert_allclose(out, x.astype(np.float64) + y, rtol=2**-24, atol=0)
