#!/usr/bin/env bash
# One call on a machine with 2 GPUs: the GPU reliability checks (docs/reliability.md). Uses an
# already built tree (BUILD, default build-dev; built for sm_90a when missing), then runs
#   - tests/reliability/test_gpu_faults.py: a real device fault (kind=device_error) and a
#     skipped NCCL collective ended by the watchdog (kind=skip_collective), 2 ranks, cuda backend
#   - the polling-wait / fault unit tests (they need no GPU, run here with the CUDA build)
#   - the 2-rank NCCL tests of tests/mpi (non-blocking communicators)
# each under `timeout`. Logs go to $OUT. Success: every "rc=0", "3 passed" for the pytest step.
set -uo pipefail
. "$(dirname "$0")/common.sh"
device_init results/device-reliability
nvidia-smi -L
if [ ! -x "$B/bin/genbench" ] || [ ! -x "$B/tests/genbench_tests" ] || [ ! -x "$B/tests/genbench_mpi_tests" ]; then
  step build 400 build.txt env GENBENCH_CUDA_ARCHS=90a GENBENCH_JOBS=32 scripts/build.sh "$B"
  grep -iE "warning|error" "$OUT/build.txt" | head -5
else
  # Bring an existing tree up to date with the sources (only what changed is rebuilt).
  step build 400 build.txt cmake --build "$B" -j 32 --target genbench genbench_tests genbench_mpi_tests
fi
step gpu-faults 300 gpu_faults.txt env GENBENCH_BIN="$B/bin/genbench" GENBENCH_MPIEXEC=mpirun \
  "${PYTHON:-python3}" -m pytest -v -p no:cacheprovider -rs tests/reliability/test_gpu_faults.py
grep -E "PASSED|FAILED|SKIPPED|ERROR|passed|failed" "$OUT/gpu_faults.txt" | tail -8
step wait-units 120 wait_units.txt "$B/tests/genbench_tests" \
  --gtest_filter='FaultPlan.*:WaitByPolling.*:ActivityRecord.*:DeviceWait.*'
grep -E "^\[  (PASSED|FAILED) |tests ran" "$OUT/wait_units.txt" | head -10
step mpi-nccl-np2 180 mpi_nccl2.txt mpirun --allow-run-as-root -np 2 -x NCCL_NVLS_ENABLE=0 \
  "$B/tests/genbench_mpi_tests" --gtest_filter='NcclMpi.*:OverlapCuda*'
grep -E "^\[  (PASSED|FAILED) |tests ran" "$OUT/mpi_nccl2.txt" | head -10
# The host-backend reliability suite with the same binary (no GPU needed; must stay green).
step host-faults 300 host_faults.txt env GENBENCH_BIN="$B/bin/genbench" GENBENCH_MPIEXEC=mpirun \
  "${PYTHON:-python3}" -m pytest -q -p no:cacheprovider tests/reliability/test_faults.py
tail -2 "$OUT/host_faults.txt"
echo "== done at $(( $(date +%s) - t0 ))s"
