#!/usr/bin/env bash
# One device call: Nsight Compute on single attention/fa3 points (ncu --clock-control none, one
# launch of the kernel per point after two warm-up launches), printing the metrics perf-notes
# reads: SM clock, tensor (wgmma) pipe, MUFU (XU) and FMA pipes, issue activity, the top warp
# stall reasons, shared-memory bank conflicts and DRAM throughput.
# Usage: BUILD=build-dev scripts/device/fa3-profile.sh "IMPL DTYPE D SEQLEN CAUSAL" ...
#   e.g. scripts/device/fa3-profile.sh "fa3 fp8_e4m3 128 8192 false" "cudnn bf16 128 512 false"
# The build tree must exist (scripts/build.sh). Reports are kept in $OUT (default
# results/device-fa3-profile). Environment passed to genbench (GENBENCH_FA3_*) applies to all points.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-results/device-fa3-profile}
B=${BUILD:-build-dev}
mkdir -p "$OUT"
metrics=sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum
metrics+=,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
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
  case $impl in fa3) k='regex:fa3_.*fwd' ;; *) k='regex:^(?!.*(fill|transpose|reduce|convert)).*$' ;; esac
  timeout 150 ncu --clock-control none -k "$k" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --metrics "$metrics" \
    "$B/bin/genbench" run "$cfg" -o "$OUT/$name.h5" --force -q > "$OUT/$name.ncu.txt" 2>&1
  echo "== $name (rc=$?, ${SECONDS}s)"
  grep -E "sm__|gpu__|l1tex__|dram__|Compute \(SM\) Throughput|Warp Cycles Per Issued" "$OUT/$name.ncu.txt" |
    sed -E 's/ +/ /g' | cut -c1-120
  # The five largest stall reasons (warps per issued instruction).
  grep -E "issue_stalled_.*ratio" "$OUT/$name.ncu.txt" | awk '{print $NF, $1}' | sort -gr | head -6 |
    sed -E 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
  grep -E "ERROR|error" "$OUT/$name.ncu.txt" | head -3
done
