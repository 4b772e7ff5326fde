#!/usr/bin/env bash
# The multi-GPU acceptance run of issue 16 ("launch where the data lives, and run under
# torch.distributed"), for a machine with 2 or more GPUs, torch and NCCL:
#
#   bash scripts/multi_gpu_check.sh              # every GPU torch sees
#   N=2 OUT=/tmp/mgpu bash scripts/multi_gpu_check.sh
#
# 1. tensors on each device in one process: the `gpu` tests of device selection (they skip
#    what needs more GPUs than there are), and the fake-GPU tests for the same logic;
# 2. a DDP training step under torchrun (examples/multi_gpu.py: layer norm and softmax are
#    tritium kernels, gradients all-reduced by NCCL) against the same run on one GPU: the
#    losses must agree to rounding, and every rank's kernels must have run on its own GPU;
#    once more with `--no-set-device` (torch's current device left at 0 on every rank);
# 3. one compiled-kernel cache shared by all ranks: filled by the ranks racing on a fresh
#    directory, every entry valid afterwards with no temporary leftovers, and a second
#    torchrun served from it (no new entries).
# The GPUs used are printed first (nvidia-smi -L): quote them in the note of the run.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1), as the
# device notes require. Exit status 0 only if every check passed.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
unset TRITIUM_INTERPRET TRITIUM_DEVICE

N=${N:-$(python3 -c "import torch; print(torch.cuda.device_count())")}
if [ "$N" -lt 2 ]; then
    echo "multi_gpu_check: needs 2 or more GPUs, torch sees $N" >&2
    exit 2
fi
OUT=${OUT:-$(mktemp -d /tmp/multi-gpu-check.XXXXXX)}
mkdir -p "$OUT"
STEPS=${STEPS:-20}
BATCH=${BATCH:-$((64 * N))}
echo "== GPUs (N=$N), results in $OUT"
nvidia-smi -L | tee "$OUT/gpus.txt"
python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())"

echo "== 1. tensors on each device, in one process"
python3 -m pytest -q -m gpu tests/test_multi_gpu_gpu.py
python3 -m pytest -q tests/runtime/test_multi_gpu.py tests/jit/test_multi_gpu_launch.py

echo "== 2. DDP under torchrun vs one GPU"
TRITIUM_CACHE_DIR="$OUT/cache-single" \
    python3 examples/multi_gpu.py --steps "$STEPS" --batch "$BATCH" --out "$OUT/single.json"
CACHE="$OUT/cache-shared"
rm -rf "$CACHE"
run_ddp() {  # $1: output file, then extra arguments for the example
    local out=$1
    shift
    TRITIUM_CACHE_DIR="$CACHE" torchrun --standalone --nproc-per-node "$N" \
        examples/multi_gpu.py --steps "$STEPS" --batch "$BATCH" --out "$out" "$@"
}
run_ddp "$OUT/ddp.json"
find "$CACHE" -mindepth 2 -maxdepth 2 -type d | sort > "$OUT/entries-1.txt"
run_ddp "$OUT/ddp-again.json"
find "$CACHE" -mindepth 2 -maxdepth 2 -type d | sort > "$OUT/entries-2.txt"
run_ddp "$OUT/ddp-no-set-device.json" --no-set-device

echo "== 3. the results"
python3 - "$OUT" "$N" <<'EOF'
import json
import pathlib
import sys

import numpy as np

from tritium.runtime import cache

out, n = pathlib.Path(sys.argv[1]), int(sys.argv[2])
single = json.loads((out / "single.json").read_text())
failed = []
for name in ("ddp.json", "ddp-again.json", "ddp-no-set-device.json"):
    run = json.loads((out / name).read_text())
    if run["world"] != n:
        failed.append(f"{name}: world size {run['world']}, wanted {n}")
    a, b = np.array(single["losses"]), np.array(run["losses"])
    close = a.shape == b.shape and np.allclose(a, b, rtol=1e-4, atol=1e-6)
    print(f"{name}: losses {b[0]:.6f} -> {b[-1]:.6f} vs one GPU {a[0]:.6f} -> {a[-1]:.6f}: "
          f"max |diff| {np.abs(a - b).max():.2e} {'OK' if close else 'DIFFERENT'}; "
          f"first step {run['first_step_s']:.2f} s")
    if not close:
        failed.append(f"{name}: losses differ from the single-GPU run")

root = out / "cache-shared"
entries = [p for p in root.glob("??/*") if p.is_dir()]
leftovers = [p for p in root.rglob(".*") if p.name.startswith((".tmp-", ".trash-"))]
kc = cache.KernelCache(root)
bad = [p.name for p in entries if kc.get(p.name) is None]
print(f"shared cache: {len(entries)} entries, {len(bad)} invalid, {len(leftovers)} leftovers")
if not entries or bad or leftovers:
    failed.append(f"shared cache: {len(entries)} entries, invalid {bad}, leftovers {leftovers}")
first = (out / "entries-1.txt").read_text().split()
second = (out / "entries-2.txt").read_text().split()
if first != second:
    failed.append(f"the second torchrun added cache entries: {sorted(set(second) - set(first))}")
else:
    print(f"second torchrun: served from the shared cache ({len(first)} entries, none added)")
if failed:
    print("FAILED:\n  " + "\n  ".join(failed))
    sys.exit(1)
print("multi-GPU check: all passed")
EOF
