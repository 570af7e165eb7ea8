#!/usr/bin/env bash
# One device call comparing builds of the W4A16 device check at few tokens (docs/lab/w4a16.md
# v9, v10): the tree's GPU tests and validation, the `probe` (the streaming kernel beside fp16
# cuBLASLt and read-only kernels of its bytes) at each m of MS (1 8) from the build before
# (.w4/base_check), the tree's (.w4/w4a16_check) and any .w4/w4a16_check_NAME in VARIANTS, two
# rounds in alternating order; with TORCH=1 torch's int4 kernel at m = 1-16; compute-sanitizer
# racecheck of the tests in RACE_FILTER and memcheck of the kernel's whole suite. Prebuilt
# binaries in .w4/ (scripts/device/w4a16/build-local.sh in each tree). The results folder
# defaults to results/$AB_NAME.
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-400}
device_init "results/${AB_NAME:-w4a16-probe-ab}"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.mem,power.limit --format=csv > "$OUT/env.txt" 2>&1
step gtest 90 gtest.txt .w4/w4a16_gtest
grep -E "^\[  (PASSED|FAILED)|Failure|OK \] W4a16Mma.Streaming" "$OUT/gtest.txt" | head
step validate 100 validate.txt .w4/w4a16_check validate
grep -E "FAIL|FAILURES" "$OUT/validate.txt" | head -5; echo "ok lines: $(grep -c '^VALIDATE ok' "$OUT/validate.txt")"
builds=(base new ${VARIANTS:-})
for r in 1 2; do
  for m in ${MS:-1 8}; do
    for b in $(round_order $((r + m + 1)) "${builds[@]}"); do
      bin=.w4/w4a16_check_$b; [ "$b" = base ] && bin=.w4/base_check; [ "$b" = new ] && bin=.w4/w4a16_check
      step "$b m=$m r$r" 60 "probe-$b-m$m-r$r.txt" "$bin" probe "$m"
    done
  done
done
grep -hE "SAMPLED FAIL|FAILURES [1-9]" "$OUT"/probe-*.txt
for f in "$OUT"/probe-*.txt; do echo "${f##*/}"; grep CSV "$f" | cut -d, -f3-8; done
if [ -n "${TORCH:-}" ]; then
  step torch 40 torch.txt python3 scripts/device/w4a16/torch_peers.py int4-small
  grep -E "m=(1|4)," "$OUT/torch.txt" | head -12
fi
step racecheck 90 racecheck.txt compute-sanitizer --tool racecheck .w4/w4a16_gtest --gtest_filter="${RACE_FILTER:-W4a16Mma.*}"
grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$OUT/racecheck.txt"
step memcheck 120 memcheck.txt compute-sanitizer --tool memcheck .w4/w4a16_gtest --gtest_filter='W4a16Mma.*'
grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/memcheck.txt"
cd "$OUT" && tar czf all.tgz ./*.txt 2>/dev/null && rm -f ./*.txt; ls
echo "total $(( $(date +%s) - t0 )) s"
