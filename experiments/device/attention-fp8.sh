#!/usr/bin/env bash
# One device call for the fp8 forward of attention/fa3 (kernels/attention/fa3_sm90/fa3_fp8_sm90.cu):
# build for sm_90a (configure first when BUILD is missing; incremental otherwise), the fp8 GPU
# tests (Fa3Gpu.*Fp8*), compute-sanitizer memcheck on one small fp8 test, then
# configs/fa3-fp8.yaml through genbench with a compact TFLOP/s table.
# Usage: BUILD=build-dev experiments/device/attention-fp8.sh [deadline seconds, default 560]
# Logs and the result file go to $OUT (default results/device-fa3-fp8). Stages that would start
# after the deadline are skipped (and say so).
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
device_init results/device-fa3-fp8
deadline=${1:-560}
left() { echo $((deadline - SECONDS)); }
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv,noheader \
  > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"

if [ ! -d "$B" ]; then
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGENBENCH_CUDA_ARCHITECTURES=90a > "$OUT/build.txt" 2>&1
fi
timeout 330 cmake --build "$B" -j "${GENBENCH_JOBS:-16}" --target genbench genbench_tests >> "$OUT/build.txt" 2>&1
rc=$?
echo "build rc=$rc at ${SECONDS}s"
grep -iE "warning|error" "$OUT/build.txt" | grep -v "^-- " | head -20
[ $rc -ne 0 ] && { tail -30 "$OUT/build.txt"; exit 1; }

t=$(( $(left) - 150 )); [ $t -gt 180 ] && t=180
if [ $t -gt 10 ]; then
  timeout $t "$B/tests/genbench_tests" --gtest_filter='Fa3Gpu.*Fp8*:Fa3Fp8*' > "$OUT/tests.txt" 2>&1
  echo "fp8 tests rc=$? at ${SECONDS}s"
  grep -E "^\[ +(OK|PASSED|FAILED|SKIPPED) |tests ran|Failure|Expected|Which is" "$OUT/tests.txt" | cut -c1-300 | head -30
  # One line per validated point: shape, variant, error vs bound.
  grep -E "^  fp8_e4m3" "$OUT/tests.txt" | sed -E 's/ vs double: / /' | cut -c1-230 | head -40
else echo "tests skipped (deadline)"; fi

t=$(( $(left) - 120 )); [ $t -gt 90 ] && t=90
if [ $t -gt 10 ]; then
  timeout $t compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/genbench_tests" \
    --gtest_filter='Fa3Gpu.Fp8D128OddLengths' > "$OUT/memcheck.txt" 2>&1
  echo "memcheck rc=$? at ${SECONDS}s"; tail -3 "$OUT/memcheck.txt"
else echo "memcheck skipped (deadline)"; fi

t=$(( $(left) - 5 ))
if [ $t -gt 20 ]; then
  timeout $t "$B/bin/genbench" run configs/fa3-fp8.yaml -o "$OUT/fa3-fp8.h5" --force > "$OUT/genbench.txt" 2>&1
  echo "genbench fa3-fp8.yaml rc=$? at ${SECONDS}s"
  sed -n '/^Summary/,$p' "$OUT/genbench.txt" | cut -c1-170
  # Compact table: dtype, d, seqlen, causal, TFLOP/s (from the summary's point and rate columns).
  echo "dtype     d    seqlen  causal  TFLOP/s"
  sed -n '/^Summary/,$p' "$OUT/genbench.txt" | grep -E "TFLOP/s" | awk '{
    dt=""; d=""; sq=""; c="no"; r="";
    for (i = 1; i <= NF; ++i) {
      if ($i ~ /^(fp8_e4m3|bf16|fp16)$/) dt=$i;
      if ($i ~ /^d=/) d=substr($i, 3);
      if ($i ~ /^sq=/) sq=substr($i, 4);
      if ($i == "causal") c="yes";
      if ($i == "TFLOP/s") r=$(i-1);
    }
    printf "%-9s %-4s %-7s %-7s %s\n", dt, d, sq, c, r }'
else echo "genbench skipped (deadline)"; fi
echo "end at ${SECONDS}s"
