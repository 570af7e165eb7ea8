#!/usr/bin/env bash
# One device call for the attention work: build (90a), the attention GPU tests, genbench on
# the peers' shapes and the table point, and torch SDPA on the same shapes, in one go.
# Logs go to $OUT (or ./attention-device-out). Usage: scripts/peers/attention-device.sh [seconds for tests]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-attention-device-out}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"; git rev-parse HEAD >> "$out/date.txt" 2>/dev/null
# torch peers while the build runs on the CPUs (GPU-timed; repeated after our runs below).
( CUDA_VISIBLE_DEVICES=1 python3 scripts/peers/attention_sdpa.py > "$out/torch-during-build.txt" 2>&1;
  CUDA_VISIBLE_DEVICES=1 python3 scripts/peers/attention_sdpa.py --shape 8,32,1024,1024,128 >> "$out/torch-during-build.txt" 2>&1 ) &
tp=$!
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGENBENCH_CUDA_ARCHITECTURES=90a > "$out/build.log" 2>&1
cmake --build build-dev -j "${GENBENCH_JOBS:-16}" --target genbench genbench_tests >> "$out/build.log" 2>&1
rc=$?
grep -E "warning|error" "$out/build.log" | grep -v "^--" | head -40 > "$out/build-warnings.txt"
if [ $rc -ne 0 ]; then tail -60 "$out/build.log"; wait $tp; cat "$out/torch-during-build.txt"; exit 1; fi
echo "build ok"
timeout "${1:-150}" build-dev/tests/genbench_tests --gtest_filter='Attention*' > "$out/tests.txt" 2>&1
echo "tests rc=$?"; grep -E "^\[  (FAILED|PASSED|  OK|SKIPPED) |Failure|error|Expected|Which is|validation|variant" "$out/tests.txt" | head -60
wait $tp
CUDA_VISIBLE_DEVICES=0 timeout 150 build-dev/bin/genbench run configs/attention-peers.yaml -o "$out/peers.h5" --force > "$out/genbench-peers.txt" 2>&1
echo "genbench peers rc=$?"
CUDA_VISIBLE_DEVICES=0 timeout 60 build-dev/bin/genbench run configs/attention-table.yaml -o "$out/table.h5" --force > "$out/genbench-table.txt" 2>&1
echo "genbench table rc=$?"
CUDA_VISIBLE_DEVICES=0 timeout 90 python3 scripts/peers/attention_sdpa.py > "$out/torch.txt" 2>&1
CUDA_VISIBLE_DEVICES=0 timeout 20 python3 scripts/peers/attention_sdpa.py --shape 8,32,1024,1024,128 >> "$out/torch.txt" 2>&1
sed -n '/^Summary/,$p' "$out/genbench-peers.txt"; sed -n '/^Summary/,$p' "$out/genbench-table.txt"
cat "$out/torch.txt"
