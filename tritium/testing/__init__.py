"""Testing helpers shipped with tritium.

`check_kernel` and `array` (tritium/testing/check/): property-test your own kernel against
your numpy reference with hypothesis (docs/testing.md). `tritium.testing.fuzz`: the
project's random kernel generator (fuzz*.py); `tritium.testing.differential`: the fuzzer's
kernels through tritium and upstream Triton, compared (differential/). hypothesis is
imported only when one of them runs.
"""

from tritium.testing.check import KernelCheckFailure, array, check_kernel

__all__ = ["KernelCheckFailure", "array", "check_kernel"]
