"""Testing helpers shipped with tritium: the random kernel generator (`tritium.testing.fuzz`);
upstream's benchmarking and comparison helpers (`do_bench`, `perf_report`, `Benchmark`:
bench.py; `assert_close`: compare.py)."""

from tritium.testing.bench import Benchmark, Mark, do_bench, perf_report  # noqa: F401
from tritium.testing.compare import assert_close  # noqa: F401
