#!/usr/bin/env bash
# One device call through the framework itself (docs/int4-gemm.md, docs/decode.md): build
# genbench and its tests for sm_90a, the GPU tests of decode (both implementations, the shared
# sampled-sequence check), attention, W4A16 and grouped GEMM, then the whole of
# configs/gemm-int4.yaml and configs/gemm-grouped.yaml through `genbench run` (with `versus`
# of each against its peer implementation) and one round of configs/decode-cudnn-smoke.yaml.
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-560}
device_init results/framework-run
build_tree dev . 16 genbench genbench_tests || exit 1
B=build-dev
step tests 90 tests.txt "$B/tests/genbench_tests" --gtest_filter='DecodeCudnnGpu.*:DecodeGpu.*:AttentionGpu.*:W4a16*:Grouped*'
grep -E "^\[  (PASSED|FAILED) |tests ran|^\[  FAILED|SKIPPED" "$OUT/tests.txt" | head -12
step int4 170 int4.txt "$B/bin/genbench" run configs/gemm-int4.yaml -o "$OUT/int4.h5" --force
tail -3 "$OUT/int4.txt"
[ -f "$OUT/int4.h5" ] && PYTHONPATH=analysis python3 -m genbench_analysis versus "$OUT/int4.h5" --impl mma_sm80 \
  --peer cublaslt_dense --target 3.3 > "$OUT/int4-versus.txt" 2>&1; head -60 "$OUT/int4-versus.txt"
step decode 60 decode.txt "$B/bin/genbench" run configs/decode-cudnn-smoke.yaml -o "$OUT/decode.h5" --force
sed -n '/^Summary/,$p' "$OUT/decode.txt" | cut -c1-160 | head -30
step grouped 90 grouped.txt "$B/bin/genbench" run configs/gemm-grouped.yaml -o "$OUT/grouped.h5" --force
tail -3 "$OUT/grouped.txt"
[ -f "$OUT/grouped.h5" ] && PYTHONPATH=analysis python3 -m genbench_analysis versus "$OUT/grouped.h5" \
  --impl cublas_grouped --peer cublaslt_loop --target 1.2 > "$OUT/grouped-versus.txt" 2>&1; head -40 "$OUT/grouped-versus.txt"
cd "$OUT" && tar czf all.tgz ./*.txt ./*.h5 2>/dev/null && rm -f ./*.txt ./*.h5; ls -la
echo "total $(( $(date +%s) - t0 )) s"
