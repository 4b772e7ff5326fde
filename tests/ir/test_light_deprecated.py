"""tritium/ir/light_deprecated.py: inside the block, `typing_extensions.deprecated` wraps a
plain function as typing_extensions does (the same warning, result and attributes) without
importing asyncio; outside it, and for what it hands on, typing_extensions' own."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
import typing_extensions

from tritium.ir.light_deprecated import light_deprecated


def _decorate(deco_factory, **kw):
    def f(x, y=2):
        """doc of f"""
        return x + y

    return f, deco_factory("use g", **kw)(f)


@pytest.mark.parametrize("kw", [{}, {"category": FutureWarning, "stacklevel": 2}])
def test_the_wrapper_is_typing_extensions_one(kw):
    original = typing_extensions.deprecated
    f_ref, ref = _decorate(original, **kw)
    with light_deprecated():
        f_new, new = _decorate(typing_extensions.deprecated, **kw)
    assert typing_extensions.deprecated is original  # restored
    for f, w in ((f_ref, ref), (f_new, new)):
        assert w.__name__ == "f" and w.__doc__ == "doc of f" and w.__wrapped__ is f
        assert w.__deprecated__ == f.__deprecated__ == "use g"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert w(1, y=5) == 6
        assert [(type(c.message), str(c.message)) for c in caught] == [
            (kw.get("category", DeprecationWarning), "use g")
        ]
    assert isinstance(typing_extensions.deprecated("m"), original)


def test_classes_and_coroutines_go_to_typing_extensions():
    with light_deprecated():
        deco = typing_extensions.deprecated

        @deco("old class")
        class C:
            pass

        @deco("old coroutine")
        async def co():
            return 1

    assert C.__deprecated__ == "old class"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        C()
    assert [str(c.message) for c in caught] == ["old class"]
    import asyncio  # (typing_extensions' own code marked it for asyncio)

    assert asyncio.iscoroutinefunction(co) and co.__deprecated__ == "old coroutine"


def test_loading_the_ir_imports_no_asyncio():
    code = ("import sys; import tritium.ir.tt, tritium.ir.ttg, tritium.ir.arith, "
            "tritium.frontend.core; print('asyncio' in sys.modules)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)  # fmt: skip
    assert out.stdout.strip() == "False"
