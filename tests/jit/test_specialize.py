"""The specialisation key (tritium/jit/specialize.py) is written once: the general path's
`launch_key` and the key the generated launch function (launch.py) computes inline agree for
every argument kind the fast path serves, and arguments with one key compile to one
KernelSpec."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tests.runtime.launcher_helpers import CAI, fake_device_array
from tritium.frontend.core import constexpr
from tritium.jit.launch import _KernelLaunch
from tritium.jit.specialize import RULES, build_spec, launch_key
from tritium.runtime.array_kinds import kind_of


class _TorchDtype:
    """Stands for a torch dtype (an interned object whose str is "torch.float32")."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


_TorchDtype.__module__ = "torch"
_TorchDtype.__name__ = "dtype"
TORCH_F32, TORCH_F16 = _TorchDtype("float32"), _TorchDtype("float16")


class FakeTensor:
    """What tritium reads of a torch tensor: data_ptr(), dtype, is_cuda."""

    def __init__(self, ptr, dtype=TORCH_F32, is_cuda=True):
        self._ptr, self.dtype, self.is_cuda = ptr, dtype, is_cuda

    def data_ptr(self):
        return self._ptr


FakeTensor.__module__ = "torch.fake"


class _Buffer:
    def __init__(self, ptr):
        self.ptr = ptr


class FakeCupy:
    """What tritium reads of a cupy array: data.ptr and dtype."""

    def __init__(self, ptr, dtype=np.float32):
        self.data, self.dtype = _Buffer(ptr), np.dtype(dtype)


FakeCupy.__module__ = "cupy.fake"


@tritium.jit(do_not_specialize=["m"])
def many_kinds(p, q, n, m, f, b, none, BLOCK: tl.constexpr, FLAG: tl.constexpr):
    pass


def _pointers():
    return [
        fake_device_array(0x10000, (4,), np.float32),
        fake_device_array(0x10004, (4,), np.float32),
        fake_device_array(0x10000, (4,), np.float16),
        FakeTensor(0x20000),
        FakeTensor(0x20008),
        FakeTensor(0x20000, TORCH_F16),
        FakeTensor(0x20000, is_cuda=False),
        FakeCupy(0x30000),
        FakeCupy(0x30002, np.int32),
    ]


INTS = [1, 0, 16, 17, -16, 2**31 - 16, 2**31, 2**40 + 16, -(2**31), -(2**31) - 1, 2**63, 2**63 + 16]


def _calls():
    """Argument lists over every kind the fast path reads, several values of each."""
    rng = np.random.default_rng(0)
    pointers = _pointers()
    for i in range(60):
        p = pointers[i % len(pointers)]
        q = pointers[int(rng.integers(len(pointers)))]
        n = INTS[i % len(INTS)]
        m = INTS[int(rng.integers(len(INTS)))]
        f = [0.5, 1.0, -3.0][i % 3]
        b = [True, False][i % 2]
        block = [16, 32, 64][i % 3]
        flag = [True, False, None, 3][i % 4]
        opts = [{}, {"num_warps": 8}, {"num_stages": 2}, {"num_warps": 2, "num_stages": 4}][i % 4]
        yield [p, q, n, m, f, b, None, block, flag], opts


def _fast_key(state, vals, opts):
    """The key the generated function computes for `vals` (captured at its dict miss)."""
    kinds = state._kinds(vals)
    assert kinds is not None, vals
    fn = state._generate(kinds, {}, None)
    seen = []
    state.miss = lambda entries, cands, key, *rest: seen.append(key)
    fn((1,), *vals, **opts)
    (key,) = seen
    return key


@pytest.mark.parametrize("interpret", ["0", "1", None])
def test_general_and_fast_keys_agree(monkeypatch, interpret):
    if interpret is None:
        monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    else:
        monkeypatch.setenv("TRITIUM_INTERPRET", interpret)
    state = _KernelLaunch(many_kinds)
    for vals, opts in _calls():
        general = launch_key(many_kinds.kinds, vals, opts, True)
        fast = _fast_key(state, vals, opts)
        kinds = tuple(RULES[k, s].kind for (k, _), s in zip(state._kinds(vals), many_kinds.kinds))
        assert general == (kinds, fast), vals


def test_the_fast_key_is_at_least_as_fine_as_the_spec():
    """Argument lists with one key compile to one KernelSpec (and different specs never
    share a key)."""
    specs: dict = {}
    for vals, _opts in _calls():
        try:
            spec = build_spec(many_kinds, vals)
        except tritium.ArgumentError:
            continue  # a value out of range: no kernel
        key = launch_key(many_kinds.kinds, vals, {}, False)
        if key in specs:
            assert specs[key] == spec, vals
        specs[key] = spec
    assert len(specs) > 20


def test_general_path_kinds_the_fast_path_leaves_out():
    """numpy arrays (staged), CAI objects, numpy scalars and constexpr values: the general
    path keys them with the same rules."""
    host = np.zeros(8, np.float32)
    cai = CAI(0x4000)
    vals = [host, cai, np.int64(5), 3, 0.5, np.bool_(True), constexpr(None), 16, False]
    kinds, parts = launch_key(many_kinds.kinds, vals, {}, False)
    assert kinds == ("numpy", "cai", "np_scalar", "int", "float", "np_scalar", "constexpr",
                     "constexpr", "constexpr")  # fmt: skip
    assert parts[:4] == (np.dtype("float32"), host.ctypes.data % 16 == 0, np.dtype("float32"), True)
    spec = build_spec(many_kinds, vals)
    assert spec.types["n"].signature == "i64" and spec.types["b"].signature == "i1"
    assert spec.types["q"].signature == "*fp32" and "q" in spec.divisible_by_16
    assert spec.constants["none"].value is None
    assert kind_of(cai).name == "cai" and kind_of(host).name == "numpy"


def test_each_rule_names_its_parts():
    for (kind, declared), rule in RULES.items():
        assert len(rule.parts) == len(rule.names), kind
        if any("{p}" in part for part in rule.parts):
            assert rule.pointer is not None, kind  # {p} is read once, before the key
        if declared == 2:  # do_not_specialize: neither alignment nor divisibility keyed
            assert not {"aligned", "div16", "is_one"} & set(rule.names), kind
