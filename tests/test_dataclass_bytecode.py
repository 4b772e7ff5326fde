"""tritium/dataclass_bytecode.py: the methods `@dataclass` generates, compiled once and kept
beside tritium's .pyc files (issue 21: ~90 ms of `tritium compile`'s 0.40 s)."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import subprocess
import sys
import threading

import pytest

from tritium import dataclass_bytecode as db

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """The module's state as in a new process, its file under tmp_path (a pycache prefix)."""
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "pyc"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.delenv("TRITIUM_DATACLASS_BYTECODE", raising=False)
    monkeypatch.setattr(db, "_codes", None)
    monkeypatch.setattr(db, "_added", 0)
    assert db._path().is_relative_to(tmp_path)
    return db._path()


def _make(name: str):
    """One dataclass of each feature that makes dataclasses generate source."""

    @dataclasses.dataclass(frozen=True, order=True)
    class Frozen:
        a: int
        b: str = "x"
        c: list = dataclasses.field(default_factory=list, compare=False, hash=False)

    @dataclasses.dataclass(kw_only=True, slots=True)
    class KwSlots:
        n: int
        tag: tuple = ()

    Frozen.__qualname__ = Frozen.__name__ = f"Frozen{name}"
    return Frozen, KwSlots


def _behaviour(Frozen, KwSlots) -> dict:
    f = Frozen(1, "y")
    g = Frozen(1, "y", [3])
    k = KwSlots(n=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.a = 2
    with pytest.raises(TypeError):
        KwSlots(2)  # keyword-only
    return {
        "repr": repr(f).split("(", 1)[1] + repr(k),
        "eq": (f == g, f == Frozen(2), k == KwSlots(n=2), k == KwSlots(n=3)),
        "hash": hash(f) == hash(g),
        "order": (f < Frozen(2), Frozen(1, "a") < f),
        "default": (Frozen(5).b, Frozen(5).c, KwSlots(n=1).tag),
        "annotations": (
            Frozen.__init__.__annotations__,  # 'return': None, not the string 'None'
            KwSlots.__init__.__annotations__,
        ),
    }


def test_classes_from_the_cache_behave_as_dataclasses_own(fresh):
    plain = _behaviour(*_make("Plain"))
    assert "exec" not in vars(dataclasses)
    with db.dataclass_bytecode():
        assert vars(dataclasses)["exec"] is db._exec
        first = _behaviour(*_make("First"))  # compiled now, kept
        compiled = db._added
    assert "exec" not in vars(dataclasses)  # the hook goes with the block
    assert compiled > 5 and fresh.is_file()  # written as the block closed
    # a new process's view: the texts come from the file, nothing is compiled
    db._codes, db._added = None, 0
    with db.dataclass_bytecode():
        again = _behaviour(*_make("Again"))
        assert db._added == 0 and len(db._codes) >= compiled
    assert plain == first == again
    assert plain["annotations"][0]["return"] is None  # this test's `from __future__` stays out


def test_a_fresh_process_loads_the_compiler_without_compiling_a_dataclass_method(tmp_path):
    # process 1 writes the file; process 2 compiles no text, and its kernel is the same
    script = (
        "import json, sys\n"
        "import tritium.dataclass_bytecode as db\n"
        "calls = []\n"
        "db.compile = lambda *a, **k: calls.append(1) or compile(*a, **k)\n"
        "import tritium, tritium.language as tl\n"
        "@tritium.jit\n"
        "def k(x, B: tl.constexpr):\n"
        "    tl.store(x + tl.arange(0, B), tl.load(x + tl.arange(0, B)) * 2.0)\n"
        "ck = tritium.compile(k, signature='*fp32:16', constexprs={'B': 128}, stop='ttgir')\n"
        "print(json.dumps({'compiled': len(calls), 'kept': len(db._codes or ()),"
        " 'ttgir': ck.asm['ttgir']}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",
                                                           "TRITIUM_DATACLASS_BYTECODE")}  # fmt: skip
    env |= {"PYTHONPYCACHEPREFIX": str(tmp_path / "pyc"), "TRITIUM_CACHE_DIR": str(tmp_path / "c"),
            "PYTHONPATH": str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")}  # fmt: skip

    (tmp_path / "k.py").write_text(script)  # (a kernel's source is read from its file)

    def run():
        p = subprocess.run([sys.executable, str(tmp_path / "k.py")], capture_output=True,
                           text=True, env=env, timeout=300)  # fmt: skip
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout.splitlines()[-1])

    first = run()
    files = list((tmp_path / "pyc").rglob("dataclass_methods.*.marshal"))
    assert first["compiled"] > 300 and len(files) == 1, first["compiled"]
    second = run()
    assert second["compiled"] == 0 and second["kept"] >= first["compiled"]
    assert second["ttgir"] == first["ttgir"] and "tt.store" in second["ttgir"]


