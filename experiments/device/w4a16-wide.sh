#!/usr/bin/env bash
# One device call for the wide W4A16 kernel (m = 17-64; docs/lab/w4a16.md v5). Parts, in the
# order given (default: check time sanitize ncu):
#   check     the kernel's GPU tests and the check's validation
#   time      time-mid: the wide kernel's mma.sync and wgmma forms and fp16 cuBLASLt (and the
#             dequantise path from m = 128), L2 cold, 3 rounds alternating, m = 32-512
#             (TIME_MODE=time-small: m = 1-16, the streaming kernel beside the wgmma form's 16-row
#             tiles)
#   sweep     sweep-large: forced split-k beside the automatic choice at m = 16 (wgmma form), 32 and 64
#   sanitize  compute-sanitizer memcheck of the GPU tests
#   racecheck compute-sanitizer racecheck of the check's small validation set (`sanitize` mode)
#   sass      opcode counts of the fp16 int4 64-row wide kernel and its SASS (sass.txt; the wgmma
#             form, or SASS_KERNEL=Lb0ELi8ELb0E for the mma.sync one)
#   probe     m = 1: the streaming kernel beside read-only kernels of its bytes (its copy pattern
#             alone, contiguous ranges, a plain read) and fp16 cuBLASLt (lab/w4a16.md v8)
#   ncu       Nsight Compute of m = 64 at 28672 x 8192 (the wgmma form on sm_90), with the stall
#             reasons per issue
# Prebuilt .w4/w4a16_check and .w4/w4a16_gtest used (nvcc, sm_90a; commands in the lab record).
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-420}
device_init results/w4a16-wide
W=.w4/w4a16_check
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.mem,power.limit --format=csv > "$OUT/env.txt" 2>&1
parts=${*:-check time sanitize ncu}
for part in $parts; do
  case $part in
    check)
      step gtest 60 gtest.txt .w4/w4a16_gtest
      grep -E "^\[  (PASSED|FAILED)|Failure|err" "$OUT/gtest.txt" | head -20
      step validate 90 validate.txt "$W" validate
      grep -E "FAIL|FAILURES" "$OUT/validate.txt" | head; echo "ok lines: $(grep -c '^VALIDATE ok' "$OUT/validate.txt")" ;;
    time)
      step time 200 time.txt "$W" "${TIME_MODE:-time-mid}"
      grep -E "SAMPLED FAIL|FAILURES" "$OUT/time.txt"
      grep CSV "$OUT/time.txt" | sed -E 's/,(rounds_fused|lt16 )[^,]*//g; s/dequant[^,]*,//g; s/mma_sm80 wide //' | cut -c1-230 ;;
    sweep)
      step sweep 180 sweep.txt "$W" sweep-large
      grep CSV "$OUT/sweep.txt" | cut -c1-300 ;;
    probe)
      step probe 240 probe.txt "$W" probe
      grep -E "SAMPLED FAIL|FAILURES" "$OUT/probe.txt"
      grep CSV "$OUT/probe.txt" | cut -c1-330 ;;
    sanitize)
      step sanitize 90 sanitize.txt compute-sanitizer --tool memcheck .w4/w4a16_gtest
      grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/sanitize.txt" ;;
    racecheck)
      step racecheck 150 racecheck.txt compute-sanitizer --tool racecheck "$W" sanitize
      grep -E "RACECHECK SUMMARY|FAILURES" "$OUT/racecheck.txt"; echo "validations: $(grep -c '^VALIDATE ok' "$OUT/racecheck.txt")" ;;
    sass)
      kn="w4a16_wide_kernelI6__half${SASS_KERNEL:-Lb0ELi8ELb1E}"
      cuobjdump --dump-sass "$W" 2>/dev/null | awk -v k="$kn" '/Function :/ {f = index($0, k) > 0} f' > "$OUT/sass.txt"
      grep -oE "^\s+/\*[0-9a-f]{4}\*/\s+[A-Z0-9_.]+" "$OUT/sass.txt" | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -30 | tr '\n' ' '; echo ;;
    ncu)
      step ncu 80 ncu.txt ncu --clock-control none -k regex:w4a16_wide --launch-skip 1 --launch-count 1 --section SpeedOfLight \
        --section WarpStateStats --section Occupancy --section InstructionStats --section ComputeWorkloadAnalysis \
        --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio" "$W" profile
      grep -E "Duration|Issue Slots Busy|Warp Cycles Per Issued|Executed Instructions  " "$OUT/ncu.txt" | head
      grep -E "issue_stalled_.*ratio" "$OUT/ncu.txt" | awk '{print $NF, $1}' | sort -gr | head -8 |
        sed -E 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | tr '\n' ' '; echo ;;
  esac
done
cd "$OUT" && tar czf all.tgz ./*.txt 2>/dev/null && rm -f ./*.txt; ls
echo "total $(( $(date +%s) - t0 )) s"
