"""Launch a saved kernel from Python with no compiler loaded: `tritium.load_ptx`.

    # once, anywhere (no GPU needed):
    #   tritium compile vector_add.py:add_kernel -s "*fp32:16,*fp32:16,*fp32:16,i32" \\
    #       -c BLOCK_SIZE=1024 -o add.ptx --meta add.json
    import tritium

    add = tritium.load_ptx("add.ptx")             # reads add.json beside it
    add[(tritium.cdiv(n, 1024),)](x, y, out, n)   # numpy arrays, DeviceArrays, torch tensors

This module imports `tritium.runtime.launcher` (numpy, ctypes, cuda-python) and
`tritium.runtime.metadata` (json): not xDSL, llvmlite or any of tritium's compiler packages,
so a deployed program starts fast and needs only the runtime's dependencies.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Sequence
from typing import Any

from tritium.errors import ArgumentError
from tritium.runtime import devices
from tritium.runtime.array_kinds import arguments_device
from tritium.runtime.launcher import Launcher
from tritium.runtime.metadata import KernelMetadata, check_metadata, read_metadata

__all__ = ["SavedKernel", "load_ptx"]


class SavedKernel:
    """A kernel loaded from a saved PTX (or cubin) and its metadata.

    `kernel[grid](*args, stream=None)` launches it, like a `CompiledKernel`;
    `kernel.run(grid, args, stream)` is the same without the closure. A launch runs on the
    device of its array arguments (else the current one): one `Launcher` per device, the
    first in `.launcher`."""

    def __init__(self, image: str | bytes, metadata: dict, path: str = "") -> None:
        self.metadata = metadata  # the file's contents
        self.name: str = metadata["name"]
        self.path = path
        self._asm = {"cubin": image} if isinstance(image, bytes) else {"ptx": image}
        self._meta = KernelMetadata.from_dict(metadata)
        self.launcher = Launcher(self._asm, self._meta)  # its device: the first launch's
        self._launchers: dict[int, Launcher] = {}

    @property
    def params(self) -> list[dict]:
        return self.metadata["params"]

    def run(self, grid: Sequence[int] | int, args: Sequence, stream: Any = None) -> None:
        self._launcher(args)(grid, args, stream)

    def __getitem__(self, grid):
        return lambda *args, stream=None: self._launcher(args)(grid, args, stream)

    def _launcher(self, args: Sequence) -> Launcher:
        """The Launcher of the device these arguments are on (else of the current one)."""
        names = (p["name"] for p in self.params)
        d = arguments_device(self.name, zip(names, args))
        d = devices.current_device() if d is None else d
        launcher = self._launchers.get(d)
        if launcher is None:
            first = self.launcher.device in (None, d)
            launcher = self.launcher if first else Launcher(self._asm, self._meta)
            launcher.device = d
            self._launchers[d] = launcher
        return launcher

    def __repr__(self) -> str:
        sig = ", ".join(f"{p['name']}: {p['type']}" for p in self.params)
        return f"SavedKernel({self.name}({sig}), {self.metadata.get('arch')}, from {self.path!r})"


def load_ptx(path: str | os.PathLike, meta: dict | str | os.PathLike | None = None) -> SavedKernel:
    """Load a kernel saved by `tritium compile -o K.ptx --meta K.json` (or `-o K.cubin`).

    `meta` is the metadata: a dict, or the path of its JSON file; by default the file
    beside `path` with the suffix `.json`. The PTX and the metadata are checked against each
    other (kernel name, `.reqntid`, and the PTX's sha256 when the metadata records it);
    nothing touches the GPU until the first launch."""
    path = pathlib.Path(path)
    if meta is None:
        meta = path.with_suffix(".json")
        if not meta.is_file():
            raise ArgumentError(
                f"no metadata for {path}: expected {meta} (written by `tritium compile "
                f"... -o {path.name} --meta {meta.name}`), or pass meta=..."
            )
    if isinstance(meta, dict):
        metadata = dict(meta)
        where = "metadata"
    else:
        metadata = read_metadata(meta)
        where = str(meta)
    image: str | bytes
    if path.suffix == ".cubin":
        image = path.read_bytes()
        check_metadata(metadata, where=where)
    else:
        image = path.read_text()
        check_metadata(metadata, ptx=image, where=where)
    return SavedKernel(image, metadata, str(path))
