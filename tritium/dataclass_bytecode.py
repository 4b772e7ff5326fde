"""`dataclass_bytecode()`: the methods `dataclasses` generates, compiled once and kept on
disk, like the .pyc files of ordinary modules.

    with dataclass_bytecode():     # importing the compiler's modules, compiling
        ...                        # (tritium.__getattr__, tritium.language, `tritium compile`,
                                   #  compiler.compile_kernel)

`@dataclass` writes each class's `__init__`, `__repr__`, `__eq__`, `__hash__`,
`__setattr__`... as Python source and compiles it with `exec()` when the class is created.
xDSL makes every attribute and many of its internals dataclasses, and tritium has its own:
loading the compiler compiles ~1300 such functions (~780 distinct texts), ~90 ms of the
0.40 s `tritium compile` of vector add on the 2-core machine (docs/performance.md). Python
caches the bytecode of a module's file, never of the text `dataclasses` generates; this does.

How: inside the block, the `dataclasses` module finds a module-level `exec` before the
builtin one; it compiles a source text through a dict {text: code object}, read on the
first compile from `tritium/__pycache__/dataclass_methods.<tag>.marshal` (beside tritium's
.pyc files, under PYTHONPYCACHEPREFIX when set; the tag names the interpreter's bytecode
version, as in .pyc names) and written back, when it gained entries, as the last open
block closes (a temporary file renamed into place: concurrent processes each write a
whole file). A text is the key, so a code object only ever runs for the very source it was
compiled from; compiled with no inherited `__future__` flags, as `dataclasses`' own `exec`
does (its module has none). Nothing else of `dataclasses` changes. As for .pyc files:
PYTHONDONTWRITEBYTECODE (or -B) writes nothing, an unwritable __pycache__ only loses the
saving, and whoever can write there can change what runs (as with tritium's own .pyc).
TRITIUM_DATACLASS_BYTECODE=0 turns it off.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import sys
import threading
from pathlib import Path

_MAX_ENTRIES = 8192  # a process creating dataclasses without end does not grow the file further

_lock = threading.Lock()  # blocks open and close in several threads (compile_pool's fallback)
_depth = 0
_codes: dict[str, object] | None = None  # loaded on the first compile inside a block
_added = 0


def _path() -> Path:
    """Beside tritium's own .pyc files: `tritium/__pycache__/dataclass_methods.<tag>.marshal`
    (under PYTHONPYCACHEPREFIX when set; `.opt-N` in the name under -O), as Python names
    them (importlib.util.cache_from_source)."""
    from importlib.util import cache_from_source

    pyc = cache_from_source(os.path.join(os.path.dirname(__file__), "dataclass_methods.py"))
    return Path(pyc).with_suffix(".marshal")


def _load() -> dict:
    import marshal

    try:
        with open(_path(), "rb") as f:
            codes = marshal.loads(f.read())  # (marshal.load(f) reads in small pieces: 7x slower)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(codes, dict):
        return {}
    code_type = type(_load.__code__)
    return {k: v for k, v in codes.items() if type(k) is str and type(v) is code_type}


def _save() -> None:
    import marshal
    import tempfile

    if sys.dont_write_bytecode:  # PYTHONDONTWRITEBYTECODE / -B: no .pyc files, nor this
        return
    path = _path()
    # what another process wrote meanwhile stays (`tritium compile` and its back-end worker
    # load different modules, and each writes its own additions)
    for text, code in _load().items():
        if len(_codes) >= _MAX_ENTRIES:
            break
        _codes.setdefault(text, code)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            # readable as the .pyc files beside it are (Python: the source's mode, 0o666 at most)
            os.fchmod(fd, (os.stat(__file__).st_mode | 0o200) & 0o666)
            with os.fdopen(fd, "wb") as f:
                marshal.dump(_codes, f)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except (OSError, ValueError):
        pass  # a read-only or full cache directory: the next process compiles again


def _exec(source, globals=None, locals=None, /, **kwargs):
    """`exec` as `dataclasses` sees it inside a block: a source text compiles through the
    cache; anything else goes to the builtin unchanged."""
    global _codes, _added
    if type(source) is str and not kwargs:
        if globals is None:  # the builtin's defaults: the caller's namespaces
            frame = sys._getframe(1)
            globals = frame.f_globals
            locals = frame.f_locals if locals is None else locals
        if _codes is None:
            _codes = _load()
        code = _codes.get(source)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            if len(_codes) < _MAX_ENTRIES:
                _codes[source] = code
                _added += 1
        source = code
    return builtins.exec(source, globals, locals, **kwargs)


def _enabled() -> bool:
    from tritium import config

    return config.dataclass_bytecode()


def flush() -> None:
    """Write the cache back now if it gained entries: for a process forked inside a block
    (tritium/back_end_worker.py), whose own blocks nest in it and so never close the last."""
    global _added
    with _lock:
        if _added and _codes is not None:
            _save()
            _added = 0


@contextlib.contextmanager
def dataclass_bytecode():
    """Inside the block (nestable, from any thread), `@dataclass` classes get their methods
    from the cache; the last block to close writes the cache back when it gained entries."""
    global _depth, _added
    import dataclasses

    with _lock:
        if _depth == 0 and not _enabled():
            on = False
        else:
            on = True
            _depth += 1
            if _depth == 1:
                dataclasses.exec = _exec
    if not on:
        yield
        return
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                if vars(dataclasses).get("exec") is _exec:
                    del dataclasses.exec
                if _added:
                    _save()
                    _added = 0
