#!/usr/bin/env bash
# A/B timing of one config under several environment settings on one build, ROUNDS times (1
# unless set), one line per point: round, setting, benchmark, point, implementation, TFLOP/s.
# BUILD names an existing build tree (default build-dev); with BUILD_NAME set, the working tree
# is first built into build-BUILD_NAME (genbench and the tests, sm_90a) and the GPU tests of
# TEST_FILTER (if set) run before the timing.
# Usage: [ROUNDS=2] [BUILD_NAME=ab] [TEST_FILTER='Fa3Gpu.*'] experiments/device/ab.sh CONFIG "ENV=1 ..." "ENV=0 ..."
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
device_init results/device-ab
cfg=$1; shift
if [ -n "${BUILD_NAME:-}" ]; then
  build_tree "$BUILD_NAME" . "$(nproc)" genbench genbench_tests || exit 1
  B=build-$BUILD_NAME
fi
if [ -n "${TEST_FILTER:-}" ]; then
  step tests 240 tests.txt "$B/tests/genbench_tests" --gtest_filter="$TEST_FILTER"
  grep -E '^\[  (PASSED|FAILED) |^\[==========\]|Failure' "$OUT/tests.txt" | cut -c1-200 | head -30
fi
for r in $(seq "${ROUNDS:-1}"); do
  mapfile -t order < <(round_order "$r" "$@")  # even rounds reversed (common.sh)
  for e in "${order[@]}"; do
    env $e timeout 200 "$B/bin/genbench" run "$cfg" -o /tmp/ab.h5 --force > /tmp/ab.txt 2>&1 || echo "$e rc=$?"
    summary_points /tmp/ab.txt "$(printf 'r%s %-22s ' "$r" "$e")" "fa3|fa2|cudnn|unfused|cublaslt|torch"
  done
done
echo "end ${SECONDS}s"
