#!/usr/bin/env bash
# One device call: the W4A16 standalone check (scripts/device/w4a16-check.sh, prebuilt binaries
# carried in .w4/), the streaming kernel's SASS and Nsight Compute stall metrics, then the
# genbench build with decode/cudnn (scripts/device/decode-cudnn.sh) and the W4A16 and grouped
# GPU tests and experiments/configs/w4a16-device.yaml through genbench. Everything under one
# archive $OUT/all.tgz (the call returns few files), the summaries printed.
set -uo pipefail
cd "$(dirname "$0")/../.."
R=${OUT:-results/w4a16-decode}
W=/tmp/o/w4 D=/tmp/o/dec
mkdir -p "$W" "$D"
OUT=$W DEVICE_BUDGET_S=150 bash scripts/device/w4a16-check.sh > "$W/log.txt" 2>&1
grep -E "FAILURES|ERROR SUMMARY|PASSED|FAILED" "$W/log.txt" | sort | uniq -c
grep CSV,sweep "$W/sweep.txt" | sed 's/CSV,sweep,//' | cut -c1-150
grep -E "^\| int4 g128 \| [0-9]+ \| [0-9]+ \| (1|4|8|16) \||^\| uint4" "$W/summary.md" | cut -d'|' -f3-12
K=$(cuobjdump --list-elf .w4/w4a16_check >/dev/null 2>&1; cuobjdump --dump-sass .w4/w4a16_check 2>/dev/null |
  grep -o "Function : .*w4a16_stream_kernelI6__halfLb0ELb0ELb0E[^ ]*" | head -1 | sed 's/Function : //')
cuobjdump --dump-sass --function "$K" .w4/w4a16_check > "$W/sass-stream.txt" 2>&1
wc -l "$W/sass-stream.txt"
timeout 60 ncu --clock-control none -k regex:w4a16_stream --launch-skip 3 --launch-count 1 \
  --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
  .w4/w4a16_check profile > "$W/ncu-stalls.txt" 2>&1
grep -E "issue_active|dram__|warps_active|inst_executed|stalled" "$W/ncu-stalls.txt" | awk '$NF+0 > 0.05 || /issue_active|dram|warps_active|inst_exec/' | head -24
OUT=$D DEVICE_BUDGET_S=${DEC_BUDGET_S:-330} bash scripts/device/decode-cudnn.sh > "$D/log.txt" 2>&1
grep -vE "^\s*$" "$D/log.txt" | grep -E "rc=|PASSED|FAILED|SKIPPED|refused|error" | head -30
cat "$D/table.txt" 2>/dev/null
B=build-dev
if [ -x "$B/tests/genbench_tests" ]; then
  timeout 60 "$B/tests/genbench_tests" --gtest_filter='W4a16*:Grouped*' > "$W/gtests.txt" 2>&1
  grep -E "^\[  (PASSED|FAILED) |tests ran" "$W/gtests.txt"
  timeout 120 "$B/bin/genbench" run experiments/configs/w4a16-device.yaml -o "$W/w4a16-device.h5" --force > "$W/genbench.txt" 2>&1
  echo "genbench w4a16 rc=$?"; sed -n '/^Summary/,$p' "$W/genbench.txt" | cut -c1-200 | head -30
  PYTHONPATH=analysis timeout 30 python3 -m genbench_analysis versus "$W/w4a16-device.h5" --impl mma_sm80 --peer cublaslt_dense 2>&1 | head -30
fi
mkdir -p "$R"; tar czf "$R/all.tgz" -C /tmp/o . && ls -la "$R"
