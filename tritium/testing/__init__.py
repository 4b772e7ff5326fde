"""Testing helpers shipped with tritium.

`check_kernel` and `array` (tritium/testing/check/): property-test your own kernel against
your numpy reference with hypothesis (docs/testing.md). `tritium.testing.fuzz`: the
project's random kernel generator (fuzz*.py); `tritium.testing.differential`: the fuzzer's
kernels (and, through `differential.replay`, every kernel launch of the examples or a
test session) through tritium and upstream Triton, compared (differential/). hypothesis is
imported only when one of them runs. Upstream's benchmarking and comparison helpers,
under its names: `do_bench`, `perf_report`, `Benchmark` (bench.py), `assert_close`
(compare.py).
"""

from tritium.testing.bench import Benchmark, Mark, do_bench, perf_report
from tritium.testing.check import KernelCheckFailure, array, check_kernel
from tritium.testing.compare import assert_close

__all__ = [
    "Benchmark",
    "KernelCheckFailure",
    "Mark",
    "array",
    "assert_close",
    "check_kernel",
    "do_bench",
    "perf_report",
]
