#!/usr/bin/env bash
# Run every example (and the GPU acceptance kernels) under compute-sanitizer's memcheck
# and racecheck on the GPU machine; prints one line per run and a summary.
#   bash scripts/sanitize.sh [memcheck racecheck ...]
set -u
tools=${*:-memcheck racecheck}
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
"$CS" --version | head -2 || { echo "compute-sanitizer not found"; exit 2; }
fail=0; runs=0
for tool in $tools; do
  for ex in examples/[a-z]*.py; do
    runs=$((runs + 1))
    log=$(mktemp)
    if "$CS" --tool "$tool" --error-exitcode 9 --print-limit 20 python3 "$ex" >"$log" 2>&1; then
      echo "clean   $tool  $ex   $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$log" | tail -1) | $(grep -h ': OK on the' "$log" | cut -c1-40)"
    else
      fail=$((fail + 1)); echo "FAILED  $tool  $ex"; tail -30 "$log"
    fi
    rm -f "$log"
  done
  runs=$((runs + 1))
  if "$CS" --tool "$tool" --error-exitcode 9 --print-limit 20 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_kernels.py -k "not past_2_31" >/tmp/cs.log 2>&1; then
    echo "clean   $tool  tests/test_gpu_kernels.py   $(grep -h 'ERROR SUMMARY' /tmp/cs.log | tail -1)"
  else
    fail=$((fail + 1)); echo "FAILED  $tool  tests/test_gpu_kernels.py"; tail -30 /tmp/cs.log
  fi
done
echo "compute-sanitizer: $runs runs, $fail with errors"
[ "$fail" = 0 ]
