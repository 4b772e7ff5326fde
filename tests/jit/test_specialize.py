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
    """What tritium reads of a torch tensor: data_ptr(), dtype, is_cuda, get_device()."""

    def __init__(self, ptr, dtype=TORCH_F32, is_cuda=True, device=0):
        self._ptr, self.dtype, self.is_cuda = ptr, dtype, is_cuda
        self._device = device if is_cuda else -1

    def data_ptr(self):
        return self._ptr

    def get_device(self):
        return self._device


FakeTensor.__module__ = "torch.fake"


class _Buffer:
    def __init__(self, ptr):
        self.ptr = ptr


class _CupyDevice:
    def __init__(self, id):
        self.id = id


class FakeCupy:
    """What tritium reads of a cupy array: data.ptr, dtype and device.id."""

    def __init__(self, ptr, dtype=np.float32, device=0):
        self.data, self.dtype, self.device = _Buffer(ptr), np.dtype(dtype), _CupyDevice(device)


FakeCupy.__module__ = "cupy.fake"


def _current():
    return 0  # the current device (keyed only when no argument carries one)


@tritium.jit(do_not_specialize=["m"])
def many_kinds(p, q, n, m, f, b, none, BLOCK: tl.constexpr, FLAG: tl.constexpr):
    pass


def _on(a, device):
    a.device = device
    return a


def _pointers():
    return [
        fake_device_array(0x10000, (4,), np.float32),
        fake_device_array(0x10004, (4,), np.float32),
        fake_device_array(0x10000, (4,), np.float16),
        _on(fake_device_array(0x10000, (4,), np.float32), 1),
        FakeTensor(0x20000),
        FakeTensor(0x20008),
        FakeTensor(0x20000, TORCH_F16),
        FakeTensor(0x20000, is_cuda=False),
        FakeTensor(0x20000, device=1),
        FakeTensor(0x20000, device=3),
        FakeCupy(0x30000),
        FakeCupy(0x30002, np.int32),
        FakeCupy(0x30000, device=1),
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
        general = launch_key(many_kinds.kinds, vals, opts, True, _current)
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
        key = launch_key(many_kinds.kinds, vals, {}, False, _current)
        if key in specs:
            assert specs[key] == spec, vals
        specs[key] = spec
    assert len(specs) > 20


def test_general_path_kinds_the_fast_path_leaves_out():
    """numpy arrays (staged), CAI objects, np.float64 (a Python float) and constexpr
    values: the general path keys them with the same rules."""
    host = np.zeros(8, np.float32)
    cai = CAI(0x4000)
    vals = [host, cai, 2**40, 3, np.float64(0.5), True, constexpr(None), 16, False]
    kinds, parts = launch_key(many_kinds.kinds, vals, {}, False, _current)
    assert kinds == ("numpy", "cai", "int", "int", "float", "bool", "constexpr",
                     "constexpr", "constexpr")  # fmt: skip
    # numpy carries no device; a CAI pointer CUDA does not know (no GPU here) has None
    assert parts[:5] == (
        np.dtype("float32"), host.ctypes.data % 16 == 0, np.dtype("float32"), None, True,
    )  # fmt: skip
    spec = build_spec(many_kinds, vals)
    assert spec.types["n"].signature == "i64" and spec.types["b"].signature == "i1"
    assert spec.types["f"].signature == "fp32"
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


def test_scalars_as_upstream_types_them():
    """Upstream's rules (its jit.py reference `specialize_impl`): np.float64 is a Python
    float, so fp32 with the key of a float; a bool is i1 (not an int); ints are i32, i64,
    u64 past 2**63, refused past 2**64; other numpy scalars are refused."""
    base = [fake_device_array(0x10000, (4,), np.float32)] * 2 + [5, 7]
    rest = [True, None, 16, False]
    as_float = launch_key(many_kinds.kinds, base + [0.25] + rest, {}, False, _current)
    as_np = launch_key(many_kinds.kinds, base + [np.float64(0.25)] + rest, {}, False, _current)
    assert as_float == as_np
    assert build_spec(many_kinds, base + [np.float64(1e300)] + rest).types["f"].signature == "fp32"
    spec = build_spec(many_kinds, [*base[:2], 2**63 + 16, 2**63 - 1, 0.5, *rest])
    assert spec.types["n"].signature == "u64" and "n" in spec.divisible_by_16
    assert spec.types["m"].signature == "i64"  # do_not_specialize: no divisibility
    assert build_spec(many_kinds, [*base[:2], 1, 1, 0.5, *rest]).constants["n"].value == 1
    with pytest.raises(tritium.ArgumentError, match="does not fit in 64 bits"):
        build_spec(many_kinds, [*base[:2], 2**64, 3, 0.5, *rest])
    for v in (np.float32(1), np.int64(3), np.int32(3), np.bool_(True), np.uint64(3)):
        with pytest.raises(tritium.ArgumentError, match=f"numpy.{type(v).__name__} to a kernel"):
            launch_key(many_kinds.kinds, base + [v] + rest, {}, False, _current)


@tritium.jit
def _scaled_sum(X, Y, s, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for _ in range(0, n):  # acc stays fp32: s is fp32 (np.float64 included), as upstream
        acc += tl.load(X + offs) * s
    tl.store(Y + offs, acc)


@pytest.mark.parametrize("mode", ["1", pytest.param("0", marks=pytest.mark.gpu)])
def test_np_float64_is_fp32_in_a_loop(monkeypatch, mode):
    monkeypatch.setenv("TRITIUM_INTERPRET", mode)
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    _scaled_sum[(1,)](x, y, np.float64(0.1), 3, BLOCK=16)
    s = np.float32(0.1)
    want = np.zeros(16, np.float32)
    for _ in range(3):
        want += x * s
    np.testing.assert_allclose(y, want, rtol=1e-6)
    with pytest.raises(tritium.ArgumentError, match="numpy.int64"):
        _scaled_sum[(1,)](x, y, 0.1, np.int64(3), BLOCK=16)


@tritium.jit
def scalars_only(n, f, BLOCK: tl.constexpr):
    pass


@pytest.mark.parametrize("interpret", ["0", "1"])
def test_keys_agree_on_the_current_device_when_no_argument_carries_one(monkeypatch, interpret):
    """Without array arguments, both keys end with the current device (None interpreted)."""
    from tritium.jit.jit import _no_device
    from tritium.runtime import devices

    monkeypatch.setenv("TRITIUM_INTERPRET", interpret)
    state = _KernelLaunch(scalars_only)
    for device in ("0", "3"):
        monkeypatch.setenv("TRITIUM_DEVICE", device)
        vals = [5, 0.5, 16]
        current = _no_device if interpret == "1" else devices.current_device
        general = launch_key(scalars_only.kinds, vals, {}, True, current)
        fast = _fast_key(state, vals, {})
        assert general == (("int", "float", "constexpr"), fast)
        assert fast[-1] == (None if interpret == "1" else int(device))
