#!/usr/bin/env bash
# One device call for the decode standing (docs/decode.md): build genbench and its tests, the
# GPU tests of decode (both implementations), attention and w4a16, then ROUNDS (3)
# rounds of configs/decode-cudnn-smoke.yaml (fa3 beside cuDNN's paged SDPA), fa3's fp8 K/V
# beside bf16 (experiments/configs/decode-fp8.yaml) and torch SDPA on the same shapes
# (scripts/peers/decode_torch_sdpa.py); `versus` over the rounds last. Logs and files in $OUT.
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-400}
device_init results/decode-peers
step configure 60 configure.txt cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGENBENCH_CUDA_ARCHITECTURES=90a
step build 200 build.txt cmake --build "$B" -j 16 --target genbench genbench_tests
step tests 90 tests.txt "$B/tests/genbench_tests" --gtest_filter='DecodeCudnnGpu.*:DecodeGpu.*:AttentionGpu.*:W4a16*:Grouped*'
grep -E "^\[  (PASSED|FAILED) |tests ran|^\[  FAILED" "$OUT/tests.txt" | head -12
rounds=()
for r in $(seq "${ROUNDS:-3}"); do
  step "round $r" 90 "smoke-r$r.txt" "$B/bin/genbench" run configs/decode-cudnn-smoke.yaml -o "$OUT/smoke-r$r.h5" --force
  [ -f "$OUT/smoke-r$r.h5" ] && rounds+=("$OUT/smoke-r$r.h5")
done
step fp8 60 fp8.txt "$B/bin/genbench" run experiments/configs/decode-fp8.yaml -o "$OUT/fp8.h5" --force
sed -n '/^Summary/,$p' "$OUT/fp8.txt" | cut -c1-160
step torch 60 torch.csv python3 scripts/peers/decode_torch_sdpa.py --rounds 3
grep -E "cudnn,|flash,|auto," "$OUT/torch.csv"
(( ${#rounds[@]} )) && PYTHONPATH=analysis python3 -m genbench_analysis versus "${rounds[@]}" --impl fa3 --peer cudnn --target 1.0
sed -n '/^Summary/,$p' "$OUT/smoke-r1.txt" | cut -c1-160
echo "== done at $(( $(date +%s) - t0 ))s"
