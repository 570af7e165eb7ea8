#!/usr/bin/env bash
# One device call: Nsight Compute (ncu --clock-control none) on single attention points, one
# kernel launch per point after two warm-up launches.
#   metrics: prints what docs/lab/ (fa3) reads: SM clock, tensor (wgmma), MUFU (XU), FMA and
#            ALU pipes, issue activity, the largest warp stall reasons, shared-memory bank
#            conflicts, DRAM throughput.
#   source:  per-instruction warp-stall samples of the SASS (SourceCounters), exported as the
#            source page (CSV, gzipped) into $OUT; experiments/device/sass_stalls.py summarises it.
# Usage: BUILD=build-dev OUT=dir experiments/device/fa3-profile.sh metrics|source "IMPL DTYPE D SEQLEN CAUSAL" ...
#   e.g. experiments/device/fa3-profile.sh metrics "fa3 fp8_e4m3 128 8192 false" "fa3 bf16 64 512 true"
# Shapes are the FlashAttention benchmark's (hidden 2048, 16384 tokens). The build tree must exist
# (scripts/build.sh). Only fa3 kernels are selected (the kernel name matches fa3_*fwd).
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
mode=${1:-}; shift || true
case $mode in metrics|source) ;; *) echo "usage: $0 metrics|source POINT..." >&2; exit 2 ;; esac
device_init results/device-fa3-profile
metrics=sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum
metrics+=,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active
metrics+=,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,sm__inst_issued.avg.pct_of_peak_sustained_active
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio
for pt in "$@"; do
  read -r impl dtype d sq causal <<< "$pt"
  name="$impl-$dtype-d$d-s$sq-$causal"
  cfg="$OUT/$name.yaml"
  cat > "$cfg" <<YAML
genbench: 1
settings:
  backend: cuda
  timing: {warmup: 1, min_iterations: 2, max_iterations: 2, min_time: 0, max_time: 1.0}
benchmarks:
  - name: profile
    op: attention
    implementations: [$impl]
    axes: {tokens: 16384, hidden: 2048, seqlen_q: $sq, head_dim: $d, causal: $causal, dtype: $dtype}
YAML
  run=(timeout 200 ncu --clock-control none -k 'regex:fa3_.*fwd' --launch-skip 2 --launch-count 1)
  app=("$B/bin/genbench" run "$cfg" -o "$OUT/$name.h5" --force -q)
  if [ "$mode" = metrics ]; then
    "${run[@]}" --section SpeedOfLight --section WarpStateStats --metrics "$metrics" "${app[@]}" > "$OUT/$name.ncu.txt" 2>&1
    echo "== $name (rc=$?, ${SECONDS}s)"
    grep -E "sm__|gpu__|l1tex__|dram__|Compute \(SM\) Throughput|Warp Cycles Per Issued" "$OUT/$name.ncu.txt" |
      grep -v issue_stalled | sed -E 's/ +/ /g' | cut -c1-120
    # The largest stall reasons (warps per issued instruction).
    grep -E "issue_stalled_.*ratio" "$OUT/$name.ncu.txt" | awk '{print $NF, $1}' | sort -gr | head -6 |
      sed -E 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
  else
    rm -f "/tmp/$name.ncu-rep"
    "${run[@]}" --section WarpStateStats --section SourceCounters -o "/tmp/$name" "${app[@]}" > "$OUT/$name.ncu.txt" 2>&1
    echo "== $name (rc=$?, ${SECONDS}s)"
    ncu -i "/tmp/$name.ncu-rep" --page source --csv --print-source sass 2> /tmp/src.err | gzip -c > "$OUT/$name.sass.csv.gz"
    echo "exported $(zcat "$OUT/$name.sass.csv.gz" | wc -l) lines"; head -c 300 /tmp/src.err
  fi
  grep -E "==ERROR==" "$OUT/$name.ncu.txt" | head -3
done
