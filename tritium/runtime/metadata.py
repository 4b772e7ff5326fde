"""A compiled kernel's launch metadata (`KernelMetadata`), and the JSON file that travels
with a saved PTX: what a launcher needs, and where it came from.

    meta = compiled.metadata                     # a KernelMetadata (tritium.compile's result)
    meta.name, meta.params, meta.num_warps, meta.shared, meta.registers, ...
    KernelMetadata.from_dict(json.load(f))       # from the cache's or a saved file's JSON

    tritium compile vector_add.py:add_kernel -s "*fp32:16,*fp32:16,*fp32:16,i32" \\
        -c BLOCK_SIZE=1024 -o add.ptx --meta add.json

    {
      "format": "tritium-kernel", "format_version": 1,
      "name": "add_kernel",
      "params": [{"name": "x_ptr", "type": "*fp32", "writes": false}, ...,
                 {"name": "output_ptr", "type": "*fp32", "writes": true},
                 {"name": "n_elements", "type": "i32"}],
      "num_warps": 4, "threads_per_warp": 32, "reqntid": 128, "shared": 0,
      "arch": "sm_89", "num_stages": 3, "debug": false, "tritium_version": "0.1.0",
      "signature": "*fp32:16,*fp32:16,*fp32:16,i32", "constexprs": {"BLOCK_SIZE": 1024},
      "ptx_sha256": "9f0c..."
    }

`writes` says, per pointer, whether the kernel may write through it (a `tl.store` or an
atomic reached from it: tritium/analysis/pointer_writes.py); a launch refuses a read-only
array for a pointer that may be written, and one whose metadata lacks the key (a file
saved by an older tritium) counts as written.

`reqntid` is the block size the PTX declares (`.reqntid 128`): the kernel must be
launched with exactly that many threads, `num_warps * threads_per_warp`. `shared` is the
dynamic shared memory in bytes to pass at launch. `ptx_sha256` ties the file to its PTX, so that
`tritium.load_ptx` refuses a metadata file that belongs to another compilation.

The runtime's Launcher takes a KernelMetadata (or its dict); the compiler makes one from
what codegen reports; `tritium.load_ptx` reads the file with `read_metadata`. Nothing here
imports the compiler.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, field, fields

from tritium.errors import ArgumentError

FORMAT = "tritium-kernel"
FORMAT_VERSION = 1
REQUIRED = ("name", "params", "num_warps", "threads_per_warp", "reqntid", "shared", "arch")


@dataclass
class KernelMetadata:
    """What launching a compiled kernel needs, and how it was compiled.

    `params` lists the kernel's parameters in order as `{"name", "type"}` dicts (`"*fp32"`,
    `"i32"`), with `"divisibility": 16` on pointers compiled to assume 16-byte alignment and
    `"writes": True / False` on pointers (may the kernel write through it);
    `shared` is the dynamic shared memory in bytes; `registers` / `spill_*` are ptxas's
    report (None without ptxas)."""

    name: str
    params: list[dict] = field(default_factory=list)
    num_warps: int = 4
    threads_per_warp: int = 32
    shared: int = 0
    arch: str | None = None
    num_stages: int | None = None
    debug: bool = False
    tritium_version: str | None = None
    registers: int | None = None
    spill_stores: int = 0
    spill_loads: int = 0

    @classmethod
    def from_dict(cls, d: dict) -> KernelMetadata:
        """From JSON (the cache's, or a saved kernel's file, whose extra keys are ignored)."""
        return cls(**{k: d[k] for k in _FIELDS if k in d})

    @classmethod
    def of(cls, m: KernelMetadata | dict) -> KernelMetadata:
        return m if isinstance(m, cls) else cls.from_dict(m)

    def to_dict(self) -> dict:
        return asdict(self)


_FIELDS = tuple(f.name for f in fields(KernelMetadata))

_REQNTID = re.compile(r"^\s*\.reqntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", re.MULTILINE)


def ptx_reqntid(ptx: str) -> int | None:
    """The block size a PTX kernel declares with `.reqntid x[, y[, z]]` (x*y*z), or None."""
    m = _REQNTID.search(ptx)
    if m is None:
        return None
    n = 1
    for g in m.groups():
        if g is not None:
            n *= int(g)
    return n


def sha256(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def _jsonable(value):
    """Constexpr values as JSON: numbers and bools as is, anything else (a dtype) as its str."""
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    return str(value)


def kernel_metadata(kernel, signature=None, constexprs: dict | None = None) -> dict:
    """The metadata file's contents for a compiled kernel (a `CompiledKernel`, or anything
    with `.asm` and a KernelMetadata `.metadata`) whose PTX is `kernel.asm["ptx"]`.
    `signature` and `constexprs`, when given, record how it was specialised (for a reader;
    launching does not need them)."""
    m = KernelMetadata.of(kernel.metadata).to_dict()
    ptx = kernel.asm.get("ptx")
    if ptx is None:
        raise ArgumentError("kernel metadata describes a PTX kernel; compile at least to PTX")
    block = int(m.get("num_warps", 4)) * int(m.get("threads_per_warp", 32))
    declared = ptx_reqntid(ptx)
    if declared is not None and declared != block:
        raise ArgumentError(
            f"kernel '{m['name']}': the PTX declares .reqntid {declared}, "
            f"but num_warps * threads_per_warp = {block}"
        )
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "name": m["name"],
        "params": [
            {
                "name": p["name"],
                "type": p["type"],
                **({"writes": p["writes"]} if "writes" in p else {}),
            }
            for p in m["params"]
        ],
        "num_warps": int(m.get("num_warps", 4)),
        "threads_per_warp": int(m.get("threads_per_warp", 32)),
        "reqntid": block,
        "shared": int(m.get("shared", 0)),
        "arch": m.get("arch"),
        "num_stages": m.get("num_stages"),
        "debug": bool(m.get("debug", False)),
        "tritium_version": m.get("tritium_version"),
    }
    if signature is not None:
        meta["signature"] = signature if isinstance(signature, str) else ",".join(signature)
    if constexprs:
        meta["constexprs"] = {k: _jsonable(v) for k, v in constexprs.items()}
    meta["ptx_sha256"] = sha256(ptx)
    return meta


def write_metadata(meta: dict, path: str | os.PathLike) -> None:
    with open(path, "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


def read_metadata(path: str | os.PathLike) -> dict:
    """Read and check a metadata file; ArgumentError when it is not one."""
    try:
        with open(path) as f:
            meta = json.load(f)
    except json.JSONDecodeError as e:
        raise ArgumentError(f"{path} is not a tritium kernel metadata file: {e}") from None
    check_metadata(meta, where=str(path))
    return meta


def check_metadata(meta: dict, ptx: str | None = None, where: str = "metadata") -> None:
    """Raise ArgumentError unless `meta` is complete and, when `ptx` is given, describes it."""
    if not isinstance(meta, dict):
        raise ArgumentError(f"{where}: expected a JSON object, got {type(meta).__name__}")
    if meta.get("format", FORMAT) != FORMAT:
        raise ArgumentError(f"{where}: format is {meta.get('format')!r}, not {FORMAT!r}")
    if int(meta.get("format_version", FORMAT_VERSION)) > FORMAT_VERSION:
        raise ArgumentError(
            f"{where}: format_version {meta['format_version']} is newer than this tritium "
            f"reads ({FORMAT_VERSION}); upgrade tritium"
        )
    missing = [k for k in REQUIRED if k not in meta]
    if missing:
        raise ArgumentError(f"{where}: missing {', '.join(missing)}")
    params = meta["params"]
    if not isinstance(params, list) or not all(
        isinstance(p, dict) and isinstance(p.get("name"), str) and isinstance(p.get("type"), str)
        for p in params
    ):
        raise ArgumentError(f"{where}: params must be a list of {{'name', 'type'}} objects")
    block = int(meta["num_warps"]) * int(meta["threads_per_warp"])
    if int(meta["reqntid"]) != block:
        raise ArgumentError(
            f"{where}: reqntid {meta['reqntid']} != num_warps * threads_per_warp = {block}"
        )
    if ptx is None:
        return
    if meta.get("ptx_sha256") and meta["ptx_sha256"] != sha256(ptx):
        raise ArgumentError(
            f"{where} does not belong to this PTX (its ptx_sha256 differs): they come from "
            f"different compilations; write both again with one `tritium compile ... -o K.ptx --meta K.json`"
        )
    declared = ptx_reqntid(ptx)
    if declared is not None and declared != block:
        raise ArgumentError(f"{where}: the PTX declares .reqntid {declared}, metadata {block}")
    if not re.search(rf"\.entry\s+{re.escape(meta['name'])}\s*\(", ptx):
        raise ArgumentError(f"{where}: the PTX has no kernel named '{meta['name']}'")
