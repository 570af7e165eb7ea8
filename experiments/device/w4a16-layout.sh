#!/usr/bin/env bash
# One device call for the block order of the tiled codes (docs/lab/w4a16.md v8): the m = 1 probe
# (the streaming kernel beside read-only kernels of its bytes and fp16 cuBLASLt) from the build of
# main (.w4/w4a16_check, tiles in tile rows) and from the build with the codes in 4 KB blocks
# (.w4/stage_check), alternating, then that build's GPU tests and validation. Prebuilt binaries
# (scripts/device/w4a16/build-local.sh in each tree).
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-480}
device_init results/w4a16-layout
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.mem,power.limit --format=csv > "$OUT/env.txt" 2>&1
for part in ${*:-probe check}; do
  case $part in
    probe)
      for r in 1 2; do
        step "tiles-$r" 150 "probe-tiles-r$r.txt" .w4/w4a16_check probe
        step "blocks-$r" 150 "probe-blocks-r$r.txt" .w4/stage_check probe
        [ "${ROUNDS:-2}" -le "$r" ] && break
      done
      grep -hE "SAMPLED FAIL|FAILURES [1-9]" "$OUT"/probe-*.txt
      for f in "$OUT"/probe-*.txt; do echo "${f##*/}"; grep CSV "$f" | sed -E 's/_GBps=[0-9]+//g' | cut -d, -f3-12; done ;;
    check)
      step gtest 60 gtest-blocks.txt .w4/stage_gtest
      grep -E "^\[  (PASSED|FAILED)|Failure" "$OUT/gtest-blocks.txt" | head
      step validate 100 validate-blocks.txt .w4/stage_check validate
      grep -E "FAIL|FAILURES" "$OUT/validate-blocks.txt" | head; echo "ok lines: $(grep -c '^VALIDATE ok' "$OUT/validate-blocks.txt")" ;;
  esac
done
cd "$OUT" && tar czf all.tgz ./*.txt 2>/dev/null && rm -f ./*.txt; ls
echo "total $(( $(date +%s) - t0 )) s"
