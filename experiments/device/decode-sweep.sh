#!/usr/bin/env bash
# One device call: build genbench, then experiments/configs/decode-70b-sweep.yaml once (fa3
# beside cudnn, Llama-3-70B heads, batch 8 and 64 at caches 8K-128K and one 128K sequence,
# contiguous and paged) and `versus` of fa3 against cudnn. Logs and the file in $OUT.
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-400}
device_init results/decode-sweep
build_tree dev . 16 genbench || exit 1
step sweep 330 sweep.txt build-dev/bin/genbench run experiments/configs/decode-70b-sweep.yaml -o "$OUT/sweep.h5" --force
sed -n '/^Summary/,$p' "$OUT/sweep.txt" | cut -c1-170
[ -f "$OUT/sweep.h5" ] && PYTHONPATH=analysis python3 -m genbench_analysis versus "$OUT/sweep.h5" --impl fa3 --peer cudnn \
  --target 1.0 | tee "$OUT/versus.txt"
echo "== done at $(( $(date +%s) - t0 ))s"
