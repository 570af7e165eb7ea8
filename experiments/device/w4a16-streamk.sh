#!/usr/bin/env bash
# One device call for the streaming W4A16 kernel's stream-K grid (docs/lab/w4a16.md v9): the new
# build's GPU tests and validation, its m = 1 and m = 8 probe (kernel beside fp16 cuBLASLt) against
# the build before (.w4/base_check), alternating, and compute-sanitizer racecheck and memcheck of
# the GPU tests. Prebuilt binaries in .w4/ (scripts/device/w4a16/build-local.sh in each tree).
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-400}
device_init results/w4a16-streamk
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.mem,power.limit --format=csv > "$OUT/env.txt" 2>&1
step gtest 90 gtest.txt .w4/w4a16_gtest
grep -E "^\[  (PASSED|FAILED)|Failure|OK \] W4a16Mma.Streaming" "$OUT/gtest.txt" | head
step validate 100 validate.txt .w4/w4a16_check validate
grep -E "FAIL|FAILURES" "$OUT/validate.txt" | head -5; echo "ok lines: $(grep -c '^VALIDATE ok' "$OUT/validate.txt")"
for r in 1 2; do
  for m in 1 8; do
    if (( (r + m) % 2 )); then order="base new"; else order="new base"; fi
    for b in $order; do
      bin=.w4/w4a16_check; [ "$b" = base ] && bin=.w4/base_check
      step "$b m=$m r$r" 60 "probe-$b-m$m-r$r.txt" "$bin" probe "$m"
    done
  done
done
grep -hE "SAMPLED FAIL|FAILURES [1-9]" "$OUT"/probe-*.txt
for f in "$OUT"/probe-*.txt; do echo "${f##*/}"; grep CSV "$f" | sed -E 's/,(pattern|linear|ldg|stage2|stage4)_us=[0-9.]+//g; s/_GBps=[0-9]+//g' | cut -d, -f3-9; done
step racecheck 90 racecheck.txt compute-sanitizer --tool racecheck .w4/w4a16_gtest --gtest_filter='W4a16Mma.StreamingKernelRangesAcrossTiles'
grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$OUT/racecheck.txt"
step memcheck 120 memcheck.txt compute-sanitizer --tool memcheck .w4/w4a16_gtest --gtest_filter='W4a16Mma.*'
grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/memcheck.txt"
cd "$OUT" && tar czf all.tgz ./*.txt 2>/dev/null && rm -f ./*.txt; ls
echo "total $(( $(date +%s) - t0 )) s"
