#!/usr/bin/env bash
# One device call through `genbench run` with the wide W4A16 kernel: build, the GPU tests of
# decode, W4A16 and grouped GEMM, the whole configs/gemm-int4.yaml (with `versus` of mma_sm80
# against cublaslt_dense) and the whole configs/decode.yaml (with `versus` of fa3 against cudnn).
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-580}
device_init results/standing-wide-decode
build_tree dev . 16 genbench genbench_tests || exit 1
B=build-dev
step tests 90 tests.txt "$B/tests/genbench_tests" --gtest_filter='DecodeCudnnGpu.*:DecodeGpu.*:W4a16*:Grouped*'
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" "$OUT/tests.txt" | head -8
step int4 150 int4.txt "$B/bin/genbench" run configs/gemm-int4.yaml -o "$OUT/int4.h5" --force
tail -2 "$OUT/int4.txt"
[ -f "$OUT/int4.h5" ] && PYTHONPATH=analysis python3 -m genbench_analysis versus "$OUT/int4.h5" --impl mma_sm80 \
  --peer cublaslt_dense --target 2.5 > "$OUT/int4-versus.txt" 2>&1; grep -E "m=(1|16|32|64)\b|^ *m " "$OUT/int4-versus.txt" | head -40
step decode 280 decode.txt "$B/bin/genbench" run configs/decode.yaml -o "$OUT/decode.h5" --force
tail -2 "$OUT/decode.txt"
[ -f "$OUT/decode.h5" ] && PYTHONPATH=analysis python3 -m genbench_analysis versus "$OUT/decode.h5" --impl fa3 \
  --peer cudnn --target 1.0 > "$OUT/decode-versus.txt" 2>&1; head -50 "$OUT/decode-versus.txt"
cd "$OUT" && tar czf all.tgz ./*.txt ./*.h5 2>/dev/null && rm -f ./*.txt ./*.h5; ls -la
echo "total $(( $(date +%s) - t0 )) s"
