"""`import triton` served by tritium (tritium/triton_alias.py): the alias modules hold
tritium's own objects, upstream names tritium lacks are absent (so probes fall back),
installing twice is harmless, an imported upstream triton is never replaced, a small
library written for upstream (tests/data/triton_alias/tritonlib) runs unchanged in the
interpreter, and `python -m tritium run` serves an unmodified script."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import pathlib
import subprocess
import sys
import types

import numpy as np
import pytest

import tritium
import tritium.language as tritium_tl
import tritium.triton_compile
from tritium import triton_alias
from tritium.errors import TritiumError
from tritium.jit import autotune as tritium_autotune
from tritium.jit import heuristics as tritium_heuristics
from tritium.jit import jit as tritium_jit

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "triton_alias"


def _triton_modules() -> dict:
    return {n: m for n, m in sys.modules.items() if n == "triton" or n.startswith("triton.")}


@pytest.fixture
def alias(monkeypatch):
    """The alias installed for one test; whatever `triton` was imported before comes back."""
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    for var, _, _ in triton_alias.INDUCTOR_SETTINGS:  # (install() sets them: undone after)
        monkeypatch.delenv(var, raising=False)
    saved = _triton_modules()
    for name in saved:
        del sys.modules[name]
    triton_alias.install()
    try:
        yield importlib.import_module("triton")
    finally:
        triton_alias.uninstall()
        sys.modules.update(saved)


def test_triton_is_served_by_tritium(alias):
    import triton
    import triton.language as tl
    from triton.language.extra import libdevice
    from triton.language.extra.cuda import libdevice as cuda_libdevice
    from triton.runtime.autotuner import Autotuner, Config, Heuristics

    assert triton is alias and triton_alias.is_alias(triton)
    assert triton.__version__ == triton_alias.UPSTREAM_VERSION == "3.6.0"
    assert triton.__tritium_version__ == tritium.__version__
    assert importlib.util.find_spec("triton") is triton.__spec__  # probes find it
    assert triton.jit is tritium.jit and triton.autotune is tritium.autotune
    assert triton.Config is Config is tritium.Config and triton.heuristics is tritium.heuristics
    assert Autotuner is tritium_autotune.Autotuner and Heuristics is tritium_heuristics.Heuristics
    assert triton.JITFunction is triton.runtime.jit.JITFunction is tritium_jit.JITFunction
    assert triton.CompilationError is tritium.CompilationError
    assert tl.load is tritium_tl.load and tl.constexpr is tritium_tl.constexpr
    assert tl.float16 is tritium_tl.float16 and tl.math.exp is tritium_tl.math.exp
    assert libdevice.rsqrt is cuda_libdevice.rsqrt is tritium_tl.extra.libdevice.rsqrt
    assert tl.core.load is tl.load and tl.standard.softmax is tritium_tl.softmax
    assert isinstance(tl.core.CONSTEXPR_0, tl.constexpr) and tl.core.CONSTEXPR_0 == 0
    # upstream's cdiv / next_power_of_2 are constexpr functions: plain ints on the host
    assert triton.cdiv(1000, 256) == 4 and type(triton.next_power_of_2(33)) is int
    # torch's probe of the builtins' calling convention (inductor's triton_compat.py)
    assert "_semantic" in inspect.signature(triton.language.core.view).parameters


def test_every_served_name_is_tritiums_own_object(alias):
    """No stand-ins: each attribute of each alias module is an alias module, an object
    tritium defines (a function, class, dtype or constexpr of tritium's), or the very
    object `tritium.language` holds under that name (`tl.tuple` is Python's tuple there),
    or a dict of such objects (`triton.backends.backends`)."""
    checked = 0
    for name in triton_alias.MODULES:
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if attr.startswith("__"):
                continue
            checked += 1
            if isinstance(value, types.ModuleType):
                assert triton_alias.is_alias(value), (name, attr)
                continue
            if value is getattr(tritium_tl, attr, object()):
                continue
            if type(value) is dict:  # upstream's registry `triton.backends.backends`
                assert value and all(type(v).__module__.startswith("tritium") for v in value.values())
                continue
            owner = getattr(value, "__module__", None)
            if not isinstance(owner, str) or not owner.startswith("tritium"):
                owner = type(value).__module__
            assert owner.startswith("tritium"), (name, attr, value)
    assert checked > 300


def test_upstream_names_tritium_lacks_are_left_out(alias):
    import triton

    lacking = triton_alias.missing()
    assert "knobs" in lacking["triton"] and "compile" not in lacking["triton"]
    assert "triton.compiler" not in lacking  # ASTSource, compile: torch inductor's entry
    for name, names in lacking.items():
        module = importlib.import_module(name)
        for attr in names:
            assert not hasattr(module, attr), f"{name}.{attr}"
    assert triton.set_allocator is tritium.set_allocator  # tutorial 08 calls it unconditionally
    # modules tritium does not serve are not found, even inside the served packages
    for name in ("triton.tools", "triton.language.semantic", "triton.compiler.code_generator"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(name)


def test_what_torch_imports_with_triton_present(alias):
    """torch >= 2.11 takes `import triton` succeeding as "triton is installed"; `import
    torch._dynamo` (which `@torch.compiler.disable` triggers) then imports these, and
    inductor's triton_compat the rest: each is tritium's real object."""
    from triton.compiler import CompiledKernel
    from triton.compiler.compiler import CompiledKernel as CK2
    from triton.compiler.compiler import make_backend, triton_key
    from triton.runtime.autotuner import OutOfResources
    from triton.runtime.cache import triton_key as key2
    from triton.runtime.jit import JITFunction, KernelInterface

    from tritium.errors import ArgumentError, LaunchError
    from tritium.errors import OutOfResources as tritium_oor
    from tritium.runtime.cache import tritium_source_hash

    assert CompiledKernel is CK2 is tritium.triton_compile.CompiledKernel
    assert OutOfResources is tritium_oor
    assert issubclass(OutOfResources, LaunchError)
    e = OutOfResources("needs 300000 bytes", 300000, 232448, "shared memory")
    assert (e.required, e.limit, e.name) == (300000, 232448, "shared memory")
    assert JITFunction is tritium_jit.JITFunction and issubclass(JITFunction, KernelInterface)
    assert triton_key is key2 and triton_key() == (
        f"tritium-{tritium.__version__}-{tritium_source_hash()}"
    )
    # inductor's first request: make_backend(target) (triton_hash_with_backend)
    backend = make_backend(("cuda", 90))
    assert backend.hash() == f"{triton_key()}-cuda-90"
    assert backend.parse_options({"num_warps": 8}).num_warps == 8
    with pytest.raises(ArgumentError, match="backend 'cuda'"):
        make_backend(("hip", "gfx942", 64))


def test_the_reported_version_can_be_chosen(monkeypatch):
    """TRITIUM_TRITON_VERSION: the triton.__version__ reported (fla gates its gated chunked
    backward on Hopper on >= 3.7.1: an upstream miscompile tritium does not have)."""
    saved = _triton_modules()
    for name in saved:
        del sys.modules[name]
    monkeypatch.setenv("TRITIUM_TRITON_VERSION", "3.7.1")
    triton_alias.install()
    try:
        import triton

        assert triton.__version__ == "3.7.1"
        assert triton.__tritium_version__ == tritium.__version__
        triton_alias.uninstall()
        monkeypatch.setenv("TRITIUM_TRITON_VERSION", "latest")
        triton_alias.install()
        with pytest.raises(TritiumError, match="TRITIUM_TRITON_VERSION='latest'"):
            importlib.import_module("triton")
    finally:
        triton_alias.uninstall()
        sys.modules.update(saved)


def test_installing_twice_is_harmless(alias):
    import triton.language as tl

    triton_alias.install()
    tritium.install_as_triton()
    import triton

    assert triton is alias and importlib.import_module("triton.language") is tl
    assert sum(isinstance(f, triton_alias._Finder) for f in sys.meta_path) == 1


def test_an_imported_upstream_triton_is_not_replaced(monkeypatch):
    upstream = types.ModuleType("triton")
    upstream.__file__ = "/site-packages/triton/__init__.py"
    monkeypatch.setitem(sys.modules, "triton", upstream)
    with pytest.raises(TritiumError, match=r"already imported \(/site-packages/triton"):
        tritium.install_as_triton()
    assert sys.modules["triton"] is upstream and not triton_alias.installed()
    assert not any(isinstance(f, triton_alias._Finder) for f in sys.meta_path)


def test_triton_interpret_turns_the_interpreter_on(monkeypatch):
    from tritium import config

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv("TRITIUM_INTERPRET", "")  # recorded, so the test restores it
    monkeypatch.delenv("TRITIUM_INTERPRET")
    saved = _triton_modules()
    for name in saved:
        del sys.modules[name]
    try:
        triton_alias.install()
        assert config.interpret()
    finally:
        triton_alias.uninstall()
        sys.modules.update(saved)


def test_autotune_takes_upstreams_signatures():
    upstream_init = (
        "self fn arg_names configs key reset_to_zero restore_value pre_hook post_hook "
        "prune_configs_by warmup rep use_cuda_graph do_bench cache_results"
    ).split()
    assert list(inspect.signature(tritium_autotune.Autotuner.__init__).parameters) == upstream_init
    upstream_autotune = (
        "configs key prune_configs_by reset_to_zero restore_value pre_hook post_hook warmup "
        "rep use_cuda_graph do_bench cache_results"
    ).split()
    assert list(inspect.signature(tritium.autotune).parameters) == upstream_autotune
    assert list(inspect.signature(tritium_heuristics.Heuristics.__init__).parameters)[1:3] == [
        "kernel",
        "arg_names",
    ]
    assert list(inspect.signature(tritium.Config).parameters)[:6] == [
        "kwargs",
        "num_warps",
        "num_stages",
        "num_ctas",
        "maxnreg",
        "pre_hook",
    ]


def test_an_autotuner_subclass_sees_upstreams_hook_attributes():
    """fla's CachedAutotuner reads `user_defined_pre_hook` / `user_defined_post_hook` and
    replaces `pre_hook` / `post_hook` (upstream's attributes) after super().__init__."""

    @tritium.jit
    def k(x_ptr, y_ptr, BLOCK: tritium_tl.constexpr):
        pass

    class Cached(tritium_autotune.Autotuner):
        def __init__(self, fn, arg_names, configs, key, reset_to_zero, restore_value, **kw):
            super().__init__(fn, arg_names, configs, key, reset_to_zero, restore_value, **kw)
            if not self.user_defined_pre_hook and self.reset_to_zero:
                self.pre_hook = lambda nargs, reset_only=False: None

    configs = [tritium.Config({"BLOCK": 16})]
    tuner = Cached(k, k.arg_names, configs, [], ["y_ptr"], None, pre_hook=None)
    assert not tuner.user_defined_pre_hook and not tuner.user_defined_post_hook
    assert tuner.pre_hook is not None and tuner.post_hook is None
    assert tuner.restore_copies == {}
    hook = lambda nargs: None  # noqa: E731
    tuner = Cached(k, k.arg_names, configs, [], ["y_ptr"], None, pre_hook=hook)
    assert tuner.user_defined_pre_hook and tuner.pre_hook is hook


@pytest.fixture
def tritonlib(alias, monkeypatch):
    monkeypatch.syspath_prepend(str(DATA))
    try:
        yield importlib.import_module("tritonlib")
    finally:
        for name in [n for n in sys.modules if n == "tritonlib" or n.startswith("tritonlib.")]:
            del sys.modules[name]


def test_a_triton_library_runs_unchanged_in_the_interpreter(tritonlib):
    rng = np.random.default_rng(1)
    assert tritonlib.TRITON_3_4_OR_LATER and tritonlib.calculate_settings(3000) == (4096, 8)

    x = rng.standard_normal((4, 64)).astype(np.float32)  # EVEN_N: the unmasked branch
    w = rng.standard_normal(64).astype(np.float32)
    ref = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(tritonlib.rms_norm(x, w), ref, rtol=1e-5, atol=1e-5)

    a = rng.standard_normal(100).astype(np.float32)
    b = rng.standard_normal(100).astype(np.float32)
    gelu = 0.5 * a * (1 + np.tanh(0.7978845608028654 * (a + 0.044715 * a**3)))
    np.testing.assert_allclose(tritonlib.geglu(a, b), gelu * b, rtol=1e-5, atol=1e-6)
    tuner = tritonlib.geglu_tuner  # the library's own Autotuner subclass
    assert tuner.launches == 1 and tuner.kept == [128, 64]  # its early_config_prune ran
    assert tuner.best_config.kwargs == {"BLOCK": 128} and tuner.cache_results

    v = np.arange(40, dtype=np.int32)
    np.testing.assert_array_equal(tritonlib.block_sums(v, 16), [120, 376, 284])


def test_a_triton_library_asks_upstreams_driver_for_the_torch_device(tritonlib):
    torch = pytest.importorskip("torch")
    device = tritonlib.torch_device()
    assert isinstance(device, torch.device)
    assert device.type == ("cuda" if torch.cuda.is_available() else "cpu")


def _run(args, **env):
    full = {
        k: v for k, v in os.environ.items() if k not in ("TRITIUM_INTERPRET", "TRITON_INTERPRET")
    }
    full.update(env, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "tritium", "run", *args],
        cwd=DATA,
        env=full,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_tritium_run_serves_import_triton_to_an_unmodified_script():
    r = _run(["tritonlib_demo.py", "a", "--b"], TRITIUM_INTERPRET="1")
    assert r.returncode == 0, r.stderr
    assert "triton 3.6.0 served by tritium" in r.stdout
    assert "args ['a', '--b']" in r.stdout and r.stdout.rstrip().endswith("ok")


def test_tritium_run_a_module_with_upstreams_interpret_switch():
    r = _run(["-m", "tritonlib_demo", "c"], TRITON_INTERPRET="1")
    assert r.returncode == 0, r.stderr
    assert "args ['c']" in r.stdout and r.stdout.rstrip().endswith("ok")


def test_tritium_run_usage_errors(capsys):
    from tritium.cli import main

    assert main(["run"]) == 2
    assert main(["run", str(DATA / "no_such_script.py")]) == 2
    assert "no such script" in capsys.readouterr().err
    assert not triton_alias.installed()


@pytest.mark.parametrize("script", ["run_liger.py", "run_fla.py"])
def test_library_drivers_answer_help_without_the_libraries(script):
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / script), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "usage:" in r.stdout
