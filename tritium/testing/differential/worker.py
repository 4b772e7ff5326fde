"""The upstream side of the differential driver: runs kernels with upstream Triton.

This file imports nothing from tritium: it runs under another Python (a virtualenv with
`triton` and `torch`; never the one tritium's tests run in), started by the driver:

    TRITON_INTERPRET=1 /path/to/venv/bin/python worker.py --mode interpret   # CPU tensors
    /path/to/venv/bin/python worker.py --mode gpu       # compiled, CUDA tensors

It reads one JSON request per line on stdin and answers one JSON line per request on
stdout (Python's own stdout is redirected to stderr, so nothing else lands there):

    {"id": 7, "source": "import triton\\n...", "name": "fuzz_kernel", "grid": [2],
     "args": [{"npy": "/tmp/d/a0.npy"}, {"npy": "/tmp/d/a1.npy", "view": "bfloat16"},
              {"value": 13}, ...], "kwargs": {"R": 4, "C": 8},
     "outputs": {"2": "/tmp/d/u2.npy"}}
    -> {"id": 7, "ok": true, "seconds": 0.01}
    -> {"id": 7, "ok": false, "error": "CompilationError: ...", "seconds": 0.2}

Arrays travel as .npy files: each becomes a torch tensor (on the GPU in "gpu" mode), the
kernel runs, and the arguments named in "outputs" are saved back as .npy files. A request
{"id": 0, "ping": true} answers with the versions of triton, torch and numpy.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
import traceback


def _error_text(exc: BaseException) -> str:
    """The exception's class and message (first lines), without the traceback."""
    text = f"{type(exc).__name__}: {exc}".strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines[:12])


def _fix_float_args(np) -> None:
    """Upstream 3.6's interpreter passes a float argument on as a Python float, where its
    compiler passes an fp32 scalar: `f % 2.0` is then Python's floored float64 modulo
    (0.75 for f = -1.25, against -1.25 compiled), `f * x_fp16` is fp16 not fp32, and
    `f.to(...)` fails. This makes it an fp32 scalar tensor, as the compiler has it."""
    import triton.language as tl
    from triton.runtime import interpreter

    original = interpreter._implicit_cvt

    def implicit_cvt(arg):
        if isinstance(arg, float):
            handle = interpreter.TensorHandle(np.array([arg], dtype=np.float32), tl.float32)
            return tl.tensor(handle, tl.float32)
        return original(arg)

    interpreter._implicit_cvt = implicit_cvt


class Runner:
    def __init__(self, mode: str, fix_float_args: bool = False):
        import numpy
        import torch
        import triton

        knobs = getattr(getattr(triton, "knobs", None), "runtime", None)
        if knobs is not None and bool(knobs.interpret) != (mode == "interpret"):
            raise RuntimeError(
                f"mode {mode!r} needs TRITON_INTERPRET={'1' if mode == 'interpret' else '0'} "
                "in the worker's environment (upstream.Upstream sets it)"
            )

        self.np, self.torch, self.triton = numpy, torch, triton
        self.fixed = fix_float_args and mode == "interpret"
        if self.fixed:
            _fix_float_args(numpy)
        self.device = "cuda" if mode == "gpu" else "cpu"
        self.dir = tempfile.mkdtemp(prefix="tritium-upstream-")
        self.count = 0

    def versions(self) -> dict:
        return {
            "triton": self.triton.__version__,
            "torch": self.torch.__version__,
            "numpy": self.np.__version__,
            "device": self.device,
            "fixed_float_args": self.fixed,
        }

    def value(self, v):
        """A JSON value as the kernel takes it: {"dtype": "fp16"} is upstream's dtype,
        {"tuple": [...]} a tuple."""
        if isinstance(v, dict) and "dtype" in v:
            return self.triton.language.dtype(v["dtype"])
        if isinstance(v, dict) and "tuple" in v:
            return tuple(self.value(x) for x in v["tuple"])
        if isinstance(v, list):
            return [self.value(x) for x in v]
        return v

    def load(self, source: str, name: str):
        self.count += 1
        path = os.path.join(self.dir, f"kernel_{self.count}.py")
        with open(path, "w") as f:
            f.write(source)
        spec = importlib.util.spec_from_file_location(f"upstream_kernel_{self.count}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return getattr(module, name)

    def run(self, req: dict) -> dict:
        kernel = self.load(req["source"], req["name"])
        args, bits = [], {}
        for i, a in enumerate(req["args"]):
            if "npy" in a:
                t = self.torch.from_numpy(self.np.load(a["npy"]))
                if a.get("view"):  # e.g. bf16 bits in an int16 array
                    bits[i] = t.dtype
                    t = t.view(getattr(self.torch, a["view"]))
                args.append(t.to(self.device) if self.device != "cpu" else t)
            else:
                args.append(self.value(a["value"]))
        kwargs = {k: self.value(v) for k, v in req.get("kwargs", {}).items()}
        kernel[tuple(req["grid"])](*args, **kwargs)
        if self.device != "cpu":
            self.torch.cuda.synchronize()
        for index, path in req.get("outputs", {}).items():
            t = args[int(index)].cpu()
            if int(index) in bits:
                t = t.view(bits[int(index)])
            self.np.save(path, t.numpy())
        return {}


def serve(mode: str, inp, out, fix_float_args: bool = False) -> None:
    runner = Runner(mode, fix_float_args)
    for line in inp:
        if not line.strip():
            continue
        req = json.loads(line)
        t0 = time.perf_counter()
        try:
            reply = {"versions": runner.versions()} if req.get("ping") else runner.run(req)
            reply["ok"] = True
        except Exception as exc:  # the kernel's failure is the answer, not the worker's
            reply = {"ok": False, "error": _error_text(exc)}
            if req.get("traceback"):
                reply["traceback"] = traceback.format_exc()
        reply["id"] = req.get("id")
        reply["seconds"] = time.perf_counter() - t0
        out.write(json.dumps(reply) + "\n")
        out.flush()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("interpret", "gpu"), default="interpret")
    ap.add_argument("--fix-float-args", action="store_true", help=_fix_float_args.__doc__)
    opts = ap.parse_args(argv)
    protocol = sys.stdout
    sys.stdout = sys.stderr  # kernels' prints and library chatter stay off the protocol
    serve(opts.mode, sys.stdin, protocol, opts.fix_float_args)


if __name__ == "__main__":
    main()
