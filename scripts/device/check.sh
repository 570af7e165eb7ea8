#!/usr/bin/env bash
# One call on a machine with GPUs: build for sm_90a, every GPU test (unit and 2-rank), the
# README's main job through launch/genbench-local, a short 2-GPU check config, the overlap
# sweep, and compute-sanitizer on our attention kernels. Each step has a time limit inside a
# global budget (DEVICE_BUDGET_S, default 540 s). Logs and result files go to $OUT.
set -uo pipefail
. "$(dirname "$0")/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-540}
device_init results/device-check
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
step build 200 build.txt env GENBENCH_CUDA_ARCHS=90a GENBENCH_JOBS=32 scripts/build.sh "$B"
grep -iE "warning|error" "$OUT/build.txt" | head -5
step gpu-tests 120 gtests.txt "$B/tests/genbench_tests"
grep -E "^\[  (PASSED|FAILED) |^\[  SKIPPED|tests ran" "$OUT/gtests.txt" | head -20
step mpi-tests-np2 90 mpi2.txt mpirun --allow-run-as-root -np 2 -x NCCL_NVLS_ENABLE=0 "$B/tests/genbench_mpi_tests"
grep -E "^\[  (PASSED|FAILED) |tests ran" "$OUT/mpi2.txt" | head -10
step smoke 60 smoke.txt env GENBENCH_BIN="$B/bin/genbench" launch/genbench-local run configs/smoke.yaml -o "$OUT/smoke.h5" --force
tail -4 "$OUT/smoke.txt"
step check-2gpu 90 check.txt mpirun --allow-run-as-root -np 2 -x NCCL_NVLS_ENABLE=0 "$B/bin/genbench" run configs/h200x2-check.yaml -o "$OUT/check.h5" --force
sed -n '/^Summary/,$p' "$OUT/check.txt" | cut -c1-150
step sanitizer 60 sanitizer.txt compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/genbench_tests" \
  --gtest_filter='Fa3Gpu.UnequalLengths:AttentionGpu.VarlenPackedBatches:AttentionGpu.UnfusedMatchesDouble'
tail -3 "$OUT/sanitizer.txt"
step overlap 150 overlap.txt mpirun --allow-run-as-root -np 2 -x NCCL_NVLS_ENABLE=0 "$B/bin/genbench" run configs/overlap.yaml -o "$OUT/overlap.h5" --force
grep -E "^ceilings|^\[" "$OUT/overlap.txt" | cut -c1-160 | head -40
echo "== done at $(( $(date +%s) - t0 ))s"
