"""Every libdevice function tritium implements lowers to PTX that ptxas assembles, for each
of its signatures; the accurate ones use no approximate instruction (`.approx`), only the
`fast_*` functions do (they ask for it)."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from tests.codegen.libdevice_kernels import compile_ptx
from tritium.codegen.tools import assemble
from tritium.frontend.libdevice import SIGNATURES, UNSUPPORTED
from tritium.frontend.libdevice import _parse as parse_signature


def _groups():
    """(arg dtypes, result dtype) -> the names having that signature."""
    groups = defaultdict(list)
    for name, table in SIGNATURES.items():
        if name in UNSUPPORTED:
            continue
        for sig in table:
            args, ret = parse_signature(sig)
            groups[(args, ret)].append(name)
    return groups


GROUPS = _groups()
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
