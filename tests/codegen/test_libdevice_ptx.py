"""Every libdevice function tritium implements lowers to PTX that ptxas assembles, for each
of its signatures; the accurate ones use no approximate instruction (`.approx`), only the
`fast_*` functions do (they ask for it)."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from tests.codegen.libdevice_kernels import compile_ptx
from tritium.codegen.tools import assemble
from tritium.frontend.libdevice import LIBDEVICE_ONLY, SIGNATURES
from tritium.frontend.libdevice import _parse as parse_signature


def _groups(libdevice_only: bool = False):
    """(arg dtypes, result dtype) -> the names having that signature (those tritium has a
    routine for; or, `libdevice_only`, those only NVIDIA's libdevice has)."""
    groups = defaultdict(list)
    for name, table in SIGNATURES.items():
        if (name in LIBDEVICE_ONLY) != libdevice_only:
            continue
        for sig in table:
            args, ret = parse_signature(sig)
            groups[(args, ret)].append(name)
    return groups


GROUPS = _groups()
LIBDEVICE_ONLY_GROUPS = _groups(libdevice_only=True)
APPROX = re.compile(r"\.approx")


@pytest.mark.parametrize("key", sorted(GROUPS), ids=lambda k: "_".join(k[0]) + "-" + k[1])
def test_ptx_assembles(key, ptxas):
    args, ret = key
    names = sorted(GROUPS[key])
    accurate = [n for n in names if not n.startswith("fast_")]
    fast = [n for n in names if n.startswith("fast_")]
    for group in (accurate, fast):
        if not group:
            continue
        ptx = compile_ptx(group, args, ret)
        assert "call" not in ptx.split(".entry")[1] or "__assertfail" in ptx  # all inlined
        if group is accurate:
            assert not APPROX.search(ptx), [ln for ln in ptx.splitlines() if ".approx" in ln]
        else:
            assert APPROX.search(ptx)
        assemble(ptx, "sm_90")


def test_a_function_only_libdevice_has_is_a_located_error_on_the_gpu_path():
    """Default mode: the TTIR is upstream's; the backend names the way out (TRITIUM_LIBDEVICE)."""
    from tritium.errors import NotSupportedError

    with pytest.raises(NotSupportedError) as e:
        compile_ptx(["lgamma"], ("fp32",), "fp32")
    msg = str(e.value)
    assert "__nv_lgammaf" in msg and "TRITIUM_LIBDEVICE=auto" in msg and ".py:" in msg
