#!/usr/bin/env bash
# One-call A/B of environment settings on one build: builds genbench and the tests (sm_90a),
# runs the GPU tests of TEST_FILTER (if set), then each config under every setting in turn,
# ROUNDS times, one line per point: round, setting, benchmark, point, implementation, TFLOP/s.
# Usage: ROUNDS=2 TEST_FILTER='Fa3Gpu.*' scripts/device/env-ab.sh "A=0" "A=" CONFIG...
set -uo pipefail
. "$(dirname "$0")/common.sh"
device_init results/device-env-ab
a=$1 b=$2; shift 2
build_tree env . "$(nproc)" genbench genbench_tests || exit 1
if [ -n "${TEST_FILTER:-}" ]; then
  step tests 240 tests.txt build-env/tests/genbench_tests --gtest_filter="$TEST_FILTER"
  grep -E -- '-st' "$OUT/tests.txt" | cut -c1-200 | head -14
  grep -E '^\[  (PASSED|FAILED) |^\[==========\]|Failure' "$OUT/tests.txt" | cut -c1-200 | head -30
fi
for r in $(seq "${ROUNDS:-2}"); do
  for cfg in "$@"; do
    for e in "$a" "$b"; do
      env $e timeout 200 build-env/bin/genbench run "$cfg" -o /tmp/ab.h5 --force > /tmp/ab.txt 2>&1 || echo "$e $cfg rc=$?"
      summary_points /tmp/ab.txt "$(printf 'r%s %-22s ' "$r" "$e")" "fa3|cudnn"
      echo "   ($(grep -c -- '-st' /tmp/ab.txt) lines name a split tail)"
    done
  done
done
echo "end ${SECONDS}s"
