#!/usr/bin/env bash
# Builds genbench and measures the CUDA backend's GEMM and collectives on a machine with two
# GPUs (the numbers in docs/lab/gemm.md and docs/lab/collectives.md): the GPU
# tests of gemm/cublaslt and collective/nccl, configs/gemm.yaml on one GPU beside the torch
# peer (scripts/peers/gemm_torch.py), configs/collectives-h200x2.yaml on two ranks.
# Usage: OUT=<folder> scripts/device/cuda-backend.sh   (needs .deps from scripts/stage-deps.sh
# where CLI11 is not installed)
set -uo pipefail
. "$(dirname "$0")/common.sh"
device_init results/measure
log=$OUT/log.txt
t0=$(date +%s)
stamp() { echo "== $1 ($(( $(date +%s) - t0 )) s)" | tee -a "$log"; }
stamp build
GENBENCH_CUDA_ARCHS=${GENBENCH_CUDA_ARCHS:-90a} GENBENCH_JOBS=${GENBENCH_JOBS:-16} scripts/build.sh "$B" >"$OUT/build.txt" 2>&1 \
  || { tail -40 "$OUT/build.txt"; exit 1; }
grep -i "warning" "$OUT/build.txt" | head -5
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv | tee -a "$log"
git log -1 --format='commit %h %cd' 2>/dev/null | tee -a "$log"
stamp gtests
"$B/tests/genbench_tests" --gtest_filter='CublasLt*:Nccl*:DeviceType*' >>"$log" 2>&1
grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) +\]|Failure|error" "$log" | tail -25
for np in 1 2; do
  stamp "mpi tests np=$np"
  mpirun --allow-run-as-root -np $np "$B/tests/genbench_mpi_tests" --gtest_filter='NcclMpi*' >"$OUT/mpi$np.txt" 2>&1
  echo "rc=$?"; grep -E "PASSED|FAILED|Failure|SKIPPED \]" "$OUT/mpi$np.txt" | head -12
done
stamp gemm
"$B/bin/genbench" run configs/gemm.yaml -o "$OUT/gemm.h5" --force >>"$log" 2>&1
sed -n '/^Summary/,$p' "$log" | tail -24
stamp torch
PYTHONUNBUFFERED=1 python3 scripts/peers/gemm_torch.py 4096 8192 2>&1 | tee -a "$log"
stamp collectives
mpirun --allow-run-as-root -np 2 "$B/bin/genbench" run configs/collectives-h200x2.yaml -o "$OUT/coll.h5" --force >"$OUT/coll.txt" 2>&1
sed -n '/^Summary/,$p' "$OUT/coll.txt" | cut -c1-150
stamp done
