#!/usr/bin/env bash
# One device call through `genbench run` after the fp8 decode and dequantise-grid changes:
# build, the GPU tests of decode, attention, W4A16 and grouped GEMM, ROUNDS (3) rounds of
# experiments/configs/decode-fp8.yaml (fa3 bf16 beside fp8 K/V) and of
# experiments/configs/w4a16-large.yaml (m = 1024, with `versus` against cublaslt_dense).
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-450}
device_init results/standing-fp8-w4a16
build_tree dev . 16 genbench genbench_tests || exit 1
B=build-dev
step tests 90 tests.txt "$B/tests/genbench_tests" --gtest_filter='DecodeCudnnGpu.*:DecodeGpu.*:AttentionGpu.*:W4a16*:Grouped*'
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" "$OUT/tests.txt" | head -8
w=()
for r in $(seq "${ROUNDS:-3}"); do
  step "fp8 r$r" 40 "fp8-r$r.txt" "$B/bin/genbench" run experiments/configs/decode-fp8.yaml -o "$OUT/fp8-r$r.h5" --force
  sed -n '/^Summary/,$p' "$OUT/fp8-r$r.txt" | grep -E "us " | sed -E 's/ +/ /g' | cut -c1-150
  step "w4a16 r$r" 40 "w4a16-r$r.txt" "$B/bin/genbench" run experiments/configs/w4a16-large.yaml -o "$OUT/w4a16-r$r.h5" --force
  [ -f "$OUT/w4a16-r$r.h5" ] && w+=("$OUT/w4a16-r$r.h5")
done
(( ${#w[@]} )) && PYTHONPATH=analysis python3 -m genbench_analysis versus "${w[@]}" --impl mma_sm80 --peer cublaslt_dense --target 0.8 | tee "$OUT/w4a16-versus.txt"
cd "$OUT" && tar czf all.tgz ./*.txt ./*.h5 2>/dev/null && rm -f ./*.txt ./*.h5; ls
echo "total $(( $(date +%s) - t0 )) s"
