#!/usr/bin/env bash
# One device call for the attention work: build (90a), the attention GPU tests, genbench on
# the peers' shapes and the table point, and torch SDPA on the same shapes, in one go.
# Logs go to $OUT (or ./attention-device-out). Usage: scripts/device/attention.sh [deadline seconds]
# Stages that would start after the deadline are skipped (and say so).
set -uo pipefail
. "$(dirname "$0")/common.sh"
device_init attention-device-out
out=$OUT
deadline=${1:-300}
left() { echo $((deadline - SECONDS)); }
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
# torch peers on GPU 1 while the build runs on the CPUs (GPU-timed with events).
( CUDA_VISIBLE_DEVICES=1 timeout 150 python3 scripts/peers/attention_sdpa.py --shape 8,32,1024,1024,128 > "$out/torch-gpu1.txt" 2>&1;
  CUDA_VISIBLE_DEVICES=1 timeout 150 python3 scripts/peers/attention_sdpa.py >> "$out/torch-gpu1.txt" 2>&1 ) &
tp=$!
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGENBENCH_CUDA_ARCHITECTURES=90a > "$out/build.log" 2>&1
cmake --build build-dev -j "${GENBENCH_JOBS:-16}" --target genbench genbench_tests >> "$out/build.log" 2>&1
rc=$?
echo "build rc=$rc at ${SECONDS}s"
grep -E "warning|error" "$out/build.log" | head -40
if [ $rc -ne 0 ]; then tail -40 "$out/build.log"; wait $tp; cat "$out/torch-gpu1.txt"; exit 1; fi
t=$(( $(left) - 150 )); [ $t -gt 100 ] && t=100
if [ $t -gt 10 ]; then
  CUDA_VISIBLE_DEVICES=0 timeout $t build-dev/tests/genbench_tests --gtest_filter='Attention*' > "$out/tests.txt" 2>&1
  echo "tests rc=$? at ${SECONDS}s"
  grep -E "^\[ +(FAILED|PASSED|OK|SKIPPED) |Failure|Expected|Which is|validation|variant|sampled rows" "$out/tests.txt" | cut -c1-400 | head -50
else echo "tests skipped (deadline)"; fi
t=$(( $(left) - 60 )); [ $t -gt 90 ] && t=90
if [ $t -gt 10 ]; then
  CUDA_VISIBLE_DEVICES=0 timeout $t build-dev/bin/genbench run configs/attention-peers.yaml -o "$out/peers.h5" --force > "$out/genbench-peers.txt" 2>&1
  echo "genbench peers rc=$? at ${SECONDS}s"
fi
t=$(( $(left) - 20 )); [ $t -gt 40 ] && t=40
if [ $t -gt 10 ]; then
  CUDA_VISIBLE_DEVICES=0 timeout $t build-dev/bin/genbench run configs/attention-table.yaml -o "$out/table.h5" --force > "$out/genbench-table.txt" 2>&1
  echo "genbench table rc=$? at ${SECONDS}s"
fi
wait $tp
t=$(left)
if [ $t -gt 40 ]; then
  CUDA_VISIBLE_DEVICES=0 timeout $((t - 5)) python3 scripts/peers/attention_sdpa.py > "$out/torch-gpu0.txt" 2>&1
fi
sed -n '/^Summary/,$p' "$out/genbench-peers.txt" "$out/genbench-table.txt" 2>/dev/null | cut -c1-200
echo "--- torch on GPU 1 (during build)"; cat "$out/torch-gpu1.txt"
echo "--- torch on GPU 0 (after genbench)"; cat "$out/torch-gpu0.txt" 2>/dev/null
echo "end at ${SECONDS}s"
