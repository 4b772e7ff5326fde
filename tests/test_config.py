"""tritium/config.py is the one place that reads environment variables; every variable is
in its table and in docs/configuration.md; TRITIUM_INTERPRET is kept current cheaply."""

from __future__ import annotations

import os
import pathlib
import re
import timeit

from tritium import config

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_only_config_reads_the_environment():
    readers = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "tritium").rglob("*.py")
        if p.name != "config.py" and re.search(r"os\.environ|getenv|putenv", p.read_text())
    ]
    assert readers == []


def test_every_variable_is_in_the_table_and_the_docs():
    named = set()
    for p in (ROOT / "tritium").rglob("*.py"):
        named |= set(re.findall(r"\bTRITIUM_[A-Z_]+\b", p.read_text()))
    named.discard("TRITIUM_")  # f"TRITIUM_{name.upper()}" for the tools
    assert named <= set(config.VARIABLES), named - set(config.VARIABLES)
    doc = (ROOT / "docs" / "configuration.md").read_text()
    for name in config.VARIABLES:
        assert f"`{name}`" in doc, name
        assert f"`{name}`" in config.__doc__, name


def test_readers(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_DEBUG", "0")
    assert not config.debug()
    monkeypatch.setenv("TRITIUM_DEBUG", "1")
    assert config.debug()
    monkeypatch.setenv("TRITIUM_DEVICE", "3")
    assert config.device() == 3
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    assert config.cache_dir() == tmp_path
    monkeypatch.delenv("TRITIUM_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert config.cache_dir() == tmp_path / "tritium"
    monkeypatch.setenv("TRITIUM_PTXAS", "/opt/ptxas")
    assert config.tool("ptxas") == "/opt/ptxas"
    monkeypatch.delenv("TRITIUM_DUMP_DIR", raising=False)
    assert config.dump_dir() is None


def test_interpret_follows_every_change_of_os_environ(monkeypatch):
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    assert config.interpret() is False
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    assert config.INTERPRET.on is True  # no read: the audit hook saw os.putenv
    monkeypatch.setenv("TRITIUM_INTERPRET", "0")
    assert config.INTERPRET.on is False
    os.environ["TRITIUM_INTERPRET"] = "yes"
    assert config.interpret() is True
    del os.environ["TRITIUM_INTERPRET"]
    assert config.interpret() is False
    os.environ.update(TRITIUM_INTERPRET="1")
    assert config.interpret() is True
    os.environ.pop("TRITIUM_INTERPRET")
    assert config.interpret() is False
    monkeypatch.setenv("TRITIUM_INTERPRETER", "1")  # another variable
    assert config.interpret() is False


def test_interpret_is_cheap():
    config.interpret()
    n = 20000
    watched = min(timeit.repeat("i.on", globals={"i": config.INTERPRET}, number=n, repeat=5))
    env = min(timeit.repeat("g('TRITIUM_INTERPRET')", globals={"g": os.environ.get},
                            number=n, repeat=5))  # fmt: skip
    assert watched < env / 3, (watched / n, env / n)
