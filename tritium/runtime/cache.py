"""The compiled-kernel cache: in memory, and on disk under $TRITIUM_CACHE_DIR.

    k = cache.key(source=src_hash, signature="*fp32,*fp32,i32", constants={"BLOCK": 1024},
                  arch="sm_90", num_warps=4, tritium=__version__)
    files = cache.get(k)          # {"add_kernel.ptx": "...", "add_kernel.json": "..."} or None
    if files is None:
        files = compile(...)
        cache.put(k, files)

The directory is $TRITIUM_CACHE_DIR, else $XDG_CACHE_HOME/tritium, else ~/.cache/tritium.
An entry is a directory `<dir>/<key[:2]>/<key>/` holding its files and a `manifest.json`:

    {"format": 1, "key": "3f0c...", "files": {"add_kernel.ptx": {"kind": "str",
     "size": 5123, "sha256": "9ab1..."}}}

Writes are atomic: the files and the manifest go into a fresh temporary directory beside
the entry, which is then renamed onto the entry's name. Renaming a directory onto a
non-empty one fails, so when two processes put the same key at once, the first rename wins
and the loser just deletes its temporary copy: the winner's entry stays intact. A reader
sees a whole entry or none. `get` checks every file against the manifest's size and sha256;
a corrupted or partial entry (a crash, a disk error, a hand edit) returns None and is
removed. Files are created user-only (0o600, directories 0o700). Entries hold only str and
bytes, read back as such: nothing is ever pickled or executed. There is no eviction yet.

A writer killed while storing leaves its temporary directory, which no reader looks at;
the next `put` of that key deletes it once it is STALE seconds old. A cache directory
that cannot be read or written (EACCES, ENOSPC, a read-only file system) makes `get` a
miss and `store_kernel` a no-op: kernels still compile and run, uncached.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path

from tritium import config

__all__ = [
    "KernelCache",
    "cache_dir",
    "default_cache",
    "get",
    "key",
    "load_kernel",
    "put",
    "store_kernel",
    "tritium_source_hash",
    "triton_key",
]

FORMAT = 1
_KEY = re.compile(r"[0-9a-f]{64}")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}")
MANIFEST = "manifest.json"
STALE = 600.0  # seconds: a put takes milliseconds, so an older temporary directory's writer died


def cache_dir() -> Path:
    """$TRITIUM_CACHE_DIR, else $XDG_CACHE_HOME/tritium, else ~/.cache/tritium."""
    return config.cache_dir()


def _canonical(value: object) -> object:
    """JSON-able, order-independent form of a key part; TypeError for anything ambiguous."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return {"float": value.hex()}  # exact, and tells 1.0 from 1
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError(f"cache key dicts need str keys, got {list(value)!r}")
        return {k: _canonical(v) for k, v in value.items()}
    raise TypeError(
        f"cannot put a {type(value).__name__} in a cache key (use str, int, float, bytes, lists, dicts)"
    )


