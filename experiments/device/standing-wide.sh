#!/usr/bin/env bash
# One device call through `genbench run` with the wide W4A16 kernel (on sm_90 its wgmma form):
# build, the GPU tests of W4A16, grouped GEMM and decode, the whole configs/gemm-int4.yaml (with
# `versus` of mma_sm80 against cublaslt_dense), then ROUNDS (3) rounds of
# experiments/configs/w4a16-mid.yaml (m = 32, 64, 128, 256 on the six layer shapes) with `versus`
# over the rounds. MID=CONFIG rounds another config instead (w4a16-small.yaml: m = 1-16);
# INT4_LAST=1 runs the whole gemm-int4.yaml after the rounds instead of before; NO_INT4=1 leaves
# it out.
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-450}
device_init results/standing-wide
build_tree dev . 16 genbench genbench_tests || exit 1
B=build-dev
step tests 90 tests.txt "$B/tests/genbench_tests" --gtest_filter='W4a16*:Grouped*:DecodeGpu.*:DecodeCudnnGpu.*'
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" "$OUT/tests.txt" | head -8
int4() {
  [ -n "${NO_INT4:-}" ] && return
  step int4 150 int4.txt "$B/bin/genbench" run configs/gemm-int4.yaml -o "$OUT/int4.h5" --force
  tail -2 "$OUT/int4.txt"
  [ -f "$OUT/int4.h5" ] && PYTHONPATH=analysis python3 -m genbench_analysis versus "$OUT/int4.h5" --impl mma_sm80 \
    --peer cublaslt_dense --target 2.5 > "$OUT/int4-versus.txt" 2>&1
}
[ -z "${INT4_LAST:-}" ] && int4
w=()
for r in $(seq "${ROUNDS:-3}"); do
  step "mid r$r" 90 "mid-r$r.txt" "$B/bin/genbench" run "${MID:-experiments/configs/w4a16-mid.yaml}" -o "$OUT/mid-r$r.h5" --force
  [ -f "$OUT/mid-r$r.h5" ] && w+=("$OUT/mid-r$r.h5")
done
(( ${#w[@]} )) && PYTHONPATH=analysis python3 -m genbench_analysis versus "${w[@]}" --impl mma_sm80 --peer cublaslt_dense --target 2.5 | tee "$OUT/mid-versus.txt" | head -90
[ -n "${INT4_LAST:-}" ] && int4
cd "$OUT" && tar czf all.tgz ./*.txt ./*.h5 2>/dev/null && rm -f ./*.txt ./*.h5; ls -la
echo "total $(( $(date +%s) - t0 )) s"
