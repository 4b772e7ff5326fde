"""NVIDIA's command-line tools, when installed: ptxas (PTX -> cubin), nvdisasm / cuobjdump.

    cubin = ptxas(ptx, "sm_89")          # bytes, or None where ptxas is absent
    print(ptxas_usage(ptx, "sm_89"))     # {"registers": 16, "spill_stores": 0, ...}
    wait = start_assemble(ptx, "sm_90a") # ptxas -v running while the caller works on;
    cubin, usage = wait()                # then its cubin and report (as assemble's)
    print(disassemble(cubin))            # SASS text, or None

They are optional: tritium makes PTX itself and the driver can JIT it; these are for
checking PTX validity in tests (CI has ptxas), register use, and reading SASS.
`TRITIUM_PTXAS` / `TRITIUM_NVDISASM` / `TRITIUM_CUOBJDUMP` name a specific binary.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from tritium import config

CUDA_BIN_DIRS = ("/usr/local/cuda/bin",)


class PtxasError(RuntimeError):
    """ptxas rejected the PTX; the message is ptxas's."""


def find_tool(name: str) -> str | None:
    env = config.tool(name)
    if env:
        return env
    found = shutil.which(name)
    if found:
        return found
    for d in CUDA_BIN_DIRS:
        p = Path(d) / name
        if p.exists():
            return str(p)
    return None


def _run_ptxas(ptx: str, arch: str, extra: list[str]) -> tuple[bytes, str] | None:
    run = _start_ptxas(ptx, arch, extra)
    return None if run is None else run()


def _start_ptxas(ptx: str, arch: str, extra: list[str]):
    """ptxas started on `ptx` (a process of its own, running from now on); None where it is
    not installed. The returned function waits for it: (cubin, its log) or a PtxasError."""
    exe = find_tool("ptxas")
    if exe is None:
        return None
    tmp = tempfile.mkdtemp(prefix="tritium-ptxas-")
    src, out = Path(tmp) / "kernel.ptx", Path(tmp) / "kernel.cubin"
    try:
        src.write_text(ptx)
        proc = subprocess.Popen(
            [exe, f"-arch={arch}", *extra, str(src), "-o", str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    except OSError as e:  # TRITIUM_PTXAS names a missing or non-executable file
        shutil.rmtree(tmp, ignore_errors=True)
        raise PtxasError(
            f"cannot run ptxas ({exe}): {e.strerror or e}; fix or unset TRITIUM_PTXAS "
            "(without ptxas, tritium leaves the PTX to the driver)"
        ) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise

    def finish() -> tuple[bytes, str]:
        try:
            stdout, stderr = proc.communicate()
            if proc.returncode != 0:
                raise PtxasError(_failure(exe, arch, proc.returncode, stderr))
            try:
                return out.read_bytes(), stdout + stderr
            except OSError:
                raise PtxasError(_failure(exe, arch, 0, "it wrote no cubin")) from None
        finally:
            if proc.poll() is None:  # (interrupted while waiting: stop it)
                proc.kill()
                proc.wait()
            shutil.rmtree(tmp, ignore_errors=True)

    return finish


def _failure(exe: str, arch: str, status: int, stderr: str) -> str:
    """ptxas's own message, and what its exit means (a signal: it crashed or was killed)."""
    how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
    text = stderr.strip() or "(no message)"
    return f"ptxas failed for {arch}: {exe} {how}:\n{text}"


def ptxas(ptx: str, arch: str = "sm_89") -> bytes | None:
    """Assemble PTX into a cubin; None when ptxas is not installed."""
    res = _run_ptxas(ptx, arch, [])
    return None if res is None else res[0]


def parse_usage(log: str) -> dict:
    """ptxas -v's resource report: registers, stack frame, spills, shared and local bytes,
    and the log itself (`log`: its notes, such as sm_90a's "(C7517) warpgroup.wait is
    injected", when ptxas had to wait for a wgmma the code kept in flight)."""

    def grab(pattern: str) -> int:
        m = re.search(pattern, log)
        return int(m.group(1)) if m else 0

    return {
        "registers": grab(r"Used (\d+) registers"),
        "stack_frame": grab(r"(\d+) bytes stack frame"),
        "spill_stores": grab(r"(\d+) bytes spill stores"),
        "spill_loads": grab(r"(\d+) bytes spill loads"),
        "shared": grab(r"(\d+) bytes smem"),
        "local": grab(r"(\d+) bytes lmem"),
        "log": log,
    }


def assemble(ptx: str, arch: str = "sm_89") -> tuple[bytes, dict] | None:
    """One ptxas -v run: the cubin and its resource report; None when ptxas is absent."""
    res = _run_ptxas(ptx, arch, ["-v"])
    return None if res is None else (res[0], parse_usage(res[1]))


def start_assemble(ptx: str, arch: str = "sm_89"):
    """`assemble` with ptxas started now and waited for later: the returned function gives
    its result (None when ptxas is absent), so the caller's own work overlaps ptxas's."""
    run = _start_ptxas(ptx, arch, ["-v"])

    def result() -> tuple[bytes, dict] | None:
        if run is None:
            return None
        cubin, log = run()
        return cubin, parse_usage(log)

    return result


def ptxas_usage(ptx: str, arch: str = "sm_89") -> dict | None:
    """ptxas -v's resource report for `ptx`; None when ptxas is not installed."""
    res = assemble(ptx, arch)
    return None if res is None else res[1]


def disassemble(cubin: bytes) -> str | None:
    """SASS of a cubin via nvdisasm (or cuobjdump -sass); None when neither is installed."""
    nvdisasm, cuobjdump = find_tool("nvdisasm"), find_tool("cuobjdump")
    if nvdisasm is None and cuobjdump is None:
        return None
    with tempfile.TemporaryDirectory(prefix="tritium-sass-") as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        cmd = [nvdisasm, "-c", str(path)] if nvdisasm else [cuobjdump, "-sass", str(path)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{Path(cmd[0]).name} failed:\n{proc.stderr.strip()}")
        return proc.stdout
