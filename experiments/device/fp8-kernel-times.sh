#!/usr/bin/env bash
# One device call for an fp8 attention change: builds this tree (genbench and the tests) and
# the variant trees under .var/NAME (genbench only) side by side, runs the GPU tests (the fp8
# ones unless TESTS names others) and compute-sanitizer memcheck on MEMCHECK's tests, reads
# the duration of every kernel of one timed fa3 fp8 launch (V^T pre-pass and attention kernel
# separately) with Nsight Compute for each build, then times experiments/configs/fa3-fp8-d128.yaml (and
# any further configs) with every build in turn, ROUNDS times (experiments/device/ab-builds.sh).
# Usage: ROUNDS=2 [TESTS=gtest-filter] [MEMCHECK=gtest-filter] experiments/device/fp8-kernel-times.sh "base" [CONFIG...]
# Logs go to $OUT (default results/device-fp8-kernel-times).
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
device_init results/device-fp8-kernel-times
vars=$1; shift
cfgs=("$@"); [ ${#cfgs[@]} -eq 0 ] && cfgs=(experiments/configs/fa3-fp8-d128.yaml)
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
jobs=$(( $(nproc) / ($(echo $vars | wc -w) + 1) ))
build_tree new . "$jobs" genbench genbench_tests &
for v in $vars; do build_tree "$v" ".var/$v" "$jobs" genbench & done
wait

step gpu-tests 200 tests.txt build-new/tests/genbench_tests --gtest_filter="${TESTS:-Fa3Fp8Layout.*:Fa3Gpu.*Fp8*:Fa3Gpu.LazyRescale*}"
grep -E "^\[ +(PASSED|FAILED) |tests ran|Failure" "$OUT/tests.txt" | head -12
if [ -n "${MEMCHECK:-}" ]; then
  step memcheck 120 memcheck.txt compute-sanitizer --tool memcheck --error-exitcode 9 build-new/tests/genbench_tests --gtest_filter="$MEMCHECK"
  grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/memcheck.txt" | head -4
fi

# Kernel durations: fp8 d=128 non-causal at 4K and 16K, the third timed launch of each kernel.
for sq in 4096 16384; do
  cat > "$OUT/k$sq.yaml" <<YAML
genbench: 1
settings:
  backend: cuda
  timing: {warmup: 1, min_iterations: 3, max_iterations: 3, min_time: 0, max_time: 1.0}
benchmarks:
  - name: k
    op: attention
    implementations: [fa3]
    axes: {tokens: 16384, hidden: 2048, seqlen_q: $sq, head_dim: 128, causal: false, dtype: fp8_e4m3}
YAML
  for v in new $vars; do
    timeout 120 ncu --clock-control none -k 'regex:transpose_v|fa3_.*fwd' --launch-skip 4 --launch-count 4 \
      --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second \
      "build-$v/bin/genbench" run "$OUT/k$sq.yaml" -o "/tmp/k.h5" --force -q > "$OUT/ncu-$v-$sq.txt" 2>&1
    echo "ncu $v s=$sq rc=$?"
    awk '/transpose_v_kernel/ { k = "vt-pass" } /fa3_fwd_kernel/ { k = "attention" }
         /gpu__time_duration.sum/ { printf "  %s %s %s", k, $NF, $(NF-1) }
         /cycles_elapsed.avg.per_second/ { printf " at %s %s\n", $NF, $(NF-1) }' "$OUT/ncu-$v-$sq.txt"
    grep -E "==ERROR==" "$OUT/ncu-$v-$sq.txt" | head -2
  done
done

ab_rounds "$vars" "${cfgs[@]}"
echo "== done at $(( $(date +%s) - t0 ))s"
