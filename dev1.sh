export PYTHONUNBUFFERED=1 TRITIUM_CACHE_DIR=/tmp/tc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(timeout 200 python3 -m pytest -q -x tests/test_examples.py -m gpu -k flash > /tmp/ex.txt 2>&1) &
timeout 150 python3 benchmarks/bench_attention.py --dump $OUT/up 2>&1 | tail -20
wait; tail -15 /tmp/ex.txt
timeout 330 python3 benchmarks/bench.py --only attention --quick --out $OUT/bench 2>&1 | tail -20
