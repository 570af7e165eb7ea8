#!/usr/bin/env bash
# One device call for W4A16 at m = 32-64 (docs/lab/w4a16.md): the staged kernel at forced
# split-k beside the automatic choice (and two 32-row tiles at m = 64), then Nsight Compute
# of the fused kernel at 28672 x 8192, m = 1 and 64 (the check's profile mode).
# Prebuilt .w4/w4a16_check used.
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-300}
device_init results/w4a16-m64
W=.w4/w4a16_check
step sweep 150 sweep.txt "$W" sweep-large
grep CSV "$OUT/sweep.txt" | cut -c1-300
step ncu 60 ncu.txt ncu --clock-control none -k regex:w4a16_ --launch-skip 3 --launch-count 5 --section SpeedOfLight \
  --section WarpStateStats --section Occupancy --section InstructionStats --section ComputeWorkloadAnalysis "$W" profile
grep -E "w4a16_|Duration|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc|Stall" "$OUT/ncu.txt" | head -60
cd "$OUT" && tar czf all.tgz ./*.txt 2>/dev/null && rm -f ./*.txt; ls
echo "total $(( $(date +%s) - t0 )) s"