def test_nothing_is_written_when_off_or_when_python_writes_no_bytecode(fresh, monkeypatch):
    monkeypatch.setenv("TRITIUM_DATACLASS_BYTECODE", "0")
    with db.dataclass_bytecode():
        assert "exec" not in vars(dataclasses)
        _make("Off")
    monkeypatch.delenv("TRITIUM_DATACLASS_BYTECODE")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    with db.dataclass_bytecode():
        _make("NoWrite")
    assert not fresh.exists()


def test_a_damaged_or_unwritable_file_only_loses_the_saving(fresh, monkeypatch):
    fresh.parent.mkdir(parents=True)
    fresh.write_bytes(b"\x00not marshal")
    with db.dataclass_bytecode():
        assert _behaviour(*_make("Damaged")) == _behaviour(*_make("Plain"))
    assert db._load()  # rewritten whole
    monkeypatch.setattr(db, "_codes", None)
    monkeypatch.setattr(db, "_added", 0)
    monkeypatch.setattr(sys, "pycache_prefix", "/proc/no-such-dir")  # cannot be created
    with db.dataclass_bytecode():
        _make("Unwritable")


def test_blocks_nest_and_open_from_several_threads(fresh):
    errors = []
    barrier = threading.Barrier(4)

    def work(i):
        try:
            with db.dataclass_bytecode():
                barrier.wait(timeout=30)
                with db.dataclass_bytecode():
                    _behaviour(*_make(f"T{i}"))
                barrier.wait(timeout=30)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and db._depth == 0 and "exec" not in vars(dataclasses)
    assert fresh.is_file()


def test_exec_keeps_the_builtin_semantics_for_what_it_does_not_cache(fresh):
    ns: dict = {}
    with db.dataclass_bytecode():
        db._exec(compile("y = 6 * 7", "<t>", "exec"), ns)  # a code object: passed through
        db._exec("z = y + 1", ns)
        seen = {"x": 5}
        db._exec("seen['r'] = seen['x'] * 2")  # no namespaces: the caller's, as the builtin's
    assert ns["y"] == 42 and ns["z"] == 43 and seen["r"] == 10


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the CLI's worker forks on Linux")
def test_tritium_compile_and_its_worker_each_keep_their_methods(tmp_path):
    # the command and the back-end worker it forks load different modules; the worker's
    # blocks nest in the command's (forked inside one), so it writes its additions itself
    # (flush), and each write keeps what the other wrote: after one run with the worker, a
    # run in one process (TRITIUM_CLI_WORKER=0), which loads both halves, compiles nothing
    script = (
        "import json, sys\n"
        "import tritium.dataclass_bytecode as db\n"
        "calls = []\n"
        "db.compile = lambda *a, **k: calls.append(1) or compile(*a, **k)\n"
        "from tritium.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "print(json.dumps({'code': code, 'compiled': len(calls)}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",
                                                           "TRITIUM_DATACLASS_BYTECODE")}  # fmt: skip
    env |= {"PYTHONPYCACHEPREFIX": str(tmp_path / "pyc"),
            "PYTHONPATH": str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")}  # fmt: skip
    args = ["compile", f"{ROOT / 'examples' / 'vector_add.py'}:add_kernel", "-s",
            "*fp32:16,*fp32:16,*fp32:16,i32", "-c", "BLOCK_SIZE=1024", "-o", str(tmp_path / "a.ptx")]  # fmt: skip

    def run(worker: str) -> dict:
        p = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True,
                           env={**env, "TRITIUM_CLI_WORKER": worker}, timeout=300)  # fmt: skip
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout.splitlines()[-1])

    assert run("1")["compiled"] > 300
    assert run("0") == {"code": 0, "compiled": 0}
