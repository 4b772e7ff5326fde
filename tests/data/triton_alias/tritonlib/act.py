"""GEGLU forward (tanh-approximated GELU times a gate), autotuned through the library's own
subclass of upstream's Autotuner, with an early config prune."""

import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.runtime.autotuner import Autotuner

from tritonlib.utils import SUPPORTS_AUTOTUNE_CACHE


class RecordingAutotuner(Autotuner):
    """Subclasses upstream's Autotuner with its constructor and overrides `prune_configs`
    and `run`, as libraries that extend the tuner do."""

    def __init__(
        self,
        fn,
        arg_names,
        configs,
        key,
        reset_to_zero,
        restore_value,
        pre_hook=None,
        post_hook=None,
        prune_configs_by=None,
        warmup=None,
        rep=None,
        use_cuda_graph=False,
        do_bench=None,
        cache_results=False,
    ):
        super().__init__(
            fn,
            arg_names,
            configs,
            key,
            reset_to_zero,
            restore_value,
            pre_hook=pre_hook,
            post_hook=post_hook,
            prune_configs_by=prune_configs_by,
            warmup=warmup,
            rep=rep,
            use_cuda_graph=use_cuda_graph,
            do_bench=do_bench,
            cache_results=cache_results,
        )
        self.launches = 0
        self.kept: list[int] = []

    def prune_configs(self, kwargs):
        configs = super().prune_configs(kwargs)
        self.kept = [c.kwargs["BLOCK"] for c in configs]
        return configs

    def run(self, *args, **kwargs):
        self.launches += 1
        return super().run(*args, **kwargs)


def recording_autotune(configs, key, prune_configs_by=None, **kwargs):
    def decorator(fn):
        return RecordingAutotuner(
            fn, fn.arg_names, configs, key, None, None, prune_configs_by=prune_configs_by, **kwargs
        )

    return decorator


def _fits(configs, named_args, **kwargs):
    """Drop blocks larger than the problem (an `early_config_prune`)."""
    n = triton.next_power_of_2(named_args["n"])
    return [c for c in configs if c.kwargs["BLOCK"] <= n]


@recording_autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=8),
        triton.Config({"BLOCK": 128}, num_warps=4),
        triton.Config({"BLOCK": 64}, num_warps=2, num_stages=2),
    ],
    key=["n"],
    prune_configs_by={"early_config_prune": _fits},
    **({"cache_results": True} if SUPPORTS_AUTOTUNE_CACHE else {}),
)
@triton.jit
def _geglu_fwd(A, B, C, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(A + offs, mask=m, other=0.0)
    b = tl.load(B + offs, mask=m, other=0.0)
    inner = 0.7978845608028654 * (a + 0.044715 * a * a * a)
    tl.store(C + offs, 0.5 * a * (1 + libdevice.tanh(inner)) * b, mask=m)


geglu_tuner = _geglu_fwd


def geglu(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    c = np.empty_like(a)
    n = a.size
    _geglu_fwd[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](a, b, c, n)
    return c
