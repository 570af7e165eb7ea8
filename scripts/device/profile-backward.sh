#!/usr/bin/env bash
# One device call: build, the fused backward's GPU tests (FILTER), then Nsight Compute's full set
# on one attention_backward point (IMPLS, default fa3 and cudnn; SEQ, D, CAUSAL) restricted by
# NVTX to the point's timed iteration: the details page of every kernel, and for the fa3 main
# kernel the SASS with its stall samples (source.csv). Reports and pages go to $OUT.
# Usage: OUT=... scripts/device/profile-backward.sh   (about 3-4 minutes on an H100 or H200)
set -uo pipefail
. "$(dirname "$0")/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-400}
device_init results/profile-backward
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader | tee "$OUT/smi.txt"
device_build 300 genbench genbench_tests
if [ -n "${FILTER:-}" ]; then
  step tests 150 tests.txt "$B/tests/genbench_tests" --gtest_filter="$FILTER"
  grep -E "^\[ +(FAILED|PASSED|OK|SKIPPED) |Failure|Expected|Which is|unsupported|error|worst" "$OUT/tests.txt" | cut -c1-260 | head -80
fi
cfg=$OUT/profile.yaml
cat >"$cfg" <<YAML
genbench: 1
settings:
  backend: auto
  timing: {warmup: 1, min_iterations: 1, max_iterations: 1, min_time: 0, max_time: 1}
benchmarks:
  - name: prof
    op: attention_backward
    implementations: [${IMPLS:-fa3, cudnn}]
    axes: {hidden: 2048, tokens: 16K, seqlen_q: ${SEQ:-8K}, head_dim: ${D:-128}, causal: ${CAUSAL:-false}, dtype: bf16}
YAML
step plain 60 plain.txt "$B/bin/genbench" run "$cfg" -o "$OUT/plain.h5" --force
sed -n '/^Summary/,$p' "$OUT/plain.txt" | head -12
step ncu 240 ncu.txt ncu --clock-control none --nvtx --nvtx-include "regex:genbench:prof/" --set full \
  --import-source no -f -o "$OUT/prof" "$B/bin/genbench" run "$cfg" -o "$OUT/ncu.h5" --force
tail -5 "$OUT/ncu.txt"
if [ -f "$OUT/prof.ncu-rep" ]; then
  ncu --import "$OUT/prof.ncu-rep" --page details >"$OUT/details.txt" 2>&1
  ncu --import "$OUT/prof.ncu-rep" --page raw --csv >"$OUT/raw.csv" 2>&1
  ncu --import "$OUT/prof.ncu-rep" --page source --csv --print-source sass -k regex:bwd_main >"$OUT/source.csv" 2>&1
  grep -E "^  [a-zA-Z_].*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc A|L2 Hit Rate|DRAM Throughput|One or More|No Eligible|Warp Cycles Per Issued" "$OUT/details.txt" | cut -c1-200 | head -120
  wc -c "$OUT/source.csv"
fi
echo "== done at $(( $(date +%s) - t0 ))s"
