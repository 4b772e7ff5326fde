"""The compile options: one `Options` from the CLI, `tritium.compile` and `kernel[grid](...)`
through the passes to codegen (the base layer: passes and the compiler both take it).

    Options(num_warps=8, num_stages=4, arch="sm_90a")   # sm_90a: wgmma for tl.dot
    Options.of({"num_warps": 8})            # a dict of some fields (the others default)
    Options.from_launch({"num_warps": 8, "stream": s}, arch="sm_90", debug=False)

`LAUNCH_OPTIONS` are the keywords a launch takes besides the kernel's parameters: every
field a user may set, `stream`, and upstream's `enable_fp_fusion` and `maxnreg`, which are
accepted (so upstream launch code runs) and not used: tritium always lets LLVM contract
`a*b+c` (upstream's default) and leaves register allocation to ptxas.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from tritium.errors import ArgumentError

__all__ = ["IGNORED_LAUNCH_OPTIONS", "LAUNCH_OPTIONS", "Options"]

_ARCH = re.compile(r"sm_(\d+)a?")


@dataclass(frozen=True)
class Options:
    """How a kernel is compiled (the part of a launch that is not its arguments)."""

    num_warps: int = 4
    num_stages: int = 3  # the software pipeliner's ring of shared-memory buffers
    num_ctas: int = 1
    threads_per_warp: int = 32
    debug: bool = False  # device asserts, overflow checks
    arch: str = "sm_89"

    def __post_init__(self):
        if not isinstance(self.arch, str) or not _ARCH.fullmatch(self.arch):
            raise ArgumentError(f"unknown arch {self.arch!r} (expected e.g. 'sm_89')")
        nw = self.num_warps
        if not isinstance(nw, int) or nw < 1 or nw > 32 or nw & (nw - 1):
            raise ArgumentError(f"num_warps must be a power of two between 1 and 32, got {nw!r}")
        ns = self.num_stages
        if not isinstance(ns, int) or ns < 0:
            raise ArgumentError(f"num_stages must be an int >= 0, got {ns!r}")
        if self.num_ctas != 1:
            raise ArgumentError(
                f"num_ctas={self.num_ctas!r}: tritium compiles one CTA per program (num_ctas=1)"
            )

    @property
    def target(self) -> str:
        """`sm_89` -> `cuda:89` (the value of the `ttg.target` module attribute)."""
        return "cuda:" + _ARCH.fullmatch(self.arch).group(1)  # type: ignore[union-attr]

    @property
    def mma_v3(self) -> bool:
        """Whether dots may use Hopper's warpgroup MMA (wgmma): the target is sm_90a."""
        return self.arch == "sm_90a"

    @classmethod
    def of(cls, options: Options | dict | None) -> Options:
        """`options` itself, or the Options of a dict of fields (None: the defaults)."""
        if isinstance(options, cls):
            return options
        values = {k: v for k, v in (options or {}).items() if v is not None}
        unknown = set(values) - _FIELDS
        if unknown:
            raise ArgumentError(f"unknown option(s): {', '.join(sorted(unknown))}")
        return cls(**values)

    @classmethod
    def from_launch(cls, opts: dict, arch: str, debug: bool) -> Options:
        """The Options of a launch's keywords (see LAUNCH_OPTIONS); `arch` and `debug` where
        the launch does not give them."""
        values = {k: v for k, v in opts.items() if k in _FIELDS and v is not None}
        values.setdefault("arch", arch)
        values["debug"] = bool(values.get("debug", debug))
        return cls.of(values)


_FIELDS = frozenset(f.name for f in fields(Options))
IGNORED_LAUNCH_OPTIONS = frozenset({"enable_fp_fusion", "maxnreg"})
LAUNCH_OPTIONS = (_FIELDS - {"threads_per_warp"}) | {"stream"} | IGNORED_LAUNCH_OPTIONS
