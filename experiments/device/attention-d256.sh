#!/usr/bin/env bash
# Third device call: fa2's head_dim-256 tile candidates (GENBENCH_FA2_TILE), each through the fa2
# GPU tests and experiments/configs/attention-d256.yaml, beside torch SDPA on the same shapes. Logs in $OUT.
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
device_init attention-device-out
out=$OUT
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGENBENCH_CUDA_ARCHITECTURES=90a > "$out/build.log" 2>&1
cmake --build build-dev -j "${GENBENCH_JOBS:-16}" --target genbench genbench_tests >> "$out/build.log" 2>&1 || { grep -B2 -A8 "error" "$out/build.log" | head -40; exit 1; }
echo "build ok at ${SECONDS}s"
i=0
for tile in "d256 128x64 w8" "d256 64x32 w4"; do  # "d256 64x64 w4" was measured too, then removed
  i=$((i + 1))
  echo "=== $tile"
  GENBENCH_FA2_TILE="$tile" CUDA_VISIBLE_DEVICES=0 timeout 60 build-dev/tests/genbench_tests \
    --gtest_filter='AttentionGpu.Fa2*:AttentionGpu.Varlen*:AttentionGpu.Graph*' > "$out/tests-$i.txt" 2>&1
  echo "tests rc=$?"; grep -E "^\[ +(FAILED|PASSED) |Failure" "$out/tests-$i.txt" | head -5
  GENBENCH_FA2_TILE="$tile" CUDA_VISIBLE_DEVICES=0 timeout 40 build-dev/bin/genbench run experiments/configs/attention-d256.yaml \
    -o "$out/d256-$i.h5" --force > "$out/genbench-$i.txt" 2>&1
  echo "genbench rc=$?"; grep -E "^\[" "$out/genbench-$i.txt" | cut -c1-160
done
CUDA_VISIBLE_DEVICES=0 timeout 40 python3 scripts/peers/attention_sdpa.py --shape 1,8,16384,16384,256 > "$out/torch.txt" 2>&1
CUDA_VISIBLE_DEVICES=0 timeout 20 python3 scripts/peers/attention_sdpa.py --dtype fp16 --causal 0 --shape 1,8,16384,16384,256 >> "$out/torch.txt" 2>&1
cat "$out/torch.txt"; echo "end at ${SECONDS}s"
