"""The compiled-kernel cache: keys, round trips, corruption, permissions, racing writers."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat

import pytest

from tritium.runtime import cache
from tritium.runtime.cache import KernelCache

FILES = {
    "add_kernel.ptx": ".version 8.0\n// ptx text\n",
    "add_kernel.cubin": b"\x7fELF\x00\x01binary",
    "meta.json": "{}",
}


def test_key_is_canonical_and_distinguishing():
    k = cache.key(source="abc", constants={"B": 128, "A": 1}, arch="sm_90")
    assert len(k) == 64 and int(k, 16) >= 0
    assert k == cache.key(arch="sm_90", source="abc", constants={"A": 1, "B": 128})  # order-free
    assert k != cache.key(source="abc", constants={"B": 128, "A": 2}, arch="sm_90")
    assert cache.key(x=1) != cache.key(x=1.0) != cache.key(x="1") != cache.key(x=True)
    assert cache.key(x=b"ab") != cache.key(x="ab")
    assert cache.key(x=[1, 2]) == cache.key(x=(1, 2))
    assert cache.key(x=None) != cache.key(y=None)


@pytest.mark.parametrize("bad", [{1, 2}, object(), {1: "int key"}])
def test_key_rejects_ambiguous_parts(bad):
    with pytest.raises(TypeError):
        cache.key(x=bad)


def test_round_trip_memory_and_disk(tmp_path):
    c = KernelCache(tmp_path)
    k = cache.key(name="add")
    assert c.get(k) is None
    c.put(k, FILES)
    assert c.get(k) == FILES
    fresh = KernelCache(tmp_path)  # another process: disk only
    got = fresh.get(k)
    assert (
        got == FILES
        and isinstance(got["add_kernel.ptx"], str)
        and isinstance(got["add_kernel.cubin"], bytes)
    )
    got["meta.json"] = "changed"  # callers get copies
    assert fresh.get(k)["meta.json"] == "{}"


def test_entry_layout_and_manifest(tmp_path):
    c = KernelCache(tmp_path)
    k = cache.key(name="layout")
    c.put(k, FILES)
    entry = tmp_path / k[:2] / k
    assert sorted(p.name for p in entry.iterdir()) == sorted([*FILES, "manifest.json"])
    manifest = json.loads((entry / "manifest.json").read_text())
    assert manifest["key"] == k and set(manifest["files"]) == set(FILES)
    assert manifest["files"]["add_kernel.cubin"]["kind"] == "bytes"
    assert not [
        p for p in (tmp_path / k[:2]).iterdir() if p.name.startswith(".")
    ]  # no temp dirs left


def test_permissions_are_user_only(tmp_path):
    root = tmp_path / "cache"
    c = KernelCache(root)
    k = cache.key(name="perm")
    c.put(k, FILES)
    entry = root / k[:2] / k
    for d in [root, root / k[:2], entry]:
        assert stat.S_IMODE(d.stat().st_mode) & 0o077 == 0, d
    for f in entry.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) & 0o177 == 0, f


@pytest.mark.parametrize(
    "damage",
    [
        lambda e: (e / "add_kernel.ptx").write_text("tampered"),
        lambda e: (e / "add_kernel.cubin").write_bytes(b"\x7fELF\x00\x01binarx"),  # same size
        lambda e: (e / "meta.json").unlink(),
        lambda e: (e / "manifest.json").unlink(),
        lambda e: (e / "manifest.json").write_text("{not json"),
        lambda e: (e / "manifest.json").write_text('{"format": 1, "key": "0", "files": {}}'),
        lambda e: (e / "manifest.json").write_text("[]"),
    ],
)
def test_corrupted_or_partial_entry_is_a_miss_and_removed(tmp_path, damage):
    k = cache.key(name="corrupt")
    KernelCache(tmp_path).put(k, FILES)
    entry = tmp_path / k[:2] / k
    damage(entry)
    c = KernelCache(tmp_path)
    assert c.get(k) is None
    assert not entry.exists()
    c.put(k, FILES)  # and the slot can be filled again
    assert KernelCache(tmp_path).get(k) == FILES


def test_put_replaces_a_corrupted_leftover(tmp_path):
    k = cache.key(name="leftover")
    entry = tmp_path / k[:2] / k
    entry.mkdir(parents=True)
    (entry / "junk").write_text("half-written")
    KernelCache(tmp_path).put(k, FILES)
    assert KernelCache(tmp_path).get(k) == FILES


def test_second_writer_keeps_the_first_entry(tmp_path):
    k = cache.key(name="race")
    KernelCache(tmp_path).put(k, {"a.txt": "first"})
    KernelCache(tmp_path).put(k, {"a.txt": "second"})
    assert KernelCache(tmp_path).get(k) == {"a.txt": "first"}
    assert not [p for p in (tmp_path / k[:2]).iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("name", ["../evil", "a/b", "manifest.json", ".hidden", "", "x" * 200])
def test_bad_file_names_are_refused(tmp_path, name):
    with pytest.raises(ValueError):
        KernelCache(tmp_path).put(cache.key(n=1), {name: "x"})


def test_bad_keys_and_contents_are_refused(tmp_path):
    c = KernelCache(tmp_path)
    for bad in ["abc", "../" + "0" * 61, "G" * 64, 123]:
        with pytest.raises(ValueError):
            c.get(bad)
    with pytest.raises(TypeError):
        c.put(cache.key(n=2), {"f": 3})


def test_cache_dir_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "t"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "t"
    monkeypatch.delenv("TRITIUM_CACHE_DIR")
    assert cache.cache_dir() == tmp_path / "xdg" / "tritium"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "tritium"


def test_module_level_get_put_follow_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "one"))
    k = cache.key(name="module")
    cache.put(k, {"f.txt": "1"})
    assert cache.get(k) == {"f.txt": "1"}
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "two"))
    assert cache.get(k) is None
    assert (tmp_path / "one" / k[:2] / k / "f.txt").exists()


def _racing_writer(root: str, k: str, tag: str, start, rounds: int) -> None:
    c = KernelCache(root)
    start.wait()
    for i in range(rounds):
        files = {"kernel.ptx": f"{tag} {i}\n" * 2000, "kernel.cubin": tag.encode() * 5000}
        c.put(k, files)
        c.clear_memory()
        got = c.get(k)
        assert got is not None and got["kernel.ptx"].split()[0] in ("A", "B")


def test_two_processes_putting_the_same_key(tmp_path):
    ctx = multiprocessing.get_context("spawn" if os.name != "posix" else "fork")
    k = cache.key(name="concurrent")
    start = ctx.Event()
    procs = [
        ctx.Process(target=_racing_writer, args=(str(tmp_path), k, tag, start, 20)) for tag in "AB"
    ]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    got = KernelCache(tmp_path).get(k)
    assert got is not None
    tag = got["kernel.ptx"][0]
    assert tag in "AB" and got["kernel.cubin"] == tag.encode() * 5000  # one writer's whole entry
    leftovers = [p.name for p in (tmp_path / k[:2]).iterdir() if p.name != k]
    assert leftovers == []


# --------------------------------------------------------------------------- compiled kernels


def test_unkeyed_kernels_are_not_stored():
    assert cache.load_kernel(None) is None
    assert cache.store_kernel(None, {"ptx": "x"}, {}) is False


def test_store_and_load_kernel(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    k = cache.key(kernel="_scale_kernel")
    asm = {"ptx": ".version 8.0", "cubin": b"\x7fELF", "ttir": "module {}"}
    meta = {"name": "_scale_kernel", "num_warps": 4, "params": [{"name": "x_ptr", "type": "*fp32"}]}
    assert cache.store_kernel(k, asm, meta)
    cache.default_cache().clear_memory()
    assert cache.load_kernel(k) == {"asm": asm, "metadata": meta}
    assert cache.store_kernel(cache.key(x=1), {"ptx": "x"}, {"bad": {1, 2}}) is False  # not JSON