def key(**parts: object) -> str:
    """sha256 (hex) over the canonical JSON of `parts` (sorted keys, no whitespace)."""
    text = json.dumps(
        {"format": FORMAT, "parts": _canonical(parts)},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _remove(path: Path) -> None:
    """Delete an entry: rename it aside first so no reader ever sees it half-deleted."""
    trash = path.with_name(f".trash-{path.name}-{os.getpid()}-{threading.get_ident()}")
    try:
        os.rename(path, trash)
    except OSError:
        return  # already gone (another process removed it)
    shutil.rmtree(trash, ignore_errors=True)


class KernelCache:
    """A cache rooted at `directory`: a dict in memory in front of entry directories on disk."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        self._memory: dict[str, dict[str, str | bytes]] = {}
        self._lock = threading.Lock()

    def entry_path(self, k: str) -> Path:
        _check_key(k)
        return self.directory / k[:2] / k

    def get(self, k: str) -> dict[str, str | bytes] | None:
        """The files put under key `k`, or None (absent, partial, or corrupted: then removed)."""
        files = self._memory.get(k)
        if files is None:
            path = self.entry_path(k)
            files = _read_entry(path, k)
            if files is None:
                try:
                    if path.exists():
                        _remove(path)
                except OSError:
                    pass  # an unreadable cache directory (EACCES): a miss, never an error
                return None
            with self._lock:
                self._memory[k] = files
        return dict(files)

    def put(self, k: str, files: dict[str, str | bytes]) -> None:
        """Store `files` under `k` (atomically; if another writer got there first, keep theirs)."""
        files = _check_files(files)
        path = self.entry_path(k)
        with self._lock:
            self._memory[k] = dict(files)
        parent = path.parent
        if not parent.is_dir():
            self.directory.parent.mkdir(parents=True, exist_ok=True)
            self.directory.mkdir(mode=0o700, exist_ok=True)  # user-only, like each shard
            parent.mkdir(mode=0o700, exist_ok=True)
        _sweep(parent, k)
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{k[:16]}-", dir=parent))  # mode 0o700
        try:
            manifest = {"format": FORMAT, "key": k, "files": {}}
            for name, content in files.items():
                data = content.encode() if isinstance(content, str) else content
                _write(tmp / name, data)
                manifest["files"][name] = {
                    "kind": "str" if isinstance(content, str) else "bytes",
                    "size": len(data),
                    "sha256": _sha256(data),
                }
            _write(tmp / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode())
            for _attempt in range(2):
                try:
                    os.rename(tmp, path)  # atomic; fails if `path` is a non-empty directory
                    return
                except OSError:
                    if _read_entry(path, k) is not None:
                        return  # another writer won the race: keep its (equally valid) entry
                    _remove(path)  # a corrupted leftover: replace it
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    def clear_memory(self) -> None:
        with self._lock:
            self._memory.clear()


def _sweep(parent: Path, k: str) -> None:
    """Delete what killed writers of `k` left beside its entry: temporary directories (a
    process killed while storing) and trash (killed while removing), older than STALE
    seconds. No reader ever looks at them; this only reclaims the space."""
    now = time.time()
    try:
        leftovers = [*parent.glob(f".tmp-{k[:16]}-*"), *parent.glob(f".trash-{k}-*")]
    except OSError:
        return
    for leftover in leftovers:
        try:
            if now - leftover.stat().st_mtime > STALE:
                shutil.rmtree(leftover, ignore_errors=True)
        except OSError:
            pass


def _check_key(k: str) -> None:
    if not isinstance(k, str) or not _KEY.fullmatch(k):
        raise ValueError(f"a cache key is 64 lowercase hex digits (from cache.key()), got {k!r}")


def _check_files(files: dict) -> dict[str, str | bytes]:
    out: dict[str, str | bytes] = {}
    for name, content in files.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name) or name == MANIFEST:
            raise ValueError(f"bad cache file name {name!r}: use letters, digits, '_', '.', '-'")
        if isinstance(content, bytearray | memoryview):
            content = bytes(content)
        if not isinstance(content, str | bytes):
            raise TypeError(
                f"cache file {name!r} must be str or bytes, got {type(content).__name__}"
            )
        out[name] = content
    return out


def _write(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _read_entry(path: Path, k: str) -> dict[str, str | bytes] | None:
    """An entry's files if its manifest and every checksum are right; else None."""
    try:
        manifest = json.loads((path / MANIFEST).read_bytes())
        if manifest.get("format") != FORMAT or manifest.get("key") != k:
            return None
        files: dict[str, str | bytes] = {}
        for name, info in manifest["files"].items():
            if not _NAME.fullmatch(name) or name == MANIFEST:
                return None
            data = (path / name).read_bytes()
            if len(data) != info["size"] or _sha256(data) != info["sha256"]:
                return None
            files[name] = data.decode() if info["kind"] == "str" else data
        return files
    except (OSError, ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        return None


# --------------------------------------------------------------------------- compiled kernels
# What tritium.compiler asks for: tritium's own source hash (part of every kernel's key),
# and a compiled kernel's asm + metadata (plain str / bytes / JSON data) as cache files.

_tritium_source_hash: str | None = None


def tritium_source_hash() -> str:
    """sha256 over tritium's own .py files, so a compiler change invalidates old entries."""
    global _tritium_source_hash
    if _tritium_source_hash is None:
        root = Path(__file__).resolve().parents[1]
        h = hashlib.sha256()
        for path in sorted(root.rglob("*.py")):
            h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
        _tritium_source_hash = h.hexdigest()
    return _tritium_source_hash


def triton_key() -> str:
    """The compiler build's key, under upstream's name (`triton.compiler.compiler.triton_key`):
    tritium's version and source hash. Caches outside tritium (torch inductor's) fold it into
    their keys so a tritium change invalidates what they stored."""
    from tritium import __version__

    return f"tritium-{__version__}-{tritium_source_hash()}"


def load_kernel(k: str | None) -> dict | None:
    """{"asm": {...}, "metadata": {...}} stored by `store_kernel`, or None."""
    if k is None:
        return None
    files = get(k)
    if files is None or "metadata.json" not in files:
        return None
    try:
        metadata = json.loads(files["metadata.json"])
    except (TypeError, ValueError):
        return None
    asm = {name[4:]: content for name, content in files.items() if name.startswith("asm.")}
    return {"asm": asm, "metadata": metadata}


def store_kernel(k: str | None, asm: dict, metadata: dict) -> bool:
    """Store a compiled kernel (asm values str or bytes, metadata JSON-able); False if not."""
    if k is None:
        return False
    try:
        files: dict[str, str | bytes] = {f"asm.{name}": content for name, content in asm.items()}
        files["metadata.json"] = json.dumps(metadata, sort_keys=True)
        put(k, files)
    except (TypeError, ValueError, OSError):
        return False  # an unusual asm entry, or an unwritable cache: just don't cache
    return True


_default: KernelCache | None = None


def default_cache() -> KernelCache:
    """The cache at `cache_dir()` (a new one if the environment now names another directory)."""
    global _default
    d = cache_dir()
    if _default is None or _default.directory != d:
        _default = KernelCache(d)
    return _default


def get(k: str) -> dict[str, str | bytes] | None:
    """`default_cache().get(k)`."""
    return default_cache().get(k)


def put(k: str, files: dict[str, str | bytes]) -> None:
    """`default_cache().put(k, files)`."""
    default_cache().put(k, files)
