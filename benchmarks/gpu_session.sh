#!/usr/bin/env bash
# One device-machine session: install the carried wheels, run every GPU test, the examples
# on the GPU and the benchmarks, logging under $OUT. Usage on the device machine:
#   bash benchmarks/gpu_session.sh [tests|bench|all] [pytest args...]
set -uo pipefail
what=${1:-all}; shift || true
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TRITIUM_CACHE_DIR=/tmp/tritium-cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
if [ "$what" = tests ] || [ "$what" = all ]; then
  timeout 420 python3 -m pytest -m gpu -q -p no:cacheprovider --timeout 120 -rf "$@" 2>&1 | tee "$OUT/gpu-tests.log" | tail -40
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  timeout 200 python3 benchmarks/launch_overhead.py 2>&1 | tee "$OUT/launch_overhead.log" | tail -20
  [ -f benchmarks/bench.py ] && timeout 400 python3 benchmarks/bench.py --out "$OUT" 2>&1 | tee "$OUT/bench.log" | tail -40
fi
